package arbiter

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// What the model is told, in one place: the statuses and fields of the function
// responses the arbiter writes, the reasons a call id is dead, the reasons given for
// decisions, and every status note, with how it is delivered. Review (or translate)
// a change to any of them here; the rules that pick them live with their events.

// Status is the "status" field of a function response the arbiter writes.
type Status string

// The statuses of function responses.
const (
	StatusCommitted         Status = "committed"          // the side effect happened
	StatusCancelled         Status = "cancelled"          // released before its commit; not executed
	StatusFailed            Status = "failed"             // the backend failed; not executed
	StatusOK                Status = "ok"                 // a read-only call's result came
	StatusUnknown           Status = "unknown"            // committing, outcome not known yet
	StatusTimeout           Status = "timeout"            // max_pending passed with no outcome
	StatusRejected          Status = "rejected"           // refused before anything ran
	StatusError             Status = "error"              // a confirmation that answers no run
	StatusNeedsConfirmation Status = "needs_confirmation" // a run asks the user to confirm
	StatusNeedsInput        Status = "needs_input"        // a run asks the user a step's question
	StatusUnclear           Status = "unclear"            // a run's answer was not clear: asked again
	StatusInProgress        Status = "in_progress"        // an interim (non-final) response
	StatusSuperseded        Status = "superseded"         // replaced by a later call completing the request; not executed
)

// The payload fields the arbiter writes (a backend's result fields are merged in
// beside them).
const (
	keyStatus      = "status"
	keyExecuted    = "executed"
	keyError       = "error"
	keyReason      = "reason"
	keyMessage     = "message"
	keyDuplicateOf = "duplicate_of"
	keyStatusNote  = "status_note"
	// keySupersededBy names the call that replaced a superseded one.
	keySupersededBy = "superseded_by"
	keyRunID        = "run_id"
	keyAsk          = "ask"
	keyNext         = "next"
	keyAlreadyOpen  = "already_open"
	// keyResult holds the backend's result (a commit's, a read-only call's, a progress
	// report's) whole: it never overwrites the arbiter's own fields.
	keyResult = "result"
	// keyResultOmitted replaces keyResult when the result was over the size or depth
	// bound (ResultOmission): the outcome in keyStatus stands.
	keyResultOmitted = "result_omitted"
)

// SkipReason says why a call id is dead: it must never be answered.
type SkipReason string

// The reasons a call id dies.
const (
	// SkipAbandoned: `interrupted` dropped the unanswered BLOCKING call.
	SkipAbandoned SkipReason = "abandoned"
	// SkipWithdrawn: the server withdrew it (toolCallCancellation).
	SkipWithdrawn SkipReason = "withdrawn"
	// SkipConnectionClosed: it was issued on a connection that has since ended.
	SkipConnectionClosed SkipReason = "connection_closed"
	// SkipSessionClosed: the session closed before it was answered.
	SkipSessionClosed SkipReason = "session_closed"
	// SkipProviderTimeout: the provider gave up waiting for its response (its own
	// timeout) and will never read one.
	SkipProviderTimeout SkipReason = "provider_timeout"
)

// Scheduling is a function response's scheduling when a note rides on it (Gemini
// Live's FunctionResponse.scheduling).
type Scheduling string

// The schedulings a note may ride with.
const (
	// SchedulingWhenIdle waits for the model's turn to end (it is speaking).
	SchedulingWhenIdle Scheduling = "WHEN_IDLE"
	// SchedulingInterrupt speaks it now (the model is idle).
	SchedulingInterrupt Scheduling = "INTERRUPT"
)

// ---- function responses -------------------------------------------------------------

