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
// comes up (durable: its persistence is checked then), and drains cleanly.
func TestServeStartsBeforeRedis(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
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
	for _, want := range []string{"store=redis", "redis persistence not checked", "store unreachable", "store reachable again", "a_restart_loses=", "draining"} {
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

// serveExit runs `arbiter serve` with args and returns its exit code and stderr, failing
// the test if it is still running after 15 s (it is meant to refuse to start).
func serveExit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var stdout, stderr syncBuffer
	code := run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), &stdout, &stderr)
	if ctx.Err() != nil {
		t.Fatalf("serve %v did not exit by itself\n%s", args, stderr.String())
	}
	return code, stderr.String()
}

// TestServeRefusesVolatileRedis: a Redis that could lose or roll back what it
// acknowledged on a restart or a crash (no AOF: everything, RDB snapshots only, AOF with
// appendfsync everysec: up to a second) is refused at start with an error saying what
// to change, unless --allow-volatile-store; AOF with appendfsync always is accepted.
// Where CONFIG is refused (managed Redis) the fsync policy cannot be read, so it is
// refused too.
func TestServeRefusesVolatileRedis(t *testing.T) {
	for _, tc := range []struct {
		name   string
		redis  []string
		refuse []string // what the refusal says; nil: accepted
	}{
		{"no persistence", nil, []string{"would lose every session", "appendonly yes and appendfsync always", "--allow-volatile-store"}},
		{"rdb only", []string{"--save", "60 1"}, []string{"since its last RDB snapshot", "appendonly yes and appendfsync always", "--allow-volatile-store"}},
		{"no config, no aof", []string{"--rename-command", "CONFIG", ""}, []string{"not readable without CONFIG", "provider's settings", "--allow-volatile-store"}},
		{"aof everysec", []string{"--appendonly", "yes"}, []string{"up to 1 s of writes", "appendfsync always", "--allow-volatile-store"}},
		{"no config, aof", []string{"--appendonly", "yes", "--rename-command", "CONFIG", ""}, []string{"appendfsync not readable", "provider's settings", "--allow-volatile-store"}},
		{"aof always", []string{"--appendonly", "yes", "--appendfsync", "always"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t, tc.redis...)
			if tc.refuse != nil {
				code, stderr := serveExit(t, "--redis-url", srv.URL())
				if code != 1 {
					t.Fatalf("exit %d, want 1\n%s", code, stderr)
				}
				for _, want := range append(tc.refuse, srv.Addr) {
					if !strings.Contains(stderr, want) {
						t.Errorf("stderr lacks %q:\n%s", want, stderr)
					}
				}
				// The same Redis, accepted when asked to, with a warning.
				p := startServe(t, "--redis-url", srv.URL(), "--allow-volatile-store")
				servesRedis(t, p)
				if log := p.stderr.String(); !strings.Contains(log, "level=WARN msg=\"redis persistence\"") {
					t.Errorf("no warning about the volatile Redis:\n%s", log)
				}
				return
			}
			servesRedis(t, startServe(t, "--redis-url", srv.URL()))
		})
	}
}

// TestServeRefusesVolatileCluster checks every master of a Cluster: all with AOF is
// accepted; one without it is refused, named.
func TestServeRefusesVolatileCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, "--appendonly", "yes", "--appendfsync", "always")
	p := startServe(t, "--redis-url", cl.URL())
	servesRedis(t, p)
	if n := strings.Count(p.stderr.String(), "msg=\"redis persistence\""); n != 3 {
		t.Errorf("%d persistence lines, want one per master:\n%s", n, p.stderr.String())
	}
	off := cl.Nodes[2].Addr
	if r, err := redistest.Command(off, "CONFIG", "SET", "appendonly", "no"); err != nil || r != "+OK" {
		t.Fatalf("CONFIG SET appendonly no on %s: %q %v", off, r, err)
	}
	code, stderr := serveExit(t, "--redis-url", cl.URL())
	if code != 1 || !strings.Contains(stderr, off+" would lose every session") {
		t.Fatalf("exit %d, want 1 naming %s\n%s", code, off, stderr)
	}
	for _, n := range cl.Nodes[:2] {
		if strings.Contains(stderr, n.Addr) {
			t.Errorf("the refusal names durable master %s:\n%s", n.Addr, stderr)
		}
	}
}

// TestServeRefusesVolatileRedisLater: serve started while Redis is down checks it when
// it comes up, and stops with the refusal when it is volatile, having answered every
// RPC UNAVAILABLE meanwhile.
func TestServeRefusesVolatileRedisLater(t *testing.T) {
	srv := redistest.Start(t)
	srv.Kill()
	p := startServe(t, "--redis-url", srv.URL(), "--health-interval", "100ms")
	c := arbiterv1.NewArbiterServiceClient(p.conn)
	_, err := c.ReportSpeech(context.Background(), &arbiterv1.ReportSpeechRequest{SessionId: "s", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("ReportSpeech before the check: %v, want UNAVAILABLE", err)
	}
	srv.Restart()
	select {
	case code := <-p.done:
		if log := p.stderr.String(); code != 1 || !strings.Contains(log, "refusing a volatile Redis") {
			t.Fatalf("exit %d, want 1 with the refusal\n%s", code, log)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("serve still running 15 s after a volatile Redis came up\n%s", p.stderr.String())
	}
	if n, err := redistest.Command(srv.Addr, "DBSIZE"); err != nil || n != ":0" {
		t.Errorf("DBSIZE %q %v: something was written to the volatile Redis", n, err)
	}
}

// servesRedis checks that serve p answers an RPC that writes the store.
func servesRedis(t *testing.T, p *inProcess) {
	t.Helper()
	c := arbiterv1.NewArbiterServiceClient(p.conn)
	if _, err := c.ReportSpeech(context.Background(), &arbiterv1.ReportSpeechRequest{SessionId: "s", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START}); err != nil {
		t.Fatalf("ReportSpeech: %v\n%s", err, p.stderr.String())
	}
}

// TestServeRateLimitSharedAcrossReplicas: two `serve --redis-url --rate-limit` on one
// Redis let one burst through in all (the rate, one per 1000 s, refills nothing while
// the test runs).
func TestServeRateLimitSharedAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	var cs []arbiterv1.ArbiterServiceClient
	for i := 0; i < 2; i++ {
		p := startServe(t, "--redis-url", srv.URL(), "--rate-limit", "0.001", "--rate-burst", "3")
		cs = append(cs, arbiterv1.NewArbiterServiceClient(p.conn))
	}
	got := map[codes.Code]int{}
	for i := 0; i < 5; i++ {
		for _, c := range cs {
			_, err := c.ReportSpeech(context.Background(), &arbiterv1.ReportSpeechRequest{SessionId: "s", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START})
			got[status.Code(err)]++
		}
	}
	if got[codes.OK] != 3 || got[codes.ResourceExhausted] != 7 {
		t.Fatalf("got %v, want 3 OK across both replicas and 7 RESOURCE_EXHAUSTED", got)
	}
}
