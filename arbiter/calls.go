package arbiter

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// Function calls: what RegisterCall does with a call the model issued, and what
// ToolCallCancellation does with the ids the server withdrew.
//
// Precedence when a call arrives (docs/trace-format.md, "Decision rules the fixtures
// rely on"): reject first (tool choice none, a tool the policy does not allow, an
// unknown tool under unknown_tools: reject); then call-id idempotency (the same id
// again is the same call: one job, one response); then business-key dedupe; then a new
// job. Tools that confirm first open a run instead (runs.go).

// RegisterCall records a function call from the model.
type RegisterCall struct {
	// CallID is the model's call id; empty mints one matching ^[a-zA-Z0-9_-]+$.
	CallID string
	// Tool is the function name; required.
	Tool string
	// Args are the call's arguments (JSON-shaped: map[string]any, float64 numbers), at
	// most MaxArgsBytes JSON-encoded and MaxArgsDepth levels of objects and lists deep
	// (the args object itself is one): Invalid naming `args` otherwise.
	Args map[string]any
	// Behavior is the call's scheduling mode; zero takes the policy's.
	Behavior Behavior
	// ToolChoiceNone is set when the generation ran with tool choice `none`.
	ToolChoiceNone bool
	// BusinessKey, when not empty, replaces the policy's key (at most MaxKeyBytes).
	BusinessKey string
	// ObservedAt is when the agent received the call from the model server (the
	// request's `age` before its arrival); zero: it did not say (see Engine.Step).
	ObservedAt time.Time
	// Arrived, for an event without ObservedAt (the agent sent no age), is when the
	// request carrying it reached the server: it happened then at the latest, though
	// its step may run later, after a slow store read. Zero: at its step's time.
	Arrived time.Time
	// RawArgs, when not empty, is the argument text the agent received and could not
	// parse (at most MaxArgsBytes): the call is rejected with an error response saying
	// its arguments could not be read; Args is ignored.
	RawArgs string
	// Epoch, when not empty, is the session lifetime the agent knows (from Connect):
	// another one is refused (DataLoss), so a lost session is never started again
	// silently by this event.
	Epoch string
}

func (ev RegisterCall) observedAt() (time.Time, time.Time) { return ev.ObservedAt, ev.Arrived }

func (ev RegisterCall) validate() error {
	if err := checkEpochShape(ev.Epoch); err != nil {
		return err
	}
	if ev.CallID != "" {
		if err := CheckName("call_id", ev.CallID); err != nil {
			return err
		}
	}
	if err := CheckName("tool", ev.Tool); err != nil {
		return err
	}
	if err := checkDepth("args", ev.Args, MaxArgsDepth); err != nil {
		return err
	}
	if err := checkSize("args", jsonSafe(ev.Args), MaxArgsBytes); err != nil {
		return err
	}
	if len(ev.RawArgs) > MaxArgsBytes {
		return Fieldf(Invalid, "raw_args", "%d bytes, at most %d", len(ev.RawArgs), MaxArgsBytes)
	}
	if len(ev.BusinessKey) > MaxKeyBytes {
		return Fieldf(Invalid, "business_key", "%d bytes, at most %d", len(ev.BusinessKey), MaxKeyBytes)
	}
	if err := checkText("business_key", ev.BusinessKey, false); err != nil {
		return err
	}
	switch ev.Behavior {
	case BehaviorUnspecified, Blocking, NonBlocking:
	default:
		return Fieldf(Invalid, "behavior", "%q is not BLOCKING or NON_BLOCKING", ev.Behavior)
	}
	return nil
}

