package arbiter

import (
	"fmt"
)

// Check verifies a session's invariants, the ones the engine relies on without
// looking: every reference resolves (a call's job, run and duplicate_of; a job's and
// a run's call ids; a run's job), ids are unique, the effect log is numbered without
// gaps up to LogSeq with one effect per entry, no outcome is numbered past LogSeq, the
// job counter is not behind the jobs it minted, no call was registered before the
// session was created, and no job's decision contradicts its outcome (checkDecision). A store calls it on a record read from a file or another process
// that a bug or a hand edit could have made inconsistent: stepping such a session
// could dereference a missing job (a panic recovered as INTERNAL), so it is refused
// first. Errors: Invalid naming the session and the first fault found. Read-only; the
// cost is linear in the session's size.
func (s *Session) Check() error {
	fault := func(format string, args ...any) error {
		return Errorf(Invalid, "session %q: %s", s.Key.String(), fmt.Sprintf(format, args...))
	}
	calls := make(map[string]*Call, len(s.Calls))
	for i, c := range s.Calls {
		switch {
		case c == nil:
			return fault("calls[%d] is null", i)
		case calls[c.ID] != nil:
			return fault("call %q is recorded twice", c.ID)
		case c.Outcome != nil && c.Outcome.Seq > s.LogSeq:
			return fault("call %q has outcome seq %d, past the last effect %d", c.ID, c.Outcome.Seq, s.LogSeq)
		case c.Outcome != nil && c.Outcome.Dead && c.Outcome.Response != nil:
			return fault("call %q is dead and answered", c.ID)
		}
		calls[c.ID] = c
	}
	jobs := make(map[string]*Job, len(s.Jobs))
	for i, j := range s.Jobs {
		switch {
		case j == nil:
			return fault("jobs[%d] is null", i)
		case jobs[j.ID] != nil:
			return fault("job %q is recorded twice", j.ID)
		case len(j.CallIDs) == 0:
			return fault("job %q has no call", j.ID)
		}
		for _, id := range j.CallIDs {
			if c := calls[id]; c == nil || c.JobID != j.ID {
				return fault("job %q names call %q, which is not one of its calls", j.ID, id)
			}
		}
		if why := checkDecision(j); why != "" {
			return fault("job %q %s", j.ID, why)
		}
		jobs[j.ID] = j
	}
	runs := make(map[string]*Run, len(s.Runs))
	for i, r := range s.Runs {
		switch {
		case r == nil:
			return fault("runs[%d] is null", i)
		case runs[r.ID] != nil:
			return fault("run %q is recorded twice", r.ID)
		case r.JobID != "" && jobs[r.JobID] == nil:
			return fault("run %q names job %q, which does not exist", r.ID, r.JobID)
		}
		for _, id := range r.CallIDs {
			if calls[id] == nil {
				return fault("run %q names call %q, which does not exist", r.ID, id)
			}
		}
		runs[r.ID] = r
	}
	for _, c := range s.Calls {
		switch {
		case c.JobID != "" && jobs[c.JobID] == nil:
			return fault("call %q names job %q, which does not exist", c.ID, c.JobID)
		case c.RunID != "" && runs[c.RunID] == nil:
			return fault("call %q names run %q, which does not exist", c.ID, c.RunID)
		case c.DuplicateOf != "" && calls[c.DuplicateOf] == nil:
			return fault("call %q duplicates call %q, which does not exist", c.ID, c.DuplicateOf)
		case c.RegisteredAt.Before(s.CreatedAt):
			return fault("call %q was registered before the session was created", c.ID)
		}
	}
	if s.JobSeq > 0 && s.JobSeq < len(s.Jobs) {
		// (0: stored before jobs had their own counter)
		return fault("job counter %d is behind its %d jobs", s.JobSeq, len(s.Jobs))
	}
	if err := s.checkHistory(fault); err != nil {
		return err
	}
	return s.checkLog(fault)
}

// checkHistory verifies the history: one kind per entry, no entry numbered past
// LogSeq, counts not negative.
func (s *Session) checkHistory(fault func(string, ...any) error) error {
	h := s.History
	if h == nil {
		return nil
	}
	if h.Bytes < 0 || h.Dropped < 0 {
		return fault("the history counts %d bytes and %d dropped entries", h.Bytes, h.Dropped)
	}
	for i, e := range h.Entries {
		switch {
		case e.kinds() != 1:
			return fault("history entry %d holds %d kinds, want one", i, e.kinds())
		case e.Seq > s.LogSeq:
			return fault("history entry %d follows effect %d, past the last effect %d", i, e.Seq, s.LogSeq)
		}
	}
	return nil
}

