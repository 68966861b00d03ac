package arbiter

import (
	"github.com/voicearbiter/arbiter/arbiter/speech"

	"encoding/json"
	"time"
)

// SessionKey names a session: a tenant (empty for a single-tenant server) and the
// session id the agent chose.
type SessionKey struct {
	Tenant string `json:"tenant,omitempty"`
	ID     string `json:"id"`
}

// String returns "tenant/id", or the id alone for the default tenant.
func (k SessionKey) String() string {
	if k.Tenant == "" {
		return k.ID
	}
	return k.Tenant + "/" + k.ID
}

// Session is the whole state of one session: everything the engine decides from. It is
// plain data (JSON-encodable with EncodeSession) so any store can persist it and any
// replica can continue it. A Session is not safe for concurrent use; stores hand out
// copies and serialise writers with Version.
type Session struct {
	Key SessionKey `json:"key"`
	// Version is the stored version this state was read at; the store's
	// compare-and-set on it serialises writers. 0 means "never stored".
	Version uint64 `json:"version"`
	// Digest is the store's fingerprint of the stored record this state was read from
	// (store/redisstore: the SHA-1 of the encoded record, hex), "" from a store that
	// keeps none. Like Version it is the store's, not part of the record: a store that
	// sets it compares it in Save and CachedLoader.Current too, so that a copy of the
	// right version but other content (a forged wake-up message, a write Redis lost and
	// another replica made again) never overwrites what is stored or answers for it.
	Digest string `json:"-"`
	// CreatedAt is the time of the first event.
	CreatedAt time.Time `json:"created_at"`
	// Epoch names this lifetime of the session: six characters from [0-9a-z], made
	// from CreatedAt (EpochAt). A session lost by its store (a Redis restart without
	// persistence) and started again under the same id has another epoch, so a request
	// naming the old one is refused (DataLoss) instead of running on a fresh state,
	// and job ids, which carry it, never repeat across lifetimes. Empty for a session
	// stored before epochs existed.
	Epoch string `json:"epoch,omitempty"`
	// Now is the latest time the engine has advanced to; events that arrive with an
	// earlier clock (skew between replicas) are taken as happening at Now.
	Now time.Time `json:"now"`
	// Closed is set by CloseSession.
	Closed bool `json:"closed,omitempty"`
	// Language is the session's language (BCP 47) for intent phrases; empty: English.
	Language string `json:"language,omitempty"`
	// TimeZone is the session's IANA time zone ("Europe/Paris"; Configure): `as:
	// datetime` keys read relative dates and times said without an offset in it
	// (zones.go). Empty: UTC.
	TimeZone string `json:"time_zone,omitempty"`
	// ResponseScheduling is set when the provider honours a function response's
	// scheduling (Gemini Live: WHEN_IDLE, SILENT, INTERRUPT for NON_BLOCKING calls), so
	// a note can ride on a function response instead of a user turn.
	ResponseScheduling bool `json:"response_scheduling,omitempty"`
	// Seq numbers minted call ids and utterances.
	Seq int `json:"seq"`
	// JobSeq numbers jobs ("job-1", "job-2", ...) and RunSeq numbers confirm-then-act
	// runs ("run-1", ...), each on its own, so a session's first job is job-1.
	JobSeq int `json:"job_seq,omitempty"`
	RunSeq int `json:"run_seq,omitempty"`
	// ModelSpeaking is true between model output start and turn complete or
	// interruption.
	ModelSpeaking bool `json:"model_speaking,omitempty"`
	// LastNowNoteAt is when the arbiter last handed out a note to deliver now; an
	// `interrupted` within InterruptAfterNote of it is the note's doing, not barge-in.
	LastNowNoteAt time.Time `json:"last_now_note_at,omitzero"`
	// ModelTurns groups the model's output transcription into turns for the claim
	// check (a turn cut by `interrupted` is joined with the next).
	ModelTurns speech.TurnJoiner `json:"model_turns,omitzero"`
	// ModelSaid is what the model said last (utterances.go): the question a user's
	// reply answers, and the words whose echo is not the user's.
	ModelSaid ModelSaid `json:"model_said,omitzero"`
	// Utterances are the recent user utterances, oldest first.
	Utterances []*Utterance `json:"utterances,omitempty"`
	// Calls are every registered call id, in registration order.
	Calls []*Call `json:"calls,omitempty"`
	// Jobs are every job, in creation order.
	Jobs []*Job `json:"jobs,omitempty"`
	// Runs are every confirm-then-act run, in opening order.
	Runs []*Run `json:"runs,omitempty"`
	// Connection is the id of the agent's current connection to the model server
	// (Connect); calls record the connection they arrived on. Empty until the first
	// Connect.
	Connection string `json:"connection,omitempty"`
	// PastConnections are the ids of ended connections (the latest 64), which a
	// Connect may not reuse.
	PastConnections []string `json:"past_connections,omitempty"`
	// EventIDs are the latest KeepEventIDs event ids the agent gave (eventids.go),
	// oldest first, each scoped by its event's kind ("transcript:e-17"): an event
	// carrying one of them is a repeat.
	EventIDs []string `json:"event_ids,omitempty"`
	// LogSeq is the sequence number of the last effect handed out (0: none yet).
	// Every effect gets the next one, so Watch can resume after any of them.
	LogSeq uint64 `json:"log_seq,omitempty"`
	// Log holds the latest effects handed out (at most LogKeep), oldest first, for
	// Watch.
	Log []LogEntry `json:"log,omitempty"`
	// History is the session's timeline of inputs, decisions and holds (history.go),
	// bounded by Engine.HistoryBytes or, for a session that records, RecordBytes; nil
	// until the first step that keeps one.
	History *History `json:"history,omitempty"`
}