func (ev RegisterCall) check(st *step) error {
	s := st.s
	if err := checkEpoch(s, ev.Epoch); err != nil {
		return err
	}
	if err := notClosed(s); err != nil {
		return err
	}
	if c := s.call(ev.CallID); ev.CallID != "" && c != nil {
		if c.Tool != ev.Tool {
			return Fieldf(FailedPrecondition, "call_id", "%q was registered for %s, not %s: a call id names one function call", Clip(ev.CallID), c.Tool, Clip(ev.Tool))
		}
		if c.ArgsDigest != "" && (len(ev.Args) > 0 || ev.RawArgs != "") && c.ArgsDigest != argsDigest(ev) {
			return Fieldf(FailedPrecondition, "call_id", "%q was registered with other arguments: a call id names one function call, and a retry sends it unchanged", Clip(ev.CallID))
		}
		return nil // idempotent repeat: answered from the record
	}
	max := st.e.MaxCalls
	if max <= 0 {
		max = MaxCallsPerSession
	}
	if len(s.Calls) >= max {
		return Fieldf(ResourceExhausted, "call_id", "session %q has %d calls, the most one session may hold", s.Key.ID, len(s.Calls))
	}
	return nil
}

func (ev RegisterCall) apply(st *step) error {
	if c := st.s.call(ev.CallID); ev.CallID != "" && c != nil {
		st.repeatCall(c)
		return nil
	}
	tp := st.e.Policy.lookup(ev.Tool)
	ev.Args = jsonSafe(ev.Args)
	c := st.newCall(ev, tp)
	if why := st.rejectReason(ev, tp); why != "" {
		st.reject(c, why)
		return nil
	}
	switch {
	case !tp.known && st.e.Policy.IsConfirmTool(ev.Tool):
		st.confirmCall(c, ev)
	case tp.tool.runs() && !st.runningRepeat(ev, tp):
		st.runCall(c, ev, tp)
	default:
		// A repeat of a request already running (confirmed and not done) is absorbed
		// by its job like any repeat, even for a tool that confirms first.
		st.startJob(c, tp, ev.Args, ev.BusinessKey)
	}
	return nil
}

// argsDigest fingerprints what a RegisterCall's arguments say: FNV-1a of their
// canonical JSON (an empty or absent object alike), or of raw_args when the agent
// could not parse them. A retry of the call sends the same, so it matches; the same
// call id with other arguments is a conflict (FailedPrecondition naming call_id), as
// an idempotency key reused with other parameters is elsewhere. A repeat with no
// arguments at all (nor raw_args) asks for the recorded answer and is not checked.
func argsDigest(ev RegisterCall) string {
	switch {
	case ev.RawArgs != "":
		return fingerprint("raw", ev.RawArgs)
	case len(ev.Args) == 0:
		return fingerprint("{}")
	}
	return fingerprint(canonicalJSON(jsonSafe(ev.Args)))
}

// repeatCall answers a call id registered before with the same answer: its response
// again, or its skip if the id has died since.
func (st *step) repeatCall(c *Call) {
	st.out.Call = st.callResult(c)
	st.out.Call.Repeat = true
	switch {
	case c.Outcome == nil:
	case c.Outcome.Seq > st.logStart:
		// A timer of this step (its deadline) just handed the outcome out: it is in the
		// output already, and must not be there twice.
	case c.Outcome.Dead: // the same answer, and the id is dead: never answer it
		st.out.Effects.Skips = append(st.out.Effects.Skips, Skip{CallID: c.ID, Name: c.Tool, JobID: c.JobID, Reason: c.Outcome.Reason, Seq: c.Outcome.Seq})
	default:
		st.out.Effects.Responses = append(st.out.Effects.Responses, st.response(c))
	}
}

// newCall records a call id not seen before (minting one if the model gave none),
// with its behavior: the call's own, else the tool policy's, else NON_BLOCKING.
func (st *step) newCall(ev RegisterCall, tp toolPolicy) *Call {
	s := st.s
	id := ev.CallID
	if id == "" {
		id = st.mintCallID()
	}
	behavior := ev.Behavior
	if behavior == BehaviorUnspecified {
		behavior = tp.tool.Behavior
	}
	if behavior == BehaviorUnspecified {
		behavior = NonBlocking
	}
	c := &Call{ID: id, Tool: ev.Tool, Behavior: behavior, RegisteredAt: s.Now, Connection: s.Connection, ArgsDigest: argsDigest(ev)}
	s.Calls = append(s.Calls, c)
	st.out.Changed = true
	return c
}

