package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/voicearbiter/arbiter/policyfile"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/replay"
	"github.com/voicearbiter/arbiter/server"
)

// TestEffectLog: every decision, response, skip and note is logged once, at info, as
// it is handed out, with the ids of what it is about under the same keys (session_id,
// call_id, job_id, tool), and durations as durations ("2s"); retries that hand the same
// effects out again (a repeated RegisterCall or Complete, a Poll from seq 0) log
// nothing more, and the access log of an OK RPC stays at debug.
func TestEffectLog(t *testing.T) {
	policy, err := policyfile.Load("../testdata/tools/booking.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: server.LogDurations}))
	f := startTraced(t, policy, server.Options{Logger: log})
	ctx := context.Background()
	slot := args(t, map[string]any{"slot": "tomorrow 3pm"})
	reg, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "log", CallId: "c1", Tool: "book_slot", Args: slot,
		Behavior: arbiterv1.Behavior_BEHAVIOR_BLOCKING})
	if err != nil {
		t.Fatal(err)
	}
	speech := func(e arbiterv1.SpeechEvent) {
		t.Helper()
		if _, err := f.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "log", Event: e}); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.AdvanceTo(replay.Epoch.Add(time.Second))
	speech(arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START)
	speech(arbiterv1.SpeechEvent_SPEECH_EVENT_INTERRUPTED) // c1 is dead: a skip
	f.clock.AdvanceTo(replay.Epoch.Add(2 * time.Second))
	speech(arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END)
	if _, err := f.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "log", Text: "Stop, don't book it."}); err != nil {
		t.Fatal(err) // a decision (cancel, stop) and a note
	}
	dup, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "log", CallId: "c2", Tool: "book_slot", Args: slot})
	if err != nil || dup.Disposition != arbiterv1.Disposition_DISPOSITION_DUPLICATE {
		t.Fatalf("c2: %v %v", dup, err) // answered at once: a response
	}
	for i := 0; i < 2; i++ { // the retry hands out the same response
		if _, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "log", CallId: "c2", Tool: "book_slot", Args: slot}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "log", JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED}); err != nil {
			t.Fatal(err)
		}
	}
	zero := uint64(0)
	if p, err := f.c.Poll(ctx, &arbiterv1.PollRequest{SessionId: "log", AfterSeq: &zero}); err != nil || len(p.Effects.Skips) != 1 {
		t.Fatalf("poll: %v %v", p, err)
	}
	if d, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "log", JobId: reg.JobId, Wait: durationpb.New(0)}); err != nil || d.Decision != arbiterv1.Decision_DECISION_CANCEL {
		t.Fatalf("decide: %v %v", d, err)
	}

	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		lines = append(lines, m)
	}
	count := map[string]int{}
	for _, l := range lines {
		msg, _ := l["msg"].(string)
		count[msg]++
		if l["level"] != "INFO" {
			t.Errorf("%s logged at %v: %v", msg, l["level"], l)
		}
		if l["session_id"] != "log" {
			t.Errorf("%s: session_id %v", msg, l["session_id"])
		}
		for _, k := range []string{"call_id", "job_id", "tool"} {
			if _, ok := l[k]; !ok {
				t.Errorf("%s has no %s: %v", msg, k, l)
			}
		}
	}
	want := map[string]int{"skip": 1, "decision": 1, "note": 1, "response": 1}
	for msg, n := range want {
		if count[msg] != n {
			t.Errorf("%d %q lines, want %d", count[msg], msg, n)
		}
	}
	for msg := range count {
		if want[msg] == 0 {
			t.Errorf("unexpected %q line (access logs of OK RPCs belong at debug)", msg)
		}
	}
	for _, l := range lines {
		switch l["msg"] {
		case "skip":
			check(t, l, map[string]any{"call_id": "c1", "job_id": reg.JobId, "tool": "book_slot", "reason": "abandoned"})
		case "decision":
			check(t, l, map[string]any{"call_id": "c1", "job_id": reg.JobId, "tool": "book_slot", "decision": "cancel", "cause": "stop"})
			if !strings.Contains(l["reason"].(string), "Stop, don't book it.") {
				t.Errorf("decision reason %v", l["reason"])
			}
		case "note":
			check(t, l, map[string]any{"call_id": "", "job_id": reg.JobId, "tool": "book_slot", "deliver": "now"})
		case "response":
			// Registered at 2 s, answered at once; the request's own call id is c2 too.
			check(t, l, map[string]any{"call_id": "c2", "job_id": reg.JobId, "tool": "book_slot", "status": "cancelled", "pending": "0s"})
		}
	}
}

// TestEffectLogDurations: a duration is logged as one ("2.5s"), in JSON too.
func TestEffectLogDurations(t *testing.T) {
	policy, err := policyfile.Load("../testdata/tools/booking.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{ReplaceAttr: server.LogDurations}))
	f := startTraced(t, policy, server.Options{Logger: log})
	ctx := context.Background()
	reg, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "d", CallId: "c1", Tool: "book_slot", Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "d", JobId: reg.JobId, Prepared: true}); err != nil {
		t.Fatal(err)
	}
	// The grace window ends at 1.5 s: a Poll then decides the commit in time (a
	// commit first decided long after it came due is withheld from a Decide that
	// asks after it: see arbiter.Decide).
	f.clock.AdvanceTo(replay.Epoch.Add(1500 * time.Millisecond))
	if _, err := f.c.Poll(ctx, &arbiterv1.PollRequest{SessionId: "d"}); err != nil {
		t.Fatal(err)
	}
	f.clock.AdvanceTo(replay.Epoch.Add(2500 * time.Millisecond))
	d, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "d", JobId: reg.JobId, Prepared: true})
	if err != nil || d.Decision != arbiterv1.Decision_DECISION_COMMIT {
		t.Fatalf("decide: %v %v", d, err)
	}
	if _, err := f.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "d", JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED}); err != nil {
		t.Fatal(err)
	}
	var decision, response map[string]any
	for _, ln := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(ln), &m); err != nil {
			t.Fatal(err)
		}
		switch m["msg"] {
		case "decision":
			decision = m
		case "response":
			response = m
		}
	}
	// The commit came due at the end of the grace window, 1.5 s after the prepare,
	// and was decided by the Poll then; the Decide at 2.5 s handed it out.
	check(t, decision, map[string]any{"decision": "commit", "prepared_for": "1.5s", "job_id": reg.JobId, "call_id": "c1"})
	check(t, response, map[string]any{"call_id": "c1", "status": "committed", "pending": "2.5s"})
}

func check(t *testing.T, l map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if l[k] != v {
			t.Errorf("%v: %s = %v, want %v", l["msg"], k, l[k], v)
		}
	}
}
