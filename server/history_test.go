package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// historyText renders a GetHistory answer one entry a line ("T_MS #SEQ KIND ..."),
// checking that each entry's wall time is created_at plus its t_ms.
func historyText(t *testing.T, h *arbiterv1.GetHistoryResponse) string {
	t.Helper()
	var b strings.Builder
	for _, e := range h.Entries {
		if want := h.CreatedAt.AsTime().Add(time.Duration(e.TMs) * time.Millisecond); !e.At.AsTime().Truncate(time.Millisecond).Equal(want.Truncate(time.Millisecond)) {
			t.Errorf("entry at %d ms has wall time %v, want %v", e.TMs, e.At.AsTime(), want)
		}
		fmt.Fprintf(&b, "%d #%d ", e.TMs, e.Seq)
		if e.ObservedMs != nil {
			fmt.Fprintf(&b, "observed=%d ", *e.ObservedMs)
		}
		switch x := e.Entry.(type) {
		case *arbiterv1.HistoryEntry_Call:
			fmt.Fprintf(&b, "call %s %s %v %s", x.Call.CallId, x.Call.Tool, x.Call.Args.AsMap(), x.Call.Disposition)
		case *arbiterv1.HistoryEntry_Speech:
			fmt.Fprintf(&b, "speech %s utterance=%d", x.Speech.Event, x.Speech.Utterance)
		case *arbiterv1.HistoryEntry_Transcript:
			fmt.Fprintf(&b, "transcript %q intent=%s", x.Transcript.Text, x.Transcript.Intent)
			if x.Transcript.Discarded != "" {
				fmt.Fprintf(&b, " discarded=%q", x.Transcript.Discarded)
			}
		case *arbiterv1.HistoryEntry_Prepared:
			b.WriteString("prepared")
		case *arbiterv1.HistoryEntry_Complete:
			fmt.Fprintf(&b, "complete %s", x.Complete.Outcome)
		case *arbiterv1.HistoryEntry_Configure:
			fmt.Fprintf(&b, "configure record=%v", x.Configure.Record)
		case *arbiterv1.HistoryEntry_Decision:
			fmt.Fprintf(&b, "decision %s %s: %s", x.Decision.Decision, x.Decision.Cause, x.Decision.Reason)
		case *arbiterv1.HistoryEntry_Hold:
			fmt.Fprintf(&b, "hold utterance=%d end=%v", x.Hold.Utterance, x.Hold.End)
		case *arbiterv1.HistoryEntry_Response:
			fmt.Fprintf(&b, "response %s %v", x.Response.CallId, x.Response.Payload.AsMap()["status"])
		case *arbiterv1.HistoryEntry_Note:
			fmt.Fprintf(&b, "note %s", x.Note.Deliver)
		case *arbiterv1.HistoryEntry_Skip:
			fmt.Fprintf(&b, "skip %s %s", x.Skip.CallId, x.Skip.Reason)
		default:
			fmt.Fprintf(&b, "%T", x)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestGetHistory: a session's inputs, decisions, holds and effects come back in the
// order the engine made them, with times since the session started (on the service's
// clock) and the wall time, an aged event with its observation time; Watch effects
// carry their time; recording is asked for with ConfigureSession.
func TestGetHistory(t *testing.T) {
	clock := newFakeClock()
	n := newNode(t, memory.New(clock.Now), clock, server.Options{})
	ctx := context.Background()
	const id = "hist"
	cfg, err := n.c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: id, Record: true})
	if err != nil || !cfg.Record {
		t.Fatalf("configure record: %v %v", cfg, err)
	}
	reg, err := n.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: id, CallId: "c1", Tool: "book_slot",
		Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(4 * time.Second)
	if _, err := n.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: id, JobId: reg.JobId, Prepared: true}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(600 * time.Millisecond)
	if _, err := n.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: id, Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START,
		Age: durationpb.New(100 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if _, err := n.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: id, Text: "No, stop."}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: id, JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED}); err != nil {
		t.Fatal(err)
	}
	h, err := n.c.GetHistory(ctx, &arbiterv1.GetHistoryRequest{SessionId: id})
	if err != nil {
		t.Fatal(err)
	}
	want := `0 #0 configure record=true
0 #0 call c1 book_slot map[slot:tomorrow 3pm] DISPOSITION_EXECUTE
4000 #0 prepared
4600 #0 observed=4500 speech SPEECH_EVENT_USER_ACTIVITY_START utterance=1
4500 #0 hold utterance=1 end=false
5600 #0 transcript "No, stop." intent=stop
5600 #0 decision DECISION_CANCEL stop: stop intent in user speech: "No, stop."
5600 #0 hold utterance=1 end=true
5600 #0 complete OUTCOME_CANCELLED
5600 #1 response c1 cancelled
5600 #2 note DELIVERY_NOW
`
	if got := historyText(t, h); got != want {
		t.Errorf("history:\n%s\nwant:\n%s", got, want)
	}
	if !h.Record || !h.Complete || h.MaxBytes != arbiter.DefaultRecordBytes || h.Dropped != 0 || h.FirstSeq != 1 || h.Bytes == 0 {
		t.Errorf("record %v complete %v max %d dropped %d first_seq %d bytes %d", h.Record, h.Complete, h.MaxBytes, h.Dropped, h.FirstSeq, h.Bytes)
	}
	if h.PolicyDigest == "" || h.PolicyDigest != h.ServerPolicyDigest {
		t.Errorf("policy digest %q, server's %q", h.PolicyDigest, h.ServerPolicyDigest)
	}
	// The policy is the server's, restricted to the tools the session called.
	tools := h.Policy.AsMap()["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["name"] != "book_slot" {
		t.Errorf("policy tools %v", tools)
	}

	// Watch effects carry their time.
	stream, err := n.c.Watch(ctx, &arbiterv1.WatchRequest{SessionId: id})
	if err != nil {
		t.Fatal(err)
	}
	m, err := stream.Recv()
	if err != nil || m.Seq != 1 || !m.At.AsTime().Equal(h.CreatedAt.AsTime().Add(5600*time.Millisecond)) {
		t.Fatalf("watch: %v at %v, %v", m, m.GetAt().AsTime(), err)
	}

	// Issue 25: the model's echo is discarded, and the history says why.
	const echoID = "hist-echo"
	if _, err := n.c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: echoID, Record: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: echoID, Event: arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: echoID, Role: arbiterv1.Role_ROLE_MODEL,
		Text: "Please hold on while I book that for you."}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	tr, err := n.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: echoID, Text: "hold on while I book that"})
	if err != nil || tr.Intent != "unknown" {
		t.Fatalf("echo: %v %v", tr, err)
	}
	he, err := n.c.GetHistory(ctx, &arbiterv1.GetHistoryRequest{SessionId: echoID})
	if err != nil {
		t.Fatal(err)
	}
	if got := historyText(t, he); !strings.Contains(got, `transcript "hold on while I book that" intent=unknown discarded="6 words repeat what the model said within the last 10s: its echo, not the user's"`) {
		t.Errorf("echo history:\n%s", got)
	}

	_, err = n.c.GetHistory(ctx, &arbiterv1.GetHistoryRequest{SessionId: "nobody"})
	wantCode(t, err, codes.NotFound, "nobody")
	_, err = n.c.GetHistory(ctx, &arbiterv1.GetHistoryRequest{SessionId: "bad id"})
	wantCode(t, err, codes.InvalidArgument, "session_id")
}