// rejectReason says why a call is refused before anything else (the error its
// response carries), or "" when it is not.
func (st *step) rejectReason(ev RegisterCall, tp toolPolicy) string {
	switch {
	case ev.ToolChoiceNone:
		return rejectToolChoiceNone(ev.Tool)
	case tp.known && tp.tool.Disallowed:
		return rejectDisallowed(ev.Tool)
	case !tp.known && st.e.Policy.RejectUnknown && !st.e.Policy.IsConfirmTool(ev.Tool):
		return rejectUnknownTool(ev.Tool)
	case ev.RawArgs != "":
		return rejectUnreadableArgs(ev.Tool)
	}
	if missing := missingKeyArgs(tp.tool, ev.Args); tp.tool.SideEffect && len(missing) > 0 {
		return rejectMissingArgs(ev.Tool, missing)
	}
	return ""
}

// missingKeyArgs returns the required key arguments of tool t that args lacks (absent,
// null, blank, NaN, or a placeholder word), in key order. Arguments a confirm-then-act
// run asks for as steps are not missing: the run fills them before anything executes.
func missingKeyArgs(t *Tool, args map[string]any) []string {
	var missing []string
	for _, k := range t.Key {
		if k.Optional || t.asksFor(k.Arg) {
			continue
		}
		if absentValue(args[k.Arg]) {
			missing = append(missing, k.Arg)
		}
	}
	return missing
}

// absentValue reports whether an argument value carries nothing: nil, a string that is
// blank or only a placeholder ("null", "undefined", "nan", "none"), or a NaN (a
// provider's unparsed number).
func absentValue(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "", "null", "undefined", "nan", "none":
			return true
		}
	case float64:
		return math.IsNaN(v)
	}
	return false
}

// jsonSafe returns v with every NaN or infinite number replaced by nil (JSON null):
// JSON cannot encode them, and a stored session must encode; a NaN key argument is then
// missing. v itself is returned when it holds none (the usual case: no copy).
func jsonSafe[T any](v T) T {
	if !hasNonFinite(v) {
		return v
	}
	return replaceNonFinite(any(v)).(T)
}

func hasNonFinite(v any) bool {
	switch v := v.(type) {
	case float64:
		return math.IsNaN(v) || math.IsInf(v, 0)
	case map[string]any:
		for _, x := range v {
			if hasNonFinite(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hasNonFinite(x) {
				return true
			}
		}
	}
	return false
}

func replaceNonFinite(v any) any {
	switch v := v.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = replaceNonFinite(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = replaceNonFinite(x)
		}
		return out
	}
	return v
}

// reject answers call c at once with an error response: it is not executed.
func (st *step) reject(c *Call, why string) {
	c.Disposition = Reject
	c.Outcome = &CallOutcome{At: st.s.Now, Response: rejectedPayload(why)}
	st.out.Call = st.callResult(c)
	st.emitResponse(c)
}

// runningRepeat reports whether a call of a tool that confirms first repeats a
// request its confirmed run is already running (the job's key absorbs it).
func (st *step) runningRepeat(ev RegisterCall, tp toolPolicy) bool {
	return tp.tool.SideEffect && st.dedupeMatch(BusinessKey(tp.tool, ev.Args, ev.BusinessKey, st.s.Language, st.keyRef()), tp) != nil
}

