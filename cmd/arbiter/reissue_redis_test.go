package main

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/voicearbiter/arbiter/internal/redistest"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// TestReplicasAnswerReissueBeforeCancelComplete plays, on three replicas of one Redis,
// the interleaving the wire checks met in testdata/traces/C_on_run2 (the Node and
// Python stacks, RPCs round-robin): a BLOCKING booking abandoned at the barge-in, the
// user's stop cancelling its job, the agent's Decide (parked on another replica) woken
// with CANCEL, and the model's re-issue of the booking (a new call id) registered on a
// third replica before the agent's Complete, followed 18 ms later in the recording by
// a second barge-in. The re-issue must be answered "cancelled" in RegisterCall's own
// effects: before, it waited for the Complete, the barge-in made its BLOCKING id dead,
// and the model never had an answer for it. Every step is one RPC after the other, so
// the order is the one scripted here, whatever the machine's load. The effects are
// judged as the agent receives them, from a Watch: each live id answered once, the
// abandoned one never, the note once.
func TestReplicasAnswerReissueBeforeCancelComplete(t *testing.T) {
	srv := redistest.Start(t)
	bin := buildArbiter(t, true)
	var rs []*replica
	for i := 0; i < 3; i++ {
		rs = append(rs, startReplica(t, bin, "--redis-url", srv.URL(), "--tools", bookingPolicy, "--allow-volatile-store"))
	}
	a, b, c := rs[0], rs[1], rs[2]
	ag := &agent{t: t, sid: "reissue-before-complete"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	book := func(r *replica, callID, slot string) *arbiterv1.RegisterCallResponse {
		t.Helper()
		args, _ := structpb.NewStruct(map[string]any{"slot": slot})
		return must[*arbiterv1.RegisterCallResponse](t)(r.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{
			SessionId: ag.sid, CallId: callID, Tool: "book_slot", Args: args, Behavior: arbiterv1.Behavior_BEHAVIOR_BLOCKING}))
	}
	speech := func(r *replica, e arbiterv1.SpeechEvent) *arbiterv1.ReportSpeechResponse {
		t.Helper()
		return must[*arbiterv1.ReportSpeechResponse](t)(r.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: ag.sid, Event: e}))
	}

	first := book(a, "fc_1792165045038015411", "tomorrow at 3pm")
	if first.Disposition != arbiterv1.Disposition_DISPOSITION_EXECUTE {
		t.Fatalf("first call: %v, want EXECUTE", first)
	}
	job := first.JobId
	speech(b, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START)
	if sk := speech(c, arbiterv1.SpeechEvent_SPEECH_EVENT_INTERRUPTED).Effects.GetSkips(); len(sk) != 1 {
		t.Fatalf("barge-in skips %v, want the first call abandoned", sk)
	}
	speech(a, arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_TURN_COMPLETE)

	// The agent's Decide long-polls on a while the prepare runs; the stop arrives on b.
	type result struct {
		d   *arbiterv1.DecideResponse
		err error
	}
	poll := make(chan result, 1)
	go func() {
		d, err := a.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: ag.sid, JobId: job, Wait: durationpb.New(20 * time.Second)})
		poll <- result{d, err}
	}()
	time.Sleep(200 * time.Millisecond) // parked (a Decide that starts later answers the same)
	must[*arbiterv1.ReportTranscriptResponse](t)(b.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{
		SessionId: ag.sid, Role: arbiterv1.Role_ROLE_USER, Text: "Actually, stop. Don't book it."}))
	var decided result
	select {
	case decided = <-poll:
	case <-time.After(20 * time.Second):
		t.Fatal("the parked Decide was not woken by the stop")
	}
	if d := must[*arbiterv1.DecideResponse](t)(decided.d, decided.err); d.Decision != arbiterv1.Decision_DECISION_CANCEL {
		t.Fatalf("decision %v (%s), want CANCEL", d.Decision, d.Reason)
	}

	// The agent releases its prepare; meanwhile its outbox delivers the end of the
	// utterance and the model's re-issue, on c.
	speech(c, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END)
	const reissue = "fc_7334104368860656461"
	again := book(c, reissue, "tomorrow 3pm")
	if again.Disposition != arbiterv1.Disposition_DISPOSITION_DUPLICATE || again.JobId != job {
		t.Fatalf("re-issue: %v, want a duplicate of %s", again, job)
	}
	rsp := again.Effects.GetResponses()
	if len(rsp) != 1 || rsp[0].CallId != reissue || rsp[0].Payload.GetFields()["status"].GetStringValue() != "cancelled" {
		t.Errorf("re-issue's effects %v, want its response, status cancelled, at once", again.Effects)
	}
	if sk := speech(a, arbiterv1.SpeechEvent_SPEECH_EVENT_INTERRUPTED).Effects.GetSkips(); len(sk) != 0 {
		t.Errorf("the barge-in after the re-issue skipped %v", sk)
	}
	done := must[*arbiterv1.CompleteResponse](t)(b.c.Complete(ctx, &arbiterv1.CompleteRequest{
		SessionId: ag.sid, JobId: job, Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED}))
	if len(done.Effects.GetResponses()) != 0 || len(done.Effects.GetNotes()) != 1 {
		t.Errorf("Complete's effects %v, want the cancel note and no response (the re-issue has its answer)", done.Effects)
	}
	must[*arbiterv1.CloseSessionResponse](t)(c.c.CloseSession(ctx, &arbiterv1.CloseSessionRequest{SessionId: ag.sid}))

	// What the agent is handed over the session, from the start: one answer per live
	// id, none for the dead one, the note once.
	stream, err := b.c.Watch(ctx, &arbiterv1.WatchRequest{SessionId: ag.sid})
	if err != nil {
		t.Fatal(err)
	}
	responses, skips, notes := map[string]int{}, map[string]int{}, 0
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		switch e := m.Effect.(type) {
		case *arbiterv1.WatchResponse_Response:
			responses[e.Response.CallId]++
		case *arbiterv1.WatchResponse_Skip:
			skips[e.Skip.CallId]++
		case *arbiterv1.WatchResponse_Note:
			notes++
		}
	}
	if len(responses) != 1 || responses[reissue] != 1 || len(skips) != 1 || skips[first.CallId] != 1 || notes != 1 {
		t.Fatalf("effects over the session: responses %v, skips %v, %d notes; want the re-issue answered once, the first call skipped once, one note", responses, skips, notes)
	}
}
