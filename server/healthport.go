package server

import (
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// ServeHealth serves hs, the health server NewGRPCServer returned, on lis and nothing
// else: grpc.health.v1 in plaintext, without the main server's interceptors (no
// authentication, rate limit or access log) or reflection. It answers with the same
// statuses as the main listener (readiness follows the store and the drain), so an
// orchestrator can probe it while the main listener serves TLS, which the kubelet's
// native gRPC probe cannot speak. It serves in the background until stop is called;
// stop closes lis and every connection on it (open Watch streams included) and returns
// once serving has ended. Call it after the main server's drain, so that probes see
// NOT_SERVING rather than a refused connection while the drain lasts.
func ServeHealth(lis net.Listener, hs *health.Server) (stop func()) {
	gs := grpc.NewServer(
		// A probe sends one small request per connection; nothing here needs more.
		grpc.MaxRecvMsgSize(4<<10),
		grpc.MaxConcurrentStreams(16),
		grpc.ConnectionTimeout(5*time.Second),
	)
	healthpb.RegisterHealthServer(gs, hs)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gs.Serve(lis)
	}()
	return func() {
		gs.Stop()
		<-done
	}
}
