package arbiter

import (
	"strings"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// Confirm-then-act runs (issue 6): a tool whose policy says confirm or lists steps
// opens a run on its first call, answered at once with what to ask; only the
// confirmation executes the request, as a job on the confirmation call's id.

// runPolicy is bookingPolicy plus tools that run:
//   - order_photo: confirm, with the default confirmation tool (confirm_action);
//   - delete_album: confirm, also confirmed with confirm_action;
//   - print_photos: steps only (size and copies asked together, then finish),
//     answered with answer_question, runs once the last step is answered;
//   - send_card: one step (message), then confirm, answered with answer_question.
func runPolicy(mods ...func(*Policy)) *Policy {
	add := func(p *Policy) {
		p.Tools["order_photo"] = &Tool{Name: "order_photo", SideEffect: true, Confirm: true,
			Key: []KeyArg{{Arg: "photo"}}, Describe: "the print of {photo}"}
		p.Tools["delete_album"] = &Tool{Name: "delete_album", SideEffect: true, Confirm: true,
			Key: []KeyArg{{Arg: "album"}}, Describe: "deleting album {album}"}
		p.Tools["print_photos"] = &Tool{Name: "print_photos", SideEffect: true, ConfirmTool: "answer_question",
			Key: []KeyArg{{Arg: "photo"}}, Describe: "{copies} {size} {finish} prints of {photo}",
			Steps: []Step{
				{Arg: "size", Ask: "What size?"},
				{Arg: "copies", Ask: "How many copies?", WithPrevious: true},
				{Arg: "finish", Ask: "Glossy or matte?"},
			}}
		p.Tools["send_card"] = &Tool{Name: "send_card", SideEffect: true, Confirm: true, ConfirmTool: "answer_question",
			Key: []KeyArg{{Arg: "to"}}, Describe: "the card to {to}",
			Steps: []Step{{Arg: "message", Ask: "What should the card say?"}}}
	}
	return bookingPolicy(append([]func(*Policy){add}, mods...)...)
}

func photo(id, name string) RegisterCall {
	return RegisterCall{CallID: id, Tool: "order_photo", Args: map[string]any{"photo": name}}
}

func confirmAction(id string, args map[string]any) RegisterCall {
	return RegisterCall{CallID: id, Tool: "confirm_action", Args: args}
}

// runSteps is a stepper that also checks, after every step, that nothing executed
// where it must not: the only jobs are those the test expects.
type runSteps struct {
	*stepper
}

func newRunSteps(t *testing.T, p *Policy) *runSteps { return &runSteps{newStepper(t, p)} }

// only returns the single response of out, failing otherwise.
func onlyResponse(t *testing.T, out Output) Response {
	t.Helper()
	if len(out.Effects.Responses) != 1 {
		t.Fatalf("want one response, got %+v", out.Effects)
	}
	return out.Effects.Responses[0]
}

func wantStatus(t *testing.T, r Response, status string) {
	t.Helper()
	if r.Payload["status"] != status {
		t.Fatalf("response for %s: status %v, want %s (payload %v)", r.CallID, r.Payload["status"], status, r.Payload)
	}
	if status != "committed" && status != "ok" && r.Payload["executed"] != false && status != "unknown" && status != "timeout" {
		t.Fatalf("response for %s: executed %v, want false (payload %v)", r.CallID, r.Payload["executed"], r.Payload)
	}
}

func (rs *runSteps) noJobs() {
	rs.t.Helper()
	if n := len(rs.s.Jobs); n != 0 {
		rs.t.Fatalf("%d jobs exist; nothing may execute: %+v", n, rs.s.Jobs[0])
	}
}

func (rs *runSteps) allDecisions() []DecisionResult {
	var ds []DecisionResult
	for _, o := range rs.out {
		ds = append(ds, o.Decisions...)
	}
	return ds
}

func (rs *runSteps) runUpdates() []RunUpdate {
	var us []RunUpdate
	for _, o := range rs.out {
		us = append(us, o.Effects.Runs...)
	}
	return us
}

func noteWith(t *testing.T, out Output, subs ...string) Note {
	t.Helper()
	if len(out.Effects.Notes) != 1 {
		t.Fatalf("want one note, got %+v", out.Effects.Notes)
	}
	n := out.Effects.Notes[0]
	for _, s := range subs {
		if !strings.Contains(n.Text, s) {
			t.Fatalf("note %q does not mention %q", n.Text, s)
		}
	}
	return n
}

// open registers the opening call and checks it opened a run answered at once.
func (rs *runSteps) open(at int, ev RegisterCall, status string) (Output, string) {
	rs.t.Helper()
	out := rs.do(at, ev)
	if out.Call.Disposition != RunStep || out.Call.RunID == "" || out.Call.JobID != "" {
		rs.t.Fatalf("%s: %+v, want a run step with a run and no job", ev.CallID, out.Call)
	}
	r := onlyResponse(rs.t, out)
	wantStatus(rs.t, r, status)
	if r.Payload["run_id"] != out.Call.RunID || r.CallID != ev.CallID || r.Name != ev.Tool {
		rs.t.Fatalf("opening response %+v for run %s", r, out.Call.RunID)
	}
	if run := rs.s.Run(out.Call.RunID); run == nil || run.State != RunOpened {
		rs.t.Fatalf("run %s: %+v, want opened", out.Call.RunID, run)
	}
	return out, out.Call.RunID
}

// TestRunPhotoConfirmedWithYes: the photo request opens a run, is answered at once with
// what to ask, and only the "yes" executes it, as a job on the confirmation call's id
// through the normal guarded path (grace window, commit, response on that id).
func TestRunPhotoConfirmedWithYes(t *testing.T) {
	rs := newRunSteps(t, runPolicy())
	out, run := rs.open(1000, photo("p1", "the beach photo"), "needs_confirmation")
	r := out.Effects.Responses[0]
	next, _ := r.Payload["next"].(string)
	ask, _ := r.Payload["ask"].(string)
	if !strings.Contains(next, "confirm_action") || !strings.Contains(next, run) || !strings.Contains(next, "Nothing has been done") ||
		!strings.Contains(ask, "the print of the beach photo") {
		t.Errorf("the prompt must say what to ask and which tool to call next: %v", r.Payload)
	}
	if len(out.Effects.Runs) != 1 || out.Effects.Runs[0].State != RunOpened || out.Effects.Runs[0].RunID != run || out.Effects.Runs[0].CallID != "p1" {
		t.Errorf("run updates: %+v", out.Effects.Runs)
	}
	rs.noJobs()

	yes := rs.do(5000, confirmAction("k1", map[string]any{"run_id": run, "confirmed": true}))
	c := yes.Call
	if c.Disposition != Execute || c.JobID == "" || c.RunID != run || c.Tool != "order_photo" || c.Args["photo"] != "the beach photo" || !c.SideEffect {
		t.Fatalf("yes: %+v, want the photo request executed as a job", c)
	}
	if len(yes.Effects.Responses) != 0 {
		t.Fatalf("yes answered before the job ran: %+v", yes.Effects.Responses)
	}
	if len(yes.Effects.Runs) != 1 || yes.Effects.Runs[0].State != RunConfirmed || yes.Effects.Runs[0].JobID != c.JobID {
		t.Errorf("run updates: %+v", yes.Effects.Runs)
	}
	if got := rs.s.Run(run); got.State != RunConfirmed || got.JobID != c.JobID {
		t.Errorf("run: %+v", got)
	}
	if j := rs.s.Job(c.JobID); j.RunID != run || j.Tool != "order_photo" || len(j.CallIDs) != 1 || j.CallIDs[0] != "k1" {
		t.Errorf("job: %+v", j)
	}
	// The guarded path: held for the grace window after prepare, then commit.
	if d := rs.do(6000, Decide{JobID: c.JobID, Prepared: true}).Decision; d.Decision != Undecided {
		t.Fatalf("decided %+v inside the grace window", d)
	}
	if d := rs.do(7500, Decide{JobID: c.JobID, Prepared: true}).Decision; d.Decision != DecisionCommit {
		t.Fatalf("decision %+v, want commit after the grace window", d)
	}
	done := rs.do(7600, Complete{JobID: c.JobID, Outcome: Committed, Result: map[string]any{"reference": "P-1"}})
	resp := onlyResponse(t, done)
	wantStatus(t, resp, "committed")
	if resp.CallID != "k1" || resp.Name != "confirm_action" || resultOf(resp.Payload)["reference"] != "P-1" {
		t.Errorf("the job is answered on the confirmation call: %+v", resp)
	}
	if len(done.Effects.Notes) != 0 {
		t.Errorf("a commit answered on a live id needs no note: %+v", done.Effects.Notes)
	}
	if rs.s.Call("p1").Outcome.Response["status"] != "needs_confirmation" {
		t.Errorf("the opening call keeps its one answer: %+v", rs.s.Call("p1").Outcome)
	}
}

// TestRunPhotoRefusedWithNo: "no" cancels the run with a note; nothing executes.
func TestRunPhotoRefusedWithNo(t *testing.T) {
	for _, no := range []any{false, "no", " No ", "cancel"} {
		rs := newRunSteps(t, runPolicy())
		_, run := rs.open(1000, photo("p1", "the beach photo"), "needs_confirmation")
		out := rs.do(5000, confirmAction("k1", map[string]any{"run_id": run, "confirmed": no}))
		if out.Call.Disposition != RunStep || out.Call.JobID != "" || out.Call.RunID != run {
			t.Fatalf("no (%v): %+v", no, out.Call)
		}
		wantStatus(t, onlyResponse(t, out), "cancelled")
		noteWith(t, out, "the print of the beach photo", "the user said no", "Nothing was done")
		if out.Effects.Notes[0].RunID != run {
			t.Errorf("the note names its run: %+v", out.Effects.Notes[0])
		}
		if got := rs.s.Run(run); got.State != RunRefused || got.JobID != "" {
			t.Errorf("run: %+v", got)
		}
		if len(out.Effects.Runs) != 1 || out.Effects.Runs[0].State != RunRefused || out.Effects.Runs[0].CallID != "k1" {
			t.Errorf("run updates: %+v", out.Effects.Runs)
		}
		rs.noJobs()
		// A late "yes" for the refused run executes nothing.
		late := rs.do(6000, confirmAction("k2", map[string]any{"run_id": run, "confirmed": true}))
		if late.Call.Disposition != Reject {
			t.Errorf("yes after no: %+v", late.Call)
		}
		wantStatus(t, onlyResponse(t, late), "error")
		rs.noJobs()
	}
}

// TestRunPhotoUnclearTwice: an unclear answer asks again; the second unclear answer
// (the question was asked MaxAsks = 2 times) cancels the run. Nothing executes.
func TestRunPhotoUnclearTwice(t *testing.T) {
	rs := newRunSteps(t, runPolicy())
	_, run := rs.open(1000, photo("p1", "the beach photo"), "needs_confirmation")
	first := rs.do(5000, confirmAction("k1", map[string]any{"run_id": run, "confirmed": "maybe"}))
	if first.Call.Disposition != RunStep || first.Call.JobID != "" {
		t.Fatalf("unclear: %+v", first.Call)
	}
	r := onlyResponse(t, first)
	wantStatus(t, r, "unclear")
	if next, _ := r.Payload["next"].(string); !strings.Contains(next, "not clear") || !strings.Contains(next, "confirm_action") {
		t.Errorf("asks again: %v", r.Payload)
	}
	if len(first.Effects.Notes) != 0 || len(first.Effects.Runs) != 0 {
		t.Errorf("asking again is no state change: %+v", first.Effects)
	}
	if got := rs.s.Run(run); got.State != RunOpened || got.Asks != 2 {
		t.Errorf("run after one unclear answer: %+v", got)
	}
	second := rs.do(9000, confirmAction("k2", map[string]any{"run_id": run})) // no answer at all
	wantStatus(t, onlyResponse(t, second), "cancelled")
	noteWith(t, second, "the print of the beach photo", "no clear answer after asking 2 times", "Nothing was done")
	if got := rs.s.Run(run); got.State != RunCancelled {
		t.Errorf("run: %+v", got)
	}
	if len(second.Effects.Runs) != 1 || second.Effects.Runs[0].State != RunCancelled {
		t.Errorf("run updates: %+v", second.Effects.Runs)
	}
	rs.noJobs()

	// MaxAsks 3: two unclear answers ask again twice; the third cancels.
	rs = newRunSteps(t, runPolicy(func(p *Policy) { p.Tools["order_photo"].MaxAsks = 3 }))
	_, run = rs.open(1000, photo("p1", "the beach photo"), "needs_confirmation")
	for i, id := range []string{"k1", "k2"} {
		wantStatus(t, onlyResponse(t, rs.do(2000+i, confirmAction(id, map[string]any{"confirmed": "hmm"}))), "unclear")
	}
	wantStatus(t, onlyResponse(t, rs.do(3000, confirmAction("k3", map[string]any{"confirmed": "hmm"}))), "cancelled")
	rs.noJobs()
}

// TestRunOpeningToolRepeated: the opening tool called three times while its run is
// open joins the run each time (answered at once, told not to call again): one run,
// and after the yes one execution. A repeat after the yes is deduplicated against the
// job.
func TestRunOpeningToolRepeated(t *testing.T) {
	rs := newRunSteps(t, runPolicy())
	_, run := rs.open(1000, photo("p1", "the beach photo"), "needs_confirmation")
	for i, id := range []string{"p2", "p3", "p4"} {
		out := rs.do(2000+i*1000, photo(id, "the beach photo"))
		if out.Call.Disposition != RunStep || out.Call.RunID != run {
			t.Fatalf("%s: %+v, want it to join %s", id, out.Call, run)
		}
		r := onlyResponse(t, out)
		wantStatus(t, r, "needs_confirmation")
		if r.Payload["already_open"] != true || !strings.Contains(r.Payload["next"].(string), "do not call order_photo again") {
			t.Errorf("%s: %v", id, r.Payload)
		}
		if len(out.Effects.Runs) != 0 {
			t.Errorf("joining is no state change: %+v", out.Effects.Runs)
		}
	}
	if len(rs.s.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(rs.s.Runs))
	}
	if got := rs.s.Run(run).CallIDs; strings.Join(got, ",") != "p1,p2,p3,p4" {
		t.Errorf("run calls %v", got)
	}
	rs.noJobs()
	yes := rs.do(6000, confirmAction("k1", map[string]any{"confirmed": "yes"})) // the one open run: no run_id needed
	if yes.Call.Disposition != Execute || yes.Call.RunID != run {
		t.Fatalf("yes: %+v", yes.Call)
	}
	job := yes.Call.JobID
	again := rs.do(6500, photo("p5", "the beach photo"))
	if again.Call.Disposition != Duplicate || again.Call.JobID != job || again.Call.DuplicateOf != "k1" || again.Call.RunID != "" {
		t.Fatalf("repeat after the yes: %+v, want a duplicate of the job", again.Call)
	}
	if len(again.Effects.Responses) != 0 || len(rs.s.Runs) != 1 {
		t.Errorf("repeat after the yes: %+v, %d runs", again.Effects, len(rs.s.Runs))
	}
	rs.do(7000, Decide{JobID: job, Prepared: true})
	rs.do(8500, Tick{})
	done := rs.do(8600, Complete{JobID: job, Outcome: Committed, Result: map[string]any{"reference": "P-1"}})
	if len(done.Effects.Responses) != 2 {
		t.Fatalf("both live ids answered: %+v", done.Effects.Responses)
	}
	for _, r := range done.Effects.Responses {
		wantStatus(t, r, "committed")
	}
	if len(rs.s.Jobs) != 1 {
		t.Errorf("%d jobs, want one execution", len(rs.s.Jobs))
	}
	// Within the dedupe window, another repeat gets the result at once.
	late := rs.do(20000, photo("p6", "the beach photo"))
	if late.Call.Disposition != Duplicate || late.Call.JobID != job {
		t.Fatalf("repeat in the window: %+v", late.Call)
	}
	wantStatus(t, onlyResponse(t, late), "committed")
	if len(rs.s.Jobs) != 1 || len(rs.s.Runs) != 1 {
		t.Errorf("%d jobs, %d runs", len(rs.s.Jobs), len(rs.s.Runs))
	}
}

