package arbiter

import (
	"container/heap"
	"github.com/voicearbiter/arbiter/arbiter/speech"
	"slices"
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
// to the session's clock), in time order, then sets the clock to now. Timers due at
// the same time fire in the order nextTimer offers them (timerSource).
//
// The timers are queued once, in a heap by due time, and each firing re-queues only
// the timers of what it changed (a job's next timer; a deadline fires once, a run
// expires once): firing N timers costs O(N log N) plus one pass over the session,
// where a rescan of every call and job per firing cost O(N²) (issue 26: 1,024 due
// deadlines, 1.05 s of CPU in one Poll). A queued timer is checked against its
// source's current one when it comes up, so a timer that a firing moved or removed
// (a deadline that cancelled its job) is dropped or re-queued, never fired stale.
func (st *step) advance(now time.Time) {
	q := st.queueTimers()
	defer func() { st.jobByID = nil }()
	var held jobHolds // the holds by job, after the first firing's full look
	// Every timer that fires decides a job, answers a call, ends a run or lifts a hold
	// for good, so the loop ends after at most a few firings per job; the bound only
	// guards against a bug turning into a hung request.
	bound := 4*len(st.s.Jobs) + len(st.s.Utterances)*len(st.s.Jobs) + len(st.s.Calls) + len(st.s.Runs) + 8
	for fired := 0; fired < bound && len(q) > 0 && !q[0].due.After(now); {
		src := heap.Pop(&q).(timerSource)
		t, sub, ok := st.timerOf(src)
		switch {
		case !ok:
			continue // it fired, or its job was decided: nothing is due from it
		case sub != src.sub || !t.due.Equal(src.due):
			heap.Push(&q, timerSource{src.group, src.index, sub, t.due})
			continue // it moved: it comes up again in its turn
		}
		if t.due.After(st.s.Now) {
			st.s.Now = t.due
		}
		t.fire()
		fired++
		st.out.Changed = true
		if held == nil {
			st.noteHolds() // the first firing also notes what changed before it
			if st.hist {
				held = st.trackHolds()
			}
		} else {
			st.noteJobHolds(st.timerJob(src), held)
		}
		if src.group == timerOfJob {
			if t, sub, ok := st.timerOf(src); ok {
				heap.Push(&q, timerSource{src.group, src.index, sub, t.due})
			}
		}
	}
	if held != nil {
		st.untrackHolds(held)
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

// The groups of timer sources, in the order nextTimer offers them.
const (
	timerOfCall = iota // a live call's max_pending deadline
	timerOfRun         // an open run's run_timeout
	timerOfJob         // an undecided side-effecting job's next timer
)

// timerSource names a queued timer: its group, its source's index in Session.Calls,
// Runs or Jobs (none is removed while timers fire), the position of the timer among
// its job's (jobTimers' order), and when it was due when queued. Timers due at the
// same time fire in (group, index, sub) order: the order nextTimer offers them, so
// the heap fires exactly what the rescan did.
type timerSource struct {
	group, index, sub int
	due               time.Time
}

func (a timerSource) before(b timerSource) bool {
	switch {
	case !a.due.Equal(b.due):
		return a.due.Before(b.due)
	case a.group != b.group:
		return a.group < b.group
	case a.index != b.index:
		return a.index < b.index
	}
	return a.sub < b.sub
}

// timerQueue is a min-heap of timers by timerSource.before (container/heap).
type timerQueue []timerSource

func (q timerQueue) Len() int           { return len(q) }
func (q timerQueue) Less(i, j int) bool { return q[i].before(q[j]) }
func (q timerQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *timerQueue) Push(x any)        { *q = append(*q, x.(timerSource)) }
func (q *timerQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// queueTimers returns every timer of the session as it is now, heaped: one pass over
// its calls, runs and jobs. It also indexes the jobs by id for the firing (jobByID).
func (st *step) queueTimers() timerQueue {
	s := st.s
	st.jobByID = make(map[string]*Job, len(s.Jobs))
	for _, j := range s.Jobs {
		st.jobByID[j.ID] = j
	}
	var q timerQueue
	add := func(group, n int) {
		for i := 0; i < n; i++ {
			if t, sub, ok := st.timerOf(timerSource{group: group, index: i}); ok {
				q = append(q, timerSource{group, i, sub, t.due})
			}
		}
	}
	add(timerOfCall, len(s.Calls))
	add(timerOfRun, len(s.Runs))
	add(timerOfJob, len(s.Jobs))
	heap.Init(&q)
	return q
}

// timerOf returns the current timer of src's source (src.sub and src.due are not
// read) and its position among its job's timers; ok is false when it has none.
func (st *step) timerOf(src timerSource) (t timer, sub int, ok bool) {
	s := st.s
	switch src.group {
	case timerOfCall:
		if s.Closed {
			return timer{}, 0, false
		}
		return st.callDeadline(s.Calls[src.index])
	case timerOfRun:
		if s.Closed {
			return timer{}, 0, false
		}
		return st.runTimeout(s.Runs[src.index])
	}
	j := s.Jobs[src.index]
	if !j.SideEffect || j.Decision != Undecided {
		return timer{}, 0, false
	}
	n := 0
	st.jobTimers(j, func(c timer) {
		if !ok || c.due.Before(t.due) {
			t, sub, ok = c, n, true
		}
		n++
	})
	return t, sub, ok
}

// timerJob is the job a firing of src may have changed: the job itself, or a
// deadline's call's job; nil for a run.
func (st *step) timerJob(src timerSource) *Job {
	switch src.group {
	case timerOfCall:
		return st.findJob(st.s.Calls[src.index].JobID)
	case timerOfJob:
		return st.s.Jobs[src.index]
	}
	return nil
}

// findJob is s.job(id), by the index queueTimers built while timers fire.
func (st *step) findJob(id string) *Job {
	if st.jobByID != nil {
		return st.jobByID[id]
	}
	return st.s.job(id)
}

// NextTimer returns when the session's next timer is due (a grace window ending, a
// transcript timeout, an abandon wait running out, a call's max_pending deadline, a
// run's run_timeout), or a withheld commit may be handed out (Decide: a parked Decide
// wakes then); ok is false when none is set. It does not change s.
func (e *Engine) NextTimer(s *Session) (due time.Time, ok bool) {
	st := &step{e: e, s: s, out: &Output{}}
	t, found := st.nextTimer()
	due = t.due
	for _, j := range s.Jobs {
		if j.withheld(s.Now) && (!found || j.WithheldUntil.Before(due)) {
			due, found = j.WithheldUntil, true
		}
	}
	return due, found
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

// callDeadlines offers every live call id's max_pending deadline (callDeadline).
func (st *step) callDeadlines(consider func(timer)) {
	for _, c := range st.s.Calls {
		if t, _, ok := st.callDeadline(c); ok {
			consider(t)
		}
	}
}

// callDeadline is live call c's max_pending deadline: its job's tool's (a
// confirmation call executes its run's tool), else its own tool's; ok is false once c
// has its outcome.
func (st *step) callDeadline(c *Call) (t timer, sub int, ok bool) {
	if c.Outcome != nil {
		return timer{}, 0, false
	}
	tool := c.Tool
	if j := st.findJob(c.JobID); j != nil {
		tool = j.Tool
	}
	tp := st.e.Policy.lookup(tool)
	return timer{c.RegisteredAt.Add(tp.timings.MaxPending), func() { st.deadline(c, tp) }}, 0, true
}

// runTimeouts offers every open run's expiry (runTimeout).
func (st *step) runTimeouts(consider func(timer)) {
	for _, r := range st.s.Runs {
		if t, _, ok := st.runTimeout(r); ok {
			consider(t)
		}
	}
}

// runTimeout is open run r's expiry, run_timeout after its last call; ok is false
// once r has ended.
func (st *step) runTimeout(r *Run) (t timer, sub int, ok bool) {
	if r.State != RunOpened {
		return timer{}, 0, false
	}
	tp := st.e.Policy.lookup(r.Tool)
	return timer{r.LastAt.Add(tp.timings.RunTimeout), func() { st.expireRun(r, tp) }}, 0, true
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
		consider(st.transcriptTimer(j, u, tp, graceEnd))
	}
}

// transcriptTimer is the transcript timeout of ended utterance u holding job j's
// commit, which came due at graceEnd: transcript_timeout from the later of the two
// (the "hold" timer above; an open question's holds count the same way, questions.go).
func (st *step) transcriptTimer(j *Job, u *Utterance, tp toolPolicy, graceEnd time.Time) timer {
	start := graceEnd
	if u.End.After(start) {
		start = u.End
	}
	return timer{start.Add(tp.timings.TranscriptTimeout), func() { st.transcriptTimedOut(j, u, tp) }}
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
	j := st.findJob(c.JobID)
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

// revokeCommitsAfter withdraws every commit decided after at that no Decide has
// handed out and whose outcome is not reported yet: an event the agent observed at at
// arrived after the timers that decided them, and the commits were decided on a
// timeline missing it. Each job is undecided again; the next timers decide it on the
// whole timeline. A commit a Decide handed out stands (see Engine.Step).
func (st *step) revokeCommitsAfter(at time.Time) {
	for _, j := range st.s.Jobs {
		if j.SideEffect && j.Decision == DecisionCommit && j.AnsweredAt.IsZero() && j.Outcome == NotCompleted && j.DecidedAt.After(at) {
			st.revoke(j)
		}
	}
}

// revoke withdraws j's commit decision: j is undecided again (Output.Revoked, a
// revoked history entry), as it was kept for restoreRecommitted.
func (st *step) revoke(j *Job) {
	st.revoked = append(st.revoked, revocation{job: j, decidedAt: j.DecidedAt, reason: j.Reason, late: j.LateCommit, decisions: len(st.out.Decisions), holds: len(st.out.Holds)})
	j.Decision, j.Cause, j.Reason, j.DecidedAt, j.LateCommit = Undecided, "", "", time.Time{}, false
	j.CommitsRevoked++
	st.out.Revoked = append(st.out.Revoked, j.ID)
	st.remember(HistoryEntry{Revoked: &JobEntry{Job: j.ID}})
	st.out.Changed = true
	st.cancelHeardAfter(j)
}

// cancelHeardAfter cancels j, whose commit was just withdrawn, when a stop or a change
// was heard after that commit was decided (StopAfterCommit, AmendAfterCommit): it now
// comes before any commit, and nothing was handed out, so it cancels the job as it
// would have before the decision (a re-decided commit would otherwise come after a
// stop; TestPropertyAnsweredCommitStands found it).
func (st *step) cancelHeardAfter(j *Job) {
	stop, amend := j.StopAfterCommit, j.AmendAfterCommit
	if !stop && !amend {
		return
	}
	j.StopAfterCommit, j.AmendAfterCommit = false, false
	// reason stands when the utterance is gone from the session (trimmed): what it
	// said still holds.
	want, cause, reason, said := speech.IntentAmend, CauseAmend, "the user changed the request", amendReason
	if stop {
		want, cause, reason, said = speech.IntentStop, CauseStop, "stop intent in user speech", stopReason
	}
	for i := len(st.s.Utterances) - 1; i >= 0; i-- {
		if u := st.s.Utterances[i]; u.Intent == want && relevant(j, u) {
			reason = said(u)
			break
		}
	}
	st.decideJob(j, DecisionCancel, cause, reason)
}

// withdrawUnanswered withdraws j's commit decision when it came due while nothing
// could step the session and no Decide has handed it out (Job.recovering), and reports
// whether it did. A stop, a change or a withdrawal of its call heard then cancels the
// job: nothing was done, and nobody was told it would be (see Engine.Step).
func (st *step) withdrawUnanswered(j *Job) bool {
	if !j.SideEffect || !j.recovering(st.arrived) {
		return false
	}
	st.revoke(j)
	return true
}

// revocation is a commit a step withdrew, as it was: its job, its time and reason,
// and how many decisions and hold changes the step's output held then.
type revocation struct {
	job              *Job
	decidedAt        time.Time
	reason           string
	late             bool
	decisions, holds int
}

// restoreRecommitted puts back, as first decided, every commit this step withdrew that
// its job decided again within the step with no hold on it in between: the event that
// withdrew it did not bear on it (see Engine.Step). The withdrawal and the second
// decision leave the output and the history. It reports whether every withdrawal was
// put back (true when there was none).
func (st *step) restoreRecommitted() bool {
	all := true
	for _, r := range st.revoked {
		j := r.job
		if j.Decision != DecisionCommit || !j.AnsweredAt.IsZero() || j.Outcome != NotCompleted || !st.decidedAgain(r) {
			all = false
			continue
		}
		j.DecidedAt, j.Reason, j.Cause, j.LateCommit = r.decidedAt, r.reason, "", r.late
		j.CommitsRevoked--
		st.out.Revoked = slices.DeleteFunc(st.out.Revoked, func(id string) bool { return id == j.ID })
		for i := len(st.out.Decisions) - 1; i >= r.decisions; i-- {
			if st.out.Decisions[i].JobID == j.ID {
				st.out.Decisions = slices.Delete(st.out.Decisions, i, i+1)
				break
			}
		}
		st.forget(func(e HistoryEntry) bool { return e.Revoked != nil && e.Revoked.Job == j.ID }, false)
		st.forget(func(e HistoryEntry) bool { return e.Decision != nil && e.Decision.Job == j.ID }, true)
	}
	st.revoked = nil
	return all
}

// decidedAgain reports whether r's job was decided commit again after its withdrawal
// with no hold beginning or ending on it since.
func (st *step) decidedAgain(r revocation) bool {
	for _, h := range st.out.Holds[r.holds:] {
		if h.JobID == r.job.ID {
			return false
		}
	}
	for _, d := range st.out.Decisions[r.decisions:] {
		if d.JobID == r.job.ID && d.Decision == DecisionCommit {
			return true
		}
	}
	return false
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
	j.LateCommit = d == DecisionCommit && st.arrived.Sub(st.s.Now) > LateTimer
	st.out.Decisions = append(st.out.Decisions, DecisionResult{JobID: j.ID, Decision: d, Reason: reason, DecidedAt: st.s.Now, Cause: cause, Tool: j.Tool})
	st.remember(HistoryEntry{Decision: &DecisionEntry{Job: j.ID, Decision: d, Cause: cause, Reason: reason}})
	if d == DecisionCancel {
		st.out.Cancelled = append(st.out.Cancelled, j.ID)
	}
	st.out.Changed = true
}
