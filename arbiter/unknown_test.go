package arbiter

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// Unknown commit outcomes, deadlines that answer every call, and interim progress.

// committedJob books tomorrow 3pm on call c1 at 1 s and takes it to a commit decision
// (prepared at 2 s, grace over at 3.5 s); it returns the job id.
func committedJob(t *testing.T, sp *stepper) string {
	t.Helper()
	j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
	sp.do(2000, Decide{JobID: j, Prepared: true})
	if d := sp.do(3500, Decide{JobID: j, Prepared: true}).Decision; d.Decision != DecisionCommit {
		t.Fatalf("decision %+v, want commit", d)
	}
	return j
}

func decisionsOf(sp *stepper, job string) []DecisionResult {
	var ds []DecisionResult
	for _, o := range sp.out {
		for _, d := range o.Decisions {
			if d.JobID == job {
				ds = append(ds, d)
			}
		}
	}
	return ds
}

// TestUnknownOutcome: the commit's outcome is unknown; the job stays in the dedupe
// table as possibly committed, repeats are answered "still being confirmed" and never
// executed, and the real outcome, reported later, produces the authoritative note.
func TestUnknownOutcome(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	j := committedJob(t, sp)
	unk := sp.do(4000, Complete{JobID: j, Outcome: Unknown, Error: "backend timed out"})
	r := onlyResponse(t, unk)
	if r.CallID != "c1" || r.Payload["status"] != "unknown" || !strings.Contains(r.Payload["message"].(string), "still being confirmed") ||
		!strings.Contains(r.Payload["message"].(string), "Do not call book_slot again") {
		t.Fatalf("unknown: %+v", r)
	}
	if len(unk.Effects.Notes) != 0 {
		t.Errorf("the live call was answered; no note: %+v", unk.Effects.Notes)
	}
	if got := sp.s.Job(j); got.Outcome != Unknown || got.Decision != DecisionCommit {
		t.Fatalf("job %+v", got)
	}
	// Repeats, even long after the dedupe window, are absorbed and answered at once.
	for i, at := range []int{5000, 20000, 90000} {
		id := []string{"c2", "c3", "c4"}[i]
		out := sp.do(at, RegisterCall{CallID: id, Tool: "book_slot", Args: map[string]any{"slot": "tomorrow at 3pm"}})
		if out.Call.Disposition != Duplicate || out.Call.JobID != j || out.Call.DuplicateOf != "c1" {
			t.Fatalf("%s at %d: %+v, want a duplicate of the unknown job", id, at, out.Call)
		}
		rr := onlyResponse(t, out)
		if rr.Payload["status"] != "unknown" || rr.Payload["duplicate_of"] != "c1" || !strings.Contains(rr.Payload["message"].(string), "still being confirmed") {
			t.Errorf("%s: %+v", id, rr)
		}
	}
	if len(sp.s.Jobs) != 1 {
		t.Fatalf("%d jobs: a repeat executed", len(sp.s.Jobs))
	}
	// The model claiming it is done is corrected while the outcome is unknown.
	sp.do(91000, Speech{Kind: ModelOutputStart})
	sp.do(91100, Transcript{Model: true, Text: "Your slot is booked."})
	claim := sp.do(91200, Speech{Kind: ModelTurnComplete})
	noteWith(t, claim, "not known yet")

	// The real outcome.
	real := sp.do(100000, Complete{JobID: j, Outcome: Committed, Result: map[string]any{"reference": "R-7"}})
	if len(real.Effects.Responses) != 0 {
		t.Errorf("every id was answered already; no second response: %+v", real.Effects.Responses)
	}
	n := noteWith(t, real, "IS confirmed (reference R-7)", "unknown earlier")
	if n.JobID != j {
		t.Errorf("note %+v", n)
	}
	if got := sp.s.Job(j); got.Outcome != Committed || !got.WasUnknown || msOf(got.CompletedAt) != 100000 {
		t.Errorf("job %+v", got)
	}
	// A retried Complete(committed) hands out the same note with the same seq.
	again := sp.do(100500, Complete{JobID: j, Outcome: Committed, Result: map[string]any{"reference": "R-7"}})
	if !reflect.DeepEqual(again.Effects, real.Effects) {
		t.Errorf("retry: %+v, want %+v", again.Effects, real.Effects)
	}
	// Complete(unknown) again, or another outcome, now refused.
	for _, o := range []Outcome{Unknown, Failed, Cancelled} {
		if _, err := sp.e.Step(sp.s, ms(101000), Complete{JobID: j, Outcome: o}); KindOf(err) != FailedPrecondition {
			t.Errorf("Complete(%s) after the real outcome: %v", o, err)
		}
	}
	// Now it is an ordinary committed job: a repeat in the window gets the result, past
	// it (from the real outcome) a new job.
	if out := sp.do(120000, RegisterCall{CallID: "c5", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}); out.Call.Disposition != Duplicate ||
		onlyResponse(t, out).Payload["status"] != "committed" {
		t.Errorf("c5: %+v %+v", out.Call, out.Effects)
	}
	// (Past the window after the user spoke again: with no user turn since the job
	// began, a repeat is a duplicate however late, TestEngineDedupe.)
	sp.say(125000, 126000, "Book that once more, please.")
	if out := sp.do(130000, RegisterCall{CallID: "c6", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}); out.Call.Disposition != Execute {
		t.Errorf("c6 past the window: %+v", out.Call)
	}
}

