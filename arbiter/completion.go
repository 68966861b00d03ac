package arbiter

import (
	"bytes"
	"encoding/json"
	"math"
	"time"
	"unicode/utf8"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// Completion: the two phases of a job as the agent reports them. Decide records that
// prepare finished (which starts the grace window, timers.go) and reads the decision;
// Complete reports what happened (committed, cancelled, failed, a read-only result,
// or a commit whose outcome is unknown) and answers every live call id of the job;
// Progress hands out an interim result of a job still running.

// Decide asks for a job's decision, and records that prepare finished. The job is
// named by JobID, or by CallID: the call id the model gave the function call that
// opened it (the id a framework hands its tool; jobRef has the rules). A Decide by
// call id also marks the job Asked: its tool talks to the arbiter, so an answer the
// agent sends for the call before the job completes is not the tool's own
// (ToolAnswer).
//
// A COMMIT it answers is final: the step records that it was handed out
// (Job.AnsweredAt), in the write that precedes the reply, and from then on no event
// withdraws it, however early it was observed (Engine.Step). A commit no Decide has
// handed out yet is the arbiter's alone: an event observed before it came due still
// withdraws it; and one that came due during an outage (below) is withdrawn by an
// event without an age too, and cancelled by a stop, a change or the withdrawal of its
// call, whenever they were observed.
//
// After an outage. A commit that comes due while no step of the session can be
// stored (the store unreachable or frozen, or the replicas whose parked Decide or
// Watch would wake for it gone) is decided by the first step after, late
// (Job.LateCommit: more than LateTimer after it came due). The agent may hold events
// it observed meanwhile and could not deliver either, or whose delivery is stuck
// behind the same store. When a Decide of a live agent (Live) finds such a commit,
// the COMMIT is withheld for DeliveryWait: the answer is pending, with why, and an
// event that arrives meanwhile, with an age or without one, comes before it
// (Engine.Step), so a stop the agent observed during the outage cancels it. A commit
// decided in time (by a parked Decide or a Watch waking when it came due) is handed
// out at once.
//
// An agent that declares the delivery contract (Delivered: DecideRequest's
// events_delivered) has delivered every event it observed before this Decide, and
// aborts the Decide when one it observes while it waits is not delivered within
// LateTimer or its delivery fails. What the withholding waits for has then landed
// already, so a late commit such a Decide finds is handed out at once: lateness alone
// (an outage, or a timer or a store write late under CPU load) costs it nothing. A
// commit a Decide without it began withholding stays withheld until then (the events
// it waits for may be another caller's). The rule is docs/rules.md's "After an
// outage, a late commit waits for what the agent observed".
type Decide struct {
	JobID    string
	CallID   string
	Prepared bool
	// Live is set for a live agent's Decide (Service.Decide sets it): a late commit is
	// withheld from it first, unless Delivered. A caller that steps the engine
	// directly, as the tests and goldens do, sets it when it plays an outage.
	Live bool
	// Delivered is set when the agent follows the delivery contract (above; the
	// request's events_delivered): a late commit is not withheld from it, and
	// Service.Decide does not take back a COMMIT whose record the store kept late (it
	// still takes one back when the caller has gone).
	Delivered bool
}

// DeliveryWait is how long a commit that came due while the agent could not reach
// the arbiter is withheld, from the first Decide that finds it, so that the agent can
// deliver what it observed meanwhile (see Decide). The client adapters retry an
// undelivered event at least once a second (their backoff's cap; gRPC's retry policy
// for events in clients/service-config.json, 0.2 s), so 2 s lets every queued event
// land after the store is back.
const DeliveryWait = 2 * time.Second

// LateTimer is how late a commit may be decided after it came due and still count as
// decided in time (see Decide): a parked Decide or a Watch wakes at the due time and
// decides it within a store round trip (milliseconds), so one decided later came due
// while nothing could step the session. A commit decided late under load only waits
// DeliveryWait more. It is also the window the rule leaves open: an outage that ends
// less than LateTimer after a commit came due, with the agent's Decide landing before
// its events, hands out the COMMIT at once.
const LateTimer = 100 * time.Millisecond

func (ev Decide) validate() error { return checkJobRef(ev.JobID, ev.CallID) }

func (ev Decide) check(st *step) error {
	j, err := jobRef(st.s, ev.JobID, ev.CallID)
	if err != nil {
		return err
	}
	if !j.SideEffect {
		return Fieldf(FailedPrecondition, refField(ev.JobID), "job %q is a read-only %s call: run it and Complete it with a result, there is nothing to decide", j.ID, j.Tool)
	}
	return nil
}

func (ev Decide) apply(st *step) error {
	j, _ := jobRef(st.s, ev.JobID, ev.CallID)
	if ev.CallID != "" && !j.Asked {
		j.Asked = true
		st.out.Changed = true
	}
	if ev.Prepared && j.PreparedAt.IsZero() && j.Decision == Undecided {
		j.PreparedAt = st.s.Now
		st.out.Changed = true
		st.prepared = true
		st.advance(st.s.Now) // a zero-length wait may be due at once
	}
	st.out.Decision = &DecisionResult{JobID: j.ID, Decision: j.Decision, Reason: j.Reason, DecidedAt: j.DecidedAt, Cause: j.Cause, Tool: j.Tool}
	switch {
	case j.Decision == Undecided:
		st.out.Decision.Reason = st.pendingReason(j)
	case j.Decision == DecisionCommit && j.AnsweredAt.IsZero():
		st.answerCommit(j, ev.Live && !ev.Delivered)
	}
	return nil
}

// answerCommit hands out j's commit decision, not handed out before, to a Decide: it
// records the answer, or, for a late commit and withhold set (a live agent's Decide
// that does not declare the delivery contract), withholds it for DeliveryWait first
// (see Decide) and answers pending. A withholding already begun runs its course
// whatever withhold says.
func (st *step) answerCommit(j *Job, withhold bool) {
	now := st.s.Now
	if j.WithheldUntil.IsZero() && j.LateCommit && withhold {
		j.WithheldUntil = now.Add(DeliveryWait)
		st.out.Changed = true
	}
	if now.Before(j.WithheldUntil) {
		st.out.Decision = &DecisionResult{JobID: j.ID, Decision: Undecided, Reason: pendingDelivery(j.WithheldUntil.Sub(now)), Tool: j.Tool}
		return
	}
	j.AnsweredAt = now
	st.out.Changed = true
	st.out.Answered = append(st.out.Answered, j.ID)
	st.remember(HistoryEntry{Answered: &JobEntry{Job: j.ID}})
}

// withholdAnswer takes back a COMMIT that a Decide's step recorded as handed out at
// Answered but that never reached the agent: the Decide's caller went away before the
// reply (it aborted the call: an event of its is undelivered), or the store took
// longer than LateTimer to keep the record (frozen, failing over: the agent's events
// observed meanwhile may be stuck behind the same store; then Withhold is set and the
// commit is withheld as a late one is, see Decide). It was not handed out, so it is
// withdrawn and decided again with everything that arrived since, and a stop, a change
// or a withdrawal of its call heard since cancels it. Service.Decide sends it; nothing
// else may.
type withholdAnswer struct {
	JobID    string
	Answered time.Time
	Withhold bool
}

func (ev withholdAnswer) validate() error { return CheckName("job_id", ev.JobID) }

func (ev withholdAnswer) check(st *step) error {
	_, err := findJob(st.s, ev.JobID)
	return err
}

func (ev withholdAnswer) apply(st *step) error {
	j := st.s.job(ev.JobID)
	if j.Decision != DecisionCommit || !j.AnsweredAt.Equal(ev.Answered) || j.Outcome != NotCompleted {
		return nil // handed out, or completed, since
	}
	j.AnsweredAt = time.Time{}
	if ev.Withhold {
		j.WithheldUntil = st.s.Now.Add(DeliveryWait)
	}
	stop, amend := j.StopAfterCommit, j.AmendAfterCommit
	j.StopAfterCommit, j.AmendAfterCommit = false, false
	st.revoke(j)
	switch {
	case stop:
		st.decideJob(j, DecisionCancel, CauseStop, stopReason(st.lastStop(j)))
	case amend:
		st.decideJob(j, DecisionCancel, CauseAmend, amendReason(&Utterance{Text: j.AmendText}))
	case j.Withdrawn:
		st.decideJob(j, DecisionCancel, CauseWithdrawn, reasonWithdrawn)
	}
	st.out.Changed = true
	return nil
}

// lastStop is the latest utterance with a stop intent that bears on j (a stand-in
// saying "stop" when the session no longer keeps it).
func (st *step) lastStop(j *Job) *Utterance {
	for i := len(st.s.Utterances) - 1; i >= 0; i-- {
		if u := st.s.Utterances[i]; u.Final && u.Intent == speech.IntentStop && relevant(j, u) {
			return u
		}
	}
	return &Utterance{Text: "stop"}
}

// checkJobRef checks how a Decide or Complete names its job: a job id, or the call id
// of the function call that opened it; both may be given when they agree (jobRef).
// Errors: Invalid naming job_id when neither is given, or the one at fault.
func checkJobRef(jobID, callID string) error {
	if jobID == "" && callID == "" {
		return Fieldf(Invalid, "job_id", "required: the job id (RegisterCall's job_id), or call_id")
	}
	if jobID != "" {
		if err := CheckName("job_id", jobID); err != nil {
			return err
		}
	}
	if callID != "" {
		return CheckName("call_id", callID)
	}
	return nil
}

// jobRef finds the job a Decide or Complete names. By call id: the call must be one
// the agent was told to execute (RegisterCall's EXECUTE: the call that opened the
// job, or a confirmation call that started its run's job); a duplicate never runs
// (its job is its original's, reported by the original's tool), and a rejected call
// or a run's prompt has no job. With both ids, the call's job must be jobID.
// Errors: NotFound naming call_id or job_id; FailedPrecondition naming call_id for a
// call that executes nothing, or one whose job is not jobID.
func jobRef(s *Session, jobID, callID string) (*Job, error) {
	if callID == "" {
		return findJob(s, jobID)
	}
	c := s.call(callID)
	if c == nil {
		return nil, Fieldf(NotFound, "call_id", "call %q not found in session %q", Clip(callID), s.Key.ID)
	}
	switch {
	case c.Disposition == Duplicate:
		return nil, Fieldf(FailedPrecondition, "call_id", "call %q repeats %s: it executes nothing (its job %s is %s's)", c.ID, c.DuplicateOf, c.JobID, c.DuplicateOf)
	case c.Disposition != Execute || c.JobID == "":
		return nil, Fieldf(FailedPrecondition, "call_id", "call %q executes nothing (it was answered when it was registered: %s)", c.ID, c.Disposition)
	case jobID != "" && jobID != c.JobID:
		return nil, Fieldf(FailedPrecondition, "call_id", "call %q belongs to job %s, not %s", c.ID, c.JobID, Clip(jobID))
	}
	return findJob(s, c.JobID)
}

// refField is the field a job reference's errors name: job_id when one was given,
// else call_id.
func refField(jobID string) string {
	if jobID != "" {
		return "job_id"
	}
	return "call_id"
}

// pendingReason says what an undecided job waits for.
func (st *step) pendingReason(j *Job) string {
	tp := st.e.Policy.lookup(j.Tool)
	switch {
	case j.Abandoned:
		return pendingAbandoned
	case j.questionOpen():
		return pendingAsked
	case j.PreparedAt.IsZero():
		return pendingPrepare
	case len(st.holding(j, tp)) > 0:
		return pendingHeld
	case !st.s.Now.Before(j.PreparedAt.Add(tp.timings.Grace)) && st.s.Now.Before(st.continuationUntil(j, tp)):
		return pendingContinuation
	default:
		return pendingGrace
	}
}

// withheld reports whether j's commit is decided, not handed out, and withheld at
// now (answerCommit).
func (j *Job) withheld(now time.Time) bool {
	return j.Decision == DecisionCommit && j.AnsweredAt.IsZero() && j.Outcome == NotCompleted && now.Before(j.WithheldUntil)
}

// recovering reports whether j's commit came due while nothing could step the session
// (Job.LateCommit), and no Decide has handed it out yet: no Decide has found it, or it
// is withheld at now (see Decide). What arrives then comes before it: an event
// without an age (Engine.Step) and a stop, a change or a withdrawal of its call
// (withdrawUnanswered).
func (j *Job) recovering(now time.Time) bool {
	return j.Decision == DecisionCommit && j.LateCommit && j.AnsweredAt.IsZero() && j.Outcome == NotCompleted &&
		(j.WithheldUntil.IsZero() || now.Before(j.WithheldUntil))
}

// Complete reports a job's outcome. The job is named by JobID, or by CallID as for
// Decide (jobRef).
//
// Every call of the job is answered whatever the report carries (issue 25: a result
// over the size limit was refused, Invalid, and nothing answered the call; a BLOCKING
// call waited for max_pending and was told no result came). What decides whether a
// Complete is taken is only the job's state and the outcome (outcomeFits, and a retry
// must say what the first report said); its content never refuses it:
//   - a result over MaxArgsBytes JSON-encoded, or nesting over MaxArgsDepth levels, is
//     not passed on: the responses carry `result_omitted` (ResultOmission) instead of
//     `result`, and the outcome stands (a commit stays committed);
//   - an error text is cleaned of control characters (each becomes U+FFFD, as does a
//     byte that is not UTF-8) and cut to MaxErrorBytes with a marker saying how long
//     it was (errorText);
//   - NaN and infinite numbers in the result are taken as null, as in a call's args.
type Complete struct {
	JobID   string
	CallID  string
	Outcome Outcome
	// Result is the backend's result, carried whole under `result` in the function
	// response payload when it is at most MaxArgsBytes JSON-encoded and MaxArgsDepth
	// levels of objects and lists deep; otherwise left out (ResultOmission).
	Result map[string]any
	// Error says what failed, for Failed; cleaned and cut to MaxErrorBytes (errorText).
	Error string
}

func (ev Complete) validate() error {
	if err := checkJobRef(ev.JobID, ev.CallID); err != nil {
		return err
	}
	switch ev.Outcome {
	case Committed, Cancelled, Failed, Result, Unknown:
		return nil
	}
	return Fieldf(Invalid, "outcome", "%q is not committed, cancelled, failed, result or unknown", ev.Outcome)
}

func (ev Complete) check(st *step) error {
	j, err := jobRef(st.s, ev.JobID, ev.CallID)
	if err != nil {
		return err
	}
	if j.Outcome == Unknown && (ev.Outcome == Committed || ev.Outcome == Failed) {
		return nil // the real outcome of an unknown commit
	}
	if j.Outcome != NotCompleted && j.Outcome != ev.Outcome {
		return Fieldf(FailedPrecondition, "outcome", "job %q already completed as %s", j.ID, j.Outcome)
	}
	if j.Outcome != NotCompleted {
		// A retry is answered from the record, so it must say what the first said: a
		// different result would be dropped, and the model told the first one. Both
		// are compared as the job keeps them (a result left out by its digest).
		r := ev.taken()
		if r.err != j.Error {
			return Fieldf(FailedPrecondition, "error", "job %q already completed with another error: a retried Complete sends the first one's", j.ID)
		}
		if !r.same(j) {
			return Fieldf(FailedPrecondition, "result", "job %q already completed with another result: a retried Complete sends the first one's", j.ID)
		}
	}
	// The decision may still be made by a timer inside this step: apply checks the
	// outcome against it after advancing.
	return nil
}

func (ev Complete) apply(st *step) error {
	s := st.s
	j, _ := jobRef(s, ev.JobID, ev.CallID)
	if j.Outcome == Unknown && ev.Outcome != Unknown {
		return st.resolveUnknown(j, ev)
	}
	if j.Outcome != NotCompleted {
		st.out.Effects.add(*j.Completion) // idempotent repeat
		return nil
	}
	if err := outcomeFits(j, ev.Outcome); err != nil {
		return err
	}
	if (ev.Outcome == Committed || ev.Outcome == Unknown) && j.Decision != DecisionCommit {
		st.committedAfterRevoke(j)
	}
	r := ev.taken()
	if ev.Outcome == Failed && j.SideEffect && j.Decision == Undecided {
		st.decideJob(j, DecisionCancel, CauseFailed, reasonFailed(r.err))
	}
	j.Outcome, j.CompletedAt = ev.Outcome, s.Now
	r.keep(j)
	st.out.Changed = true
	st.out.Outcomes = append(st.out.Outcomes, JobOutcome{j.ID, j.Tool, j.Outcome})
	st.answerJob(j, st.completionNote)
	return nil
}

// committedAfterRevoke records that the agent performed a commit whose decision was
// withdrawn before any Decide handed it out (an agent that learnt of it elsewhere and
// acted on it while an event it had observed before was undelivered), on a job still
// undecided: the side effect is a fact, so the job is decided commit.
func (st *step) committedAfterRevoke(j *Job) {
	st.out.Decisions = append(st.out.Decisions, DecisionResult{JobID: j.ID, Decision: DecisionCommit, Reason: reasonCommittedAfterRevoke, DecidedAt: st.s.Now, Tool: j.Tool})
	st.remember(HistoryEntry{Decision: &DecisionEntry{Job: j.ID, Decision: DecisionCommit, Reason: reasonCommittedAfterRevoke}})
	j.Decision, j.Cause, j.Reason, j.DecidedAt = DecisionCommit, "", reasonCommittedAfterRevoke, st.s.Now
}

// outcomeFits checks a first outcome against the job's kind and decision: a commit
// only after a commit decision, a cancel only after a cancel, unknown only after a
// commit, a result only for a read-only job; failed fits any job. A job whose commit
// decision was withdrawn (CommitsRevoked) takes committed and unknown while it is
// undecided (the commit happened: a fact, committedAfterRevoke), but not once it was
// decided cancel: the arbiter tells one story, and a job it answered CANCEL is never
// answered committed. Errors: FailedPrecondition naming outcome.
func outcomeFits(j *Job, o Outcome) error {
	committable := j.Decision == DecisionCommit || (j.CommitsRevoked > 0 && j.Decision == Undecided)
	switch {
	case !j.SideEffect && o != Result && o != Failed:
		return Fieldf(FailedPrecondition, "outcome", "job %q is a read-only call: complete it with result or failed", j.ID)
	case j.SideEffect && o == Result:
		return Fieldf(FailedPrecondition, "outcome", "job %q is two-phase: complete it with committed, cancelled, failed or unknown", j.ID)
	case o == Committed && !committable:
		return Fieldf(FailedPrecondition, "outcome", "job %q was not decided commit (decision: %s)", j.ID, orPending(j.Decision))
	case o == Cancelled && j.Decision != DecisionCancel:
		return Fieldf(FailedPrecondition, "outcome", "job %q was not decided cancel (decision: %s)", j.ID, orPending(j.Decision))
	case o == Unknown && !committable:
		return Fieldf(FailedPrecondition, "outcome", "job %q: only a commit can have an unknown outcome (decision: %s)", j.ID, orPending(j.Decision))
	}
	return nil
}

func orPending(d Decision) string {
	if d == Undecided {
		return "pending"
	}
	return string(d)
}

// answerJob answers every call of j that has no outcome yet from j's outcome (a
// closed session's are marked dead instead), hands out the note note(j, live) picks,
// and records all of it as j.Completion for a repeated Complete. Only outcomes
// assigned now are handed out: a skip given out earlier (by `interrupted`, a
// withdrawal or a reconnect) is not repeated, so every outcome reaches the agent
// exactly once.
func (st *step) answerJob(j *Job, note func(j *Job, live int) string) {
	s := st.s
	m := st.out.Effects.mark()
	live, rider := 0, ""
	for _, id := range j.CallIDs {
		c := s.call(id)
		if c.Outcome != nil {
			continue
		}
		if s.Closed {
			c.Outcome = &CallOutcome{At: s.Now, Dead: true, Reason: SkipSessionClosed}
			st.emitSkip(c)
			continue
		}
		c.Outcome = &CallOutcome{At: s.Now, Response: st.payload(j, c)}
		st.emitResponse(c)
		live++
		if rider == "" && c.Behavior == NonBlocking {
			rider = c.ID
		}
	}
	if text := note(j, live); text != "" && !s.Closed {
		j.NoteIssued = true
		st.issueNote(j, text, rider)
	}
	done := st.out.Effects.since(m)
	j.Completion = &done
}

// resolveUnknown records the real outcome of a job first completed Unknown: calls
// still pending are answered with it, and the authoritative status note says what
// happened (the calls answered "unknown" are never answered again).
func (st *step) resolveUnknown(j *Job, ev Complete) error {
	if ev.Outcome != Committed && ev.Outcome != Failed {
		return Fieldf(FailedPrecondition, "outcome", "job %q has an unknown outcome: complete it with committed or failed once it is known", j.ID)
	}
	j.Outcome, j.CompletedAt, j.WasUnknown = ev.Outcome, st.s.Now, true
	ev.taken().keep(j)
	st.out.Changed = true
	st.out.Outcomes = append(st.out.Outcomes, JobOutcome{j.ID, j.Tool, j.Outcome})
	st.answerJob(j, st.resolvedNote)
	return nil
}

// Progress reports an interim result of a job still running (a long NON_BLOCKING
// tool's progress update). It goes out as a non-final function response (Gemini
// Live's will_continue) on the job's live NON_BLOCKING calls when the session says its
// provider honours response scheduling, and is dropped otherwise; it is never a user
// turn and never counts as user speech, and never answers a call.
type Progress struct {
	JobID string
	// Result is the interim result: at most MaxArgsBytes JSON-encoded and MaxArgsDepth
	// levels of objects and lists deep, Invalid naming `result` otherwise.
	Result map[string]any
	// EventID, when not empty, is the agent's id for this update (eventids.go): a
	// repeat of an update whose id the session keeps hands out nothing again.
	EventID string
}

func (ev Progress) validate() error {
	if err := checkEventID(ev.EventID); err != nil {
		return err
	}
	if err := CheckName("job_id", ev.JobID); err != nil {
		return err
	}
	if err := checkDepth("result", ev.Result, MaxArgsDepth); err != nil {
		return err
	}
	return checkSize("result", ev.Result, MaxArgsBytes)
}

func (ev Progress) check(st *step) error {
	j, err := findJob(st.s, ev.JobID)
	if err != nil {
		return err
	}
	if j.Outcome != NotCompleted {
		return Fieldf(FailedPrecondition, "job_id", "job %q is already completed (%s): no more progress", j.ID, j.Outcome)
	}
	return notClosed(st.s)
}

func (ev Progress) apply(st *step) error {
	s := st.s
	if !s.ResponseScheduling {
		return nil
	}
	j := s.job(ev.JobID)
	for _, id := range j.CallIDs {
		c := s.call(id)
		if c == nil || c.Outcome != nil || c.Behavior != NonBlocking {
			continue
		}
		st.emitInterim(c, progressPayload(ev.Result))
	}
	return nil
}

// ResultOmission says why a Complete's result was not passed on, in the job's function
// responses under `result_omitted` (in place of `result`) and in the record. Its JSON is
// the response's shape: {"reason": "too_large", "bytes": 70123, "max_bytes": 65536,
// "message": "..."} or {"reason": "too_deep", "max_depth": 16, "message": "..."}.
type ResultOmission struct {
	// Reason is ResultTooLarge or ResultTooDeep.
	Reason string `json:"reason"`
	// Bytes is the result's size JSON-encoded, and MaxBytes the bound (MaxArgsBytes),
	// for ResultTooLarge.
	Bytes    int `json:"bytes,omitempty"`
	MaxBytes int `json:"max_bytes,omitempty"`
	// MaxDepth is the bound on nesting (MaxArgsDepth), for ResultTooDeep.
	MaxDepth int `json:"max_depth,omitempty"`
	// Message says it in words, for the model.
	Message string `json:"message"`
	// Digest fingerprints the result as it was sent (its canonical JSON), so that a
	// retried Complete is told from one with another result. Kept in the record, not
	// sent to the model (payload writes the other fields).
	Digest string `json:"digest,omitempty"`
}

// The reasons a result is left out.
const (
	ResultTooLarge = "too_large"
	ResultTooDeep  = "too_deep"
)

// taken is what a job keeps of a Complete: its result (nil when left out), why it was
// left out, and its error text.
type taken struct {
	result  map[string]any
	omitted *ResultOmission
	err     string
}

// taken returns what the job keeps of ev (see Complete). Pure; the size is measured
// without encoding the result when it is JSON-shaped (jsonLen).
func (ev Complete) taken() taken {
	t := taken{result: jsonSafe(ev.Result), err: errorText(ev.Error)}
	if len(t.result) == 0 {
		return t
	}
	if nestedDeeper(t.result, MaxArgsDepth) {
		t.omitted = &ResultOmission{Reason: ResultTooDeep, MaxDepth: MaxArgsDepth, Message: resultTooDeep(MaxArgsDepth)}
	} else if n := resultSize(t.result); n > MaxArgsBytes {
		t.omitted = &ResultOmission{Reason: ResultTooLarge, Bytes: n, MaxBytes: MaxArgsBytes, Message: resultTooLarge(n, MaxArgsBytes)}
	}
	if t.omitted != nil {
		t.omitted.Digest = fingerprint(canonicalJSON(t.result))
		t.result = nil
	}
	return t
}

// resultSize is the size of a result JSON-encoded (one that does not encode counts as
// over every bound).
func resultSize(v map[string]any) int {
	if n, ok := jsonLen(v); ok {
		return n
	}
	b, err := json.Marshal(v)
	if err != nil {
		return math.MaxInt
	}
	return len(b)
}

// keep records t as j's result and error.
func (t taken) keep(j *Job) {
	j.Result, j.ResultOmitted, j.Error = t.result, t.omitted, t.err
}

// same reports whether t is what j kept: the same result (sameResult), or a result left
// out for the same reason with the same digest.
func (t taken) same(j *Job) bool {
	if t.omitted != nil || j.ResultOmitted != nil {
		return t.omitted != nil && j.ResultOmitted != nil && t.omitted.Reason == j.ResultOmitted.Reason &&
			t.omitted.Digest == j.ResultOmitted.Digest
	}
	return sameResult(t.result, j.Result)
}

// errorText is a Complete's error as the job keeps it: cleanText'd, and when longer than
// MaxErrorBytes cut at a character boundary with a marker saying how long it was as
// sent, the whole at most MaxErrorBytes.
func errorText(sent string) string {
	s := cleanText(sent)
	if len(s) <= MaxErrorBytes {
		return s
	}
	marker := errorCut(len(sent), MaxErrorBytes)
	cut := MaxErrorBytes - len(marker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker
}

// sameResult reports whether two results encode to the same JSON (encoding/json sorts
// map keys, so equal maps give equal bytes; nil and an empty map are the same result).
func sameResult(a, b map[string]any) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}