// startJob gives call c a job for tool tp with args: the job its business key repeats
// (c is then a duplicate, answered at once if that job is done), or a new one that c
// opens (and that a stop already heard in a triggering utterance cancels before
// anything runs). It returns the new job, or nil for a duplicate. c need not be a call
// of tp's tool: a confirmation call starts its run's job.
func (st *step) startJob(c *Call, tp toolPolicy, args map[string]any, explicitKey string) *Job {
	s := st.s
	now := s.Now
	key := BusinessKey(tp.tool, args, explicitKey, s.Language, st.keyRef())
	if tp.tool.SideEffect {
		if j := st.dedupeMatch(key, tp); j != nil {
			st.duplicate(c, j)
			return nil
		}
	}
	triggers := st.triggers(now, tp)
	if old := st.continued(tp, args, key, explicitKey, triggers); old != nil {
		st.supersede(old, c) // the whole request replaces the half-told one (continuation.go)
	}
	j := &Job{
		ID: st.mintJobID(), Tool: tp.tool.Name, Key: key, SideEffect: tp.tool.SideEffect,
		CallIDs: []string{c.ID}, Args: args, CreatedAt: now, Triggers: triggers,
	}
	s.Jobs = append(s.Jobs, j)
	c.Disposition = Execute
	c.JobID = j.ID
	st.out.Call = st.callResult(c)
	if j.SideEffect {
		st.stopHeardBefore(j)
	}
	return j
}

// keyRef is the time relative dates in key arguments are read against: the session's
// start (its first event), not the call's, so a re-issue keys as its original across
// midnight ("tomorrow 3pm" at 23:59:58 and its re-issue at 00:00:03 are one booking; read
// at each call's time they were two days, two jobs, two commits). A session that goes
// on past midnight reads "tomorrow" from the day it started. Zero CreatedAt (not
// possible once the session has an event): the step's time. It is in the session's
// time zone (Session.TimeZone; UTC when none), where days and wall-clock times are
// read.
func (st *step) keyRef() time.Time {
	ref := st.s.CreatedAt
	if ref.IsZero() {
		ref = st.s.Now
	}
	zone := zoneOf(st.s.TimeZone)
	if zone == nil {
		zone = time.UTC // a zone this machine does not know (another replica's newer tz database)
	}
	return ref.In(zone)
}

// stopHeardBefore cancels a new side-effecting job at once when a triggering utterance
// already said stop (merged into the request, or said just before the call): nothing
// runs. The utterance is read again for this job (intentOf), with the call's own
// arguments: words the arguments carry are the request, not a stop ("two tickets for
// Stop Making Sense"; issue 25).
func (st *step) stopHeardBefore(j *Job) {
	for _, id := range j.Triggers {
		u := st.s.utterance(id)
		if u == nil || !u.Final || u.Echo || u.Intent == speech.IntentUnknown || u.Intent == speech.IntentOther {
			continue
		}
		if in, _ := st.intentOf(u, j, st.speechContext(u)); in == speech.IntentStop {
			st.decideJob(j, DecisionCancel, CauseStop, stopReason(u))
			return
		}
	}
}

// duplicate makes call c a repeat of job j: it joins j, and is answered at once if j
// is done, or its cancel settled (cancelSettled); otherwise when j completes.
func (st *step) duplicate(c *Call, j *Job) {
	c.Disposition = Duplicate
	c.JobID = j.ID
	c.DuplicateOf = j.opener()
	j.CallIDs = append(j.CallIDs, c.ID)
	if j.Abandoned {
		j.Abandoned = false // a re-issue gives the job a live id: normal rules again
	}
	st.out.Call = st.callResult(c)
	if j.Outcome != NotCompleted || cancelSettled(j) {
		c.Outcome = &CallOutcome{At: st.s.Now, Response: st.payload(j, c)}
		st.emitResponse(c)
	}
}

// cancelSettled reports whether j, not completed yet, is settled as not done: a
// side-effecting job decided CANCEL that no Complete can report committed or unknown
// any more (outcomeFits: a job decided cancel never takes committed or unknown). The
// agent still has to release its prepare and report cancelled (or failed), but
// nothing was done whatever it reports, so a repeat of it is answered with the cancel
// at once (answerOutcome), exactly as once the job is completed. Waiting for the
// Complete instead made the answer hang on the agent's timing: a Complete that came
// after the re-issue and a barge-in left the re-issue's BLOCKING id abandoned, dead,
// where a prompt one had it answered (testdata/traces/C_on_run2 over three replicas;
// the golden reissue_before_cancel_complete).
func cancelSettled(j *Job) bool {
	return j.SideEffect && j.Outcome == NotCompleted && j.Decision == DecisionCancel &&
		outcomeFits(j, Committed) != nil && outcomeFits(j, Unknown) != nil
}

