package server_test

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/voicearbiter/arbiter/server"
)

// serveBufconn serves srv (with o, as NewGRPCServer takes them) on an in-memory
// bufconn listener and returns a client connection to it and the gRPC server; both
// are closed and stopped at the test's cleanup.
func serveBufconn(tb testing.TB, srv *server.Server, o server.Options) (*grpc.ClientConn, *grpc.Server) {
	tb.Helper()
	gs, _ := server.NewGRPCServer(srv, o)
	lis := bufconn.Listen(1 << 20)
	go func() { _ = gs.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close(); gs.Stop() })
	return conn, gs
}
