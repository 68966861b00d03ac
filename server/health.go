package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// Pinger is the part of arbiter.Store a HealthWatcher needs.
type Pinger interface {
	// Ping reports whether the store is reachable (nil) or not (an error).
	Ping(ctx context.Context) error
}

// HealthWatcher sets the gRPC health status (overall and the arbiter service) on the
// health server NewGRPCServer returned from the store's Ping: SERVING while it
// answers, NOT_SERVING while it does not. Each change is logged once: a warning with
// the cause when the store stops answering, an info line when it answers again. A
// store that cannot be reached at start is not fatal: the server starts NOT_SERVING
// (RPCs answer UNAVAILABLE) and turns SERVING when the store answers, so an
// orchestrator can start arbiter and its store in any order.
//
// Check and the loop Start runs must not run at the same time: call Check before
// Start, or not at all.
type HealthWatcher struct {
	store    Pinger
	hs       *health.Server
	log      *slog.Logger
	interval time.Duration
	serving  *bool // nil until the first check; only the checking goroutine touches it
}

// NewHealthWatcher returns a watcher that pings store every interval (positive) and
// sets hs, logging to log (nil: slog.Default()). It checks nothing until Check or
// Start is called.
func NewHealthWatcher(store Pinger, hs *health.Server, log *slog.Logger, interval time.Duration) *HealthWatcher {
	if log == nil {
		log = slog.Default()
	}
	return &HealthWatcher{store: store, hs: hs, log: log, interval: interval}
}

// Check pings the store once (bounded by the interval, at most 2 s) and sets the
// health status, logging a change. It reports whether the store answered.
func (w *HealthWatcher) Check(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, min(w.interval, 2*time.Second))
	err := w.store.Ping(ctx)
	cancel()
	ok := err == nil
	if w.serving != nil && *w.serving == ok {
		return ok
	}
	st := healthpb.HealthCheckResponse_SERVING
	if ok {
		if w.serving != nil {
			w.log.Info("store reachable again: serving")
		}
	} else {
		st = healthpb.HealthCheckResponse_NOT_SERVING
		w.log.Warn("store unreachable: not serving until it answers", "err", err)
	}
	w.serving = &ok
	w.hs.SetServingStatus("", st)
	w.hs.SetServingStatus(arbiterv1.ArbiterService_ServiceDesc.ServiceName, st)
	return ok
}

// Start checks every interval, from one interval from now, until ctx ends or the
// returned function is called. That function returns once no check is in progress
// (no Ping outlives it, so the store may be closed next); it is idempotent.
func (w *HealthWatcher) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(w.interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				w.Check(ctx)
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }
}
