package replay_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/policyfile"
	"github.com/voicearbiter/arbiter/replay"
)

// workflowChecks are the per-trace assertions of TestWorkflows: what each workflow
// trace must show, whatever the exact wording of the golden output. Every trace in
// testdata/workflows must have one.
var workflowChecks = map[string]func(t *testing.T, w *wf){
	// (a) yes: one run opened and confirmed, one execution, one commit answering the
	// confirmation call.
	"photo_confirmed": func(t *testing.T, w *wf) {
		w.commits(1)
		w.runStates("opened", "confirmed")
		w.dispositions("run", "execute")
		w.status(w.callIDs()[1], "committed")
	},
	// (b) no: the run is refused, nothing executes, a note says so.
	"photo_refused": func(t *testing.T, w *wf) {
		w.commits(0)
		w.runStates("opened", "refused")
		w.dispositions("run", "run")
		w.status(w.callIDs()[1], "cancelled")
		w.none("decision")
		if n := w.notes("the user said no"); n != 1 {
			t.Errorf("%d notes saying the user said no, want 1", n)
		}
	},
	// (c) unclear twice: asked again once, then cancelled; nothing executes.
	"photo_unclear_twice": func(t *testing.T, w *wf) {
		w.commits(0)
		w.runStates("opened", "cancelled")
		w.dispositions("run", "run", "run")
		ids := w.callIDs()
		w.status(ids[1], "unclear")
		w.status(ids[2], "cancelled")
		w.none("decision")
		if n := w.notes("no clear answer"); n != 1 {
			t.Errorf("%d notes about the unclear answer, want 1", n)
		}
	},
	// (d) the opening tool four times while the run is open (the first opens it, three
	// repeats join it): one run, one execution, one commit.
	"photo_repeated_while_open": func(t *testing.T, w *wf) {
		w.commits(1)
		w.runStates("opened", "confirmed")
		w.dispositions("run", "run", "run", "run", "execute")
		runs := map[string]bool{}
		for _, l := range w.kind("call") {
			if l.RunID != "" {
				runs[l.RunID] = true
			}
		}
		if len(runs) != 1 {
			t.Errorf("run ids among the call lines: %v, want exactly one", runs)
		}
		for _, id := range w.callIDs()[1:4] {
			if p := w.payload(id); p["already_open"] != true {
				t.Errorf("repeat %s answered %v, want already_open", id, p)
			}
		}
	},
	// A BLOCKING confirmation dropped by `interrupted` and re-issued without run_id:
	// the re-issue is a duplicate of the run's job, which commits once on it.
	"confirm_reissued_after_interrupt": func(t *testing.T, w *wf) {
		w.commits(1)
		w.runStates("opened", "confirmed")
		w.dispositions("run", "execute", "duplicate")
		ids := w.callIDs()
		w.skip(ids[1], "abandoned")
		w.status(ids[2], "committed")
	},
	// "No, don't take it." cancels the run as a stop; the model's late "no" without
	// run_id agrees with it (cancelled), not an error that invites a new run.
	"stop_then_late_no": func(t *testing.T, w *wf) {
		w.commits(0)
		w.runStates("opened", "cancelled")
		w.dispositions("run", "run")
		w.status(w.callIDs()[1], "cancelled")
		w.none("decision")
	},
	// A long NON_BLOCKING read-only call reports progress twice before its result:
	// two interim responses (final: false, not answers), then the one final response.
	"readonly_progress": func(t *testing.T, w *wf) {
		var interim, final int
		for _, l := range w.kind("response") {
			if l.Final != nil && !*l.Final {
				interim++
				if p, _ := l.Payload["status"].(string); p != "in_progress" {
					t.Errorf("interim response %v, want status in_progress", l.Payload)
				}
			} else {
				final++
			}
		}
		if interim != 2 || final != 1 {
			t.Errorf("%d interim and %d final responses, want 2 and 1", interim, final)
		}
		if w.res.Summary.Answered != 1 {
			t.Errorf("answered %d, want 1 (interim responses are not answers)", w.res.Summary.Answered)
		}
	},
	// (e) a confirmation with no run open: rejected with an error, nothing executes.
	"confirm_without_run": func(t *testing.T, w *wf) {
		w.commits(0)
		w.dispositions("reject")
		w.status(w.callIDs()[0], "error")
		w.none("run")
		w.none("decision")
	},
	// (f) a read-only call whose result comes late: a timeout answer at max_pending
	// (20 s), then the result as a note.
	"readonly_deadline_late_result": func(t *testing.T, w *wf) {
		id := w.callIDs()[0]
		w.status(id, "timeout")
		call, resp := w.first("call", id), w.first("response", id)
		if *resp.TMs-*call.TMs != 20000 {
			t.Errorf("timeout answer %d ms after the call, want 20000 (max_pending)", *resp.TMs-*call.TMs)
		}
		notes := w.kind("note")
		if len(notes) != 1 || !strings.Contains(notes[0].Text, "came after its call had timed out") || *notes[0].TMs <= *resp.TMs {
			t.Errorf("notes %+v, want one late-result note after the timeout answer", notes)
		}
	},
	// (g) a commit with an unknown outcome: the call and two repeats answered
	// "unknown" (still being confirmed), one execution, then the real outcome as the
	// authoritative note.
	"commit_unknown_then_confirmed": func(t *testing.T, w *wf) {
		w.commits(1)
		w.dispositions("execute", "duplicate", "duplicate")
		if n := len(w.kind("commit")); n != 1 {
			t.Errorf("%d commit lines, want 1", n)
		}
		for _, id := range w.callIDs() {
			w.status(id, "unknown")
			if m, _ := w.payload(id)["message"].(string); !strings.Contains(m, "still being confirmed") {
				t.Errorf("%s: message %q, want it to say still being confirmed", id, m)
			}
		}
		res := w.kind("resolved")
		if len(res) != 1 || res[0].Outcome != "committed" {
			t.Fatalf("resolved lines %+v, want one, committed", res)
		}
		notes := w.kind("note")
		if len(notes) != 1 || !strings.Contains(notes[0].Text, "IS confirmed") || *notes[0].TMs < *res[0].TMs {
			t.Errorf("notes %+v, want one saying it IS confirmed, at the resolution", notes)
		}
	},
	// (h) a reconnect between the call and its commit: the first id dies
	// (connection_closed), the re-issue on the new connection is deduplicated and
	// answered live with the commit; no note is needed.
	"reconnect_reissue": func(t *testing.T, w *wf) {
		w.commits(1)
		w.dispositions("execute", "duplicate")
		ids := w.callIDs()
		w.skip(ids[0], "connection_closed")
		w.status(ids[1], "committed")
		if p := w.payload(ids[1]); p["duplicate_of"] != ids[0] {
			t.Errorf("re-issue answered %v, want duplicate_of %s", p, ids[0])
		}
		w.none("note")
	},
	// (i) the same without a re-issue: the outcome goes out as a note.
	"reconnect_no_reissue": func(t *testing.T, w *wf) {
		w.commits(1)
		w.skip(w.callIDs()[0], "connection_closed")
		w.none("response")
		if n := w.notes("is confirmed"); n != 1 {
			t.Errorf("%d notes saying it is confirmed, want 1", n)
		}
	},
	// A run with steps, answered one at a time: party size, then name, then yes.
	"table_steps_one_at_a_time": func(t *testing.T, w *wf) {
		w.commits(1)
		w.runStates("opened", "confirmed")
		w.dispositions("run", "run", "run", "execute")
		ids := w.callIDs()
		for i, want := range []string{"needs_input", "needs_input", "needs_confirmation", "committed"} {
			w.status(ids[i], want)
		}
	},
	// The same, both steps in one answer.
	"table_steps_together": func(t *testing.T, w *wf) {
		w.commits(1)
		w.runStates("opened", "confirmed")
		w.dispositions("run", "run", "execute")
		ids := w.callIDs()
		for i, want := range []string{"needs_input", "needs_confirmation", "committed"} {
			w.status(ids[i], want)
		}
	},
	// A run nobody answers expires at run_timeout (30 s after the call) with a note.
	"photo_run_expires": func(t *testing.T, w *wf) {
		w.commits(0)
		w.runStates("opened", "expired")
		runs := w.kind("run")
		if d := *runs[1].TMs - *runs[0].TMs; d != 30000 {
			t.Errorf("expired %d ms after it opened, want 30000 (run_timeout)", d)
		}
		if n := w.notes("expired"); n != 1 {
			t.Errorf("%d expiry notes, want 1", n)
		}
	},
}