// payload is the function response body for call c of job j, from the outcome its
// calls are answered with (answerOutcome).
func (st *step) payload(j *Job, c *Call) map[string]any {
	p := map[string]any{}
	switch answerOutcome(j) {
	case Committed:
		p[keyStatus] = string(StatusCommitted)
		putResult(p, j)
	case Cancelled:
		p[keyStatus], p[keyExecuted], p[keyReason] = string(StatusCancelled), false, j.Reason
		if j.Cause == CauseSuperseded {
			p[keyStatus], p[keySupersededBy] = string(StatusSuperseded), j.SupersededBy
		}
	case Failed:
		p[keyStatus], p[keyExecuted], p[keyError] = string(StatusFailed), false, j.Error
	case Result:
		p[keyStatus] = string(StatusOK)
		putResult(p, j)
	case Unknown:
		desc := st.describe(j.Tool, j.Args)
		p[keyStatus] = string(StatusUnknown)
		p[keyMessage] = fmt.Sprintf("still being confirmed: the outcome of %s is not known yet (the backend did not confirm it). Do not call %s again, and do not tell the user it is done or not done until a status note says so.", desc, j.Tool)
	}
	if c.DuplicateOf != "" {
		p[keyDuplicateOf] = c.DuplicateOf
	}
	return p
}

// putResult puts j's result into a payload: whole under keyResult, or, when it was left
// out, why under keyResultOmitted.
func putResult(p map[string]any, j *Job) {
	switch o := j.ResultOmitted; {
	case o != nil:
		p[keyResultOmitted] = o.Payload()
	case len(j.Result) > 0:
		p[keyResult] = j.Result
	}
}

// Payload is what a function response carries under `result_omitted`: reason,
// message, and bytes and max_bytes (too_large) or max_depth (too_deep). The map is new.
func (o *ResultOmission) Payload() map[string]any {
	m := map[string]any{"reason": o.Reason, keyMessage: o.Message}
	if o.Bytes > 0 {
		m["bytes"], m["max_bytes"] = o.Bytes, o.MaxBytes
	}
	if o.MaxDepth > 0 {
		m["max_depth"] = o.MaxDepth
	}
	return m
}

// What a response says of a result left out (ResultOmission.Message), and the marker
// of an error text cut to its bound.
func resultTooLarge(n, max int) string {
	return fmt.Sprintf("the backend's result was %d bytes, over the %d-byte limit, so it is not shown; the status above stands", n, max)
}

func resultTooDeep(max int) string {
	return fmt.Sprintf("the backend's result nested objects and lists more than %d levels deep, so it is not shown; the status above stands", max)
}

func errorCut(n, max int) string {
	return fmt.Sprintf(" [... cut: the error was %d bytes, at most %d are kept]", n, max)
}

// rejectedPayload answers a call refused before anything ran.
func rejectedPayload(why string) map[string]any {
	return map[string]any{keyStatus: string(StatusRejected), keyExecuted: false, keyError: why}
}

// The errors of rejected calls.
func rejectToolChoiceNone(tool string) string {
	return fmt.Sprintf("%s was not executed: tool calls are not allowed on this turn (tool choice is none)", tool)
}

func rejectDisallowed(tool string) string {
	return fmt.Sprintf("%s was not executed: the tool policy does not allow it", tool)
}

func rejectUnknownTool(tool string) string {
	return fmt.Sprintf("%s was not executed: unknown function", tool)
}

func rejectUnreadableArgs(tool string) string {
	return fmt.Sprintf("%s was not executed: its arguments could not be read. Ask the user again for the details and call %s again with them.", tool, tool)
}

func rejectMissingArgs(tool string, missing []string) string {
	what := strings.Join(missing, " and ")
	verb := "is"
	if len(missing) > 1 {
		verb = "are"
	}
	return fmt.Sprintf("%s was not executed: %s %s missing. Ask the user for it and call %s again with it.", tool, what, verb, tool)
}

// deadlinePayload answers a call whose max_pending ran out: nothing was executed; or,
// for a read-only call the agent was told to run, no result came; or, once its job's
// commit had started, the outcome is not known yet.
func deadlinePayload(tool string, wait time.Duration, j *Job) map[string]any {
	switch {
	case j != nil && j.Decision == DecisionCommit:
		return map[string]any{keyStatus: string(StatusUnknown), keyError: fmt.Sprintf(
			"the outcome of %s is not known yet: its commit started but did not report within %v", tool, wait)}
	case j != nil && !j.SideEffect:
		return map[string]any{keyStatus: string(StatusTimeout), keyError: fmt.Sprintf(
			"no result from %s within %v; if it comes later it will be reported in a status note", tool, wait)}
	}
	return map[string]any{keyStatus: string(StatusTimeout), keyExecuted: false,
		keyError: fmt.Sprintf("%s was not executed: no outcome within %v", tool, wait)}
}

