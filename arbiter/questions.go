package arbiter

import "time"

// Questions: what an unclear reply does (issue 25, pattern 1). Whether a bare "No."
// refuses the pending action or answers another question ("Anything else?") cannot
// always be read from the words and the model's last question (speech.Read); guessing
// either way loses: a cancel loses the booking, a commit books what the user refused.
// So an unclear reply, under the policy's on_unclear (Timings.OnUnclear):
//
//   - ask (the default): the job's commit is held and the model is told to ask the
//     user one short question about it ("Do you still want the booking for tomorrow
//     3pm?"; the note is askNote). The next utterance decides, read with the question
//     as its target: a stop or a refusal cancels, an amendment amends, a go-ahead
//     ("Yes.") releases the hold and the job commits. Anything else (a question back,
//     another unclear reply) leaves the question open. A question left unanswered
//     MaxHold after it was asked (counted from the later of the ask, the end of the
//     model's turn that asked it and the end of the user's last words; not while the
//     model speaks or the user's voice activity goes on) ends as on_transcript_timeout
//     says: cancel (the default: fail closed) or commit. A re-issue of the call meanwhile
//     joins the pending job (business-key dedupe: an open job absorbs every repeat),
//     and waits for its answer, never "cancelled";
//   - cancel: the job is cancelled (CauseUnclear);
//   - commit: the reply is read as no stop: the hold ends as for any other words
//     (so does ask for a tool with hold: false, which speech never holds).
//
// A job already committed is not asked about: an unclear reply is no stop. Nor is an
// abandoned job (its call ids dead after `interrupted`): it is held until a re-issue
// revives it, and asked about when none comes (on_abandon: cancel).

// questionOpen reports whether the arbiter's question about j is open: it holds j's commit.
func (j *Job) questionOpen() bool { return j.QuestionOpen && j.Decision == Undecided }

// unclear applies an unclear reading of utterance u to job j (one u bears on), as the
// tool's on_unclear says.
func (st *step) unclear(j *Job, u *Utterance) {
	if j.Decision != Undecided || j.Abandoned {
		return // decided; or abandoned, held until a re-issue and asked about if none comes
	}
	tp := st.e.Policy.lookup(j.Tool)
	switch {
	case tp.timings.OnUnclear == CancelUnclear:
		st.decideJob(j, DecisionCancel, CauseUnclear, reasonUnclearCancel(u.Text))
	case tp.timings.OnUnclear == CommitUnclear, tp.tool.NoHold:
		// no stop; a tool that is never held on speech is not held by a question
	default:
		if j.QuestionOpen {
			return // asked already: the question stands
		}
		j.QuestionAt, j.QuestionBy, j.QuestionOpen, j.AnsweredBy = st.s.Now, u.ID, true, 0
		st.issueNote(j, askNote(st.describe(j.Tool, j.Args), j.Tool, u.Text), "")
	}
}

// answered records that utterance u said yes to the open question about job j: the
// question's hold ends, and the job commits by the grace rules (timers.go). A go-ahead
// said before the question, or by the reply that raised it, answers nothing.
func (st *step) answered(j *Job, u *Utterance) {
	if !j.questionOpen() || u.ID <= j.QuestionBy {
		return
	}
	j.QuestionOpen, j.AnsweredBy = false, u.ID
}

// questionTimers offers the timers of job j while its question is open: the
// transcript timeout of each later utterance holding it that has ended (counted, as
// every hold's, from the later of its end and the commit coming due, so none before
// the prepare: timers.go), and the question's own expiry (questionDue).
func (st *step) questionTimers(j *Job, tp toolPolicy, consider func(timer)) {
	if !j.PreparedAt.IsZero() { // no commit is due before the prepare: nothing to time out yet
		graceEnd := j.PreparedAt.Add(tp.timings.Grace)
		for _, u := range st.s.Utterances {
			if u.ID > j.QuestionBy && relevant(j, u) && !u.settled() && !u.End.IsZero() && !containsInt(j.Released, u.ID) {
				consider(st.transcriptTimer(j, u, tp, graceEnd))
			}
		}
	}
	if due, ok := st.questionDue(j, tp); ok {
		consider(timer{due, func() { st.questionExpired(j, tp) }})
	}
}

// questionDue is when the open question about job j expires: MaxHold after the later
// of the ask, the model's last output (the turn that asked it) and the user's last
// words that bear on j (the end of an utterance, or the start of one whose voice
// activity goes on: a lost end of voice activity must not hold the question for good).
// ok is false while the model speaks: it is asking, and max_pending bounds the wait.
func (st *step) questionDue(j *Job, tp toolPolicy) (due time.Time, ok bool) {
	if st.s.ModelSpeaking {
		return time.Time{}, false
	}
	from := j.QuestionAt
	if m := st.s.ModelSaid.At; m.After(from) {
		from = m
	}
	for _, u := range st.s.Utterances {
		if u.ID <= j.QuestionBy || !relevant(j, u) {
			continue
		}
		last := u.End
		if last.IsZero() {
			last = u.Start
		}
		if last.After(from) {
			from = last
		}
	}
	return from.Add(tp.timings.MaxHold), true
}

// questionExpired ends a question left unanswered as on_transcript_timeout says: the
// job is cancelled (CauseUnanswered), or the hold ends and it commits.
func (st *step) questionExpired(j *Job, tp toolPolicy) {
	if tp.timings.OnTranscriptTimeout == Commit {
		j.QuestionOpen = false
		return
	}
	st.decideJob(j, DecisionCancel, CauseUnanswered, reasonUnanswered(tp.timings.MaxHold))
}

// questionReason is the reason of a commit released after a question, or "" when j
// was never asked about: the user's answer, or the question left unanswered under
// on_transcript_timeout: commit.
func (st *step) questionReason(j *Job, tp toolPolicy) string {
	switch {
	case j.QuestionAt.IsZero():
		return ""
	case j.AnsweredBy != 0:
		if u := st.s.utterance(j.AnsweredBy); u != nil {
			return reasonAnswered(u.Text)
		}
		return reasonAnswered("")
	}
	return reasonUnansweredCommit(tp.timings.MaxHold)
}

// discarded says, for the history, which words of the user transcript this step read
// were not the user's: "" when all were.
func (st *step) discarded() string {
	if st.echoed == 0 {
		return ""
	}
	return discardedEcho(st.echoed, EchoWindow)
}