// LogKeep is how many of its latest effects a session keeps for Watch to resume
// from: a watcher that fell further behind than this must resynchronise from
// GetSession (FailedPrecondition). 256 effects is well over a minute of a busy
// session (each call makes one or two).
const LogKeep = 256

// LogEntry is one effect in a session's log: exactly one of Response, Skip, Note and
// Run is set.
type LogEntry struct {
	// Seq is the effect's sequence number in the session, from 1, without gaps.
	Seq uint64 `json:"seq"`
	// At is the session time the effect was made due.
	At       time.Time  `json:"at"`
	Response *Response  `json:"response,omitempty"`
	Skip     *Skip      `json:"skip,omitempty"`
	Note     *Note      `json:"note,omitempty"`
	Run      *RunUpdate `json:"run,omitempty"`
}

// LogAfter returns the logged effects with a sequence number above after, oldest
// first. Errors: FailedPrecondition when effects after `after` were already dropped
// from the log (the watcher fell more than LogKeep effects behind), or when after is
// beyond the last effect handed out.
func (s *Session) LogAfter(after uint64) ([]LogEntry, error) {
	if after > s.LogSeq {
		return nil, Fieldf(FailedPrecondition, "after_seq", "%d is beyond the last effect of session %q (%d)", after, s.Key.ID, s.LogSeq)
	}
	if after == s.LogSeq {
		return nil, nil
	}
	if len(s.Log) == 0 || s.Log[0].Seq > after+1 {
		return nil, Fieldf(FailedPrecondition, "after_seq", "effects after %d of session %q are no longer kept (the log keeps the last %d); resynchronise with GetSession", after, s.Key.ID, LogKeep)
	}
	i := int(after + 1 - s.Log[0].Seq)
	return s.Log[i:], nil
}

// ModelSaid is what the model said last: its output transcription's final pieces,
// joined, of its latest turn and of the turns before it that began within EchoWindow of
// the one before (its last MaxModelSaidBytes, KeepTail), and when it last said anything
// or ended a turn. Zero until the model speaks.
type ModelSaid struct {
	Text string    `json:"text,omitempty"`
	At   time.Time `json:"at,omitzero"`
}