// TestUnknownOutcomeEdges: what Complete(unknown) accepts and refuses, and a real
// outcome of failed.
func TestUnknownOutcomeEdges(t *testing.T) {
	t.Run("before a commit decision: failed precondition, nothing changes", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
		before, _ := EncodeSession(sp.s)
		_, err := sp.e.Step(sp.s, ms(1000), Complete{JobID: j, Outcome: Unknown})
		if KindOf(err) != FailedPrecondition || !strings.Contains(MessageOf(err), "outcome") {
			t.Fatalf("%v", err)
		}
		if after, _ := EncodeSession(sp.s); string(after) != string(before) {
			t.Errorf("session changed:\n%s\n%s", before, after)
		}
		// After a cancel decision too.
		sp.do(1500, Speech{Kind: UserActivityStart})
		sp.do(2000, Transcript{Text: "Stop."})
		if _, err := sp.e.Step(sp.s, ms(2100), Complete{JobID: j, Outcome: Unknown}); KindOf(err) != FailedPrecondition {
			t.Fatalf("after cancel: %v", err)
		}
	})
	t.Run("read-only job: failed precondition", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		j := sp.do(1000, RegisterCall{CallID: "w1", Tool: "get_weather"}).Call.JobID
		if _, err := sp.e.Step(sp.s, ms(1000), Complete{JobID: j, Outcome: Unknown}); KindOf(err) != FailedPrecondition {
			t.Fatalf("%v", err)
		}
	})
	t.Run("resolved failed: note says not made, a new request is not deduplicated", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		j := committedJob(t, sp)
		sp.do(4000, Complete{JobID: j, Outcome: Unknown})
		// cancelled and result are not real outcomes of an unknown commit.
		for _, o := range []Outcome{Cancelled, Result} {
			if _, err := sp.e.Step(sp.s, ms(4500), Complete{JobID: j, Outcome: o}); KindOf(err) != FailedPrecondition {
				t.Errorf("Complete(%s) of an unknown job: %v", o, err)
			}
		}
		out := sp.do(5000, Complete{JobID: j, Outcome: Failed, Error: "card declined"})
		if len(out.Effects.Responses) != 0 {
			t.Errorf("%+v", out.Effects.Responses)
		}
		noteWith(t, out, "was NOT made", "card declined", "offer to try again")
		again := sp.do(6000, RegisterCall{CallID: "c2", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
		if again.Call.Disposition != Execute || again.Call.JobID == j {
			t.Errorf("new request after the failure: %+v", again.Call)
		}
	})
	t.Run("retried Complete(unknown) returns the same effects and seqs", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		j := committedJob(t, sp)
		first := sp.do(4000, Complete{JobID: j, Outcome: Unknown})
		seq := sp.s.LogSeq
		again := sp.do(4100, Complete{JobID: j, Outcome: Unknown})
		if !reflect.DeepEqual(first.Effects, again.Effects) || sp.s.LogSeq != seq || again.Effects.Responses[0].Seq != first.Effects.Responses[0].Seq {
			t.Errorf("retry: %+v, want %+v (log seq %d -> %d)", again.Effects, first.Effects, seq, sp.s.LogSeq)
		}
	})
	t.Run("unknown with no live call: the note says it is being confirmed", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy(func(p *Policy) { p.Defaults.MaxPending = 10 * time.Second }))
		j := committedJob(t, sp)
		dl := sp.do(11000, Tick{}) // c1's deadline, during the commit
		if r := onlyResponse(t, dl); r.Payload["status"] != "unknown" || !strings.Contains(r.Payload["error"].(string), "commit started") {
			t.Fatalf("%+v", r)
		}
		out := sp.do(12000, Complete{JobID: j, Outcome: Unknown})
		if len(out.Effects.Responses) != 0 {
			t.Errorf("%+v", out.Effects.Responses)
		}
		noteWith(t, out, "not known yet", "being confirmed")
		real := sp.do(20000, Complete{JobID: j, Outcome: Committed, Result: map[string]any{"reference": "R-2"}})
		noteWith(t, real, "IS confirmed (reference R-2)")
	})
}

