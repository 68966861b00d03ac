package main

import (
	"context"
	"net"
	"regexp"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// TestCLIServeHealthListen: with --health-listen, serve answers grpc.health.v1 on a
// second plaintext port with the statuses of the main one, turns NOT_SERVING there as
// soon as the drain starts (a health Watch on the main port holds the drain open: a
// stream GracefulStop waits for), and closes the port when it exits. A Decide waiting
// when the drain starts does not hold it: it ends at once with UNAVAILABLE.
func TestCLIServeHealthListen(t *testing.T) {
	p := startServe(t, "--tools", "../../testdata/tools/booking.yaml", "--health-listen", "127.0.0.1:0", "--drain-timeout", "10s")
	m := regexp.MustCompile(`msg="health serving" addr=(\S+)`).FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("no health address in the log:\n%s", p.stderr.String())
	}
	healthAddr := m[1]
	conn, err := grpc.NewClient(healthAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	check := func(service string) healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			t.Fatalf("health port Check(%q): %v", service, err)
		}
		return r.Status
	}
	for _, s := range []string{"", "arbiter.v1.ArbiterService", "liveness"} {
		if got := check(s); got != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health port Check(%q) = %v, want SERVING", s, got)
		}
	}

	// A health Watch on the main port keeps the drain open until it is cancelled.
	ctx := context.Background()
	hold, release := context.WithCancel(ctx)
	defer release()
	hw, err := healthpb.NewHealthClient(p.conn).Watch(hold, &healthpb.HealthCheckRequest{Service: "arbiter.v1.ArbiterService"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := hw.Recv(); err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("main port health Watch: %v %v", r, err)
	}
	c := arbiterv1.NewArbiterServiceClient(p.conn)
	args, _ := structpb.NewStruct(map[string]any{"slot": "tomorrow 3pm"})
	reg, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s", CallId: "fc_1", Tool: "book_slot", Args: args})
	if err != nil || reg.Disposition != arbiterv1.Disposition_DISPOSITION_EXECUTE {
		t.Fatalf("RegisterCall: %v %v", reg, err)
	}
	decided := make(chan error, 1)
	go func() {
		_, err := c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "s", JobId: reg.JobId, Wait: durationpb.New(30 * time.Second)})
		decided <- err
	}()
	time.Sleep(200 * time.Millisecond) // the Decide is in flight
	p.cancel()
	start := time.Now()
	for check("arbiter.v1.ArbiterService") != healthpb.HealthCheckResponse_NOT_SERVING {
		if time.Since(start) > 3*time.Second {
			t.Fatal("the health port did not turn NOT_SERVING within 3 s of the drain's start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-decided:
		if status.Code(err) != codes.Unavailable {
			t.Errorf("the waiting Decide ended with %v, want UNAVAILABLE (server draining)", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting Decide was not answered within 5 s of the drain's start")
	}
	select {
	case code := <-p.done:
		t.Fatalf("serve exited (%d) while a health Watch held the drain", code)
	default:
	}
	release()
	select {
	case code := <-p.done:
		if code != 0 {
			t.Fatalf("serve exited with %d\n%s", code, p.stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not drain")
	}
	if nc, err := net.DialTimeout("tcp", healthAddr, time.Second); err == nil {
		nc.Close()
		t.Errorf("the health port still accepts connections after serve exited")
	}
}
