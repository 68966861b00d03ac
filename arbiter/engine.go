package arbiter

import (
	"github.com/voicearbiter/arbiter/arbiter/speech"

	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limits on what one session may hold and what one request may carry. Exceeding them
// is an Invalid (sizes) or ResourceExhausted (counts) error.
const (
	// MaxCallsPerSession is the default bound on the calls a session records
	// (Engine.MaxCalls).
	MaxCallsPerSession = 1024
	// MaxArgsBytes bounds a call's args, JSON-encoded (64 KiB).
	MaxArgsBytes = 64 << 10
	// MaxTextBytes bounds one transcript piece (16 KiB).
	MaxTextBytes = 16 << 10
	// MaxKeyBytes bounds an explicit business key.
	MaxKeyBytes = 512
	// MaxErrorBytes bounds a Complete's error text (4 KiB).
	MaxErrorBytes = 4 << 10
	// keepUtterances is how many settled utterances a session keeps.
	keepUtterances = 16
	// keepConnections is how many ended connection ids a session remembers (to refuse
	// a delayed Connect to one of them).
	keepConnections = 64
)

// InterruptAfterNote: an `interrupted` that follows the arbiter's own `now` note by
// less than this is caused by the note (a user turn with turn_complete=true
// "unconditionally interrupts generation", third seed: 12 to 78 ms after the note),
// not by user barge-in, so it abandons nothing.
const InterruptAfterNote = time.Second

// Engine is the decision engine: a pure state machine. Step applies one event to a
// session at a given time and returns what it decided; it reads no clock, does no I/O
// and keeps no state of its own, so the same events at the same times give the same
// output (replay is exact). An Engine is safe for concurrent use on different
// sessions; a Session must not be stepped concurrently.
type Engine struct {
	// Policy is the tool policy; it must have passed Validate.
	Policy *Policy
	// MaxCalls bounds the calls one session may register (ResourceExhausted past it).
	// Zero means MaxCallsPerSession.
	MaxCalls int
}

// Event is one input to the engine: RegisterCall, Speech, Transcript,
// ToolCallCancellation, Decide, Complete, Close or Tick.
type Event interface{ isEvent() }

// RegisterCall records a function call from the model.
type RegisterCall struct {
	// CallID is the model's call id; empty mints one matching ^[a-zA-Z0-9_-]+$.
	CallID string
	// Tool is the function name; required.
	Tool string
	// Args are the call's arguments (JSON-shaped: map[string]any, float64 numbers).
	Args map[string]any
	// Behavior is the call's scheduling mode; zero takes the policy's.
	Behavior Behavior
	// ToolChoiceNone is set when the generation ran with tool choice `none`.
	ToolChoiceNone bool
	// BusinessKey, when not empty, replaces the policy's key.
	BusinessKey string
}

// SpeechKind is a voice-activity or model-output event.
type SpeechKind string

// The speech events (see proto SpeechEvent).
const (
	UserActivityStart       SpeechKind = "user_activity_start"
	UserActivityEnd         SpeechKind = "user_activity_end"
	ModelOutputStart        SpeechKind = "model_output_start"
	ModelGenerationComplete SpeechKind = "model_generation_complete"
	ModelTurnComplete       SpeechKind = "model_turn_complete"
	Interrupted             SpeechKind = "interrupted"
)

// Speech reports one speech event.
type Speech struct{ Kind SpeechKind }

// Transcript reports a piece of transcription.
type Transcript struct {
	// Model is set for the model's output transcription (marks it speaking).
	Model bool
	// Text is the piece; required for the user.
	Text string
	// Interim marks a partial piece; only final user text decides.
	Interim bool
}

// ToolCallCancellation reports ids the server withdrew (`toolCallCancellation`).
type ToolCallCancellation struct{ CallIDs []string }

// Decide asks for a job's decision, and records that prepare finished.
type Decide struct {
	JobID    string
	Prepared bool
}

// Complete reports a job's outcome.
type Complete struct {
	JobID   string
	Outcome Outcome
	// Result is merged into the function response payload.
	Result map[string]any
	// Error says what failed, for Failed.
	Error string
}

// Configure sets a session's options (creating it if needed). Idempotent.
type Configure struct {
	// Language is the session's language (BCP 47, e.g. "en", "es-MX"); empty keeps it.
	Language string
	// ResponseScheduling says the provider honours function-response scheduling.
	ResponseScheduling bool
}

// Close closes the session.
type Close struct{}

// Connect reports that the events after it arrive on a new connection of the same
// conversation (Gemini Live session resumption, a reconnect). Calls still pending
// from an earlier connection can no longer be answered by function response: they are
// marked dead ("connection_closed"), their jobs go on, and each job's outcome goes out
// as a status note instead; a re-issue on the new connection is deduplicated against
// it. Connecting again with the current id changes nothing.
type Connect struct {
	// ConnectionID names the new connection; required.
	ConnectionID string
}

// Progress reports an interim result of a job still running (a long NON_BLOCKING
// tool's progress update). It goes out as a non-final function response (Gemini
// Live's will_continue) on the job's live NON_BLOCKING calls when the session says its
// provider honours response scheduling, and is dropped otherwise; it is never a user
// turn and never counts as user speech, and never answers a call.
type Progress struct {
	JobID  string
	Result map[string]any
}

// Tick only advances time: due timers fire.
type Tick struct{}

func (RegisterCall) isEvent()         {}
func (Speech) isEvent()               {}
func (Transcript) isEvent()           {}
func (ToolCallCancellation) isEvent() {}
func (Decide) isEvent()               {}
func (Complete) isEvent()             {}
func (Close) isEvent()                {}
func (Configure) isEvent()            {}
func (Tick) isEvent()                 {}
func (Connect) isEvent()              {}
func (Progress) isEvent()             {}

// CallResult is RegisterCall's answer.
type CallResult struct {
	CallID      string
	Disposition Disposition
	JobID       string
	DuplicateOf string
	BusinessKey string
	SideEffect  bool
	// Repeat is set when the call id was already registered: this is the same answer.
	Repeat bool
	// RunID is the confirm-then-act run the call opened, joined or answered.
	RunID string
	// Tool and Args, for Execute only, are what job JobID executes: the call's own function and args,
	// except for a confirmation call that started its run's job, which executes the
	// run's tool with the run's args (step answers merged in).
	Tool string
	Args map[string]any
}

// DecisionResult is Decide's answer.
type DecisionResult struct {
	JobID string
	// Decision is Undecided while pending.
	Decision  Decision
	Reason    string
	DecidedAt time.Time
	// Cause says why a cancel was decided (empty for a commit and while pending).
	Cause Cause
}

// Output is what one Step produced. Only the fields of the event's kind are set,
// besides Effects and Decisions.
type Output struct {
	// Call is set for RegisterCall.
	Call *CallResult
	// Decision is set for Decide.
	Decision *DecisionResult
	// Effects are the responses, skips and notes this step made due for the caller.
	Effects Effects
	// Decisions are every decision made during this step (by the event or by timers),
	// for logs and metrics.
	Decisions []DecisionResult
	// Cancelled lists jobs cancelled during this step.
	Cancelled []string
	// Intent is the utterance's intent after a final user transcript: stop, amend,
	// other or unknown.
	Intent speech.Intent
	// Changed reports whether the session changed (and must be stored).
	Changed bool
}

// step carries one Step's output while it runs.
type step struct {
	e   *Engine
	s   *Session
	out *Output
	// logStart is the session's LogSeq when the step began: effects numbered above it
	// were handed out by this step.
	logStart uint64
}

// NewSession returns an empty session.
func NewSession(key SessionKey, now time.Time) *Session {
	return &Session{Key: key, CreatedAt: now, Now: now}
}

// Step applies ev to s at time now and returns the output. Timers due at or before
// now fire first, at their due times; then the event; then anything it made due.
// A now earlier than s.Now is taken as s.Now (clock skew between replicas).
//
// Errors: Invalid (a field, named), NotFound (job), FailedPrecondition (the event
// does not fit the state: a closed session, an out-of-order Complete),
// ResourceExhausted (too many calls). On error s may have advanced its timers but the
// event changed nothing; a caller that must not persist partial work discards s.
func (e *Engine) Step(s *Session, now time.Time, ev Event) (Output, error) {
	var out Output
	st := &step{e: e, s: s, out: &out, logStart: s.LogSeq}
	if now.Before(s.Now) {
		now = s.Now
	}
	if err := st.validate(ev); err != nil {
		return out, err
	}
	st.advance(now)
	var err error
	switch ev := ev.(type) {
	case RegisterCall:
		err = st.register(ev)
	case Speech:
		err = st.speech(ev)
	case Transcript:
		err = st.transcript(ev)
	case ToolCallCancellation:
		err = st.withdraw(ev)
	case Decide:
		err = st.decide(ev)
	case Complete:
		err = st.complete(ev)
	case Close:
		st.close()
	case Configure:
		if ev.Language != "" {
			s.Language = ev.Language
		}
		s.ResponseScheduling = ev.ResponseScheduling
		out.Changed = true
	case Connect:
		st.connect(ev)
	case Progress:
		st.progress(ev)
	case Tick:
	default:
		err = Errorf(Invalid, "event: unknown type %T", ev)
	}
	if err != nil {
		return out, err
	}
	st.advance(now)
	return out, nil
}

// validate checks an event against the session before anything changes.
func (st *step) validate(ev Event) error {
	s := st.s
	switch ev := ev.(type) {
	case RegisterCall:
		if ev.CallID != "" && !validName(ev.CallID) {
			return Errorf(Invalid, "call_id: %q must be 1-128 characters from [A-Za-z0-9_.:-]", trunc(ev.CallID))
		}
		if !validName(ev.Tool) {
			return Errorf(Invalid, "tool: %q must be 1-128 characters from [A-Za-z0-9_.:-]", trunc(ev.Tool))
		}
		if b, err := json.Marshal(ev.Args); err != nil {
			return Errorf(Invalid, "args: not JSON-encodable: %v", err)
		} else if len(b) > MaxArgsBytes {
			return Errorf(Invalid, "args: %d bytes, at most %d", len(b), MaxArgsBytes)
		}
		if len(ev.BusinessKey) > MaxKeyBytes {
			return Errorf(Invalid, "business_key: %d bytes, at most %d", len(ev.BusinessKey), MaxKeyBytes)
		}
		switch ev.Behavior {
		case BehaviorUnspecified, Blocking, NonBlocking:
		default:
			return Errorf(Invalid, "behavior: %q is not BLOCKING or NON_BLOCKING", ev.Behavior)
		}
		if err := notClosed(s); err != nil {
			return err
		}
		if c := s.call(ev.CallID); ev.CallID != "" && c != nil {
			if c.Tool != ev.Tool {
				return Errorf(FailedPrecondition, "call_id: %q was registered for %s, not %s: a call id names one function call", trunc(ev.CallID), c.Tool, trunc(ev.Tool))
			}
			return nil // idempotent repeat: answered from the record
		}
		max := st.e.MaxCalls
		if max <= 0 {
			max = MaxCallsPerSession
		}
		if len(s.Calls) >= max {
			return Errorf(ResourceExhausted, "call_id: session %q has %d calls, the most one session may hold", s.Key.ID, len(s.Calls))
		}
	case Speech:
		switch ev.Kind {
		case UserActivityStart, UserActivityEnd, ModelOutputStart, ModelGenerationComplete, ModelTurnComplete, Interrupted:
		default:
			return Errorf(Invalid, "event: %q is not a speech event", ev.Kind)
		}
		if err := notClosed(s); err != nil {
			return err
		}
	case Transcript:
		if len(ev.Text) > MaxTextBytes {
			return Errorf(Invalid, "text: %d bytes, at most %d", len(ev.Text), MaxTextBytes)
		}
		if !ev.Model && strings.TrimSpace(ev.Text) == "" {
			return Errorf(Invalid, "text: required for a user transcript")
		}
		if err := notClosed(s); err != nil {
			return err
		}
	case ToolCallCancellation:
		if err := ValidateCallIDs(ev.CallIDs); err != nil {
			return err
		}
		if err := notClosed(s); err != nil {
			return err
		}
	case Configure:
		if len(ev.Language) > 35 || (ev.Language != "" && !validName(ev.Language)) {
			return Errorf(Invalid, "language: %q is not a BCP 47 language tag", trunc(ev.Language))
		}
		if err := notClosed(s); err != nil {
			return err
		}
	case Connect:
		if !validName(ev.ConnectionID) {
			return Errorf(Invalid, "connection_id: %q must be 1-128 characters from [A-Za-z0-9_.:-]", trunc(ev.ConnectionID))
		}
		if err := notClosed(s); err != nil {
			return err
		}
		for _, id := range s.PastConnections {
			if id == ev.ConnectionID {
				// A delayed retry of an old Connect must not cut off the live
				// connection's calls.
				return Errorf(FailedPrecondition, "connection_id: connection %q of session %q has already ended; each new connection needs a new id", trunc(id), s.Key.ID)
			}
		}
	case Progress:
		if !validName(ev.JobID) {
			return Errorf(Invalid, "job_id: %q must be 1-128 characters from [A-Za-z0-9_.:-]", trunc(ev.JobID))
		}
		j := s.job(ev.JobID)
		if j == nil {
			return Errorf(NotFound, "job_id: job %q not found in session %q", trunc(ev.JobID), s.Key.ID)
		}
		if b, err := json.Marshal(ev.Result); err != nil {
			return Errorf(Invalid, "result: not JSON-encodable: %v", err)
		} else if len(b) > MaxArgsBytes {
			return Errorf(Invalid, "result: %d bytes, at most %d", len(b), MaxArgsBytes)
		}
		if j.Outcome != NotCompleted {
			return Errorf(FailedPrecondition, "job_id: job %q is already completed (%s): no more progress", j.ID, j.Outcome)
		}
		if err := notClosed(s); err != nil {
			return err
		}
	case Decide:
		if !validName(ev.JobID) {
			return Errorf(Invalid, "job_id: %q must be 1-128 characters from [A-Za-z0-9_.:-]", trunc(ev.JobID))
		}
		j := s.job(ev.JobID)
		if j == nil {
			return Errorf(NotFound, "job_id: job %q not found in session %q", trunc(ev.JobID), s.Key.ID)
		}
		if !j.SideEffect {
			return Errorf(FailedPrecondition, "job_id: job %q is a read-only %s call: run it and Complete it with a result, there is nothing to decide", j.ID, j.Tool)
		}
	case Complete:
		if !validName(ev.JobID) {
			return Errorf(Invalid, "job_id: %q must be 1-128 characters from [A-Za-z0-9_.:-]", trunc(ev.JobID))
		}
		j := s.job(ev.JobID)
		if j == nil {
			return Errorf(NotFound, "job_id: job %q not found in session %q", trunc(ev.JobID), s.Key.ID)
		}
		if len(ev.Error) > MaxErrorBytes {
			return Errorf(Invalid, "error: %d bytes, at most %d", len(ev.Error), MaxErrorBytes)
		}
		switch ev.Outcome {
		case Committed, Cancelled, Failed, Result, Unknown:
		default:
			return Errorf(Invalid, "outcome: %q is not committed, cancelled, failed, result or unknown", ev.Outcome)
		}
		if j.Outcome == Unknown && (ev.Outcome == Committed || ev.Outcome == Failed) {
			return nil // the real outcome of an unknown commit
		}
		if j.Outcome != NotCompleted {
			if j.Outcome != ev.Outcome {
				return Errorf(FailedPrecondition, "outcome: job %q already completed as %s", j.ID, j.Outcome)
			}
			return nil
		}
		// The decision may still be made by a timer inside this step; complete()
		// checks again after advancing.
	}
	return nil
}

// ValidateCallIDs checks a tool-call cancellation's ids: at least one, each 1-128
// characters from [A-Za-z0-9_.:-]. Errors: Invalid naming call_ids or call_ids[i].
func ValidateCallIDs(ids []string) error {
	if len(ids) == 0 {
		return Errorf(Invalid, "call_ids: at least one call id is required")
	}
	for i, id := range ids {
		if !validName(id) {
			return Errorf(Invalid, "call_ids[%d]: %q must be 1-128 characters from [A-Za-z0-9_.:-]", i, trunc(id))
		}
	}
	return nil
}

// notClosed is FailedPrecondition for a closed session.
func notClosed(s *Session) error {
	if s.Closed {
		return Errorf(FailedPrecondition, "session_id: session %q is closed", s.Key.ID)
	}
	return nil
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// ---- time -------------------------------------------------------------------------

// advance fires every timer due at or before now, each at its own due time (clamped
// to the session's clock), in time order, then sets the clock to now.
func (st *step) advance(now time.Time) {
	// Every timer that fires decides a job or lifts a hold for good, so the loop ends
	// after at most a few firings per job; the bound only guards against a bug turning
	// into a hung request.
	for i := 0; i < 4*len(st.s.Jobs)+len(st.s.Utterances)*len(st.s.Jobs)+len(st.s.Calls)+len(st.s.Runs)+8; i++ {
		found, due, fire := st.nextTimer()
		if !found || due.After(now) {
			break
		}
		if due.After(st.s.Now) {
			st.s.Now = due
		}
		fire()
		st.out.Changed = true
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
// transcript timeout, an abandon wait running out, a call's max_pending deadline); ok
// is false when none is set.
func (e *Engine) NextTimer(s *Session) (due time.Time, ok bool) {
	st := &step{e: e, s: s, out: &Output{}}
	found, due, _ := st.nextTimer()
	return due, found
}

// nextTimer finds the earliest due timer and the function that fires it.
func (st *step) nextTimer() (bool, time.Time, func()) {
	var (
		found   bool
		bestDue time.Time
		bestFn  func()
	)
	consider := func(_ *Job, due time.Time, fn func()) {
		if !found || due.Before(bestDue) {
			found, bestDue, bestFn = true, due, fn
		}
	}
	// Every live call id is answered by its deadline at the latest: its job's tool's
	// max_pending (a confirmation call executes its run's tool), else its own tool's.
	for _, c := range st.s.Calls {
		if c.Outcome != nil || st.s.Closed {
			continue
		}
		tool := c.Tool
		if j := st.s.job(c.JobID); j != nil {
			tool = j.Tool
		}
		tp := st.e.Policy.lookup(tool)
		c := c
		consider(nil, c.RegisteredAt.Add(tp.timings.MaxPending), func() { st.deadline(c, tp) })
	}
	for _, r := range st.s.Runs {
		if r.State != RunOpened || st.s.Closed {
			continue
		}
		tp := st.e.Policy.lookup(r.Tool)
		r := r
		consider(nil, r.LastAt.Add(tp.timings.RunTimeout), func() { st.expireRun(r, tp) })
	}
	for _, j := range st.s.Jobs {
		if !j.SideEffect || j.Decision != Undecided {
			continue
		}
		tp := st.e.Policy.lookup(j.Tool)
		if j.Abandoned {
			due := j.AbandonedAt.Add(tp.timings.AbandonWait)
			consider(j, due, func() { st.abandonExpired(j, tp) })
			continue
		}
		if j.PreparedAt.IsZero() {
			continue
		}
		graceEnd := j.PreparedAt.Add(tp.timings.Grace)
		holds := st.holding(j, tp)
		if len(holds) == 0 {
			consider(j, graceEnd, func() {
				st.decideJob(j, DecisionCommit, "", st.commitReason(j, tp, graceEnd))
			})
			continue
		}
		for _, u := range holds {
			if u.End.IsZero() {
				continue // voice activity goes on: no timeout until it ends
			}
			start := graceEnd
			if u.End.After(start) {
				start = u.End
			}
			u := u
			consider(j, start.Add(tp.timings.TranscriptTimeout), func() { st.transcriptTimedOut(j, u, tp) })
		}
	}
	return found, bestDue, bestFn
}

// commitReason says why a commit is released now.
func (st *step) commitReason(j *Job, tp toolPolicy, graceEnd time.Time) string {
	switch {
	case j.AbandonLifted:
		return fmt.Sprintf("abandoned BLOCKING call not re-issued within %v; on_abandon is commit", tp.timings.AbandonWait)
	case len(j.Released) > 0:
		return fmt.Sprintf("the user spoke while it was pending and no transcript arrived within %v; on_transcript_timeout is commit", tp.timings.TranscriptTimeout)
	case st.s.Now.After(graceEnd):
		for i := len(st.s.Utterances) - 1; i >= 0; i-- {
			if u := st.s.Utterances[i]; relevant(j, u) && u.settled() {
				return fmt.Sprintf("held until the user's speech ended; no stop intent in %q", u.Text)
			}
		}
	}
	return fmt.Sprintf("no user speech held it after the %v grace window", tp.timings.Grace)
}

// relevant reports whether utterance u bears on job j: it is one of the job's
// triggering utterances, or it started once the job existed.
func relevant(j *Job, u *Utterance) bool {
	if containsInt(j.Triggers, u.ID) {
		return true
	}
	return !u.Start.Before(j.CreatedAt)
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

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func (st *step) transcriptTimedOut(j *Job, u *Utterance, tp toolPolicy) {
	if tp.timings.OnTranscriptTimeout == Commit {
		j.Released = append(j.Released, u.ID)
		return // the next timer commits it if nothing else holds it
	}
	st.decideJob(j, DecisionCancel, CauseTimeout, fmt.Sprintf(
		"the user spoke while it was pending and no transcript arrived within %v", tp.timings.TranscriptTimeout))
}

func (st *step) abandonExpired(j *Job, tp toolPolicy) {
	if tp.timings.OnAbandon == Commit {
		j.Abandoned = false
		j.AbandonLifted = true
		return
	}
	st.decideJob(j, DecisionCancel, CauseAbandoned, fmt.Sprintf(
		"abandoned: the server dropped the BLOCKING call on interruption and no re-issue came within %v", tp.timings.AbandonWait))
}

// deadline answers a live call whose max_pending ran out: with a timeout error saying
// nothing was executed (an undecided job is cancelled), or that the outcome is not
// known if the commit had started. The job's own result, when it comes, goes out as a
// note. tp is the policy of the tool the call executes (its job's), which the
// response names.
func (st *step) deadline(c *Call, tp toolPolicy) {
	j := st.s.job(c.JobID)
	wait := tp.timings.MaxPending
	p := map[string]any{"status": "timeout", "executed": false,
		"error": fmt.Sprintf("%s was not executed: no outcome within %v", tp.tool.Name, wait)}
	if j != nil && !j.SideEffect {
		// The agent was told to run it: whether it ran is not known, only that no
		// result came.
		p = map[string]any{"status": "timeout", "error": fmt.Sprintf(
			"no result from %s within %v; if it comes later it will be reported in a status note", tp.tool.Name, wait)}
	}
	if j != nil {
		if j.SideEffect && j.Decision == Undecided {
			st.decideJob(j, DecisionCancel, CauseDeadline, fmt.Sprintf("no outcome within max_pending %v", wait))
		}
		if j.Decision == DecisionCommit {
			p = map[string]any{"status": "unknown", "error": fmt.Sprintf(
				"the outcome of %s is not known yet: its commit started but did not report within %v", tp.tool.Name, wait)}
		}
		j.TimedOut = true
	}
	if c.DuplicateOf != "" {
		p["duplicate_of"] = c.DuplicateOf
	}
	c.Outcome = &CallOutcome{At: st.s.Now, Response: p}
	st.emitResponse(c)
}

// decideJob records a decision at the session's clock.
func (st *step) decideJob(j *Job, d Decision, cause Cause, reason string) {
	if j.Decision != Undecided {
		return
	}
	j.Decision, j.Cause, j.Reason, j.DecidedAt = d, cause, reason, st.s.Now
	st.out.Decisions = append(st.out.Decisions, DecisionResult{JobID: j.ID, Decision: d, Reason: reason, DecidedAt: st.s.Now, Cause: cause})
	if d == DecisionCancel {
		st.out.Cancelled = append(st.out.Cancelled, j.ID)
	}
	st.out.Changed = true
}

// ---- events -----------------------------------------------------------------------

func (st *step) register(ev RegisterCall) error {
	s := st.s
	now := s.Now
	if ev.CallID != "" {
		if c := s.call(ev.CallID); c != nil {
			st.out.Call = st.callResult(c)
			st.out.Call.Repeat = true
			switch {
			case c.Outcome == nil:
			case c.Outcome.Seq > st.logStart:
				// A timer of this step (its deadline) just handed the outcome out: it is in
				// the output already, and must not be there twice.
			case c.Outcome.Dead: // the same answer, and the id is dead: never answer it
				st.out.Effects.Skips = append(st.out.Effects.Skips, Skip{CallID: c.ID, Name: c.Tool, JobID: c.JobID, Reason: c.Outcome.Reason, Seq: c.Outcome.Seq})
			default:
				st.out.Effects.Responses = append(st.out.Effects.Responses, st.response(c))
			}
			return nil
		}
	}
	id := ev.CallID
	if id == "" {
		id = st.mintCallID()
	}
	tp := st.e.Policy.lookup(ev.Tool)
	behavior := ev.Behavior
	if behavior == BehaviorUnspecified {
		behavior = tp.tool.Behavior
	}
	if behavior == BehaviorUnspecified {
		behavior = NonBlocking
	}
	c := &Call{ID: id, Tool: ev.Tool, Behavior: behavior, RegisteredAt: now, Connection: s.Connection}
	s.Calls = append(s.Calls, c)
	st.out.Changed = true

	// Precedence (spec): reject, then call-id idempotency (above), then business-key
	// dedupe, then a new job.
	var why string
	switch {
	case ev.ToolChoiceNone:
		why = fmt.Sprintf("%s was not executed: tool calls are not allowed on this turn (tool choice is none)", ev.Tool)
	case tp.known && tp.tool.Disallowed:
		why = fmt.Sprintf("%s was not executed: the tool policy does not allow it", ev.Tool)
	case !tp.known && st.e.Policy.RejectUnknown && !st.e.Policy.IsConfirmTool(ev.Tool):
		why = fmt.Sprintf("%s was not executed: unknown function", ev.Tool)
	}
	if why != "" {
		c.Disposition = Reject
		c.Outcome = &CallOutcome{At: now, Response: map[string]any{"status": "rejected", "executed": false, "error": why}}
		st.out.Call = st.callResult(c)
		st.emitResponse(c)
		return nil
	}

	switch {
	case !tp.known && st.e.Policy.IsConfirmTool(ev.Tool):
		st.confirmCall(c, ev)
		return nil
	case tp.tool.runs():
		// A repeat of a request already running (confirmed and not done) is absorbed
		// by its job like any repeat; otherwise the call opens or joins a run.
		if tp.tool.SideEffect {
			if j := st.dedupeMatch(BusinessKey(tp.tool, ev.Args, ev.BusinessKey, now), tp); j != nil {
				st.startJob(c, tp, ev.Args, ev.BusinessKey)
				return nil
			}
		}
		st.runCall(c, ev, tp)
		return nil
	}
	st.startJob(c, tp, ev.Args, ev.BusinessKey)
	return nil
}

// startJob gives call c a job for tool tp with args: the job its business key repeats
// (c is then a duplicate, answered at once if that job is done), or a new one that c
// opens (and that a stop already heard in a triggering utterance cancels before
// anything runs). It returns the new job, or nil for a duplicate. c need not be a call
// of tp's tool: a confirmation call starts its run's job.
func (st *step) startJob(c *Call, tp toolPolicy, args map[string]any, explicitKey string) *Job {
	s := st.s
	now := s.Now
	key := BusinessKey(tp.tool, args, explicitKey, now)
	if tp.tool.SideEffect {
		if j := st.dedupeMatch(key, tp); j != nil {
			st.duplicate(c, j)
			return nil
		}
	}

	j := &Job{
		ID: st.mintJobID(), Tool: tp.tool.Name, Key: key, SideEffect: tp.tool.SideEffect,
		CallIDs: []string{c.ID}, Args: args, CreatedAt: now,
	}
	j.Triggers = st.triggers(now, tp)
	s.Jobs = append(s.Jobs, j)
	c.Disposition = Execute
	c.JobID = j.ID
	st.out.Call = st.callResult(c)
	// A stop already heard in a triggering utterance (merged into the request, or said
	// just before the call) cancels the job before anything runs.
	if j.SideEffect {
		for _, id := range j.Triggers {
			if u := s.utterance(id); u != nil && u.Final && u.Intent == speech.IntentStop {
				st.decideJob(j, DecisionCancel, CauseStop, stopReason(u))
				break
			}
		}
	}
	return j
}

// duplicate makes call c a repeat of job j: it joins j, and is answered at once if j
// is done.
func (st *step) duplicate(c *Call, j *Job) {
	c.Disposition = Duplicate
	c.JobID = j.ID
	c.DuplicateOf = j.opener()
	j.CallIDs = append(j.CallIDs, c.ID)
	if j.Abandoned {
		j.Abandoned = false // a re-issue gives the job a live id: normal rules again
	}
	st.out.Call = st.callResult(c)
	if j.Outcome != NotCompleted {
		c.Outcome = &CallOutcome{At: st.s.Now, Response: st.payload(j, c)}
		st.emitResponse(c)
	}
}

// triggers returns the call's triggering utterances: every utterance whose voice
// activity is still going on or ended within the lookback before now. An utterance
// that ended earlier does not count, even if its transcript never came (noise).
func (st *step) triggers(now time.Time, tp toolPolicy) []int {
	var ids []int
	since := now.Add(-tp.timings.TriggerLookback)
	for _, u := range st.s.Utterances {
		if u.End.IsZero() || !u.End.Before(since) {
			ids = append(ids, u.ID)
		}
	}
	return ids
}

// dedupeMatch returns the job a call with this key repeats, or nil. An open job
// absorbs every repeat; a finished one absorbs them for the dedupe window after it
// completed. A failed job absorbs none, and neither does a cancelled one once the user
// has spoken again after the cancel (a new request, "OK, book it after all").
func (st *step) dedupeMatch(key string, tp toolPolicy) *Job {
	s := st.s
	for i := len(s.Jobs) - 1; i >= 0; i-- {
		j := s.Jobs[i]
		if j.Key != key || !j.SideEffect {
			continue
		}
		switch {
		case j.Outcome == Failed:
			return nil
		case j.Outcome == Unknown:
			// possibly committed: absorbs every repeat until the truth is known
		case j.Outcome != NotCompleted && s.Now.Sub(j.CompletedAt) >= tp.timings.DedupeWindow:
			return nil
		case j.Decision == DecisionCancel && st.spokeSince(j.DecidedAt):
			return nil
		}
		return j
	}
	return nil
}

// spokeSince reports whether a user utterance started at or after t.
func (st *step) spokeSince(t time.Time) bool {
	for _, u := range st.s.Utterances {
		if !u.Start.Before(t) {
			return true
		}
	}
	return false
}

// mintJobID returns the next unused job id. A session stored before jobs had their
// own counter starts it at 0 with jobs already numbered: the loop skips those ids.
func (st *step) mintJobID() string {
	for {
		st.s.JobSeq++
		id := "job-" + strconv.Itoa(st.s.JobSeq)
		if st.s.job(id) == nil {
			return id
		}
	}
}

func (st *step) mintCallID() string {
	for {
		st.s.Seq++
		id := "arbiter-call-" + strconv.Itoa(st.s.Seq)
		if st.s.call(id) == nil {
			return id
		}
	}
}

func (st *step) callResult(c *Call) *CallResult {
	r := &CallResult{CallID: c.ID, Disposition: c.Disposition, JobID: c.JobID, DuplicateOf: c.DuplicateOf, RunID: c.RunID}
	if j := st.s.job(c.JobID); j != nil {
		r.BusinessKey, r.SideEffect = j.Key, j.SideEffect
		if c.Disposition == Execute {
			r.Tool, r.Args = j.Tool, j.Args
		}
	}
	return r
}

func (st *step) speech(ev Speech) error {
	s := st.s
	now := s.Now
	st.out.Changed = true
	switch ev.Kind {
	case UserActivityStart:
		if n := len(s.Utterances); n > 0 && s.Utterances[n-1].End.IsZero() {
			return nil // already open
		}
		s.Seq++
		s.Utterances = append(s.Utterances, &Utterance{ID: s.Seq, Start: now})
		st.pruneUtterances()
	case UserActivityEnd:
		if n := len(s.Utterances); n > 0 && s.Utterances[n-1].End.IsZero() {
			s.Utterances[n-1].End = now
		}
	case ModelOutputStart:
		s.ModelSpeaking = true
	case ModelGenerationComplete:
		// Audio may still be playing (the model is idle at turn complete), but the
		// turn's text is final: read its claims now.
		st.checkClaims(s.ModelTurns.End(now, false))
	case ModelTurnComplete:
		s.ModelSpeaking = false
		st.checkClaims(s.ModelTurns.End(now, false))
	case Interrupted:
		s.ModelSpeaking = false
		st.checkClaims(s.ModelTurns.End(now, true))
		if !s.LastNowNoteAt.IsZero() && now.Sub(s.LastNowNoteAt) < InterruptAfterNote {
			return nil // our own note interrupted the model: not barge-in
		}
		st.abandonBlocking(now)
	}
	return nil
}

// abandonBlocking marks every unanswered BLOCKING call dead and holds the jobs left
// without a live id.
func (st *step) abandonBlocking(now time.Time) {
	s := st.s
	for _, c := range s.Calls {
		if c.Outcome != nil || c.Behavior != Blocking {
			continue
		}
		st.kill(c, "abandoned")
		j := s.job(c.JobID)
		if j == nil || !j.SideEffect || j.Decision != Undecided || j.Abandoned || j.AbandonLifted || st.hasLiveCall(j) {
			continue
		}
		j.Abandoned, j.AbandonedAt = true, now
	}
}

func (st *step) hasLiveCall(j *Job) bool {
	for _, id := range j.CallIDs {
		if c := st.s.call(id); c != nil && (c.Outcome == nil || !c.Outcome.Dead) {
			return true
		}
	}
	return false
}

// kill marks a pending call dead and returns its skip as an effect.
func (st *step) kill(c *Call, reason string) {
	if c.Outcome != nil {
		return
	}
	c.Outcome = &CallOutcome{At: st.s.Now, Dead: true, Reason: reason}
	st.emitSkip(c)
}

func (st *step) pruneUtterances() {
	us := st.s.Utterances
	for len(us) > keepUtterances && us[0].settled() {
		us = us[1:]
	}
	st.s.Utterances = us
}

func (st *step) transcript(ev Transcript) error {
	s := st.s
	now := s.Now
	st.out.Changed = true
	if ev.Model {
		if strings.TrimSpace(ev.Text) != "" {
			s.ModelSpeaking = true
		}
		if !ev.Interim {
			st.checkClaims(s.ModelTurns.Piece(now, ev.Text))
		}
		return nil
	}
	u := st.currentUtterance()
	if u == nil {
		s.Seq++
		u = &Utterance{ID: s.Seq, Start: now, End: now}
		s.Utterances = append(s.Utterances, u)
		st.pruneUtterances()
	}
	if ev.Interim {
		u.Interim = ev.Text
		return nil
	}
	u.Interim = ""
	if u.Text == "" {
		u.Text = strings.TrimSpace(ev.Text)
	} else {
		u.Text = strings.TrimSpace(u.Text + " " + strings.TrimSpace(ev.Text))
	}
	u.Final = true
	u.Intent, u.Stop = speech.Classify(u.Text, st.e.Policy.Phrases(s.Language))
	st.out.Intent = u.Intent
	switch u.Intent {
	case speech.IntentStop:
		st.applyStop(u)
	case speech.IntentAmend:
		st.applyAmend(u)
	}
	return nil
}

// applyAmend cancels every undecided side-effecting job that existed before the
// amending utterance began (its arguments are no longer what the user wants). A job
// the utterance itself triggered already carries the new details and is left alone; a
// job already committed gets a note offering to change it.
func (st *step) applyAmend(u *Utterance) {
	for _, j := range st.s.Jobs {
		if !j.SideEffect || !j.CreatedAt.Before(u.Start) || !relevant(j, u) {
			continue
		}
		switch j.Decision {
		case Undecided:
			j.AmendText = u.Text
			st.decideJob(j, DecisionCancel, CauseAmend, fmt.Sprintf("amended by the user: %q", u.Text))
		case DecisionCommit:
			if j.Outcome == NotCompleted {
				j.AmendAfterCommit, j.AmendText = true, u.Text
			} else if j.Outcome == Committed && !j.NoteIssued && u.Start.Before(j.CompletedAt) {
				j.AmendAfterCommit, j.AmendText = true, u.Text
				j.NoteIssued = true
				st.issueNote(j, st.commitNote(j), "")
			}
		}
	}
}

// currentUtterance is the utterance a user transcript belongs to: the open one, or the
// latest ended one still waiting for its final transcript.
func (st *step) currentUtterance() *Utterance {
	n := len(st.s.Utterances)
	if n == 0 {
		return nil
	}
	u := st.s.Utterances[n-1]
	if u.End.IsZero() || !u.Final {
		return u
	}
	return nil
}

func stopReason(u *Utterance) string {
	return fmt.Sprintf("stop intent in user speech: %q", u.Text)
}

// applyStop cancels every undecided side-effecting job the utterance bears on, and
// flags committed ones so their note says the user asked to stop.
func (st *step) applyStop(u *Utterance) {
	for _, r := range st.s.Runs {
		// Every open run: nothing has executed, so failing closed costs a question.
		if r.State == RunOpened {
			st.endRun(nil, r, RunCancelled, stopReason(u), st.e.Policy.lookup(r.Tool))
		}
	}
	for _, j := range st.s.Jobs {
		if !j.SideEffect || !relevant(j, u) {
			continue
		}
		switch j.Decision {
		case Undecided:
			st.decideJob(j, DecisionCancel, CauseStop, stopReason(u))
		case DecisionCommit:
			if j.Outcome == NotCompleted {
				j.StopAfterCommit = true
			} else if j.Outcome == Committed && !j.NoteIssued && u.Start.Before(j.CompletedAt) {
				j.StopAfterCommit = true
				j.NoteIssued = true
				st.issueNote(j, st.commitNote(j), "")
			}
		}
	}
}

func (st *step) withdraw(ev ToolCallCancellation) error {
	s := st.s
	for _, id := range ev.CallIDs {
		c := s.call(id)
		if c == nil || c.Outcome != nil {
			continue // unknown or already answered: nothing to withdraw
		}
		st.kill(c, "withdrawn")
		j := s.job(c.JobID)
		if j == nil {
			continue
		}
		j.Withdrawn = true
		if j.SideEffect && j.Decision == Undecided {
			st.decideJob(j, DecisionCancel, CauseWithdrawn, "withdrawn by the server (tool-call cancellation)")
		}
	}
	return nil
}

func (st *step) decide(ev Decide) error {
	j := st.s.job(ev.JobID)
	if ev.Prepared && j.PreparedAt.IsZero() && j.Decision == Undecided {
		j.PreparedAt = st.s.Now
		st.out.Changed = true
		st.advance(st.s.Now) // a zero-length wait may be due at once
	}
	st.out.Decision = &DecisionResult{JobID: j.ID, Decision: j.Decision, Reason: j.Reason, DecidedAt: j.DecidedAt, Cause: j.Cause}
	if j.Decision == Undecided {
		st.out.Decision.Reason = st.pendingReason(j)
	}
	return nil
}

func (st *step) pendingReason(j *Job) string {
	tp := st.e.Policy.lookup(j.Tool)
	switch {
	case j.Abandoned:
		return "abandoned BLOCKING call: held until a re-issue revives it or the abandon wait runs out"
	case j.PreparedAt.IsZero():
		return "waiting for prepare to finish"
	case len(st.holding(j, tp)) > 0:
		return "held: the user is speaking; waiting for the utterance's transcript"
	default:
		return "in the grace window"
	}
}

func (st *step) complete(ev Complete) error {
	s := st.s
	j := s.job(ev.JobID)
	if j.Outcome == Unknown && ev.Outcome != Unknown {
		return st.resolveUnknown(j, ev)
	}
	if j.Outcome != NotCompleted {
		st.out.Effects.add(*j.Completion) // idempotent repeat
		return nil
	}
	switch {
	case !j.SideEffect && ev.Outcome != Result && ev.Outcome != Failed:
		return Errorf(FailedPrecondition, "outcome: job %q is a read-only call: complete it with result or failed", j.ID)
	case j.SideEffect && ev.Outcome == Result:
		return Errorf(FailedPrecondition, "outcome: job %q is two-phase: complete it with committed, cancelled, failed or unknown", j.ID)
	case ev.Outcome == Committed && j.Decision != DecisionCommit:
		return Errorf(FailedPrecondition, "outcome: job %q was not decided commit (decision: %s)", j.ID, orPending(j.Decision))
	case ev.Outcome == Cancelled && j.Decision != DecisionCancel:
		return Errorf(FailedPrecondition, "outcome: job %q was not decided cancel (decision: %s)", j.ID, orPending(j.Decision))
	case ev.Outcome == Unknown && j.Decision != DecisionCommit:
		return Errorf(FailedPrecondition, "outcome: job %q: only a commit can have an unknown outcome (decision: %s)", j.ID, orPending(j.Decision))
	}
	if ev.Outcome == Failed && j.SideEffect && j.Decision == Undecided {
		st.decideJob(j, DecisionCancel, CauseFailed, "failed: "+ev.Error)
	}
	j.Outcome, j.CompletedAt, j.Result, j.Error = ev.Outcome, s.Now, ev.Result, ev.Error
	st.out.Changed = true
	st.answerJob(j, st.completionNote)
	return nil
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
			c.Outcome = &CallOutcome{At: s.Now, Dead: true, Reason: "session_closed"}
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
		return Errorf(FailedPrecondition, "outcome: job %q has an unknown outcome: complete it with committed or failed once it is known", j.ID)
	}
	j.Outcome, j.CompletedAt, j.Result, j.Error, j.WasUnknown = ev.Outcome, st.s.Now, ev.Result, ev.Error, true
	st.out.Changed = true
	st.answerJob(j, func(j *Job, live int) string {
		desc := describe(st.e.Policy.lookup(j.Tool).tool, j.Args)
		if j.Outcome == Committed {
			return fmt.Sprintf("System note: %s IS confirmed%s. Its outcome was unknown earlier and is now known. Tell the user it is done.", desc, reference(j))
		}
		return fmt.Sprintf("System note: %s was NOT made: its outcome was unknown earlier and the backend now reports it failed (%s). Nothing is scheduled. Tell the user it was not made and offer to try again.", desc, j.Error)
	})
	return nil
}

func orPending(d Decision) string {
	if d == Undecided {
		return "pending"
	}
	return string(d)
}

// payload is the function response body for call c of job j.
func (st *step) payload(j *Job, c *Call) map[string]any {
	p := map[string]any{}
	switch j.Outcome {
	case Committed:
		for k, v := range j.Result {
			p[k] = v
		}
		p["status"] = "committed"
	case Cancelled:
		p["status"] = "cancelled"
		p["executed"] = false
		p["reason"] = j.Reason
	case Failed:
		p["status"] = "failed"
		p["executed"] = false
		p["error"] = j.Error
	case Result:
		for k, v := range j.Result {
			p[k] = v
		}
		if len(p) == 0 {
			p["status"] = "ok"
		}
	case Unknown:
		p["status"] = "unknown"
		p["message"] = fmt.Sprintf("still being confirmed: the outcome of %s is not known yet (the backend did not confirm it). Do not call %s again, and do not tell the user it is done or not done until a status note says so.",
			describe(st.e.Policy.lookup(j.Tool).tool, j.Args), j.Tool)
	}
	if c.DuplicateOf != "" {
		p["duplicate_of"] = c.DuplicateOf
	}
	return p
}

func (st *step) response(c *Call) Response {
	return Response{CallID: c.ID, Name: c.Tool, JobID: c.JobID, Payload: c.Outcome.Response, Seq: c.Outcome.Seq}
}

// ---- effects ----------------------------------------------------------------------
//
// Every effect handed out for the first time goes through log: it gets the session's
// next sequence number and a place in the session log (Watch), so the unary RPCs and
// Watch hand out the same effects in the same order. Repeats (a retried RegisterCall
// or Complete) return the recorded effect with its original number and are not logged
// again.

func (st *step) log(e LogEntry) uint64 {
	s := st.s
	s.LogSeq++
	e.Seq, e.At = s.LogSeq, s.Now
	s.Log = append(s.Log, e)
	if n := len(s.Log) - LogKeep; n > 0 {
		s.Log = s.Log[n:]
	}
	st.out.Changed = true
	return e.Seq
}

// emitResponse hands out the function response recorded in c.Outcome.
func (st *step) emitResponse(c *Call) {
	r := st.response(c)
	r.Seq = st.log(LogEntry{Response: &r})
	c.Outcome.Seq = r.Seq
	st.out.Effects.Responses = append(st.out.Effects.Responses, r)
}

// emitSkip hands out the skip recorded in c.Outcome.
func (st *step) emitSkip(c *Call) {
	sk := Skip{CallID: c.ID, Name: c.Tool, JobID: c.JobID, Reason: c.Outcome.Reason}
	sk.Seq = st.log(LogEntry{Skip: &sk})
	c.Outcome.Seq = sk.Seq
	st.out.Effects.Skips = append(st.out.Effects.Skips, sk)
}

// emitInterim hands out a non-final response for c (its outcome stays unset).
func (st *step) emitInterim(c *Call, payload map[string]any) {
	r := Response{CallID: c.ID, Name: c.Tool, JobID: c.JobID, Payload: payload, Interim: true}
	r.Seq = st.log(LogEntry{Response: &r})
	st.out.Effects.Responses = append(st.out.Effects.Responses, r)
}

func (st *step) emitNote(n Note) {
	n.Seq = st.log(LogEntry{Note: &n})
	st.out.Effects.Notes = append(st.out.Effects.Notes, n)
}

func (st *step) emitRun(u RunUpdate) {
	u.At = st.s.Now
	u.Seq = st.log(LogEntry{Run: &u})
	st.out.Effects.Runs = append(st.out.Effects.Runs, u)
}

// completionNote picks the status note for a job just completed, or "" for none: a
// commit answered on a live id that nobody asked to stop needs none.
func (st *step) completionNote(j *Job, live int) string {
	desc := describe(st.e.Policy.lookup(j.Tool).tool, j.Args)
	switch j.Outcome {
	case Cancelled:
		switch j.Cause {
		case CauseStop:
			return fmt.Sprintf("System note: %s was cancelled before it was committed. Nothing is scheduled.", desc)
		case CauseAmend:
			return fmt.Sprintf("System note: the user changed the request (%q): %s was cancelled before it was committed, so nothing is scheduled. Call %s again with the new details.", j.AmendText, desc, j.Tool)
		case CauseTimeout:
			return fmt.Sprintf("System note: %s was cancelled before it was committed: the user spoke while it was pending and what they said could not be confirmed. Nothing is scheduled. Ask the user whether they still want it.", desc)
		case CauseAbandoned:
			return fmt.Sprintf("System note: %s was not made: the request was interrupted and not repeated. Nothing is scheduled. Ask the user whether they still want it.", desc)
		}
		return "" // withdrawn, timed out (the response said so) or closed: the model knows
	case Committed:
		if j.StopAfterCommit || j.AmendAfterCommit || j.Withdrawn || live == 0 {
			return st.commitNote(j)
		}
	case Result:
		if j.TimedOut && live == 0 {
			return fmt.Sprintf("System note: the %s result came after its call had timed out: %s", j.Tool, compactJSON(j.Result))
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
	if j.Outcome == Result && live == 0 && st.lostOnReconnect(j) {
		return fmt.Sprintf("System note: the %s result for the request made before the reconnect: %s", j.Tool, compactJSON(j.Result))
	}
	return ""
}

func (st *step) commitNote(j *Job) string {
	desc := describe(st.e.Policy.lookup(j.Tool).tool, j.Args)
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

// issueNote hands out a note about j (nil: about no job) and says how to deliver it. A note can ride on rider,
// a NON_BLOCKING call's function response answered in the same step, when the
// provider honours response scheduling: WHEN_IDLE while the model speaks, INTERRUPT
// when it is idle. Otherwise it is a user turn: now while the model is idle, when idle
// while it speaks — never a user turn into a reply (the third seed: a note sent as a
// full user turn cut the model's reply in half).
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
		rc.Outcome.Response["status_note"] = text
		if s.ModelSpeaking {
			n.Scheduling = "WHEN_IDLE"
			n.Why = "the model is speaking: the status rides on the function response with scheduling WHEN_IDLE, which waits for its turn to end instead of cutting it"
		} else {
			n.Scheduling = "INTERRUPT"
			n.Why = "the model is idle: the status rides on the function response with scheduling INTERRUPT, so it speaks it now without an extra user turn"
		}
	case s.ModelSpeaking:
		n.Why = "the model is speaking: a user turn now would interrupt its reply (turn_complete=true unconditionally interrupts generation), so send it when its turn is over"
	default:
		n.Why = "the model is idle: a user turn now cuts no reply"
	}
	if n.Deliver == DeliverNow {
		s.LastNowNoteAt = s.Now
	}
	st.emitNote(n)
}

// checkClaims reads what the model told the user in each finished turn (speech.ReadClaims,
// speech.Verdict) and, where it contradicts the state of the latest side-effecting job (or
// claims a side effect when there is no job at all), hands out a short corrective
// note at once. A job still being committed is not corrected: the claim may be about
// to come true.
func (st *step) checkClaims(turns []speech.ModelTurn) {
	for _, t := range turns {
		claim := speech.Verdict(speech.ReadClaimsIn(st.s.Language, t.Text))
		if claim == speech.ClaimNone {
			continue
		}
		var j *Job
		for i := len(st.s.Jobs) - 1; i >= 0; i-- {
			if c := st.s.Jobs[i]; c.SideEffect && !c.CreatedAt.After(t.End) {
				j = c
				break
			}
		}
		if j == nil {
			if claim == speech.ClaimDone {
				st.issueNote(nil, fmt.Sprintf("System note: correction: nothing has been done. No request for it was made, so nothing is booked or scheduled. You said: %q.", strings.TrimSpace(t.Text)), "")
			}
			continue
		}
		desc := describe(st.e.Policy.lookup(j.Tool).tool, j.Args)
		said := strings.TrimSpace(t.Text)
		var text string
		switch {
		case claim == speech.ClaimDone && (j.Decision == DecisionCancel || j.Outcome == Cancelled || j.Outcome == Failed):
			text = fmt.Sprintf("System note: correction: %s was NOT made. Nothing is scheduled. You said: %q. Tell the user it was not made.", desc, said)
		case claim == speech.ClaimDone && j.Decision == Undecided:
			text = fmt.Sprintf("System note: correction: %s is not confirmed yet; it is still pending. You said: %q. Do not say it is done until it is.", desc, said)
		case j.Outcome == Unknown:
			text = fmt.Sprintf("System note: correction: the outcome of %s is not known yet; it is still being confirmed. You said: %q. Do not say it is done or not done until a status note says so.", desc, said)
		case claim == speech.ClaimNotDone && j.Outcome == Committed:
			text = fmt.Sprintf("System note: correction: %s IS confirmed%s. You said: %q. Tell the user it is booked, and offer to cancel it.", desc, reference(j), said)
		default:
			continue
		}
		st.issueNote(j, text, "")
	}
}

func (st *step) close() {
	s := st.s
	if s.Closed {
		return
	}
	s.Closed = true
	st.out.Changed = true
	for _, j := range s.Jobs {
		if j.SideEffect && j.Decision == Undecided {
			st.decideJob(j, DecisionCancel, CauseClosed, "the session closed before a decision")
		}
	}
	for _, c := range s.Calls {
		st.kill(c, "session_closed")
	}
	for _, r := range s.Runs {
		if r.State == RunOpened {
			st.endRun(nil, r, RunCancelled, "the session closed", st.e.Policy.lookup(r.Tool))
		}
	}
}

// connect switches the session to a new connection: calls still pending from earlier
// connections die (their jobs go on; their outcomes go out as notes).
func (st *step) connect(ev Connect) {
	s := st.s
	if s.Connection == ev.ConnectionID {
		return
	}
	for _, c := range s.Calls {
		if c.Outcome == nil && c.Connection != ev.ConnectionID {
			st.kill(c, "connection_closed")
		}
	}
	if s.Connection != "" {
		s.PastConnections = append(s.PastConnections, s.Connection)
		if n := len(s.PastConnections) - keepConnections; n > 0 {
			s.PastConnections = s.PastConnections[n:]
		}
	}
	s.Connection = ev.ConnectionID
	st.out.Changed = true
}

// lostOnReconnect reports whether a call of j died with its connection.
func (st *step) lostOnReconnect(j *Job) bool {
	for _, id := range j.CallIDs {
		if c := st.s.call(id); c != nil && c.Outcome != nil && c.Outcome.Dead && c.Outcome.Reason == "connection_closed" {
			return true
		}
	}
	return false
}

// progress hands out an interim result as non-final responses on the job's live
// NON_BLOCKING calls, when the provider takes them.
func (st *step) progress(ev Progress) {
	s := st.s
	j := s.job(ev.JobID)
	if !s.ResponseScheduling {
		return
	}
	for _, id := range j.CallIDs {
		c := s.call(id)
		if c == nil || c.Outcome != nil || c.Behavior != NonBlocking {
			continue
		}
		p := map[string]any{}
		for k, v := range ev.Result {
			p[k] = v
		}
		p["status"] = "in_progress"
		st.emitInterim(c, p)
	}
}