// answerOutcome is the outcome j's calls are answered with: j.Outcome, or Cancelled
// for a job whose cancel is settled before its Complete (cancelSettled).
func answerOutcome(j *Job) Outcome {
	if cancelSettled(j) {
		return Cancelled
	}
	return j.Outcome
}

// triggers returns the call's triggering utterances: every utterance whose voice
// activity is still going on or ended within the lookback before now. An utterance
// that ended earlier does not count, even if its transcript never came (noise).
func (st *step) triggers(now time.Time, tp toolPolicy) []int {
	var ids []int
	since := now.Add(-tp.timings.TriggerLookback)
	for _, u := range st.s.Utterances {
		if u.Echo {
			continue // the model's own words
		}
		if u.End.IsZero() || !u.End.Before(since) {
			ids = append(ids, u.ID)
		}
	}
	return ids
}

// dedupeMatch returns the job a call with this key repeats, or nil. An open job
// absorbs every repeat; a finished one absorbs every repeat while the user has not
// spoken since it was created (a model stuck in a loop; unless the tool says
// DedupeWindowOnly), and then for the dedupe window after it completed. A failed job
// absorbs none, and neither does a cancelled one once the user has spoken again after
// the cancel (a new request, "OK, book it after all"); for one the user stopped, once
// the user said something other than a stop or an acknowledgement (askedSince). A job whose commit outcome is
// unknown absorbs every repeat until the truth is known.
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
		case j.Outcome != NotCompleted && !tp.tool.DedupeWindowOnly && !st.spokeSince(j.CreatedAt):
			// the model repeats itself with no user turn in between: a loop, not a request
		case j.Outcome != NotCompleted && s.Now.Sub(j.CompletedAt) >= tp.timings.DedupeWindow:
			return nil
		case j.Decision == DecisionCancel && stopped(j) && st.askedSince(j.DecidedAt):
			return nil
		case j.Decision == DecisionCancel && !stopped(j) && st.spokeSince(j.DecidedAt):
			return nil
		}
		return j
	}
	return nil
}

// stopped reports whether the user's words cancelled j: a stop, or an unclear reply
// under on_unclear: cancel. Its re-issues are answered with the cancel until the user
// asks for something (askedSince).
func stopped(j *Job) bool { return j.Cause == CauseStop || j.Cause == CauseUnclear }

// askedSince reports whether the user said something since t that can be a request: an
// utterance started at or after t whose final text is neither a stop, a refusal or a
// hedge (unclear by its words alone: "No, that's all." after the cancel note is a
// go-ahead for nothing), nor only an acknowledgement ("Okay, thanks."), and is not the
// model's echo. One without final text yet does not count (fail closed: what it says
// is not known, and a job the user stopped must not run on a guess). A job the user
// stopped stays the answer to its re-issues until then: after "Stop, don't book it."
// and "Okay, thanks.", the model's re-issue of the booking is not the user's request;
// after "OK, book it after all." it is.
func (st *step) askedSince(t time.Time) bool {
	for _, u := range st.s.Utterances {
		if u.Start.Before(t) || !u.Final || u.Echo || u.Intent == speech.IntentStop {
			continue
		}
		if in, _ := speech.Classify(u.Text, st.e.Policy.Phrases(st.s.Language)); in != speech.IntentStop &&
			in != speech.IntentUnclear && !speech.IsAcknowledgement(u.Text) {
			return true
		}
	}
	return false
}

// spokeSince reports whether a user utterance started at or after t (the model's echo
// is not the user's).
func (st *step) spokeSince(t time.Time) bool {
	for _, u := range st.s.Utterances {
		if !u.Start.Before(t) && !u.Echo {
			return true
		}
	}
	return false
}

