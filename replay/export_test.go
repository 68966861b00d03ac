package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/policyfile"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/replay"
)

// recordAndExport replays the trace at path (of testdata/dir) on an in-process
// arbiter that records every session, exports the session (GetHistory, Export) and
// returns the original replay's result, the exported trace and the export's
// warnings.
func recordAndExport(t *testing.T, dir, path string) (*replay.Result, []byte, string) {
	t.Helper()
	events, err := replay.ReadTraceFile(path, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	policy := goldenPolicy(t, dir, path, events)
	l, err := replay.NewLocal(policy, replay.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Service.HistorySample = 1
	const sid = "recorded"
	res, err := replay.Run(context.Background(), l.Client, l.Clock, events, replay.Options{SessionID: sid, Start: replay.Epoch}, nil)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	h, err := l.Client.GetHistory(context.Background(), &arbiterv1.GetHistoryRequest{SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	var trace, warn bytes.Buffer
	if err := replay.Export(h, &trace, &warn, replay.ExportOptions{}); err != nil {
		t.Fatalf("export: %v", err)
	}
	return res, trace.Bytes(), warn.String()
}

// goldenPolicy is the policy TestGoldens replays the trace under.
func goldenPolicy(t *testing.T, dir, path string, events []replay.TraceEvent) *arbiter.Policy {
	t.Helper()
	policyPath := map[string]string{
		"scenarios": "../testdata/scenarios/policy.yaml",
		"traces":    "../testdata/tools/booking.yaml",
		"workflows": "../testdata/workflows/tools.yaml",
	}[dir]
	if len(events) > 0 && events[0].Policy != "" {
		policyPath = filepath.Join(filepath.Dir(path), events[0].Policy)
	}
	policy, err := policyfile.Load(policyPath)
	if err != nil {
		t.Fatal(err)
	}
	return policy
}

// TestExportReplaysAlike: every session of testdata (recorded traces, scenarios,
// workflows), replayed on an arbiter that records it, exported from its history and
// replayed again under the policy the export carries, gives the same dispositions,
// decisions, responses, skips and notes as the first replay; and the export's own
// recorded outcomes (its ref_ lines) are those of the first replay too. Times are not
// compared: only what was decided and handed out.
func TestExportReplaysAlike(t *testing.T) {
	for _, dir := range []string{"traces", "scenarios", "workflows"} {
		paths, _ := filepath.Glob(filepath.Join("..", "testdata", dir, "*.jsonl"))
		for _, path := range paths {
			name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
			t.Run(dir+"/"+name, func(t *testing.T) {
				orig, trace, warn := recordAndExport(t, dir, path)
				events, err := replay.ParseTrace(bytes.NewReader(trace), "export", os.Stderr)
				if err != nil {
					t.Fatalf("the export does not parse: %v\n%s", err, trace)
				}
				if len(events) == 0 || events[0].Event != "session_start" || len(events[0].Tools) == 0 {
					t.Fatalf("no session_start with the policy:\n%s", trace)
				}
				policy, err := policyfile.Parse(events[0].Tools, "export tools")
				if err != nil {
					t.Fatalf("the exported policy: %v", err)
				}
				again, err := replay.RunLocal(context.Background(), policy, events, replay.Options{SessionID: "again"}, nil)
				if err != nil {
					t.Fatalf("replaying the export: %v\n%s", err, trace)
				}
				if d := replay.Diff(replay.OutcomesOf(orig), replay.OutcomesOf(again)); len(d) > 0 {
					t.Errorf("the export replays otherwise (%s):\n%s\nwarnings: %s\ntrace:\n%s", replay.Count(d), diffText(d), warn, trace)
				}
				if d := replay.Diff(replay.OutcomesOf(orig), replay.RecordedOutcomes(events)); len(d) > 0 {
					t.Errorf("the export's recorded outcomes differ from the session's (%s):\n%s", replay.Count(d), diffText(d))
				}
			})
		}
	}
}

func diffText(d []replay.DiffLine) string {
	var b strings.Builder
	for _, l := range d {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestExportKeepsWhatWasAnswered: issue 26. A live session answers COMMIT for a
// booking when its grace window ends; then the user's "stop", which the agent had
// observed before the commit came due, arrives with its age (an agent that acted on
// the COMMIT with it undelivered). The answered COMMIT stands: the booking is
// committed and its note says the user asked to stop after. The session's export
// replays the same way: the late events are placed after the commit they arrived
// after, not at their observation times, where they would cancel it.
func TestExportKeepsWhatWasAnswered(t *testing.T) {
	policy, err := policyfile.Load("../testdata/tools/booking.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l, err := replay.NewLocal(policy, replay.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Service.HistorySample = 1
	ctx, c, sid := context.Background(), l.Client, "answered"
	at := func(ms int) { l.Clock.AdvanceTo(replay.Epoch.Add(time.Duration(ms) * time.Millisecond)) }
	age := func(ms int) *durationpb.Duration { return durationpb.New(time.Duration(ms) * time.Millisecond) }
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	args, _ := structpb.NewStruct(map[string]any{"slot": "tomorrow 3pm"})
	reg, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: sid, CallId: "c1", Tool: "book_slot", Args: args})
	if err != nil {
		t.Fatal(err)
	}
	at(100)
	must(c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: sid, JobId: reg.JobId, Prepared: true}))
	at(1600) // the grace window's end
	d, err := c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: sid, JobId: reg.JobId, Prepared: true})
	if err != nil || d.Decision != arbiterv1.Decision_DECISION_COMMIT {
		t.Fatalf("decide at the grace window's end: %v %v", d, err)
	}
	at(1700) // observed at 800 ms, 1,100 ms and 1,100 ms
	must(c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: sid, Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START, Age: age(900)}))
	must(c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: sid, Role: arbiterv1.Role_ROLE_USER, Text: "Stop, don't book it.", Age: age(600)}))
	must(c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: sid, Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END, Age: age(600)}))
	at(2000)
	result, _ := structpb.NewStruct(map[string]any{"reference": "R-1"})
	done, err := c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: sid, JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED, Result: result})
	if err != nil || len(done.Effects.GetNotes()) != 1 || !strings.Contains(done.Effects.Notes[0].Text, "asked to stop after") {
		t.Fatalf("the live session: %v %v", done, err)
	}
	must(c.CloseSession(ctx, &arbiterv1.CloseSessionRequest{SessionId: sid}))

	h, err := c.GetHistory(ctx, &arbiterv1.GetHistoryRequest{SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	var trace, warn bytes.Buffer
	if err := replay.Export(h, &trace, &warn, replay.ExportOptions{}); err != nil {
		t.Fatalf("export: %v", err)
	}
	events, err := replay.ParseTrace(bytes.NewReader(trace.Bytes()), "export", os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	again, err := replay.RunLocal(ctx, policy, events, replay.Options{SessionID: "again"}, nil)
	if err != nil {
		t.Fatalf("replaying the export: %v\n%s", err, trace.String())
	}
	if d := replay.Diff(replay.RecordedOutcomes(events), replay.OutcomesOf(again)); len(d) > 0 {
		t.Errorf("the export replays otherwise than the session ran (%s):\n%s\nwarnings: %s\ntrace:\n%s", replay.Count(d), diffText(d), warn.String(), trace.String())
	}
	if again.Summary.Commits != 1 {
		t.Errorf("the replay committed %d times, want 1 (the answered COMMIT)\n%s", again.Summary.Commits, trace.String())
	}
}

// TestExportWarnsOfOmittedResult: a result over its bound is left out of the session's
// responses (issue 25, item 5); the trace cannot carry it, so the export says so.
func TestExportWarnsOfOmittedResult(t *testing.T) {
	big, _ := json.Marshal(map[string]any{"reference": "R-1", "blob": strings.Repeat("x", 70<<10)})
	trace := `{"t_ms": 0, "event": "session_start", "prepare_ms": 100, "commit_result": ` + string(big) + `}
{"t_ms": 10, "event": "tool_call", "call_id": "c1", "tool": "book_slot", "args": {"slot": "tomorrow 3pm"}}
{"t_ms": 5000, "event": "end"}
`
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	res, _, warn := recordAndExport(t, "traces", path)
	if res.Summary.Commits != 1 || len(res.Summary.Unanswered) != 0 {
		t.Fatalf("summary %+v: want the booking committed and answered", res.Summary)
	}
	if !strings.Contains(warn, "its result was left out (the backend's result was 71709 bytes, over the 65536-byte limit") {
		t.Fatalf("warnings %q: want one about the result left out", warn)
	}
}