// TestDeadlineThenLateResult: a call with no result until its deadline is answered with
// a timeout saying nothing was executed; the late result never produces a second
// response and is reported in a note.
func TestDeadlineThenLateResult(t *testing.T) {
	t.Run("side effect never prepared", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy(func(p *Policy) { p.Tools["book_slot"].Timings.MaxPending = 15 * time.Second }))
		j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
		if due, ok := sp.e.NextTimer(sp.s); !ok || msOf(due) != 16000 {
			t.Fatalf("next timer %d %v, want the deadline at 16000", msOf(due), ok)
		}
		out := sp.do(20000, Tick{})
		r := onlyResponse(t, out)
		if r.CallID != "c1" || r.Payload["status"] != "timeout" || r.Payload["executed"] != false ||
			!strings.Contains(r.Payload["error"].(string), "book_slot was not executed") {
			t.Fatalf("%+v", r)
		}
		if len(out.Decisions) != 1 || out.Decisions[0].Decision != DecisionCancel || out.Decisions[0].Cause != CauseDeadline || msOf(out.Decisions[0].DecidedAt) != 16000 {
			t.Fatalf("decisions %+v", out.Decisions)
		}
		// The agent, late, prepares: the decision is cancel, never commit.
		if d := sp.do(21000, Decide{JobID: j, Prepared: true}).Decision; d.Decision != DecisionCancel {
			t.Fatalf("%+v", d)
		}
		if _, err := sp.e.Step(sp.s, ms(21000), Complete{JobID: j, Outcome: Committed}); KindOf(err) != FailedPrecondition {
			t.Fatalf("a commit after the deadline cancel: %v", err)
		}
		late := sp.do(22000, Complete{JobID: j, Outcome: Cancelled})
		if !late.Effects.Empty() {
			t.Errorf("the timeout said it all: %+v", late.Effects)
		}
		for _, d := range decisionsOf(sp, j) {
			if d.Decision == DecisionCommit {
				t.Errorf("commit decided: %+v", d)
			}
		}
	})
	t.Run("read-only result late", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy(func(p *Policy) { p.Tools["get_weather"].Timings.MaxPending = 5 * time.Second }))
		j := sp.do(1000, RegisterCall{CallID: "w1", Tool: "get_weather", Args: map[string]any{"city": "Lyon"}}).Call.JobID
		r := onlyResponse(t, sp.do(6000, Tick{}))
		// The agent was told to run it: the timeout says no result came, not that
		// nothing ran.
		if r.Payload["status"] != "timeout" || !strings.Contains(r.Payload["error"].(string), "no result") || r.Payload["executed"] != nil {
			t.Fatalf("%+v", r)
		}
		late := sp.do(9000, Complete{JobID: j, Outcome: Result, Result: map[string]any{"temp_c": 21.0}})
		if len(late.Effects.Responses) != 0 {
			t.Fatalf("second response: %+v", late.Effects.Responses)
		}
		noteWith(t, late, "after its call had timed out", `"temp_c":21`)
		// A retried late Complete hands out the same note, nothing new.
		seq := sp.s.LogSeq
		if again := sp.do(9100, Complete{JobID: j, Outcome: Result, Result: map[string]any{"temp_c": 21.0}}); !reflect.DeepEqual(again.Effects, late.Effects) || sp.s.LogSeq != seq {
			t.Errorf("retry: %+v", again.Effects)
		}
	})
	t.Run("commit started: unknown, then the late commit in a note", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy(func(p *Policy) { p.Defaults.MaxPending = 10 * time.Second }))
		j := committedJob(t, sp)
		r := onlyResponse(t, sp.do(11000, Tick{}))
		if r.Payload["status"] != "unknown" || r.Payload["executed"] != nil {
			t.Fatalf("%+v", r)
		}
		late := sp.do(12000, Complete{JobID: j, Outcome: Committed, Result: map[string]any{"reference": "R-3"}})
		if len(late.Effects.Responses) != 0 {
			t.Fatalf("%+v", late.Effects.Responses)
		}
		noteWith(t, late, "is confirmed (reference R-3)")
	})
}

