package replay

import (
	"bytes"
	"context"
	"strings"
	"testing"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// TestInterimResponsesAnswerNothing: an interim response (ReportProgress) is printed
// with "final": false and does not answer its call; the final one that follows does.
// Run updates become `run` lines.
func TestInterimResponsesAnswerNothing(t *testing.T) {
	var out bytes.Buffer
	clock := NewVirtualClock(Epoch)
	r := &runner{ctx: context.Background(), clock: clock, opt: Options{Start: Epoch}, res: &Result{}, out: &out,
		answered: map[string]map[string]any{}, skipped: map[string]bool{}, calls: map[string]bool{"c1": true}, callOrder: []string{"c1"}}
	err := r.effects(&arbiterv1.Effects{
		Responses: []*arbiterv1.FunctionResponse{{CallId: "c1", Payload: mustStruct(map[string]any{"status": "in_progress", "percent": 40}), Interim: true}},
		Runs:      []*arbiterv1.RunUpdate{{RunId: "run-1", CallId: "c1", State: arbiterv1.RunState_RUN_STATE_OPENED}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.answered) != 0 {
		t.Fatalf("an interim response answered the call: %v", r.answered)
	}
	if err := r.effects(&arbiterv1.Effects{Responses: []*arbiterv1.FunctionResponse{{CallId: "c1", Payload: mustStruct(map[string]any{"status": "ok"})}}}); err != nil {
		t.Fatal(err)
	}
	if len(r.answered) != 1 {
		t.Fatalf("the final response did not answer the call")
	}
	// An interim response after the final one is an arbiter error.
	if err := r.effects(&arbiterv1.Effects{Responses: []*arbiterv1.FunctionResponse{{CallId: "c1", Payload: mustStruct(map[string]any{}), Interim: true}}}); err == nil {
		t.Fatal("interim response after the final one accepted")
	}
	want := `{"out":"response","t_ms":0,"call_id":"c1","payload":{"percent":40,"status":"in_progress"},"final":false}
{"out":"run","t_ms":0,"run_id":"run-1","state":"opened","call_id":"c1"}
{"out":"response","t_ms":0,"call_id":"c1","payload":{"status":"ok"}}
`
	if out.String() != want {
		t.Fatalf("output\n%s\nwant\n%s", out.String(), want)
	}
	r.summarize()
	if !strings.Contains(out.String(), `"answered":1`) {
		t.Fatalf("summary: %s", out.String())
	}
}
