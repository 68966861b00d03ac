package arbiter

import (
	"time"
)

// Timers: everything that comes due by time alone. Deadlines are data, not timers:
// nextTimer computes the earliest due one from the session, and advance fires them in
// time order at their own due times, so a replay on a virtual clock is exact.
//
//   - grace: a side-effecting job whose prepare finished commits Grace after it,
//     unless a relevant user utterance holds it (the third seed's 1.5 s window);
//   - hold: an open utterance holds the commit until voice activity ended and its
//     final transcript came; no transcript within TranscriptTimeout (from the later of
//     the commit coming due and the end of voice activity) cancels the job, or
//     releases that utterance's hold under on_transcript_timeout: commit; and no hold
//     lasts past MaxHold after the commit came due (a lost end of voice activity);
//   - abandon wait: a job left without a live id by `interrupted` is cancelled (or,
//     under on_abandon: commit, released) AbandonWait after it;
//   - max_pending: every live call id is answered by its deadline at the latest;
//   - run_timeout: a confirm-then-act run nobody resolves expires (runs.go);
//   - a model turn cut by `interrupted` is read for claims once its join window passed.

// timer is one due timer: when, and what firing it does.
type timer struct {
	due  time.Time
	fire func()
}

// advance fires every timer due at or before now, each at its own due time (clamped
// to the session's clock), in time order, then sets the clock to now.
func (st *step) advance(now time.Time) {
	// Every timer that fires decides a job or lifts a hold for good, so the loop ends
	// after at most a few firings per job; the bound only guards against a bug turning
	// into a hung request.
	for i := 0; i < 4*len(st.s.Jobs)+len(st.s.Utterances)*len(st.s.Jobs)+len(st.s.Calls)+len(st.s.Runs)+8; i++ {
		t, found := st.nextTimer()
		if !found || t.due.After(now) {
			break
		}
		if t.due.After(st.s.Now) {
			st.s.Now = t.due
		}
		t.fire()
		st.out.Changed = true
		st.noteHolds()
	}
	if now.After(st.s.Now) {
		st.s.Now = now
		// The clock is part of the state, but moving it alone needs no write.
	}
	if turns := st.s.ModelTurns.Expire(st.s.Now); len(turns) > 0 {
		st.out.Changed = true
		st.checkClaims(turns)
	}
}

// NextTimer returns when the session's next timer is due (a grace window ending, a
// transcript timeout, an abandon wait running out, a call's max_pending deadline, a
// run's run_timeout); ok is false when none is set. It does not change s.
func (e *Engine) NextTimer(s *Session) (due time.Time, ok bool) {
	st := &step{e: e, s: s, out: &Output{}}
	t, found := st.nextTimer()
	return t.due, found
}

// nextTimer finds the earliest due timer.
func (st *step) nextTimer() (timer, bool) {
	var best timer
	found := false
	consider := func(t timer) {
		if !found || t.due.Before(best.due) {
			best, found = t, true
		}
	}
	if !st.s.Closed {
		st.callDeadlines(consider)
		st.runTimeouts(consider)
	}
	for _, j := range st.s.Jobs {
		if j.SideEffect && j.Decision == Undecided {
			st.jobTimers(j, consider)
		}
	}
	return best, found
}

// callDeadlines offers every live call id's max_pending deadline: its job's tool's
// (a confirmation call executes its run's tool), else its own tool's.
func (st *step) callDeadlines(consider func(timer)) {
	for _, c := range st.s.Calls {
		if c.Outcome != nil {
			continue
		}
		tool := c.Tool
		if j := st.s.job(c.JobID); j != nil {
			tool = j.Tool
		}
		tp := st.e.Policy.lookup(tool)
		c := c
		consider(timer{c.RegisteredAt.Add(tp.timings.MaxPending), func() { st.deadline(c, tp) }})
	}
}

// runTimeouts offers every open run's expiry, run_timeout after its last call.
func (st *step) runTimeouts(consider func(timer)) {
	for _, r := range st.s.Runs {
		if r.State != RunOpened {
			continue
		}
		tp := st.e.Policy.lookup(r.Tool)
		r := r
		consider(timer{r.LastAt.Add(tp.timings.RunTimeout), func() { st.expireRun(r, tp) }})
	}
}

