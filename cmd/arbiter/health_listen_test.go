package main

import (
	"context"
	"net"
	"regexp"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// TestCLIServeHealthListen: with --health-listen, serve answers grpc.health.v1 on a
// second plaintext port with the statuses of the main one, turns NOT_SERVING there as
// soon as the drain starts (an in-flight Decide holds the drain open), and closes the
// port when it exits.
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

	// A Decide long-poll keeps the drain open for 4 s.
	ctx := context.Background()
	c := arbiterv1.NewArbiterServiceClient(p.conn)
	args, _ := structpb.NewStruct(map[string]any{"slot": "tomorrow 3pm"})
	reg, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s", CallId: "fc_1", Tool: "book_slot", Args: args})
	if err != nil || reg.Disposition != arbiterv1.Disposition_DISPOSITION_EXECUTE {
		t.Fatalf("RegisterCall: %v %v", reg, err)
	}
	decided := make(chan error, 1)
	go func() {
		_, err := c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "s", JobId: reg.JobId, Wait: durationpb.New(4 * time.Second)})
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
		t.Fatalf("the Decide ended (%v) before the health port was seen NOT_SERVING: the drain did not hold", err)
	default:
	}
	if err := <-decided; err != nil {
		t.Errorf("the in-flight Decide failed during the drain: %v", err)
	}
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