// progressPayload is an interim response carrying a progress result.
func progressPayload(result map[string]any) map[string]any {
	p := map[string]any{keyStatus: string(StatusInProgress)}
	if len(result) > 0 {
		p[keyResult] = result
	}
	return p
}

// ---- confirm-then-act runs ----------------------------------------------------------

// stepsPrompt asks the user a run's pending step questions.
func stepsPrompt(r *Run, ct string, qs []Step) map[string]any {
	var asks, args []string
	for _, q := range qs {
		asks = append(asks, strings.TrimSpace(q.Ask))
		args = append(args, fmt.Sprintf("%q set to their answer", q.Arg))
	}
	ask := strings.Join(asks, " ")
	return map[string]any{
		keyStatus: string(StatusNeedsInput), keyExecuted: false, keyRunID: r.ID, keyAsk: ask,
		keyNext: fmt.Sprintf("Nothing has been done yet. Ask the user: %s Then call %s with run_id %q and %s. If they do not want it any more, call %s with run_id %q and confirmed false.",
			ask, ct, r.ID, strings.Join(args, " and "), ct, r.ID),
	}
}

// confirmPrompt asks the user to confirm a run's request, described as desc.
func confirmPrompt(r *Run, ct, desc string) map[string]any {
	return map[string]any{
		keyStatus: string(StatusNeedsConfirmation), keyExecuted: false, keyRunID: r.ID,
		keyAsk: fmt.Sprintf("Should I go ahead with %s?", desc),
		keyNext: fmt.Sprintf("Nothing has been done yet. Ask the user to confirm %s. If they say yes, call %s with run_id %q and confirmed true; if they say no, call %s with run_id %q and confirmed false.",
			desc, ct, r.ID, ct, r.ID),
	}
}

// alreadyOpen marks a prompt answering a call that joined a run already waiting.
func alreadyOpen(p map[string]any, r *Run, tool string) {
	p[keyAlreadyOpen] = true
	p[keyNext] = fmt.Sprintf("This request is already waiting for the user (run %s); do not call %s again. %s", r.ID, tool, p[keyNext])
}

// unclear marks a prompt asking the same question again.
func unclear(p map[string]any) {
	p[keyStatus] = string(StatusUnclear)
	p[keyNext] = fmt.Sprintf("The answer was not clear. %s", p[keyNext])
}

// runCancelledPayload answers a call of a run that ended without executing anything.
func runCancelledPayload(r *Run, reason string) map[string]any {
	return map[string]any{keyStatus: string(StatusCancelled), keyExecuted: false, keyRunID: r.ID, keyReason: reason}
}

// runErrorPayload answers a confirmation that cannot be taken: nothing executed.
func runErrorPayload(why string) map[string]any {
	return map[string]any{keyStatus: string(StatusError), keyExecuted: false, keyError: why}
}

// The errors of confirmations that answer no run they can.
func runEndedError(r *Run) string {
	return fmt.Sprintf("run %q is already %s (%s): nothing more was executed.", r.ID, r.State, r.Reason)
}

func noSuchRunError(id, tool string, open []string) string {
	if len(open) > 0 {
		return fmt.Sprintf("no run %q in this session: nothing was executed. Open: %s; call %s again with one of them.", Clip(id), strings.Join(open, ", "), tool)
	}
	return fmt.Sprintf("no run %q in this session: nothing was executed. Call the tool the user asked for first.", Clip(id))
}

func wrongConfirmToolError(r *Run, tool string) string {
	return fmt.Sprintf("run %q is not confirmed with %s: nothing was executed.", r.ID, tool)
}

func noOpenRunError(tool string) string {
	return fmt.Sprintf("there is no open request to confirm with %s: nothing was executed. Call the tool the user asked for first.", tool)
}