// TestWorkflows replays every trace in testdata/workflows under its policy and checks
// what the trace is about (workflowChecks) plus what every trace must end with: no
// unanswered call, no double commit, every call answered or skipped. (TestGoldens
// compares the output with the golden files.)
func TestWorkflows(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/workflows/*.jsonl")
	if len(paths) < len(workflowChecks) {
		t.Fatalf("found %d workflow traces, want at least %d", len(paths), len(workflowChecks))
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			check, ok := workflowChecks[name]
			if !ok {
				t.Fatalf("no workflowChecks entry for %s: say what it must show", name)
			}
			events, err := replay.ReadTraceFile(path, os.Stderr)
			if err != nil {
				t.Fatal(err)
			}
			policyPath := "../testdata/workflows/tools.yaml"
			if len(events) > 0 && events[0].Policy != "" {
				policyPath = filepath.Join(filepath.Dir(path), events[0].Policy)
			}
			policy, err := policyfile.Load(policyPath)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			res, err := replay.RunLocal(context.Background(), policy, events, replay.Options{SessionID: "wf-" + name}, &out)
			if err != nil {
				t.Fatalf("replay: %v\n%s", err, out.String())
			}
			s := res.Summary
			if len(s.Unanswered) != 0 || s.DoubleCommits != 0 || s.Answered+s.Skipped != s.Calls || res.Failed() {
				t.Errorf("summary %+v: want no unanswered call, no double commit, every call answered or skipped", s)
			}
			check(t, &wf{t: t, res: res})
			if t.Failed() {
				t.Logf("output:\n%s", out.String())
			}
		})
	}
}

// wf reads one workflow replay's output lines.
type wf struct {
	t   *testing.T
	res *replay.Result
}

func (w *wf) kind(out string) []replay.Line {
	var ls []replay.Line
	for _, l := range w.res.Lines {
		if l.Out == out {
			ls = append(ls, l)
		}
	}
	return ls
}

// callIDs are the call ids in the order of their call lines.
func (w *wf) callIDs() []string {
	var ids []string
	for _, l := range w.kind("call") {
		ids = append(ids, l.CallID)
	}
	return ids
}

func (w *wf) first(out, callID string) replay.Line {
	w.t.Helper()
	for _, l := range w.kind(out) {
		if l.CallID == callID {
			return l
		}
	}
	w.t.Fatalf("no %s line for %s", out, callID)
	return replay.Line{}
}

func (w *wf) payload(callID string) map[string]any {
	w.t.Helper()
	for _, l := range w.kind("response") {
		if l.CallID == callID && l.Final == nil {
			return l.Payload
		}
	}
	w.t.Fatalf("no final response for %s", callID)
	return nil
}

func (w *wf) status(callID, want string) {
	w.t.Helper()
	if got := w.payload(callID)["status"]; got != want {
		w.t.Errorf("%s answered with status %v, want %s", callID, got, want)
	}
}

func (w *wf) skip(callID, reason string) {
	w.t.Helper()
	if l := w.first("skip", callID); l.Reason != reason {
		w.t.Errorf("%s skipped with reason %q, want %q", callID, l.Reason, reason)
	}
}

func (w *wf) commits(n int) {
	w.t.Helper()
	if w.res.Summary.Commits != n {
		w.t.Errorf("%d commits, want %d", w.res.Summary.Commits, n)
	}
	if c := len(w.kind("commit")); c != n {
		w.t.Errorf("%d commit lines, want %d", c, n)
	}
}

func (w *wf) runStates(want ...string) {
	w.t.Helper()
	var got []string
	for _, l := range w.kind("run") {
		got = append(got, l.State)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		w.t.Errorf("run states %v, want %v", got, want)
	}
}

func (w *wf) dispositions(want ...string) {
	w.t.Helper()
	var got []string
	for _, l := range w.kind("call") {
		got = append(got, l.Disposition)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		w.t.Errorf("dispositions %v, want %v", got, want)
	}
}

func (w *wf) none(out string) {
	w.t.Helper()
	if ls := w.kind(out); len(ls) > 0 {
		w.t.Errorf("%d %s lines, want none: %+v", len(ls), out, ls)
	}
}

func (w *wf) notes(substr string) int {
	n := 0
	for _, l := range w.kind("note") {
		if strings.Contains(l.Text, substr) {
			n++
		}
	}
	return n
}
