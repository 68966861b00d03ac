package arbiter

import "testing"

// TestWithholdAnswerAfterAStuckStop: issue 26. A Decide's step recorded the COMMIT as
// handed out, but the store kept the record late and the user's stop, stuck behind
// the same store, landed first: it was heard after an answered commit (a note). The
// Decide then takes its answer back (Service.Decide: the record took longer than
// LateTimer to keep, and it was never handed out): the stop heard meanwhile cancels
// the job, and a Decide answers CANCEL.
func TestWithholdAnswerAfterAStuckStop(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	job := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
	sp.do(100, Decide{JobID: job, Prepared: true, Live: true})
	out := sp.do(1600, Decide{JobID: job, Prepared: true, Live: true})
	if out.Decision.Decision != DecisionCommit || len(out.Answered) != 1 {
		t.Fatalf("at the grace window's end: %+v, answered %v", out.Decision, out.Answered)
	}
	answered := sp.s.Job(job).AnsweredAt
	sp.do(3100, Speech{Kind: UserActivityStart, ObservedAt: ms(1200)})
	sp.do(3100, Transcript{Text: "Stop, don't book it.", ObservedAt: ms(1300)})
	if j := sp.s.Job(job); j.Decision != DecisionCommit || !j.StopAfterCommit {
		t.Fatalf("the stop after the answered commit: decision %s, stop after commit %v", orPending(j.Decision), j.StopAfterCommit)
	}
	sp.do(3100, withholdAnswer{JobID: job, Answered: answered})
	if d := sp.do(3100, Decide{JobID: job, Prepared: true, Live: true}).Decision; d.Decision != DecisionCancel || d.Cause != CauseStop {
		t.Fatalf("after the answer was taken back: %+v, want cancel (stop)", d)
	}
	if err := sp.s.Check(); err != nil {
		t.Fatal(err)
	}
}
