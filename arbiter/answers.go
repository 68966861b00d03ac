package arbiter

import "time"

// Answers: what the agent itself sent the model for a call, as the wire guard (the
// WebSocket proxy between the agent and the model server, package guard) reads it
// off the wire. The arbiter decides what reaches the model for the call: its own
// response (the tool's result under `result` once the job is final), nothing yet
// (a job whose tool asks Decide is still deciding: the framework's own text, a
// "CANCELLED" on barge-in or an error, is not the answer), or nothing ever (a dead
// id, a call the agent was never given).

// ToolAnswer reports a function response the agent sent for CallID (Gemini
// `toolResponse.functionResponses[]`, OpenAI `function_call_output`), Payload being
// what it said (an object; a text output as {"output": text}). Its verdict
// (Output.Answer) says what the model gets for the call:
//
//   - the call is unknown, or it was never given to the agent to execute (a
//     duplicate, a rejected call, a run's prompt: the arbiter answers those itself):
//     AnswerDrop, and nothing changes;
//   - the call has its response already (the job completed): AnswerSend with it;
//   - the call is dead (abandoned, withdrawn, of an earlier connection, the session
//     closed): AnswerDrop with the skip's reason;
//   - the call opened a read-only job still running: the answer is its result (as
//     Complete with Result), AnswerSend with the response that makes;
//   - the call opened a side-effecting job whose tool has asked Decide by call id
//     (Job.Asked): the answer is the framework's, not the tool's (the tool reports
//     with Complete): AnswerWait, the response comes with the job's Complete;
//   - the call opened a side-effecting job whose tool never asked (a tool with no
//     arbiter code): the answer is the tool's own word about what it did, outside the
//     arbiter's decisions: the job completes with it as its Result (Job.Unguarded;
//     status "ok", the answer under `result`), its duplicates are answered with it
//     and never executed. A job the arbiter had decided to cancel meanwhile (a stop)
//     gets a note saying the tool ran anyway.
//
// The job completes even when the call itself is dead (its answer is dropped): what
// the tool did is recorded, and a re-issue is answered with it.
type ToolAnswer struct {
	CallID string
	// Payload is the agent's function response. One over MaxArgsBytes JSON-encoded or
	// MaxArgsDepth levels deep is taken as Complete takes such a result (issue 25: every
	// call is answered whatever its result): left out, ResultOmission saying why.
	Payload map[string]any
	// ObservedAt is when the agent sent it; zero: when it reaches the engine.
	ObservedAt time.Time
}

// AnswerVerdict is what becomes of an answer the agent sent (ToolAnswer).
type AnswerVerdict string

// The verdicts on an agent's answer.
const (
	// AnswerSend: send the arbiter's response (AnswerResult.Response) for the call
	// instead of the agent's.
	AnswerSend AnswerVerdict = "send"
	// AnswerWait: the arbiter's response is not due yet (the job still decides);
	// it comes with the job's Complete, or the call's deadline.
	AnswerWait AnswerVerdict = "wait"
	// AnswerDrop: nothing goes to the model for this answer (AnswerResult.Reason).
	AnswerDrop AnswerVerdict = "drop"
)

// The reasons an agent's answer is dropped, besides a dead id's skip reason.
const (
	// DropUnknownCall: the session has no call with that id.
	DropUnknownCall = "unknown_call"
	// DropNotExecuted: the call was answered by the arbiter itself (a duplicate, a
	// rejected call, a run's prompt); the agent was never given it to run.
	DropNotExecuted = "not_executed"
)

// AnswerResult is ToolAnswer's verdict.
type AnswerResult struct {
	Verdict AnswerVerdict
	// Response is, for AnswerSend, the call's response as the arbiter recorded it.
	Response *Response
	// Reason is, for AnswerDrop, why: a SkipReason for a dead id, DropUnknownCall or
	// DropNotExecuted.
	Reason string
}

func (ev ToolAnswer) observedAt() time.Time { return ev.ObservedAt }

func (ev ToolAnswer) validate() error { return CheckName("call_id", ev.CallID) }

// check: an answer is read on any session, a closed one included (a tool that
// finishes after the close still reports what it did), so nothing is refused here.
func (ev ToolAnswer) check(*step) error { return nil }

func (ev ToolAnswer) apply(st *step) error {
	s := st.s
	c := s.call(ev.CallID)
	if c == nil {
		st.out.Answer = &AnswerResult{Verdict: AnswerDrop, Reason: DropUnknownCall}
		return nil
	}
	if c.Disposition != Execute || c.JobID == "" {
		st.out.Answer = &AnswerResult{Verdict: AnswerDrop, Reason: DropNotExecuted}
		return nil
	}
	j := s.job(c.JobID)
	if j != nil && j.Outcome == NotCompleted {
		switch {
		case !j.SideEffect:
			j.Outcome, j.CompletedAt = Result, s.Now
			Complete{Result: ev.Payload}.taken().keep(j)
			st.completed(j)
		case !j.Asked:
			st.unguarded(j, ev.Payload)
		}
	}
	st.out.Answer = st.answerOf(c)
	return nil
}

// answerOf is the verdict for an answer to c as c stands: its response, its skip's
// reason, or, while it is pending, wait.
func (st *step) answerOf(c *Call) *AnswerResult {
	switch {
	case c.Outcome == nil:
		return &AnswerResult{Verdict: AnswerWait}
	case c.Outcome.Dead:
		return &AnswerResult{Verdict: AnswerDrop, Reason: string(c.Outcome.Reason)}
	}
	r := st.response(c)
	return &AnswerResult{Verdict: AnswerSend, Response: &r}
}

// completed records j's outcome (set by the caller) and answers its calls, as
// Complete does.
func (st *step) completed(j *Job) {
	st.out.Changed = true
	st.out.Outcomes = append(st.out.Outcomes, JobOutcome{j.ID, j.Tool, j.Outcome})
	st.remember(HistoryEntry{Complete: &CompleteEntry{Job: j.ID, Outcome: j.Outcome, Result: j.Result, ResultOmitted: j.ResultOmitted}})
	st.answerJob(j, st.completionNote)
}

// unguarded completes side-effecting job j with the answer its tool gave without
// ever asking Decide: the arbiter decided nothing it did, so the decision recorded is
// the tool's own (a commit, reasonUnguarded) unless the arbiter had decided to cancel
// it already, in which case the note says the tool ran anyway.
func (st *step) unguarded(j *Job, payload map[string]any) {
	if j.Decision == Undecided {
		st.decideJob(j, DecisionCommit, "", reasonUnguarded)
	}
	j.Outcome, j.CompletedAt, j.Unguarded = Result, st.s.Now, true
	Complete{Result: payload}.taken().keep(j)
	st.completed(j)
}