// TestRunConfirmWithoutRun: a confirmation call with no open run, with an unknown
// run_id, with several open runs and no run_id, or with the run_id of a run confirmed
// by another tool is answered with an error; nothing executes.
func TestRunConfirmWithoutRun(t *testing.T) {
	t.Run("no run at all", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy())
		out := rs.do(1000, confirmAction("k1", map[string]any{"confirmed": true}))
		if out.Call.Disposition != Reject || out.Call.JobID != "" || out.Call.RunID != "" {
			t.Fatalf("%+v", out.Call)
		}
		r := onlyResponse(t, out)
		wantStatus(t, r, "error")
		if !strings.Contains(r.Payload["error"].(string), "nothing was executed") {
			t.Errorf("%v", r.Payload)
		}
		rs.noJobs()
		if len(rs.s.Runs) != 0 {
			t.Errorf("runs: %+v", rs.s.Runs)
		}
	})
	t.Run("unknown run_id", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy())
		rs.open(1000, photo("p1", "x"), "needs_confirmation")
		out := rs.do(2000, confirmAction("k1", map[string]any{"run_id": "run-99", "confirmed": true}))
		wantStatus(t, onlyResponse(t, out), "error")
		if !strings.Contains(out.Effects.Responses[0].Payload["error"].(string), "run-99") {
			t.Errorf("%v", out.Effects.Responses[0].Payload)
		}
		rs.noJobs()
	})
	t.Run("several open runs and no run_id", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy())
		_, r1 := rs.open(1000, photo("p1", "x"), "needs_confirmation")
		_, r2 := rs.open(1100, RegisterCall{CallID: "d1", Tool: "delete_album", Args: map[string]any{"album": "2019"}}, "needs_confirmation")
		out := rs.do(2000, confirmAction("k1", map[string]any{"confirmed": true}))
		if out.Call.Disposition != Reject {
			t.Fatalf("%+v", out.Call)
		}
		msg := onlyResponse(t, out).Payload["error"].(string)
		if !strings.Contains(msg, r1) || !strings.Contains(msg, r2) || !strings.Contains(msg, "run_id") {
			t.Errorf("the error lists the runs and asks for run_id: %q", msg)
		}
		rs.noJobs()
		// With run_id it works, and then the other one is the only open run.
		if c := rs.do(3000, confirmAction("k2", map[string]any{"run_id": r2, "confirmed": true})).Call; c.Disposition != Execute || c.Tool != "delete_album" {
			t.Fatalf("%+v", c)
		}
		if c := rs.do(3100, confirmAction("k3", map[string]any{"confirmed": false})).Call; c.Disposition != RunStep || c.RunID != r1 {
			t.Fatalf("%+v", c)
		}
		if len(rs.s.Jobs) != 1 || rs.s.Run(r1).State != RunRefused {
			t.Errorf("jobs %d, run %+v", len(rs.s.Jobs), rs.s.Run(r1))
		}
	})
	t.Run("run_id of another confirmation tool", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy())
		_, card := rs.open(1000, RegisterCall{CallID: "s1", Tool: "send_card", Args: map[string]any{"to": "Ann"}}, "needs_input")
		out := rs.do(2000, confirmAction("k1", map[string]any{"run_id": card, "confirmed": true}))
		if out.Call.Disposition != Reject {
			t.Fatalf("%+v", out.Call)
		}
		if msg := onlyResponse(t, out).Payload["error"].(string); !strings.Contains(msg, "not confirmed with confirm_action") {
			t.Errorf("%q", msg)
		}
		// Without run_id, confirm_action finds no run of its own either.
		wantStatus(t, onlyResponse(t, rs.do(2100, confirmAction("k2", map[string]any{"confirmed": true}))), "error")
		if got := rs.s.Run(card); got.State != RunOpened || len(got.CallIDs) != 1 {
			t.Errorf("the card run is untouched: %+v", got)
		}
		rs.noJobs()
	})
}