func severalOpenRunsError(open []string, tool string) string {
	return fmt.Sprintf("several requests are waiting for confirmation (%s): nothing was executed. Call %s again with run_id.", strings.Join(open, ", "), tool)
}

// runEndNote tells the model a run ended without executing anything.
func runEndNote(state RunState, desc, reason string, runTimeout time.Duration) string {
	switch state {
	case RunRefused:
		return fmt.Sprintf("System note: %s was cancelled: the user said no. Nothing was done.", desc)
	case RunExpired:
		return fmt.Sprintf("System note: %s was not done: it waited for the user's answer for %v and expired. Nothing was done. Ask the user whether they still want it.", desc, runTimeout)
	}
	return fmt.Sprintf("System note: %s was cancelled (%s). Nothing was done.", desc, reason)
}

// The reasons runs end with.
const (
	reasonRunClosed    = "the session closed"
	reasonUserSaidNo   = "the user said no"
	reasonUserConfirms = "the user confirmed"
	reasonStepsDone    = "every step answered"
)

func reasonNoClearAnswer(asks int) string {
	return fmt.Sprintf("no clear answer after asking %d times", asks)
}

func reasonRunTimeout(d time.Duration) string {
	return fmt.Sprintf("no answer within run_timeout %v", d)
}

// ---- decision reasons ---------------------------------------------------------------

// stopReason is the reason of a cancel (of a job or a run) by a stop intent.
func stopReason(u *Utterance) string {
	return fmt.Sprintf("stop intent in user speech%s: %q", readBy(u), u.Text)
}

func amendReason(u *Utterance) string {
	return fmt.Sprintf("amended by the user%s: %q", readBy(u), u.Text)
}

// readBy says, in a reason, that the agent's reading decided the intent (Utterance.
// ReadBy): " (read by nlu-v3, confidence 0.92)"; "" when the built-in reading did.
func readBy(u *Utterance) string {
	if u.ReadBy == "" || u.Reading == nil {
		return ""
	}
	return fmt.Sprintf(" (read by %s, confidence %v)", u.ReadBy, u.Reading.Confidence)
}

const (
	reasonCommittedAfterRevoke = "committed by the agent although its commit was withdrawn before any Decide handed it out: an event observed before it arrived late"
	reasonWithdrawn            = "withdrawn by the server (tool-call cancellation)"
	// reasonUnguarded: the agent answered a side-effecting call whose tool never
	// asked Decide (ToolAnswer): whatever it did, it did on its own.
	reasonUnguarded = "the tool answered without asking the arbiter (it has no arbiter code): its answer is its result"
	reasonClosed    = "the session closed before a decision"
)

func reasonFailed(err string) string { return "failed: " + err }

// reasonSuperseded: the call id that continued the request and replaced this one.
func reasonSuperseded(by string) string {
	return fmt.Sprintf("superseded: the user went on speaking and call %s made the whole request, which replaces this one; do not tell the user this one failed", by)
}

// reasonContinuationWaited: a commit held after the user's speech for a call of the
// whole request, which did not come.
func reasonContinuationWaited(text string, wait time.Duration) string {
	return fmt.Sprintf("held %v after the user's speech ended for a call completing the request, and none came: user speech %q was not a stop or a change", wait, text)
}

func reasonDeadline(d time.Duration) string {
	return fmt.Sprintf("no outcome within max_pending %v", d)
}

func reasonTranscriptTimeout(d time.Duration) string {
	return fmt.Sprintf("the user spoke while it was pending and no transcript arrived within %v", d)
}

func reasonHoldTimeout(d time.Duration) string {
	return fmt.Sprintf("the user's speech held it for max_hold %v after it came due and did not settle (no end of voice activity or no transcript)", d)
}

func reasonAbandoned(d time.Duration) string {
	return fmt.Sprintf("abandoned: the server dropped the BLOCKING call on interruption and no re-issue came within %v", d)
}

func reasonAbandonLifted(d time.Duration) string {
	return fmt.Sprintf("abandoned BLOCKING call not re-issued within %v; on_abandon is commit", d)
}