// Utterance is one span of user voice activity and its transcript.
type Utterance struct {
	ID int `json:"id"`
	// ProviderID is the model server's id for it, when the agent reported one (OpenAI
	// Realtime's item_id): a transcript naming it belongs to it.
	ProviderID string    `json:"provider_id,omitempty"`
	Start      time.Time `json:"start"`
	// End is when voice activity ended; zero while it goes on.
	End time.Time `json:"end,omitzero"`
	// Text is the transcript so far (final pieces joined, then the latest interim).
	Text string `json:"text,omitempty"`
	// Interim is the latest interim piece, replaced by the next piece.
	Interim string `json:"interim,omitempty"`
	// Final is true once a final transcript piece arrived.
	Final bool `json:"final,omitempty"`
	// Intent is the final text's intent (empty until a final transcript arrives): the
	// strongest of its readings for the jobs it bears on (utterances.go).
	Intent speech.Intent `json:"intent,omitempty"`
	// Stop is the phrase that decided a stop or amend intent, if any.
	Stop string `json:"stop,omitempty"`
	// Echo is set when the final text was all the model's echo (its own words coming
	// back through the user's microphone, utterances.go): the utterance is not the
	// user's, so it neither holds nor stops.
	Echo bool `json:"echo,omitempty"`
	// Reading is the agent's own reading of the utterance (Transcript.Reading), the
	// latest reported; nil when the agent reported none.
	Reading *speech.AgentReading `json:"reading,omitempty"`
	// ReadBy names the reader whose reading decided Intent when the built-in one did
	// not (the Reading's source, or "agent"); empty when the built-in reading stands.
	ReadBy string `json:"read_by,omitempty"`
}

// settled reports whether the utterance no longer holds commits: voice activity ended
// and a final transcript arrived, or the final transcript was all the model's echo.
func (u *Utterance) settled() bool { return u.Final && (!u.End.IsZero() || u.Echo) }

// Disposition is what the agent does with a registered call.
type Disposition string

// The dispositions of a registered call.
const (
	Execute   Disposition = "execute"
	Duplicate Disposition = "duplicate"
	Reject    Disposition = "reject"
	// RunStep: the call opened, joined or advanced a confirm-then-act run; it is
	// answered at once with what to ask next, and nothing executes.
	RunStep Disposition = "run"
)

// Call is one function call id.
type Call struct {
	ID           string      `json:"id"`
	Tool         string      `json:"tool"`
	JobID        string      `json:"job_id,omitempty"`
	Behavior     Behavior    `json:"behavior"`
	RegisteredAt time.Time   `json:"registered_at"`
	Disposition  Disposition `json:"disposition"`
	// DuplicateOf is the call id that opened the job, for a duplicate.
	DuplicateOf string `json:"duplicate_of,omitempty"`
	// RunID is the confirm-then-act run the call opened, joined or answered.
	RunID string `json:"run_id,omitempty"`
	// Connection is the connection the call arrived on (Session.Connection then).
	Connection string `json:"connection,omitempty"`
	// ArgsDigest fingerprints the arguments the call was registered with (argsDigest:
	// 8 hex digits), so a repeat of its call id with other arguments is told from a
	// retry; empty for calls stored before it existed (any arguments then repeat).
	ArgsDigest string `json:"args_digest,omitempty"`
	// Outcome is set exactly once: the function response, or the mark that the id is
	// dead. Nil while the call is pending.
	Outcome *CallOutcome `json:"outcome,omitempty"`
}

// CallOutcome is the one outcome of a call id.
type CallOutcome struct {
	At time.Time `json:"at"`
	// Response is the function response payload; nil for a dead id.
	Response map[string]any `json:"response,omitempty"`
	// Dead is set for an id that must never be answered; Reason says why.
	Dead   bool       `json:"dead,omitempty"`
	Reason SkipReason `json:"reason,omitempty"`
	// Seq is the log sequence number of the response or skip handed out.
	Seq uint64 `json:"seq,omitempty"`
}

// Decision is the arbiter's decision for a side-effecting job.
type Decision string

// The decisions. The zero value means "not decided yet".
const (
	Undecided      Decision = ""
	DecisionCommit Decision = "commit"
	DecisionCancel Decision = "cancel"
)

// Outcome is what the agent reported happened to a job.
type Outcome string

// The outcomes. The zero value means "not completed yet".
const (
	NotCompleted Outcome = ""
	Committed    Outcome = "committed"
	Cancelled    Outcome = "cancelled"
	Failed       Outcome = "failed"
	Result       Outcome = "result"
	// Unknown: the commit's outcome is not known (the backend timed out). The job
	// stays in the dedupe table as possibly committed until a later Complete reports
	// Committed or Failed.
	Unknown Outcome = "unknown"
)

// Cause says why a job was cancelled; it picks the status note.
type Cause string