// TestRunSteps: questions asked one at a time, and together (with_previous); answers by
// argument name or as "answer" for a lone question; a tool without confirm runs once
// the last step is answered, with the answers merged into its args.
func TestRunSteps(t *testing.T) {
	answer := func(id string, args map[string]any) RegisterCall {
		return RegisterCall{CallID: id, Tool: "answer_question", Args: args}
	}
	t.Run("together, then one at a time, then runs", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy())
		out, run := rs.open(1000, RegisterCall{CallID: "q1", Tool: "print_photos", Args: map[string]any{"photo": "beach"}}, "needs_input")
		ask := out.Effects.Responses[0].Payload["ask"].(string)
		if ask != "What size? How many copies?" {
			t.Errorf("the first two questions are asked together: %q", ask)
		}
		// "answer" is ignored while two questions are asked: nothing progressed.
		out = rs.do(2000, answer("a1", map[string]any{"run_id": run, "answer": "A4"}))
		wantStatus(t, onlyResponse(t, out), "unclear")
		// Both by name.
		out = rs.do(3000, answer("a2", map[string]any{"run_id": run, "size": "A4", "copies": 2.0}))
		r := onlyResponse(t, out)
		wantStatus(t, r, "needs_input")
		if r.Payload["ask"] != "Glossy or matte?" {
			t.Errorf("next question: %v", r.Payload)
		}
		if got := rs.s.Run(run); got.Asks != 1 || got.Answers["size"] != "A4" {
			t.Errorf("run: %+v", got)
		}
		rs.noJobs()
		// The lone question takes "answer"; no confirm: the request runs now.
		out = rs.do(4000, answer("a3", map[string]any{"answer": "matte"}))
		c := out.Call
		if c.Disposition != Execute || c.Tool != "print_photos" || c.Args["finish"] != "matte" || c.Args["size"] != "A4" ||
			c.Args["copies"] != 2.0 || c.Args["photo"] != "beach" {
			t.Fatalf("runs with the answers merged: %+v", c)
		}
		if got := rs.s.Run(run); got.State != RunConfirmed || got.Reason != "every step answered" {
			t.Errorf("run: %+v", got)
		}
	})
	t.Run("one of two together answered, the other asked alone", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy())
		_, run := rs.open(1000, RegisterCall{CallID: "q1", Tool: "print_photos", Args: map[string]any{"photo": "beach"}}, "needs_input")
		r := onlyResponse(t, rs.do(2000, answer("a1", map[string]any{"run_id": run, "size": "A4"})))
		if r.Payload["ask"] != "How many copies?" {
			t.Errorf("%v", r.Payload)
		}
		r = onlyResponse(t, rs.do(3000, answer("a2", map[string]any{"answer": 3.0})))
		if r.Payload["ask"] != "Glossy or matte?" {
			t.Errorf("%v", r.Payload)
		}
		if rs.s.Run(run).Answers["copies"] != 3.0 {
			t.Errorf("%+v", rs.s.Run(run))
		}
		rs.noJobs()
	})
	t.Run("a step, then the confirmation", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy())
		_, run := rs.open(1000, RegisterCall{CallID: "s1", Tool: "send_card", Args: map[string]any{"to": "Ann"}}, "needs_input")
		r := onlyResponse(t, rs.do(2000, answer("a1", map[string]any{"answer": "Happy birthday"})))
		wantStatus(t, r, "needs_confirmation")
		if !strings.Contains(r.Payload["ask"].(string), "the card to Ann") {
			t.Errorf("%v", r.Payload)
		}
		// "yes" alone now confirms.
		c := rs.do(3000, answer("a2", map[string]any{"run_id": run, "confirmed": "yes"})).Call
		if c.Disposition != Execute || c.Args["message"] != "Happy birthday" || c.Args["to"] != "Ann" {
			t.Fatalf("%+v", c)
		}
	})
	t.Run("no while a step is pending refuses", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy())
		_, run := rs.open(1000, RegisterCall{CallID: "s1", Tool: "send_card", Args: map[string]any{"to": "Ann"}}, "needs_input")
		wantStatus(t, onlyResponse(t, rs.do(2000, answer("a1", map[string]any{"confirmed": false}))), "cancelled")
		if rs.s.Run(run).State != RunRefused {
			t.Errorf("%+v", rs.s.Run(run))
		}
		rs.noJobs()
	})
}