func reasonTranscriptTimeoutCommit(d time.Duration) string {
	return fmt.Sprintf("the user spoke while it was pending and no transcript arrived within %v; on_transcript_timeout is commit", d)
}

func reasonHeldUntilSpeechEnded(text string) string {
	return fmt.Sprintf("held until the user's speech ended: user speech %q was not a stop or a change", text)
}

// reasonSpeechNotStop: the user spoke while the job was pending, before its commit
// came due, and said neither a stop nor a change.
func reasonSpeechNotStop(text string, grace time.Duration) string {
	return fmt.Sprintf("user speech %q was not a stop or a change; committed after the %v grace window", text, grace)
}

func reasonGraceElapsed(d time.Duration) string {
	return fmt.Sprintf("no user speech held it after the %v grace window", d)
}

// The reasons of the question an unclear reply raises (questions.go).
func reasonUnclearCancel(text string) string {
	return fmt.Sprintf("unclear reply in user speech: %q; on_unclear is cancel", text)
}

func reasonUnanswered(d time.Duration) string {
	return fmt.Sprintf("the user's reply was unclear; asked whether they still want it, they gave no answer within max_hold %v", d)
}

func reasonUnansweredCommit(d time.Duration) string {
	return fmt.Sprintf("the user's reply was unclear; asked whether they still want it, they gave no answer within max_hold %v; on_transcript_timeout is commit", d)
}

func reasonAnswered(text string) string {
	return fmt.Sprintf("the user's reply was unclear; asked whether they still want it, they said %q", text)
}

// discardedEcho says, in the history, why words of a user transcript were not read as
// the user's (utterances.go).
func discardedEcho(words int, window time.Duration) string {
	return fmt.Sprintf("%d words repeat what the model said within the last %v: its echo, not the user's", words, window)
}

// What an undecided job waits for (Decide's reason while pending).
const (
	pendingAbandoned = "abandoned BLOCKING call: held until a re-issue revives it or the abandon wait runs out"
	pendingPrepare   = "waiting for prepare to finish"
	pendingHeld      = "held: the user is speaking; waiting for the utterance's transcript"
	pendingGrace     = "in the grace window"
	pendingAsked     = "held: the user's reply was unclear; waiting for their answer to whether they still want it"
	// pendingContinuation: the user went on speaking after the call; the commit waits
	// for a call completing the request (continuation.go).
	pendingContinuation = "waiting for a call completing the request: the user went on speaking after this call"
)

// pendingDelivery: a commit withheld after an outage (Decide) for left more.
func pendingDelivery(left time.Duration) string {
	return fmt.Sprintf("its commit came due while this agent could not reach the arbiter: withheld %v more for the events the agent observed meanwhile; deliver them (with their age)", left.Round(time.Millisecond))
}

// ---- status notes -------------------------------------------------------------------

// completionNote picks the status note for a job just completed, or "" for none: a
// commit answered on a live id that nobody asked to stop needs none.
func (st *step) completionNote(j *Job, live int) string {
	desc := st.describe(j.Tool, j.Args)
	switch j.Outcome {
	case Cancelled:
		return st.cancelNote(j, desc)
	case Committed:
		if j.StopAfterCommit || j.AmendAfterCommit || j.Withdrawn || live == 0 {
			return st.commitNote(j)
		}
	case Result:
		if j.Unguarded && j.Decision == DecisionCancel {
			return fmt.Sprintf("System note: %s was to be cancelled (%s), but the %s tool ran without waiting for that decision and answered: %s. Tell the user what it did and offer to undo it.", desc, j.Reason, j.Tool, compactJSON(j.Result))
		}
		if j.TimedOut && live == 0 {
			return fmt.Sprintf("System note: the %s result came after its call had timed out: %s", j.Tool, resultText(j))
		}
		if live == 0 && st.lostOnReconnect(j) {
			return fmt.Sprintf("System note: the %s result for the request made before the reconnect: %s", j.Tool, resultText(j))
		}
	case Failed:
		if live == 0 && j.Cause != CauseClosed {
			return fmt.Sprintf("System note: %s failed and was not made: %s", desc, j.Error)
		}
	case Unknown:
		if live == 0 {
			return fmt.Sprintf("System note: the outcome of %s is not known yet; it is being confirmed. Do not tell the user it is done or not done until a status note says so.", desc)
		}
	}
	return ""
}