// checkLog verifies the effect log: consecutive seqs ending at LogSeq, one effect per
// entry, at most LogKeep entries.
func (s *Session) checkLog(fault func(string, ...any) error) error {
	if len(s.Log) > LogKeep {
		return fault("the log holds %d effects, more than %d", len(s.Log), LogKeep)
	}
	for i, e := range s.Log {
		n := 0
		for _, set := range []bool{e.Response != nil, e.Skip != nil, e.Note != nil, e.Run != nil} {
			if set {
				n++
			}
		}
		switch {
		case n != 1:
			return fault("log entry %d holds %d effects, want one", e.Seq, n)
		case i > 0 && e.Seq != s.Log[i-1].Seq+1:
			return fault("log entry %d follows %d: the log has a gap", e.Seq, s.Log[i-1].Seq)
		}
	}
	if n := len(s.Log); n > 0 && s.Log[n-1].Seq != s.LogSeq {
		return fault("the log ends at %d but the last effect handed out is %d", s.Log[n-1].Seq, s.LogSeq)
	}
	if len(s.Log) == 0 && s.LogSeq != 0 {
		return fault("the log is empty but %d effects were handed out", s.LogSeq)
	}
	return nil
}

// checkDecision says how job j's decision contradicts its kind or its outcome, or ""
// when it does not. The engine's rules (completion.go, timers.go): a read-only job is
// never decided and completes with a result or failed; a side-effecting job completes
// committed or unknown only after a commit decision (a Complete reporting a commit
// whose decision a late event withdrew makes the decision a commit again), cancelled
// only after a cancel, failed only once decided (a failure before any decision
// cancels it), and never with a result; a decision has its time; a cause is a
// cancel's; an outcome resolved from unknown is committed or failed.
func checkDecision(j *Job) string {
	switch j.Decision {
	case Undecided, DecisionCommit, DecisionCancel:
	default:
		return fmt.Sprintf("has decision %q, which is not commit or cancel", j.Decision)
	}
	switch j.Outcome {
	case NotCompleted, Committed, Cancelled, Failed, Result, Unknown:
	default:
		return fmt.Sprintf("has outcome %q, which is not committed, cancelled, failed, result or unknown", j.Outcome)
	}
	decision := orPending(j.Decision)
	switch {
	case !j.SideEffect && j.Decision != Undecided:
		return fmt.Sprintf("is read-only but decided %s", decision)
	case !j.SideEffect && j.Outcome != NotCompleted && j.Outcome != Result && j.Outcome != Failed:
		return fmt.Sprintf("is read-only but completed %s", j.Outcome)
	case !j.SideEffect:
	case j.Outcome == Result:
		return "is two-phase but completed with a result"
	case (j.Outcome == Committed || j.Outcome == Unknown) && j.Decision != DecisionCommit:
		return fmt.Sprintf("completed %s but was decided %s", j.Outcome, decision)
	case j.Outcome == Cancelled && j.Decision != DecisionCancel:
		return fmt.Sprintf("completed cancelled but was decided %s", decision)
	case j.Outcome == Failed && j.Decision == Undecided:
		return "completed failed but was never decided"
	}
	switch {
	case j.Decision != Undecided && j.DecidedAt.IsZero():
		return fmt.Sprintf("was decided %s at no time", decision)
	case j.Decision == Undecided && !j.DecidedAt.IsZero():
		return "is undecided but has a decision time"
	case j.Cause != "" && j.Decision != DecisionCancel:
		return fmt.Sprintf("has cancel cause %q but was decided %s", j.Cause, decision)
	case !j.AnsweredAt.IsZero() && j.Decision != DecisionCommit:
		return fmt.Sprintf("had its COMMIT handed out but was decided %s", decision)
	case j.LateCommit && j.Decision != DecisionCommit:
		return fmt.Sprintf("has a late commit but was decided %s", decision)
	case j.WasUnknown && j.Outcome != Committed && j.Outcome != Failed:
		return fmt.Sprintf("was resolved from an unknown outcome, but its outcome is %q", j.Outcome)
	}
	return ""
}
