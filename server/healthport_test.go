package server_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// TestServeHealth: the health listener answers from the main server's health server
// (a status set there shows up on it at once, "liveness" included), serves nothing but
// grpc.health.v1, and refuses connections once stopped.
func TestServeHealth(t *testing.T) {
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: &arbiter.Policy{}}, Store: memory.New(nil), Clock: arbiter.SystemClock{}}
	_, hs := server.NewGRPCServer(server.New(svc, nil), server.Options{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := server.ServeHealth(lis, hs)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hc := healthpb.NewHealthClient(conn)
	check := func(service string) healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		r, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			t.Fatalf("Check(%q): %v", service, err)
		}
		return r.Status
	}
	const svcName = "arbiter.v1.ArbiterService"
	for _, name := range []string{"", svcName, server.LivenessService} {
		if got := check(name); got != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v, want SERVING", name, got)
		}
	}
	// The store goes away: readiness follows on this listener too; liveness does not.
	hs.SetServingStatus(svcName, healthpb.HealthCheckResponse_NOT_SERVING)
	if got := check(svcName); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("after NOT_SERVING on the main health server: %v", got)
	}
	if got := check(server.LivenessService); got != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("liveness = %v, want SERVING", got)
	}
	// Nothing else is served here.
	_, err = arbiterv1.NewArbiterServiceClient(conn).GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "s"})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("GetSession on the health listener: %v, want Unimplemented", err)
	}
	stop()
	if c, err := net.DialTimeout("tcp", lis.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Errorf("the health listener still accepts connections after stop")
	}
}