// cancelNote is the note after a cancel, by its cause; "" when the response already
// told the model (withdrawn, timed out, closed). Where it would say nothing is
// scheduled, it says so only when nothing of the job's business key is (notScheduled).
func (st *step) cancelNote(j *Job, desc string) string {
	const ask = " Ask the user whether they still want it."
	switch j.Cause {
	case CauseStop:
		return fmt.Sprintf("System note: %s was cancelled before it was committed. %s", desc, st.notScheduled(j, ""))
	case CauseAmend:
		if o := st.standing(j); o != nil {
			return fmt.Sprintf("System note: the user changed the request (%q): %s was cancelled before it was committed. %s Call %s again with the new details.", j.AmendText, desc, st.notScheduled(j, ""), j.Tool)
		}
		return fmt.Sprintf("System note: the user changed the request (%q): %s was cancelled before it was committed, so nothing is scheduled. Call %s again with the new details.", j.AmendText, desc, j.Tool)
	case CauseTimeout:
		return fmt.Sprintf("System note: %s was cancelled before it was committed: the user spoke while it was pending and what they said could not be confirmed. %s", desc, st.notScheduled(j, ask))
	case CauseAbandoned:
		return fmt.Sprintf("System note: %s was not made: the request was interrupted and not repeated. %s", desc, st.notScheduled(j, ask))
	case CauseUnclear:
		return fmt.Sprintf("System note: %s was cancelled before it was committed: the user's reply did not make clear whether they still wanted it. %s", desc, st.notScheduled(j, ask))
	case CauseUnanswered:
		return fmt.Sprintf("System note: %s was cancelled before it was committed: the user did not answer whether they still wanted it. %s", desc, st.notScheduled(j, ""))
	}
	return ""
}

// notScheduled ends a note about job j, which was not made: "Nothing is scheduled."
// (then ask), unless another job of j's business key committed or may have (it was
// decided commit and its outcome is not reported, or unknown): the note then says that
// one stands, or that it is not known yet, and never that nothing is scheduled (issue
// 25: a booking's re-issue in another spelling of its time committed, and the first
// job's note said "Nothing is scheduled" while the slot was booked).
func (st *step) notScheduled(j *Job, ask string) string {
	o := st.standing(j)
	if o == nil {
		return "Nothing is scheduled." + ask
	}
	desc := st.describe(o.Tool, o.Args)
	if o.Outcome == Committed {
		return fmt.Sprintf("But %s, the same request made by another call, IS confirmed%s: tell the user it stands.", desc, reference(o))
	}
	return fmt.Sprintf("But %s, the same request made by another call, may have been made: its outcome is not known yet. Do not tell the user it is done or not done until a status note says so.", desc)
}

// standing returns the latest other job of j's business key that committed, or may
// have (decided commit with no outcome yet, or an unknown one), or nil.
func (st *step) standing(j *Job) *Job {
	for i := len(st.s.Jobs) - 1; i >= 0; i-- {
		o := st.s.Jobs[i]
		if o == j || !o.SideEffect || o.Key != j.Key {
			continue
		}
		switch {
		case o.Outcome == Committed, o.Outcome == Unknown:
			return o
		case o.Decision == DecisionCommit && o.Outcome == NotCompleted:
			return o
		}
	}
	return nil
}

// askNote asks the model to ask the user about a pending job (desc, of tool) after an
// unclear reply, said (questions.go): one short question, whose answer decides.
func askNote(desc, tool, said string) string {
	return fmt.Sprintf("System note: the user said %q while %s was still pending, and it is not clear whether they still want it. Nothing has been done yet. Ask the user one short question: \"Do you still want %s?\" Their answer decides. Do not call %s again and do not say it is done.", said, desc, desc, tool)
}