// TestProgress: interim results go out as non-final responses on the job's live
// NON_BLOCKING calls when the provider honours response scheduling, never on BLOCKING
// calls, never as user speech, and never answer a call.
func TestProgress(t *testing.T) {
	setup := func(t *testing.T, scheduling bool) (*stepper, string) {
		sp := newStepper(t, bookingPolicy())
		if scheduling {
			sp.do(0, Configure{ResponseScheduling: true})
		}
		j := sp.do(1000, RegisterCall{CallID: "w1", Tool: "get_weather", Behavior: NonBlocking}).Call.JobID
		return sp, j
	}
	t.Run("with response scheduling", func(t *testing.T) {
		sp, j := setup(t, true)
		sp.do(1200, RegisterCall{CallID: "b1", Tool: "get_weather", Behavior: Blocking}) // its own job
		utts := len(sp.s.Utterances)
		seq := sp.s.LogSeq
		out := sp.do(2000, Progress{JobID: j, Result: map[string]any{"percent": 40.0}})
		r := onlyResponse(t, out)
		if !r.Interim || r.CallID != "w1" || r.Payload["status"] != "in_progress" || resultOf(r.Payload)["percent"] != 40.0 || r.Seq != seq+1 {
			t.Fatalf("%+v", r)
		}
		if sp.s.Call("w1").Outcome != nil {
			t.Fatalf("an interim response answered the call: %+v", sp.s.Call("w1").Outcome)
		}
		if len(sp.s.Utterances) != utts || sp.s.UtteranceOpen() || out.Intent != "" {
			t.Errorf("progress counted as user speech: %+v", sp.s.Utterances)
		}
		if !out.Changed || sp.s.Log[len(sp.s.Log)-1].Response == nil || !sp.s.Log[len(sp.s.Log)-1].Response.Interim {
			t.Errorf("the interim response is logged: %+v", sp.s.Log[len(sp.s.Log)-1])
		}
		// The final response still comes, once.
		done := sp.do(3000, Complete{JobID: j, Outcome: Result, Result: map[string]any{"temp_c": 20.0}})
		if r := onlyResponse(t, done); r.Interim || r.CallID != "w1" || resultOf(r.Payload)["temp_c"] != 20.0 {
			t.Fatalf("%+v", r)
		}
		if _, err := sp.e.Step(sp.s, ms(3100), Progress{JobID: j}); KindOf(err) != FailedPrecondition {
			t.Errorf("progress after completion: %v", err)
		}
	})
	t.Run("without response scheduling: dropped", func(t *testing.T) {
		sp, j := setup(t, false)
		out := sp.do(2000, Progress{JobID: j, Result: map[string]any{"percent": 40.0}})
		if !out.Effects.Empty() || out.Changed {
			t.Errorf("%+v changed=%v", out.Effects, out.Changed)
		}
	})
	t.Run("never on a BLOCKING call, nor on a duplicate already answered", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		sp.do(0, Configure{ResponseScheduling: true})
		j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Behavior: Blocking, Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
		if out := sp.do(1500, Progress{JobID: j}); !out.Effects.Empty() {
			t.Errorf("BLOCKING: %+v", out.Effects)
		}
		sp.do(1600, RegisterCall{CallID: "c2", Tool: "book_slot", Behavior: NonBlocking, Args: map[string]any{"slot": "tomorrow 3pm"}})
		out := sp.do(1700, Progress{JobID: j})
		if r := onlyResponse(t, out); r.CallID != "c2" || !r.Interim {
			t.Errorf("%+v", r)
		}
		// After the user interrupted, the BLOCKING call is dead: still only c2.
		sp.do(1800, Speech{Kind: Interrupted})
		if r := onlyResponse(t, sp.do(1900, Progress{JobID: j})); r.CallID != "c2" {
			t.Errorf("%+v", r)
		}
	})
	t.Run("errors", func(t *testing.T) {
		sp, j := setup(t, true)
		before, _ := EncodeSession(sp.s)
		for _, tc := range []struct {
			ev   Event
			kind Kind
			name string
		}{
			{Progress{JobID: "job-404"}, NotFound, "job_id"},
			{Progress{JobID: j, Result: map[string]any{"x": strings.Repeat("a", MaxArgsBytes)}}, Invalid, "result"},
			{Progress{JobID: j, Result: map[string]any{"f": func() {}}}, Invalid, "result"},
		} {
			_, err := sp.e.Step(sp.s, ms(1000), tc.ev)
			if KindOf(err) != tc.kind || !strings.Contains(MessageOf(err), tc.name) {
				t.Errorf("%T: %v, want %v naming %s", tc.ev, err, tc.kind, tc.name)
			}
		}
		if after, _ := EncodeSession(sp.s); string(after) != string(before) {
			t.Errorf("session changed")
		}
		sp.do(1000, Close{})
		if _, err := sp.e.Step(sp.s, ms(1000), Progress{JobID: j}); KindOf(err) != FailedPrecondition {
			t.Errorf("closed: %v", err)
		}
	})
}

// TestRepeatAtItsDeadline: an agent retrying a registration in the very step that
// fires the call's deadline gets the timeout response once, not twice (the deadline
// handed it out, and the repeat must not add the recorded copy to the same output).
func TestRepeatAtItsDeadline(t *testing.T) {
	sp := newStepper(t, bookingPolicy(func(p *Policy) { p.Defaults.MaxPending = 5 * time.Second }))
	sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
	out := sp.do(5000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
	if !out.Call.Repeat {
		t.Fatalf("%+v", out.Call)
	}
	r := onlyResponse(t, out)
	if r.Payload["status"] != "timeout" || r.Seq != 1 || sp.s.LogSeq != 1 {
		t.Errorf("%+v, log seq %d", r, sp.s.LogSeq)
	}
	// A later repeat returns it again, with its seq.
	if again := sp.do(6000, RegisterCall{CallID: "c1", Tool: "book_slot"}); len(again.Effects.Responses) != 1 || again.Effects.Responses[0].Seq != 1 {
		t.Errorf("%+v", again.Effects)
	}
}
