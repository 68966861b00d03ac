package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/voicearbiter/arbiter/internal/redistest"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// TestServeStartsBeforeRedis starts `arbiter serve --redis-url` while Redis is down:
// it serves NOT_SERVING and answers UNAVAILABLE, turns SERVING by itself when Redis
// comes up, and drains cleanly.
func TestServeStartsBeforeRedis(t *testing.T) {
	srv := redistest.Start(t)
	srv.Kill() // its port, with nothing listening
	p := startServe(t, "--redis-url", "redis://:hunter2@"+srv.Addr, "--health-interval", "100ms")
	conn, stderr := p.conn, p.stderr
	check := func() healthpb.HealthCheckResponse_ServingStatus {
		hr, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return hr.Status
	}
	if st := check(); st != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health %v with Redis down, want NOT_SERVING", st)
	}
	c := arbiterv1.NewArbiterServiceClient(conn)
	_, err := c.ReportSpeech(context.Background(), &arbiterv1.ReportSpeechRequest{SessionId: "s", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("ReportSpeech with Redis down: %v, want UNAVAILABLE", err)
	}
	srv.Restart()
	deadline := time.Now().Add(5 * time.Second)
	for check() != healthpb.HealthCheckResponse_SERVING {
		if time.Now().After(deadline) {
			t.Fatalf("not SERVING 5 s after Redis came up\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := c.ReportSpeech(context.Background(), &arbiterv1.ReportSpeechRequest{SessionId: "s", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START}); err != nil {
		t.Fatalf("ReportSpeech once Redis is up: %v", err)
	}
	p.drain(t, 15*time.Second)
	log := stderr.String()
	for _, want := range []string{"store=redis", "store unreachable", "store reachable again", "draining"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "hunter2") {
		t.Errorf("the Redis password is in the log:\n%s", log)
	}
}

func TestServeBadRedisURL(t *testing.T) {
	var stdout, stderr syncBuffer
	code := run(context.Background(), []string{"serve", "--listen", "127.0.0.1:0", "--redis-url", "http://nope:1"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "--redis-url") {
		t.Fatalf("exit %d, stderr %q; want 1 naming --redis-url", code, stderr.String())
	}
}