// commitNote is the note after a commit that needs one: despite a stop or an
// amendment heard after it was decided, after a withdrawal, or with no live id left.
func (st *step) commitNote(j *Job) string {
	desc := st.describe(j.Tool, j.Args)
	ref := reference(j)
	switch {
	case j.StopAfterCommit:
		return fmt.Sprintf("System note: %s is confirmed%s. The user asked to stop after it was committed. Tell them it is confirmed and offer to cancel it.", desc, ref)
	case j.AmendAfterCommit:
		return fmt.Sprintf("System note: %s is confirmed%s. The user asked to change it (%q) after it was committed. Tell them it is confirmed and offer to change it.", desc, ref, j.AmendText)
	case j.Withdrawn:
		return fmt.Sprintf("System note: %s was already committed%s when the call was withdrawn. Tell the user it is confirmed and offer to cancel it.", desc, ref)
	default:
		return fmt.Sprintf("System note: %s is confirmed%s. Tell the user it is done.", desc, ref)
	}
}

// resolvedNote is the authoritative note once an unknown outcome is known.
func (st *step) resolvedNote(j *Job, _ int) string {
	desc := st.describe(j.Tool, j.Args)
	if j.Outcome == Committed {
		return fmt.Sprintf("System note: %s IS confirmed%s. Its outcome was unknown earlier and is now known. Tell the user it is done.", desc, reference(j))
	}
	if st.standing(j) != nil {
		return fmt.Sprintf("System note: %s was NOT made: its outcome was unknown earlier and the backend now reports it failed (%s). %s", desc, j.Error, st.notScheduled(j, ""))
	}
	return fmt.Sprintf("System note: %s was NOT made: its outcome was unknown earlier and the backend now reports it failed (%s). Nothing is scheduled. Tell the user it was not made and offer to try again.", desc, j.Error)
}

// Claim-check corrections (claimcheck.go): said is what the model said, trimmed;
// past is the tool's claim verb ("sent", "cancelled"; speech.Vocabulary.Done[0], ""
// for a tool with none: then "done"), which says what the tool does. A booking's verbs
// keep the booking wording ("was NOT made. Nothing is scheduled.").
var bookingVerbs = map[string]bool{"booked": true, "reserved": true, "scheduled": true, "rebooked": true}

// correctNothingDone: a turn says something was done (with generic words only:
// "Done.", "it went through") and the session has no side-effecting job.
func correctNothingDone(said string) string {
	return fmt.Sprintf("System note: correction: nothing has been done. No request for it was made. You said: %q. Tell the user it has not been done.", said)
}

// correctNothingDoneBy: a turn says tools' side effects happened ("I've sent it") and
// the session has no side-effecting job; verbs are the tools' claim verbs.
func correctNothingDoneBy(verbs, tools []string, said string) string {
	past := joinOr(verbs)
	return fmt.Sprintf("System note: correction: nothing has been %s. No %s request was made. You said: %q. Tell the user it has not been %s.", past, joinOr(tools), said, past)
}

func correctNotMade(desc, past, said string) string {
	switch {
	case bookingVerbs[past]:
		return fmt.Sprintf("System note: correction: %s was NOT made. Nothing is scheduled. You said: %q. Tell the user it was not made.", desc, said)
	case past == "":
		past = "done"
	}
	return fmt.Sprintf("System note: correction: %s was NOT carried out: nothing has been %s. You said: %q. Tell the user it has not been %s.", desc, past, said, past)
}

func correctStillPending(desc, said string) string {
	return fmt.Sprintf("System note: correction: %s is not confirmed yet; it is still pending. You said: %q. Do not say it is done until it is.", desc, said)
}

func correctUnknown(desc, said string) string {
	return fmt.Sprintf("System note: correction: the outcome of %s is not known yet; it is still being confirmed. You said: %q. Do not say it is done or not done until a status note says so.", desc, said)
}