// mintJobID returns the next unused job id: "job-N.EPOCH" (N from 1 in each session,
// EPOCH the session's), so a job id of a lost lifetime names no job of a later one
// (NotFound). A session stored before jobs had their own counter starts it at 0 with
// jobs already numbered: the loop skips those ids.
func (st *step) mintJobID() string {
	for {
		st.s.JobSeq++
		id := "job-" + strconv.Itoa(st.s.JobSeq)
		if st.s.Epoch != "" {
			id += "." + st.s.Epoch // unique across the session's lifetimes
		}
		if st.s.job(id) == nil {
			return id
		}
	}
}

// mintCallID returns an unused call id for a call the model gave none.
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

// hasLiveCall reports whether some call id of j may still be answered.
func (st *step) hasLiveCall(j *Job) bool {
	for _, id := range j.CallIDs {
		if c := st.s.call(id); c != nil && (c.Outcome == nil || !c.Outcome.Dead) {
			return true
		}
	}
	return false
}

// ToolCallCancellation reports ids the server withdrew (`toolCallCancellation`), or
// dropped after its own timeout. They are dead: never answered. A withdrawn job is
// cancelled if not yet decided; if it committed, its note says so. A job whose ids
// the provider timed out is abandoned instead (held; a re-issue is deduplicated
// against it and answered live; with none within abandon_wait it ends as on_abandon
// says), as a BLOCKING call dropped by `interrupted` is. Unknown or already answered
// ids are ignored.
type ToolCallCancellation struct {
	CallIDs []string
	// Reason says why the ids died; zero means CancelWithdrawn.
	Reason CancelReason
	// ObservedAt is when the agent received the cancellation; zero: it did not say
	// (see Engine.Step).
	ObservedAt time.Time
	// Arrived, for an event without ObservedAt (the agent sent no age), is when the
	// request carrying it reached the server: it happened then at the latest, though
	// its step may run later, after a slow store read. Zero: at its step's time.
	Arrived time.Time
	// EventID, when not empty, is the agent's id for this cancellation (eventids.go):
	// a repeat of one whose id the session keeps changes nothing.
	EventID string
}

func (ev ToolCallCancellation) observedAt() (time.Time, time.Time) {
	return ev.ObservedAt, ev.Arrived
}

// CancelReason says why the provider cancelled call ids.
type CancelReason string

// The reasons of a tool-call cancellation.
const (
	// CancelWithdrawn: the server withdrew the calls (Gemini toolCallCancellation).
	CancelWithdrawn CancelReason = "withdrawn"
	// CancelProviderTimeout: the provider gave up waiting for the function response
	// after its own timeout (Ultravox: 2.5 s by default) and will never read one.
	CancelProviderTimeout CancelReason = "provider_timeout"
)

func (ev ToolCallCancellation) validate() error {
	if err := checkEventID(ev.EventID); err != nil {
		return err
	}
	switch ev.Reason {
	case "", CancelWithdrawn, CancelProviderTimeout:
	default:
		return Fieldf(Invalid, "reason", "%q is not withdrawn or provider_timeout", ev.Reason)
	}
	if len(ev.CallIDs) == 0 {
		return Fieldf(Invalid, "call_ids", "at least one call id is required")
	}
	for i, id := range ev.CallIDs {
		if err := CheckName("call_ids["+strconv.Itoa(i)+"]", id); err != nil {
			return err
		}
	}
	return nil
}

func (ev ToolCallCancellation) check(st *step) error { return notClosed(st.s) }

func (ev ToolCallCancellation) apply(st *step) error {
	s := st.s
	for _, id := range ev.CallIDs {
		c := s.call(id)
		if c == nil || c.Outcome != nil {
			continue // unknown or already answered: nothing to withdraw
		}
		if ev.Reason == CancelProviderTimeout {
			st.kill(c, SkipProviderTimeout)
			if j := s.job(c.JobID); j != nil {
				st.abandon(j)
			}
			continue
		}
		st.kill(c, SkipWithdrawn)
		j := s.job(c.JobID)
		if j == nil {
			continue
		}
		j.Withdrawn = true
		if j.SideEffect && (j.Decision == Undecided || st.withdrawUnanswered(j)) {
			st.decideJob(j, DecisionCancel, CauseWithdrawn, reasonWithdrawn)
		}
	}
	return nil
}