// jobTimers offers an undecided side-effecting job's next timer: its abandon wait,
// the end of its grace window when nothing holds it, or the transcript timeout of
// each utterance that holds it and has ended.
func (st *step) jobTimers(j *Job, consider func(timer)) {
	tp := st.e.Policy.lookup(j.Tool)
	if j.Abandoned {
		consider(timer{j.AbandonedAt.Add(tp.timings.AbandonWait), func() { st.abandonExpired(j, tp) }})
		return
	}
	if j.questionOpen() {
		st.questionTimers(j, tp, consider) // questions.go
		return
	}
	if j.PreparedAt.IsZero() {
		return
	}
	graceEnd := j.PreparedAt.Add(tp.timings.Grace)
	holds := st.holding(j, tp)
	if len(holds) == 0 {
		commitAt := graceEnd
		if until := st.continuationUntil(j, tp); until.After(commitAt) {
			// The user went on speaking: wait for the whole request (continuation.go),
			// never past max_hold after the commit came due.
			commitAt = minTime(until, graceEnd.Add(tp.timings.MaxHold))
		}
		consider(timer{commitAt, func() { st.decideJob(j, DecisionCommit, "", st.commitReason(j, tp, graceEnd)) }})
		return
	}
	consider(timer{graceEnd.Add(tp.timings.MaxHold), func() { st.holdExpired(j, tp) }})
	for _, u := range holds {
		if u.End.IsZero() {
			continue // voice activity goes on: no timeout until it ends
		}
		start := graceEnd
		if u.End.After(start) {
			start = u.End
		}
		u := u
		consider(timer{start.Add(tp.timings.TranscriptTimeout), func() { st.transcriptTimedOut(j, u, tp) }})
	}
}

// holding returns the utterances that hold j's commit: relevant, not settled, not
// released for it. None when the tool's policy turns holding off.
func (st *step) holding(j *Job, tp toolPolicy) []*Utterance {
	if tp.tool.NoHold {
		return nil
	}
	var out []*Utterance
	for _, u := range st.s.Utterances {
		if u.settled() || !relevant(j, u) || containsInt(j.Released, u.ID) {
			continue
		}
		out = append(out, u)
	}
	return out
}

// commitReason says why a commit is released now. When the user spoke while the job
// was pending and said neither a stop nor a change, the reason says so, naming the
// words (issue 13 follow-up: a generic "no user speech held it" hid that the words
// were read and found to be no stop); a commit held past the grace window names the
// utterance that held it.
func (st *step) commitReason(j *Job, tp toolPolicy, graceEnd time.Time) string {
	if r := st.questionReason(j, tp); r != "" {
		return r
	}
	switch {
	case j.AbandonLifted:
		return reasonAbandonLifted(tp.timings.AbandonWait)
	case len(j.Released) > 0:
		return reasonTranscriptTimeoutCommit(tp.timings.TranscriptTimeout)
	case st.s.Now.After(graceEnd) && !st.s.Now.Before(st.continuationUntil(j, tp)) && st.continuationUntil(j, tp).After(graceEnd):
		// Committed when the continuation wait ran out (continuation.go).
		if u := st.spokeWhilePending(j); u != nil {
			return reasonContinuationWaited(u.Text, tp.timings.ContinuationWait)
		}
	case st.s.Now.After(graceEnd):
		for i := len(st.s.Utterances) - 1; i >= 0; i-- {
			if u := st.s.Utterances[i]; relevant(j, u) && u.settled() {
				return reasonHeldUntilSpeechEnded(u.Text)
			}
		}
	}
	if u := st.spokeWhilePending(j); u != nil {
		return reasonSpeechNotStop(u.Text, tp.timings.Grace)
	}
	return reasonGraceElapsed(tp.timings.Grace)
}

// spokeWhilePending returns the last settled utterance that bears on j and that the
// user spoke while j existed (it started after j was created, or its voice activity
// went on past that), or nil. A triggering utterance that ended before the call (the
// request itself, "Book me tomorrow at 3pm") is not one.
func (st *step) spokeWhilePending(j *Job) *Utterance {
	for i := len(st.s.Utterances) - 1; i >= 0; i-- {
		u := st.s.Utterances[i]
		if relevant(j, u) && u.settled() && (!u.Start.Before(j.CreatedAt) || u.End.After(j.CreatedAt)) {
			return u
		}
	}
	return nil
}

