package server_test

import (
	"context"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// TestDecideCompleteByCallID: a tool behind the wire guard knows only its call's id.
// Decide and Complete find the session by it (the index the guard writes), the job by
// the call, and answer as they do by job id; without the index entry, or for a call
// that executes nothing, they say which field is at fault.
func TestDecideCompleteByCallID(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	reg, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "guarded", CallId: "fc_1", Tool: "book_slot", Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
	if err != nil {
		t.Fatal(err)
	}
	// Before the guard indexed it: the call id alone names no session.
	_, err = f.c.Decide(ctx, &arbiterv1.DecideRequest{CallId: "fc_1"})
	if status.Code(err) != codes.NotFound || !fieldIs(err, "call_id") {
		t.Fatalf("unindexed: %v", err)
	}
	if err := f.svc.IndexCall(ctx, arbiter.SessionKey{ID: "guarded"}, "fc_1", 0); err != nil {
		t.Fatal(err)
	}
	d, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{CallId: "fc_1", Prepared: true, Wait: durationpb.New(0)})
	if err != nil || d.GetJobId() != reg.GetJobId() || d.GetSessionId() != "guarded" || d.GetDecision() != arbiterv1.Decision_DECISION_PENDING {
		t.Fatalf("Decide by call id: %v %v", d, err)
	}
	// The grace window (1.5 s by default) passes; then the commit.
	d, err = f.c.Decide(ctx, &arbiterv1.DecideRequest{CallId: "fc_1", Prepared: true, Wait: durationpb.New(5e9)})
	if err != nil || d.GetDecision() != arbiterv1.Decision_DECISION_COMMIT {
		t.Fatalf("Decide by call id: %v %v", d, err)
	}
	done, err := f.c.Complete(ctx, &arbiterv1.CompleteRequest{CallId: "fc_1", Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED, Result: args(t, map[string]any{"reference": "R-1"})})
	if err != nil || len(done.GetEffects().GetResponses()) != 1 || done.GetEffects().GetResponses()[0].GetCallId() != "fc_1" {
		t.Fatalf("Complete by call id: %v %v", done, err)
	}
	// Session id and call id together need no index.
	if _, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "guarded", CallId: "fc_1"}); err != nil {
		t.Errorf("with session_id: %v", err)
	}
	_, err = f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "guarded", CallId: "bad id"})
	if status.Code(err) != codes.InvalidArgument || !fieldIs(err, "call_id") {
		t.Errorf("malformed call id: %v", err)
	}
	_, err = f.c.Decide(ctx, &arbiterv1.DecideRequest{})
	if status.Code(err) != codes.InvalidArgument || !fieldIs(err, "session_id") {
		t.Errorf("nothing named: %v", err)
	}
}

// fieldIs reports whether err's ErrorInfo names field.
func fieldIs(err error, field string) bool {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetMetadata()["field"] == field
		}
	}
	return false
}
