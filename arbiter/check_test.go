package arbiter

import (
	"strings"
	"testing"
	"time"
)

// TestCheckDecisionAgainstOutcome: issue 26. A record whose job's decision
// contradicts its outcome (a hand edit, a bug, a damaged state file) is refused by
// Session.Check, naming the job and the contradiction, before anything steps it; the
// sessions the engine makes pass (the property tests check every step of theirs).
func TestCheckDecisionAgainstOutcome(t *testing.T) {
	// committed: a booking decided commit and completed committed; cancelled: one the
	// user stopped; weather: a read-only call with its result.
	fresh := func(t *testing.T) (s *Session, committed, cancelled, weather *Job) {
		sp := newStepper(t, bookingPolicy())
		a := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
		sp.do(100, Decide{JobID: a, Prepared: true})
		sp.do(1600, Decide{JobID: a, Prepared: true})
		sp.do(1700, Complete{JobID: a, Outcome: Committed, Result: map[string]any{"reference": "R-1"}})
		b := sp.do(2000, RegisterCall{CallID: "c2", Tool: "book_slot", Args: map[string]any{"slot": "friday 10am"}}).Call.JobID
		sp.say(2100, 2500, "Stop, don't book it.")
		sp.do(2600, Complete{JobID: b, Outcome: Cancelled})
		w := sp.do(3000, RegisterCall{CallID: "w1", Tool: "get_weather", Args: map[string]any{"city": "Lyon"}}).Call.JobID
		sp.do(3100, Complete{JobID: w, Outcome: Result, Result: map[string]any{"temp_c": 21.0}})
		if err := sp.s.Check(); err != nil {
			t.Fatalf("the engine's own session: %v", err)
		}
		return sp.s, sp.s.Job(a), sp.s.Job(b), sp.s.Job(w)
	}
	for _, tc := range []struct {
		name  string
		edit  func(committed, cancelled, weather *Job)
		fault string
	}{
		{"committed but decided cancel", func(c, _, _ *Job) { c.Decision, c.Cause = DecisionCancel, CauseStop }, "completed committed but was decided cancel"},
		{"committed but undecided", func(c, _, _ *Job) { c.Decision, c.Reason, c.DecidedAt = Undecided, "", time.Time{} }, "completed committed but was decided pending"},
		{"unknown but decided cancel", func(_, x, _ *Job) { x.Outcome = Unknown }, "completed unknown but was decided cancel"},
		{"cancelled but decided commit", func(_, x, _ *Job) { x.Decision, x.Cause = DecisionCommit, "" }, "completed cancelled but was decided commit"},
		{"failed and never decided", func(c, _, _ *Job) { c.Outcome, c.Decision, c.DecidedAt = Failed, Undecided, time.Time{} }, "completed failed but was never decided"},
		{"two-phase with a result", func(c, _, _ *Job) { c.Outcome = Result }, "is two-phase but completed with a result"},
		{"read-only decided", func(_, _, w *Job) { w.Decision, w.DecidedAt = DecisionCommit, ms(3100) }, "is read-only but decided commit"},
		{"read-only committed", func(_, _, w *Job) { w.Outcome = Committed }, "is read-only but completed committed"},
		{"a decision out of the vocabulary", func(c, _, _ *Job) { c.Decision = "maybe" }, `has decision "maybe"`},
		{"an outcome out of the vocabulary", func(c, _, _ *Job) { c.Outcome = "done" }, `has outcome "done"`},
		{"decided at no time", func(c, _, _ *Job) { c.DecidedAt = time.Time{} }, "was decided commit at no time"},
		{"a commit with a cancel's cause", func(c, _, _ *Job) { c.Cause = CauseStop }, `has cancel cause "stop" but was decided commit`},
		{"resolved from unknown to cancelled", func(_, x, _ *Job) { x.WasUnknown = true }, "was resolved from an unknown outcome"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c, x, w := fresh(t)
			tc.edit(c, x, w)
			err := s.Check()
			if KindOf(err) != Invalid || !strings.Contains(err.Error(), tc.fault) {
				t.Fatalf("Check: %v, want Invalid saying %q", err, tc.fault)
			}
		})
	}
}