// transcriptTimedOut ends utterance u's hold on j when its transcript did not come in
// time: it cancels j (fail closed), or, under on_transcript_timeout: commit, releases
// u's hold so the next timer commits j if nothing else holds it.
func (st *step) transcriptTimedOut(j *Job, u *Utterance, tp toolPolicy) {
	if tp.timings.OnTranscriptTimeout == Commit {
		j.Released = append(j.Released, u.ID)
		return
	}
	st.decideJob(j, DecisionCancel, CauseTimeout, reasonTranscriptTimeout(tp.timings.TranscriptTimeout))
}

// holdExpired ends a hold that outlasted max_hold after the commit came due (voice
// activity whose end never arrived, or a transcript that never came): as a transcript
// timeout does, it cancels j (fail closed), or, under on_transcript_timeout: commit,
// releases every utterance that holds it.
func (st *step) holdExpired(j *Job, tp toolPolicy) {
	if tp.timings.OnTranscriptTimeout == Commit {
		for _, u := range st.holding(j, tp) {
			j.Released = append(j.Released, u.ID)
		}
		return
	}
	st.decideJob(j, DecisionCancel, CauseTimeout, reasonHoldTimeout(tp.timings.MaxHold))
}

// abandonExpired ends the hold of an abandoned job no re-issue revived: it cancels it,
// or, under on_abandon: commit, lifts the hold so the grace rules commit it.
func (st *step) abandonExpired(j *Job, tp toolPolicy) {
	if tp.timings.OnAbandon == Commit {
		j.Abandoned = false
		j.AbandonLifted = true
		return
	}
	st.decideJob(j, DecisionCancel, CauseAbandoned, reasonAbandoned(tp.timings.AbandonWait))
}

// deadline answers a live call whose max_pending ran out: with a timeout error saying
// nothing was executed (an undecided job is cancelled), or that the outcome is not
// known if the commit had started, or, for a read-only call the agent was told to
// run, that no result came. The job's own result, when it comes, goes out as a note.
// tp is the policy of the tool the call executes (its job's), which the response
// names.
func (st *step) deadline(c *Call, tp toolPolicy) {
	j := st.s.job(c.JobID)
	wait := tp.timings.MaxPending
	if j != nil {
		if j.SideEffect && j.Decision == Undecided {
			st.decideJob(j, DecisionCancel, CauseDeadline, reasonDeadline(wait))
		}
		j.TimedOut = true
	}
	p := deadlinePayload(tp.tool.Name, wait, j)
	if c.DuplicateOf != "" {
		p[keyDuplicateOf] = c.DuplicateOf
	}
	c.Outcome = &CallOutcome{At: st.s.Now, Response: p}
	st.emitResponse(c)
}

// revokeCommitsAfter withdraws every commit decided after at whose outcome is not
// reported yet: an event the agent observed at at arrived after the timers that
// decided them, and the commits were decided on a timeline missing it. Each job is
// undecided again; the next timers decide it on the whole timeline.
func (st *step) revokeCommitsAfter(at time.Time) {
	for _, j := range st.s.Jobs {
		if j.SideEffect && j.Decision == DecisionCommit && j.Outcome == NotCompleted && j.DecidedAt.After(at) {
			j.Decision, j.Cause, j.Reason, j.DecidedAt = Undecided, "", "", time.Time{}
			j.CommitsRevoked++
			st.out.Revoked = append(st.out.Revoked, j.ID)
			st.remember(HistoryEntry{Revoked: &JobEntry{Job: j.ID}})
			st.out.Changed = true
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// decideJob records a decision at the session's clock; a job decides once.
func (st *step) decideJob(j *Job, d Decision, cause Cause, reason string) {
	if j.Decision != Undecided {
		return
	}
	j.Decision, j.Cause, j.Reason, j.DecidedAt = d, cause, reason, st.s.Now
	st.out.Decisions = append(st.out.Decisions, DecisionResult{JobID: j.ID, Decision: d, Reason: reason, DecidedAt: st.s.Now, Cause: cause, Tool: j.Tool})
	st.remember(HistoryEntry{Decision: &DecisionEntry{Job: j.ID, Decision: d, Cause: cause, Reason: reason}})
	if d == DecisionCancel {
		st.out.Cancelled = append(st.out.Cancelled, j.ID)
	}
	st.out.Changed = true
}