// TestRunEndings: a stop while a run is open, expiry, close, and answers that come after
// the run ended.
func TestRunEndings(t *testing.T) {
	t.Run("stop cancels the run; a late no agrees, a late yes executes nothing", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy())
		_, run := rs.open(1000, photo("p1", "the beach photo"), "needs_confirmation")
		rs.do(2000, Speech{Kind: UserActivityStart})
		stop := rs.do(3000, Transcript{Text: "Actually, stop."})
		if stop.Intent != speech.IntentStop {
			t.Fatalf("intent %q", stop.Intent)
		}
		noteWith(t, stop, "the print of the beach photo", "was cancelled", "Nothing was done")
		if got := rs.s.Run(run); got.State != RunCancelled || !strings.Contains(got.Reason, "stop intent") {
			t.Errorf("run: %+v", got)
		}
		if len(stop.Effects.Runs) != 1 || stop.Effects.Runs[0].State != RunCancelled || stop.Effects.Runs[0].CallID != "" {
			t.Errorf("run updates: %+v", stop.Effects.Runs)
		}
		rs.do(3001, Speech{Kind: UserActivityEnd})
		no := rs.do(4000, confirmAction("k1", map[string]any{"run_id": run, "confirmed": false}))
		if no.Call.Disposition != RunStep || no.Call.RunID != run {
			t.Errorf("late no: %+v", no.Call)
		}
		wantStatus(t, onlyResponse(t, no), "cancelled")
		if len(no.Effects.Notes) != 0 || len(no.Effects.Runs) != 0 {
			t.Errorf("the run ended already: %+v", no.Effects)
		}
		yes := rs.do(4500, confirmAction("k2", map[string]any{"run_id": run, "confirmed": true}))
		if yes.Call.Disposition != Reject {
			t.Errorf("late yes: %+v", yes.Call)
		}
		wantStatus(t, onlyResponse(t, yes), "error")
		rs.noJobs()
		// Without run_id, there is no open run to confirm.
		wantStatus(t, onlyResponse(t, rs.do(5000, confirmAction("k3", map[string]any{"confirmed": true}))), "error")
		rs.noJobs()
	})
	t.Run("expiry at run_timeout, then a yes executes nothing", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy(func(p *Policy) { p.Tools["order_photo"].Timings.RunTimeout = 20 * time.Second }))
		_, run := rs.open(1000, photo("p1", "the beach photo"), "needs_confirmation")
		// An unclear answer at 5 s restarts the clock: expiry at 25 s.
		rs.do(5000, confirmAction("k1", map[string]any{"confirmed": "hmm"}))
		if due, ok := rs.e.NextTimer(rs.s); !ok || msOf(due) != 25000 {
			t.Errorf("next timer %v %v, want the expiry at 25000", msOf(due), ok)
		}
		if out := rs.do(24999, Tick{}); !out.Effects.Empty() {
			t.Fatalf("expired early: %+v", out.Effects)
		}
		out := rs.do(30000, Tick{})
		n := noteWith(t, out, "the print of the beach photo", "expired", "Nothing was done")
		if n.RunID != run || n.Deliver != DeliverNow {
			t.Errorf("note %+v", n)
		}
		if len(out.Effects.Runs) != 1 || out.Effects.Runs[0].State != RunExpired || msOf(out.Effects.Runs[0].At) != 25000 {
			t.Errorf("run updates: %+v", out.Effects.Runs)
		}
		if got := rs.s.Run(run); got.State != RunExpired || msOf(got.EndedAt) != 25000 {
			t.Errorf("run: %+v", got)
		}
		yes := rs.do(31000, confirmAction("k2", map[string]any{"run_id": run, "confirmed": true}))
		if yes.Call.Disposition != Reject || !strings.Contains(onlyResponse(t, yes).Payload["error"].(string), "expired") {
			t.Errorf("yes after expiry: %+v %+v", yes.Call, yes.Effects)
		}
		rs.noJobs()
		// The next call of the tool opens a new run.
		if _, run2 := rs.open(32000, photo("p2", "the beach photo"), "needs_confirmation"); run2 == run {
			t.Errorf("a new run was expected")
		}
	})
	t.Run("close with an open run", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy())
		_, run := rs.open(1000, photo("p1", "the beach photo"), "needs_confirmation")
		out := rs.do(2000, Close{})
		if got := rs.s.Run(run); got.State != RunCancelled || got.Reason != "the session closed" {
			t.Errorf("run: %+v", got)
		}
		if len(out.Effects.Runs) != 1 || out.Effects.Runs[0].State != RunCancelled || len(out.Effects.Notes) != 0 || len(out.Effects.Responses) != 0 {
			t.Errorf("close: %+v", out.Effects)
		}
		if out := rs.do(200000, Tick{}); !out.Effects.Empty() {
			t.Errorf("nothing fires after close: %+v", out.Effects)
		}
		rs.noJobs()
	})
	t.Run("yes held by a stop in the confirming utterance", func(t *testing.T) {
		// The user answers "yes... no wait, stop" while the model already calls the
		// confirmation: the job exists, and the stop cancels it before any commit.
		rs := newRunSteps(t, runPolicy())
		_, run := rs.open(1000, photo("p1", "the beach photo"), "needs_confirmation")
		rs.do(2000, Speech{Kind: UserActivityStart})
		yes := rs.do(2500, confirmAction("k1", map[string]any{"run_id": run, "confirmed": true}))
		job := yes.Call.JobID
		rs.do(2600, Decide{JobID: job, Prepared: true})
		if d := rs.do(5000, Decide{JobID: job, Prepared: true}).Decision; d.Decision != Undecided {
			t.Fatalf("the open utterance holds the commit: %+v", d)
		}
		rs.do(5100, Transcript{Text: "Yes. No wait, stop."})
		rs.do(5100, Speech{Kind: UserActivityEnd})
		if d := rs.do(5200, Decide{JobID: job, Prepared: true}).Decision; d.Decision != DecisionCancel || d.Cause != CauseStop {
			t.Fatalf("decision %+v, want cancel by the stop", d)
		}
		for _, d := range rs.allDecisions() {
			if d.Decision == DecisionCommit {
				t.Errorf("commit decided: %+v", d)
			}
		}
		done := rs.do(5300, Complete{JobID: job, Outcome: Cancelled})
		wantStatus(t, onlyResponse(t, done), "cancelled")
	})
	t.Run("the joined calls and the run are in the encoded session", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy())
		_, run := rs.open(1000, photo("p1", "x"), "needs_confirmation")
		rs.do(1500, photo("p2", "x"))
		b, err := EncodeSession(rs.s)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := DecodeSession(b)
		if err != nil {
			t.Fatal(err)
		}
		// Another replica continues the run from the stored session.
		out, err := rs.e.Step(s2, ms(2000), confirmAction("k1", map[string]any{"confirmed": true}))
		if err != nil || out.Call.Disposition != Execute || out.Call.RunID != run {
			t.Fatalf("%+v %v", out.Call, err)
		}
	})
}