func correctConfirmed(desc, ref, past, said string) string {
	switch {
	case bookingVerbs[past]:
		return fmt.Sprintf("System note: correction: %s IS confirmed%s. You said: %q. Tell the user it is booked, and offer to cancel it.", desc, ref, said)
	case past == "":
		past = "done"
	}
	return fmt.Sprintf("System note: correction: %s IS confirmed%s. You said: %q. Tell the user it has been %s.", desc, ref, said, past)
}

// joinOr joins words with commas and a last "or": "sent", "booked or sent", "a, b or c".
func joinOr(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// describe renders a tool's Describe template with the call's own wording of each
// {arg}; "the <tool> request" when the policy has none.
func (st *step) describe(tool string, args map[string]any) string {
	t := st.e.Policy.lookup(tool).tool
	if t.Describe == "" {
		return "the " + t.Name + " request"
	}
	out := t.Describe
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = strings.ReplaceAll(out, "{"+k+"}", fmt.Sprint(args[k]))
	}
	return out
}

// resultText renders a job's result for a note: the result, or why it was left out.
func resultText(j *Job) string {
	if o := j.ResultOmitted; o != nil {
		return o.Message
	}
	return compactJSON(j.Result)
}

// compactJSON renders a result for a note.
func compactJSON(v map[string]any) string {
	if len(v) == 0 {
		return `{"status":"ok"}` // what the call's own response would have said
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// reference is " (reference R-1)" from a committed job's result, or "".
func reference(j *Job) string {
	for _, k := range []string{"reference", "ref", "id"} {
		if v, ok := j.Result[k]; ok {
			return fmt.Sprintf(" (reference %v)", v)
		}
	}
	return ""
}

// ---- delivery -----------------------------------------------------------------------

// The reasons given for a note's delivery (Note.Why).
const (
	whyRideWhenIdle  = "the model is speaking: the status rides on the function response with scheduling WHEN_IDLE, which waits for its turn to end instead of cutting it"
	whyRideInterrupt = "the model is idle: the status rides on the function response with scheduling INTERRUPT, so it speaks it now without an extra user turn"
	whyWhenIdle      = "the model is speaking: a user turn now would interrupt its reply (turn_complete=true unconditionally interrupts generation), so send it when its turn is over"
	whyNow           = "the model is idle: a user turn now cuts no reply"
)

// issueNote hands out a note about job j (nil: about no job) and says how to deliver
// it. A note can ride on rider, a NON_BLOCKING call's function response answered in
// the same step, when the provider honours response scheduling: WHEN_IDLE while the
// model speaks, INTERRUPT when it is idle. Otherwise it is a user turn: now while the
// model is idle, when idle while it speaks — never a user turn into a reply (the third
// seed: a note sent as a full user turn cut the model's reply in half).
func (st *step) issueNote(j *Job, text, rider string) {
	st.issueNoteAbout(j, nil, text, rider)
}

// issueNoteAbout is issueNote for a note about job j or, when j is nil, run r (either
// may be nil).
func (st *step) issueNoteAbout(j *Job, r *Run, text, rider string) {
	s := st.s
	n := Note{Text: text, Via: ViaUserTurn, Deliver: DeliverNow}
	if j != nil {
		n.JobID = j.ID
	}
	if r != nil {
		n.RunID = r.ID
	}
	if s.ModelSpeaking {
		n.Deliver = DeliverWhenIdle
	}
	var rc *Call
	if rider != "" && s.ResponseScheduling {
		if c := s.call(rider); c != nil && c.Outcome != nil && c.Outcome.Response != nil && c.Behavior == NonBlocking {
			rc = c
		}
	}
	switch {
	case rc != nil:
		n.Via, n.CallID = ViaFunctionResponse, rc.ID
		rc.Outcome.Response[keyStatusNote] = text
		n.Scheduling, n.Why = SchedulingInterrupt, whyRideInterrupt
		if s.ModelSpeaking {
			n.Scheduling, n.Why = SchedulingWhenIdle, whyRideWhenIdle
		}
	case s.ModelSpeaking:
		n.Why = whyWhenIdle
	default:
		n.Why = whyNow
	}
	if n.Deliver == DeliverNow {
		s.LastNowNoteAt = s.Now
	}
	st.emitNote(n)
}
