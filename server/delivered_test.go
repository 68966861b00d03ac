package server_test

import (
	"context"
	"testing"
	"time"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// TestDecideEventsDelivered: DecideRequest.events_delivered reaches the engine
// (arbiter.Decide.Delivered). A booking's commit comes due while nothing steps the
// session (the clock moves 4 s past the prepare with no request: an outage, or a
// replica starved of CPU), so the next Decide finds it late. Without the field the
// COMMIT is withheld (PENDING, with why); with it, the agent has declared that what it
// observed is delivered, and the COMMIT is answered at once.
func TestDecideEventsDelivered(t *testing.T) {
	for _, tc := range []struct {
		delivered bool
		want      arbiterv1.Decision
	}{
		{false, arbiterv1.Decision_DECISION_PENDING},
		{true, arbiterv1.Decision_DECISION_COMMIT},
	} {
		clock := newFakeClock()
		n := newNode(t, memory.New(clock.Now), clock, server.Options{})
		ctx := context.Background()
		reg, err := n.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "late", CallId: "c1", Tool: "book_slot",
			Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
		if err != nil {
			t.Fatal(err)
		}
		req := &arbiterv1.DecideRequest{SessionId: "late", JobId: reg.JobId, Prepared: true, EventsDelivered: tc.delivered}
		if d, err := n.c.Decide(ctx, req); err != nil || d.Decision != arbiterv1.Decision_DECISION_PENDING {
			t.Fatalf("decide at prepare: %v %v", d, err)
		}
		clock.Advance(4 * time.Second)
		d, err := n.c.Decide(ctx, req)
		if err != nil || d.Decision != tc.want {
			t.Errorf("events_delivered=%v: the Decide that finds a late commit answered %v (%v), want %v", tc.delivered, d, err, tc.want)
		}
	}
}