// TestRunConfirmationDeadline: the job a confirmation call started is answered by the
// run tool's max_pending, not the policy default (the confirmation tool has no policy
// of its own), and the timeout names the tool that was not executed.
func TestRunConfirmationDeadline(t *testing.T) {
	rs := newRunSteps(t, runPolicy(func(p *Policy) { p.Tools["order_photo"].Timings.MaxPending = 120 * time.Second }))
	_, run := rs.open(1000, photo("p1", "the beach photo"), "needs_confirmation")
	job := rs.do(2000, confirmAction("k1", map[string]any{"run_id": run, "confirmed": true})).Call.JobID
	if out := rs.do(62000, Tick{}); !out.Effects.Empty() {
		t.Fatalf("answered at the default max_pending instead of the tool's: %+v", out.Effects)
	}
	out := rs.do(122000, Tick{})
	r := onlyResponse(t, out)
	wantStatus(t, r, "timeout")
	if r.CallID != "k1" || !strings.Contains(r.Payload["error"].(string), "order_photo was not executed") {
		t.Errorf("%+v", r)
	}
	if j := rs.s.Job(job); j.Decision != DecisionCancel || j.Cause != CauseDeadline {
		t.Errorf("job %+v", j)
	}
}

// TestRunRepeatedConfirmation: the same confirmation call id registered again (an agent
// retry) is answered from the record; it starts nothing new.
func TestRunRepeatedConfirmation(t *testing.T) {
	rs := newRunSteps(t, runPolicy())
	_, run := rs.open(1000, photo("p1", "x"), "needs_confirmation")
	first := rs.do(2000, confirmAction("k1", map[string]any{"run_id": run, "confirmed": true}))
	again := rs.do(2100, confirmAction("k1", map[string]any{"run_id": run, "confirmed": true}))
	if !again.Call.Repeat || again.Call.JobID != first.Call.JobID || again.Call.Tool != "order_photo" || len(rs.s.Jobs) != 1 {
		t.Errorf("repeat: %+v, %d jobs", again.Call, len(rs.s.Jobs))
	}
	if len(again.Effects.Runs) != 0 || len(again.Effects.Responses) != 0 {
		t.Errorf("repeat effects: %+v", again.Effects)
	}
	// A repeat of the opening call id too.
	if r := rs.do(2200, photo("p1", "x")); !r.Call.Repeat || r.Call.RunID != run || len(r.Effects.Responses) != 1 || r.Effects.Responses[0].Seq != rs.s.Call("p1").Outcome.Seq {
		t.Errorf("repeat of the opener: %+v %+v", r.Call, r.Effects)
	}
}
