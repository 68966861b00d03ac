package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// countingEcho answers UnaryCall with its payload and counts the calls.
type countingEcho struct {
	testgrpc.UnimplementedTestServiceServer
	calls atomic.Int64
}

func (e *countingEcho) UnaryCall(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	e.calls.Add(1)
	return &testgrpc.SimpleResponse{Payload: req.GetPayload()}, nil
}

// TestSessionsRunsExactlyN checks -sessions: exactly N iterations in all, whatever the
// number of workers (fewer or more than N), every one measured and served.
func TestSessionsRunsExactlyN(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &countingEcho{}
	gs := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)

	for _, c := range []struct {
		mode                       string
		sessions, workers, perIter int
	}{{"echo1", 37, 8, 1}, {"echo", 5, 50, 6}} {
		mode := c.mode
		before := srv.calls.Load()
		out := filepath.Join(t.TempDir(), "r.json")
		if err := run(mode, lis.Addr().String(), "", c.workers, 10*time.Minute, 0, 1_000_000, c.sessions, 0, "t", out); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		want := c.sessions * c.perIter
		if r.Iterations != c.sessions || r.CallsTotal != want || r.RPCs["UnaryCall"].Count != want || srv.calls.Load()-before != int64(want) {
			t.Errorf("%s -sessions %d -c %d: %d iterations, %d calls (%d measured, %d served), want %d iterations and %d calls",
				mode, c.sessions, c.workers, r.Iterations, r.CallsTotal, r.RPCs["UnaryCall"].Count, srv.calls.Load()-before, c.sessions, want)
		}
	}
}
