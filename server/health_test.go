package server_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/voicearbiter/arbiter/server"
)

// fakePinger is a store whose Ping fails with err while it is set.
type fakePinger struct {
	mu    sync.Mutex
	err   error
	pings int
	// deadline reports whether the last Ping's context had a deadline.
	deadline bool
}

func (p *fakePinger) Ping(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pings++
	_, p.deadline = ctx.Deadline()
	return p.err
}

func (p *fakePinger) set(err error) { p.mu.Lock(); p.err = err; p.mu.Unlock() }

// healthOf returns the overall and the arbiter service's health status.
func healthOf(t *testing.T, hs *health.Server) (overall, svc healthpb.HealthCheckResponse_ServingStatus) {
	t.Helper()
	for i, name := range []string{"", "arbiter.v1.ArbiterService"} {
		r, err := hs.Check(context.Background(), &healthpb.HealthCheckRequest{Service: name})
		if err != nil {
			t.Fatalf("health of %q: %v", name, err)
		}
		if i == 0 {
			overall = r.Status
		} else {
			svc = r.Status
		}
	}
	return overall, svc
}

// TestHealthWatcherFlips: the status follows the store's Ping, overall and for the
// arbiter service, and each change is logged once (a warning with the cause when the
// store goes, an info line when it comes back); a first check that succeeds logs
// nothing.
func TestHealthWatcherFlips(t *testing.T) {
	const (
		serving    = healthpb.HealthCheckResponse_SERVING
		notServing = healthpb.HealthCheckResponse_NOT_SERVING
	)
	store := &fakePinger{}
	hs := health.NewServer()
	var logs bytes.Buffer
	w := server.NewHealthWatcher(store, hs, slog.New(slog.NewTextHandler(&logs, nil)), time.Second)
	steps := []struct {
		err  error
		want healthpb.HealthCheckResponse_ServingStatus
		log  string // what the step logs; "" nothing
	}{
		{nil, serving, ""},
		{errors.New("connection refused"), notServing, `level=WARN msg="store unreachable: not serving until it answers" err="connection refused"`},
		{errors.New("connection refused"), notServing, ""},
		{nil, serving, `level=INFO msg="store reachable again: serving"`},
		{nil, serving, ""},
		{errors.New("i/o timeout"), notServing, `msg="store unreachable: not serving until it answers" err="i/o timeout"`},
	}
	for i, s := range steps {
		store.set(s.err)
		logs.Reset()
		if ok := w.Check(context.Background()); ok != (s.err == nil) {
			t.Errorf("step %d: Check = %v with Ping error %v", i, ok, s.err)
		}
		if overall, svc := healthOf(t, hs); overall != s.want || svc != s.want {
			t.Errorf("step %d (Ping error %v): health %v, service %v; want %v", i, s.err, overall, svc, s.want)
		}
		got := strings.TrimSpace(logs.String())
		if s.log == "" && got != "" || !strings.Contains(got, s.log) || strings.Count(got, "\n") > 0 {
			t.Errorf("step %d: logged %q, want %q", i, got, s.log)
		}
	}
	if !store.deadline {
		t.Error("Ping ran without a deadline")
	}
}

// TestHealthWatcherStartsNotServing: a store down at the first check turns the
// server NOT_SERVING at once (NewGRPCServer starts it SERVING).
func TestHealthWatcherStartsNotServing(t *testing.T) {
	hs := health.NewServer() // SERVING overall, like NewGRPCServer's
	w := server.NewHealthWatcher(&fakePinger{err: errors.New("down")}, hs, slog.New(slog.DiscardHandler), time.Second)
	w.Check(context.Background())
	if overall, svc := healthOf(t, hs); overall != healthpb.HealthCheckResponse_NOT_SERVING || svc != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health %v, service %v after a failed first check; want NOT_SERVING", overall, svc)
	}
}

// TestHealthWatcherLoop: the loop Start runs checks by itself (the store goes down
// and health follows without a Check call), its stop function returns and may be
// called twice, and a cancelled context ends the loop as well.
func TestHealthWatcherLoop(t *testing.T) {
	store := &fakePinger{}
	hs := health.NewServer()
	w := server.NewHealthWatcher(store, hs, slog.New(slog.DiscardHandler), time.Millisecond)
	w.Check(context.Background())
	stop := w.Start(context.Background())
	store.set(errors.New("down"))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if overall, _ := healthOf(t, hs); overall == healthpb.HealthCheckResponse_NOT_SERVING {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the loop did not turn health NOT_SERVING within 10 s of the store going down")
		}
	}
	stop()
	stop()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	server.NewHealthWatcher(store, hs, slog.New(slog.DiscardHandler), time.Hour).Start(ctx)() // returns: the loop ended with ctx
}