// The causes of a cancel decision.
const (
	CauseStop      Cause = "stop"
	CauseAmend     Cause = "amend"
	CauseTimeout   Cause = "transcript_timeout"
	CauseAbandoned Cause = "abandoned"
	CauseWithdrawn Cause = "withdrawn"
	CauseClosed    Cause = "session_closed"
	CauseFailed    Cause = "failed"
	CauseDeadline  Cause = "deadline"
	// CauseUnclear: the user's reply was unclear and the policy's on_unclear is cancel.
	CauseUnclear Cause = "unclear"
	// CauseUnanswered: the arbiter asked the user whether they still want it (an
	// unclear reply) and no answer came within max_hold (on_transcript_timeout: cancel).
	CauseUnanswered Cause = "unanswered"
	// CauseSuperseded: a later call of the tool continued the request (continuation.go)
	// and replaced it.
	CauseSuperseded Cause = "superseded"
)

// Job is one execution of a tool: one business key, any number of call ids.
type Job struct {
	ID         string         `json:"id"`
	Tool       string         `json:"tool"`
	Key        string         `json:"key"`
	SideEffect bool           `json:"side_effect,omitempty"`
	CallIDs    []string       `json:"call_ids"`
	Args       map[string]any `json:"args,omitempty"`
	CreatedAt  time.Time      `json:"created_at"`
	// Triggers are the ids of the utterances that triggered the call: still in voice
	// activity, or ended within the trigger lookback, when the call arrived.
	Triggers []int `json:"triggers,omitempty"`
	// Released lists utterances that no longer hold this job (their transcript timed
	// out under on_transcript_timeout: commit).
	Released []int `json:"released,omitempty"`
	// PreparedAt is when the agent reported prepare finished; zero before.
	PreparedAt time.Time `json:"prepared_at,omitzero"`
	// Abandoned is set while every call id of the job is dead after `interrupted` and
	// no re-issue has revived it.
	Abandoned   bool      `json:"abandoned,omitempty"`
	AbandonedAt time.Time `json:"abandoned_at,omitzero"`
	// AbandonLifted is set when on_abandon: commit lifted the abandonment hold.
	AbandonLifted bool `json:"abandon_lifted,omitempty"`
	// Withdrawn is set when the server withdrew one of its ids.
	Withdrawn bool      `json:"withdrawn,omitempty"`
	Decision  Decision  `json:"decision,omitempty"`
	Cause     Cause     `json:"cause,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	// AnsweredAt is when a Decide first handed out the job's COMMIT (zero: not yet).
	// From then on the commit is final: no event withdraws it (Engine.Step).
	AnsweredAt time.Time `json:"answered_at,omitzero"`
	// LateCommit is set when the commit decision was made more than LateTimer after
	// it came due: nothing could step the session then (an outage; see Decide).
	LateCommit bool `json:"late_commit,omitempty"`
	// WithheldUntil is set when a live agent's Decide found the job's late commit
	// (after an outage): the commit is not handed out before then, so the agent can
	// deliver what it observed meanwhile (Decide). Set once per job.
	WithheldUntil time.Time `json:"withheld_until,omitzero"`
	// CommitsRevoked counts commit decisions withdrawn, before any Decide handed them
	// out, because an event the agent had observed before them arrived after them
	// (Engine.Step). A Complete reporting that the commit happened anyway (an agent
	// that learnt it elsewhere) is accepted.
	CommitsRevoked int `json:"commits_revoked,omitempty"`
	// StopAfterCommit is set when a stop was heard after the commit decision.
	StopAfterCommit bool `json:"stop_after_commit,omitempty"`
	// AmendAfterCommit is set when an amendment was heard after the commit decision.
	AmendAfterCommit bool `json:"amend_after_commit,omitempty"`
	// AmendText is the utterance that amended the request.
	AmendText   string         `json:"amend_text,omitempty"`
	Outcome     Outcome        `json:"outcome,omitempty"`
	CompletedAt time.Time      `json:"completed_at,omitzero"`
	Result      map[string]any `json:"result,omitempty"`
	// ResultOmitted, when set, says why the reported result was left out (it was over
	// the size or depth bound): the responses carry it instead of Result, which is nil.
	ResultOmitted *ResultOmission `json:"result_omitted,omitempty"`
	Error         string          `json:"error,omitempty"`
	// TimedOut is set when a call of the job was answered by its max_pending deadline
	// before the job completed: the job's own result then comes as a note.
	TimedOut bool `json:"timed_out,omitempty"`
	// NoteIssued is set once the job's status note was handed out.
	NoteIssued bool `json:"note_issued,omitempty"`
	// Completion is what Complete returned, returned again for a repeated Complete.
	Completion *Effects `json:"completion,omitempty"`
	// RunID is the confirm-then-act run whose confirmation started this job.
	RunID string `json:"run_id,omitempty"`
	// WasUnknown is set when the job was first completed Unknown and later resolved.
	WasUnknown bool `json:"was_unknown,omitempty"`
	// The question about the job an unclear reply raised (questions.go; not Asked):
	// QuestionAt is when utterance QuestionBy, unclear, made the arbiter ask the user
	// whether they still want it (zero: never); QuestionOpen while the question holds
	// the commit; AnsweredBy is the utterance that said yes (0: none).
	QuestionAt   time.Time `json:"question_at,omitzero"`
	QuestionBy   int       `json:"question_by,omitempty"`
	QuestionOpen bool      `json:"question_open,omitempty"`
	AnsweredBy   int       `json:"answered_by,omitempty"`
	// SupersededBy is the call id of the later call that continued this job's request
	// and replaced it (CauseSuperseded).
	SupersededBy string `json:"superseded_by,omitempty"`
	// Asked is set once a Decide named the job by its call id (the tool helper of a
	// tool behind the wire guard): the tool talks to the arbiter, so an answer the
	// agent sends for the call before the job completes is not the tool's result but
	// the framework's own (ToolAnswer holds it).
	Asked bool `json:"asked,omitempty"`
	// Unguarded is set when the job was completed by the agent's own answer to its
	// call, its tool never having asked Decide (ToolAnswer): the side effect, if any,
	// was the tool's, outside the arbiter's decisions, and the outcome is Result.
	Unguarded bool `json:"unguarded,omitempty"`
}

func (j *Job) opener() string { return j.CallIDs[0] }

// Delivery says when to send a note.
type Delivery string

// The two deliveries of a note.
const (
	DeliverNow      Delivery = "now"
	DeliverWhenIdle Delivery = "when_idle"
)

// Response is a function response for the agent to send.
type Response struct {
	CallID  string         `json:"call_id"`
	Name    string         `json:"name"`
	JobID   string         `json:"job_id,omitempty"`
	Payload map[string]any `json:"payload"`
	// Interim marks a non-final response (a progress update for a long NON_BLOCKING
	// call; Gemini Live's will_continue): the call's final response is still to come.
	Interim bool `json:"interim,omitempty"`
	// Seq is the effect's number in the session log (Watch).
	Seq uint64 `json:"seq,omitempty"`
}

// Skip is a call id the agent must never answer.
type Skip struct {
	CallID string     `json:"call_id"`
	Name   string     `json:"name"`
	JobID  string     `json:"job_id,omitempty"`
	Reason SkipReason `json:"reason"`
	// Seq is the effect's number in the session log (Watch).
	Seq uint64 `json:"seq,omitempty"`
}

// Note is a status note for the model.
type Note struct {
	JobID string `json:"job_id"`
	Text  string `json:"text"`
	// Deliver says when to send it as a user turn: now (the model is idle) or
	// when_idle (it is speaking: a user turn would cut its reply in half).
	Deliver Delivery `json:"deliver"`
	// Via is how the arbiter recommends sending it: ViaUserTurn, or
	// ViaFunctionResponse (it also rides in the payload of CallID's function response,
	// under "status_note", with Scheduling).
	Via Via `json:"via"`
	// CallID is the function response the note rides on (ViaFunctionResponse).
	CallID string `json:"call_id,omitempty"`
	// Scheduling is the function response's scheduling for ViaFunctionResponse:
	// SchedulingWhenIdle while the model speaks, SchedulingInterrupt when it is idle.
	Scheduling Scheduling `json:"scheduling,omitempty"`
	// Why explains the recommendation.
	Why string `json:"why"`
	// RunID is the run the note is about, for a note about a run that started no job.
	RunID string `json:"run_id,omitempty"`
	// Seq is the effect's number in the session log (Watch).
	Seq uint64 `json:"seq,omitempty"`
}

// Via is how a note reaches the model.
type Via string

// The two ways a note reaches the model.
const (
	ViaUserTurn         Via = "user_turn"
	ViaFunctionResponse Via = "function_response"
)

// Effects is what the agent must do: send these responses, never answer these ids,
// send these notes.
type Effects struct {
	Responses []Response `json:"responses,omitempty"`
	Skips     []Skip     `json:"skips,omitempty"`
	Notes     []Note     `json:"notes,omitempty"`
	// Runs are run state changes (informational: nothing to send).
	Runs []RunUpdate `json:"runs,omitempty"`
}

func (e *Effects) add(o Effects) {
	e.Responses = append(e.Responses, o.Responses...)
	e.Skips = append(e.Skips, o.Skips...)
	e.Notes = append(e.Notes, o.Notes...)
	e.Runs = append(e.Runs, o.Runs...)
}

// Empty reports whether there is nothing to do.
func (e Effects) Empty() bool {
	return len(e.Responses) == 0 && len(e.Skips) == 0 && len(e.Notes) == 0 && len(e.Runs) == 0
}

// mark is a position in an Effects, to take what was added after it.
type mark struct{ r, s, n, u int }

func (e *Effects) mark() mark { return mark{len(e.Responses), len(e.Skips), len(e.Notes), len(e.Runs)} }

// since returns a copy of what was added after m.
func (e *Effects) since(m mark) Effects {
	return Effects{
		Responses: append([]Response(nil), e.Responses[m.r:]...),
		Skips:     append([]Skip(nil), e.Skips[m.s:]...),
		Notes:     append([]Note(nil), e.Notes[m.n:]...),
		Runs:      append([]RunUpdate(nil), e.Runs[m.u:]...),
	}
}

// EncodeSession encodes s for a store.
func EncodeSession(s *Session) ([]byte, error) { return json.Marshal(s) }

// DecodeSession decodes what EncodeSession wrote. A malformed record is an Internal
// error.
func DecodeSession(b []byte) (*Session, error) {
	s := new(Session)
	if err := json.Unmarshal(b, s); err != nil {
		return nil, Wrap(Internal, err, "decode session")
	}
	return s, nil
}

func (s *Session) call(id string) *Call {
	for _, c := range s.Calls {
		if c.ID == id {
			return c
		}
	}
	return nil
}

func (s *Session) job(id string) *Job {
	for _, j := range s.Jobs {
		if j.ID == id {
			return j
		}
	}
	return nil
}

func (s *Session) utterance(id int) *Utterance {
	for _, u := range s.Utterances {
		if u.ID == id {
			return u
		}
	}
	return nil
}

// UtteranceOpen reports whether a user utterance is open: voice activity going on, or
// ended and waiting for its final transcript.
func (s *Session) UtteranceOpen() bool {
	for _, u := range s.Utterances {
		if !u.settled() {
			return true
		}
	}
	return false
}

// PendingCalls returns the calls with no outcome yet, in registration order. The
// slice is new; its elements are the session's own.
func (s *Session) PendingCalls() []*Call {
	var out []*Call
	for _, c := range s.Calls {
		if c.Outcome == nil {
			out = append(out, c)
		}
	}
	return out
}

func (s *Session) run(id string) *Run {
	for _, r := range s.Runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// Run returns the run with that id, or nil.
func (s *Session) Run(id string) *Run { return s.run(id) }

// Job returns the job with that id, or nil.
func (s *Session) Job(id string) *Job { return s.job(id) }

// Call returns the call with that id, or nil.
func (s *Session) Call(id string) *Call { return s.call(id) }

// EffectsOf gathers log entries into one Effects, each kind in log order (the entries'
// Seq fields give the order across kinds).
func EffectsOf(entries []LogEntry) Effects {
	var e Effects
	for _, x := range entries {
		switch {
		case x.Response != nil:
			e.Responses = append(e.Responses, *x.Response)
		case x.Skip != nil:
			e.Skips = append(e.Skips, *x.Skip)
		case x.Note != nil:
			e.Notes = append(e.Notes, *x.Note)
		case x.Run != nil:
			e.Runs = append(e.Runs, *x.Run)
		}
	}
	return e
}
