package server_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// chainStore is the memory store, except that loading session "boom" panics and every
// load records whether its context had a deadline.
type chainStore struct {
	*memory.Store
	loads, withDeadline atomic.Int64
}

func (c *chainStore) Load(ctx context.Context, key arbiter.SessionKey) (*arbiter.Session, error) {
	c.loads.Add(1)
	if _, ok := ctx.Deadline(); ok {
		c.withDeadline.Add(1)
	}
	if key.ID == "boom" {
		panic("chainStore: boom")
	}
	return c.Store.Load(ctx, key)
}

// TestUnaryChainEnd: the end of the unary chain (innermost) still bounds every RPC by
// the server's deadline (a client that sets none gets one), turns a handler's panic
// into INTERNAL with a "panic in handler" line, and serves the RPCs after it.
func TestUnaryChainEnd(t *testing.T) {
	st := &chainStore{Store: memory.New(nil)}
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: &arbiter.Policy{}}, Store: st, Clock: arbiter.SystemClock{}}
	var logs lockedBuffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	conn, _ := serveBufconn(t, server.New(svc, log), server.Options{Logger: log, RPCTimeout: time.Hour})
	c := arbiterv1.NewArbiterServiceClient(conn)
	ctx := context.Background() // no deadline of the client's
	ev := arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START
	if _, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "boom", Event: ev}); status.Code(err) != codes.Internal {
		t.Fatalf("a handler that panics: %v, want INTERNAL", err)
	}
	if !strings.Contains(logs.String(), `"msg":"panic in handler"`) || !strings.Contains(logs.String(), "chainStore: boom") {
		t.Fatalf("no panic line:\n%s", logs.String())
	}
	if _, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "calm", Event: ev}); err != nil {
		t.Fatalf("the RPC after a panic: %v", err)
	}
	if n, d := st.loads.Load(), st.withDeadline.Load(); n != 2 || d != n {
		t.Fatalf("%d loads, %d of them with a deadline; want 2 and 2", n, d)
	}
}
