package arbiter

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// History: a session's timeline, kept in the session (so every store keeps it, encoded
// with the rest) for GetHistory, the timeline picture and `arbiter export`. Step
// appends to it from the event and what the step did, at the step's own times: no
// clock is read. It holds
//
//   - the inputs: every event the agent reported that changed the session (a call,
//     speech, a transcript, a withdrawal, a job's prepare finishing, an outcome, a
//     configuration, a connection, progress, the close), with its fields, when it
//     arrived and, for an event reported with an age, when the agent observed it;
//     idempotent repeats, Decide polls that only read and timer ticks are not inputs;
//   - what the engine made of them that the effect log does not say: decisions (which
//     job, commit or cancel, why), withdrawn commits, COMMITs handed out by a Decide
//     (which stand from then on), and holds (when a job became held, by which
//     utterance or by abandonment, and when that ended);
//
// and the effects are the session's effect log (Session.Log), which already has each
// one's seq and time: HistoryEntry.Seq places every entry among them.
//
// The history is bounded by the JSON-encoded size of its entries: past the bound the
// oldest are dropped (History.Dropped counts them), and an entry larger than the bound
// alone is clipped (HistoryEntry.Clipped). A session that records (Configure.Record,
// or sampled by Service.HistorySample) has the larger bound, Engine.RecordBytes,
// enough to export a whole session and replay it.

// Bounds of a session's history (Engine.HistoryBytes, Engine.RecordBytes).
const (
	// DefaultHistoryBytes bounds the history of a session that does not record: 1 KiB,
	// about the last ten entries (a whole short call: the call, the user's speech and
	// transcript, the decision, the outcome).
	DefaultHistoryBytes = 1 << 10
	// DefaultRecordBytes bounds the history of a session that records: 64 KiB, about
	// a thousand entries (a few minutes of conversation with transcripts). Every RPC
	// reads and writes the whole session, so this is what recording costs per RPC at
	// most.
	DefaultRecordBytes = 64 << 10
	// clipText is how much of a text, a reason or an error a clipped entry keeps.
	clipText = 128
)

// History is a session's timeline (see the file comment). Plain data, encoded with
// the session.
type History struct {
	// Record is set for a session that records: its bound is Engine.RecordBytes.
	Record bool `json:"record,omitempty"`
	// Policy is the digest (Policy.Digest) of the tool policy in force when the
	// history began.
	Policy string `json:"policy,omitempty"`
	// Partial is set when the history began after the session's first step (it was
	// stored before histories existed, or under an engine that kept none): inputs
	// before it are missing.
	Partial bool `json:"partial,omitempty"`
	// Entries are oldest first, in the order the engine made them.
	Entries []HistoryEntry `json:"entries,omitempty"`
	// Bytes is the size of Entries, JSON-encoded (the sum of each entry's encoding).
	Bytes int `json:"bytes,omitempty"`
	// Dropped counts the entries dropped from the front to keep Bytes within the
	// bound: nonzero means the earliest inputs are gone.
	Dropped int `json:"dropped,omitempty"`
	// Holds are the holds open at the end of the last step, to tell when each ends.
	Holds []Hold `json:"holds,omitempty"`
}

// Hold is what holds a job's commit: an utterance (Utterance.ID; or the question the
// utterance's unclear reply raised, until it is answered), or, with Utterance zero,
// abandonment (every call id of the job dead, waiting for a re-issue).
type Hold struct {
	Job       string `json:"job"`
	Utterance int    `json:"utt,omitempty"`
	// Since is when the hold began, on the session's clock (zero for a hold recorded
	// before holds had times).
	Since time.Time `json:"since,omitzero"`
}

// same reports whether h and o are the same hold (the same job, the same cause).
func (h Hold) same(o Hold) bool { return h.Job == o.Job && h.Utterance == o.Utterance }

// holdIn reports whether hs holds h (same).
func holdIn(hs []Hold, h Hold) bool { return slices.ContainsFunc(hs, h.same) }

// HistoryEntry is one entry of a session's history: exactly one of its kind fields
// (Call ... Hold) is set.
type HistoryEntry struct {
	// MS is when, in milliseconds after Session.CreatedAt on the session's clock: when
	// an input arrived (its step's now), when a decision or hold changed.
	MS int64 `json:"ms"`
	// ObservedMS, for an input reported as observed earlier (RegisterCall, Speech,
	// Transcript, ToolCallCancellation with ObservedAt), is when the agent observed
	// it, in milliseconds after CreatedAt (at most MaxEventAge before MS). The engine
	// applied it then, or, when the session's clock had gone past, at that clock,
	// withdrawing the commits decided since (Revoked entries). Nil otherwise.
	ObservedMS *int64 `json:"obs,omitempty"`
	// Seq is the session's LogSeq when the entry was made: the entry comes after effect
	// Seq and before effect Seq+1 of the log.
	Seq uint64 `json:"seq,omitempty"`
	// Clipped is set when the entry alone was larger than the bound: args, raw args
	// and results are left out, texts, reasons and errors keep their last (a reason:
	// first) 128 bytes.
	Clipped bool `json:"clipped,omitempty"`

	// Inputs.
	Call       *CallEntry       `json:"call,omitempty"`
	Speech     *SpeechEntry     `json:"speech,omitempty"`
	Transcript *TranscriptEntry `json:"transcript,omitempty"`
	Withdraw   *WithdrawEntry   `json:"withdraw,omitempty"`
	Prepared   *JobEntry        `json:"prepared,omitempty"`
	Complete   *CompleteEntry   `json:"complete,omitempty"`
	Configure  *ConfigureEntry  `json:"configure,omitempty"`
	Connect    *ConnectEntry    `json:"connect,omitempty"`
	Progress   *ProgressEntry   `json:"progress,omitempty"`
	Close      *struct{}        `json:"close,omitempty"`
	// What the engine made of them.
	Decision *DecisionEntry `json:"decision,omitempty"`
	Revoked  *JobEntry      `json:"revoked,omitempty"`
	Hold     *HoldEntry     `json:"hold,omitempty"`
	// Answered: a Decide handed out the job's COMMIT (from then on it stands).
	Answered *JobEntry `json:"answered,omitempty"`
}

// CallEntry is a RegisterCall: the call as the agent gave it and what the arbiter said.
type CallEntry struct {
	// ID is the call id: the agent's, or the one minted for it (Minted).
	ID     string         `json:"id"`
	Minted bool           `json:"minted,omitempty"`
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args,omitempty"`
	// RawArgs is the argument text the agent could not parse.
	RawArgs string `json:"raw_args,omitempty"`
	// Behavior is the call's own (empty: the policy's applied).
	Behavior       Behavior `json:"behavior,omitempty"`
	ToolChoiceNone bool     `json:"tool_choice_none,omitempty"`
	BusinessKey    string   `json:"business_key,omitempty"`
	// What RegisterCall said: the disposition, the job (opened or duplicated), the
	// run, the call duplicated.
	Disposition Disposition `json:"disp"`
	Job         string      `json:"job,omitempty"`
	Run         string      `json:"run,omitempty"`
	DuplicateOf string      `json:"dup_of,omitempty"`
	// JobTool is what the job runs when it is not the call's own tool (a confirmation
	// that confirmed its run); SideEffect says the job it opened is two-phase.
	JobTool    string `json:"job_tool,omitempty"`
	SideEffect bool   `json:"side_effect,omitempty"`
}

// SpeechEntry is a Speech event.
type SpeechEntry struct {
	Kind SpeechKind `json:"kind"`
	// UtteranceID is the model server's utterance id, as reported.
	UtteranceID string `json:"utterance_id,omitempty"`
	// Utterance is the user utterance (Utterance.ID) a voice-activity start opened or
	// an end ended; 0 when none.
	Utterance int `json:"utt,omitempty"`
}

// TranscriptEntry is a Transcript.
type TranscriptEntry struct {
	Model       bool   `json:"model,omitempty"`
	Text        string `json:"text"`
	Interim     bool   `json:"interim,omitempty"`
	UtteranceID string `json:"utterance_id,omitempty"`
	// Utterance is the user utterance the piece was attributed to (0 for the model's),
	// and Intent its intent after a final piece.
	Utterance int           `json:"utt,omitempty"`
	Intent    speech.Intent `json:"intent,omitempty"`
	// Discarded, for a final user piece, says which of the utterance's words were not
	// read as the user's and why: the model's echo (utterances.go); "" when all were.
	Discarded string `json:"discarded,omitempty"`
	// Reading is the agent's reading the piece carried (Transcript.Reading).
	Reading *speech.AgentReading `json:"reading,omitempty"`
}

// WithdrawEntry is a ToolCallCancellation.
type WithdrawEntry struct {
	CallIDs []string     `json:"call_ids"`
	Reason  CancelReason `json:"reason,omitempty"`
}

// JobEntry names a job: for Prepared, the Decide that reported its prepare finished;
// for Revoked, the job whose commit decision a late event withdrew; for Answered, the
// job whose COMMIT a Decide handed out.
type JobEntry struct {
	Job string `json:"job"`
}

// CompleteEntry is a Complete that recorded an outcome, with the result and error as
// the job kept them (Complete: a result over its bound is left out, ResultOmitted
// saying why; an error is cleaned and cut).
type CompleteEntry struct {
	Job           string          `json:"job"`
	Outcome       Outcome         `json:"outcome"`
	Result        map[string]any  `json:"result,omitempty"`
	ResultOmitted *ResultOmission `json:"result_omitted,omitempty"`
	Error         string          `json:"error,omitempty"`
}

// ConfigureEntry is a Configure.
type ConfigureEntry struct {
	Language           string `json:"language,omitempty"`
	TimeZone           string `json:"time_zone,omitempty"`
	ResponseScheduling bool   `json:"response_scheduling,omitempty"`
	Record             bool   `json:"record,omitempty"`
}

// ConnectEntry is a Connect that switched connections.
type ConnectEntry struct {
	ID    string       `json:"id"`
	State ConnectState `json:"state"`
}

// ProgressEntry is a Progress that handed out interim responses.
type ProgressEntry struct {
	Job    string         `json:"job"`
	Result map[string]any `json:"result,omitempty"`
}

// DecisionEntry is a decision: which job, commit or cancel, why.
type DecisionEntry struct {
	Job      string   `json:"job"`
	Decision Decision `json:"decision"`
	Cause    Cause    `json:"cause,omitempty"`
	Reason   string   `json:"reason"`
}

// HoldEntry is a hold beginning (End false) or ending on a job's commit: by an
// utterance, or by abandonment (Utterance 0). A job is held while it is undecided and
// either abandoned, or prepared with a relevant user utterance open (the engine's
// "held" pending reason), or while the arbiter's question about it is open (held by the
// unclear reply that raised it: questions.go).
type HoldEntry struct {
	Job       string `json:"job"`
	Utterance int    `json:"utt,omitempty"`
	End       bool   `json:"end,omitempty"`
}

// Digest is the policy's fingerprint: the first 64 bits of the SHA-256 of its JSON
// encoding, as 16 hex digits. Two policies that decide alike by construction (the
// same fields after Validate) have the same digest; it tells policies apart, it
// protects nothing. Computed by Validate (a policy changed after it keeps the old
// digest); "" for a policy that never passed Validate.
func (p *Policy) Digest() string { return p.digest }

// computeDigest is Digest's value for p as it is now.
func (p *Policy) computeDigest() string {
	b, err := json.Marshal(p)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Subset returns a copy of the policy with only the tools named (every other field
// as it is) and the tools whose confirmation tool is named: a session that called
// only those decides alike under either. The tools are shared, not copied. The copy
// has passed Validate.
func (p *Policy) Subset(names []string) *Policy {
	q := *p
	q.Tools = map[string]*Tool{}
	for _, name := range slices.Sorted(maps.Keys(p.Tools)) {
		t := p.Tools[name]
		if slices.Contains(names, name) || (t.runs() && slices.Contains(names, t.confirmTool())) {
			q.Tools[name] = t
		}
	}
	_ = q.Validate() // a part of a valid policy is valid
	return &q
}

// Sampled reports whether a session of that key is among the fraction (0 to 1) of
// sessions sampled: a hash of the key below the fraction, so every replica agrees and
// the same key always gives the same answer.
func Sampled(key SessionKey, fraction float64) bool {
	switch {
	case fraction <= 0:
		return false
	case fraction >= 1:
		return true
	}
	sum := sha256.Sum256([]byte(key.Tenant + "\x00" + key.ID))
	return float64(binary.BigEndian.Uint64(sum[:8])>>11)/(1<<53) < fraction
}

// historyBudget is the bound of s's history; 0: s keeps none.
func (e *Engine) historyBudget(s *Session) int {
	if s.History != nil && s.History.Record {
		if e.RecordBytes > 0 {
			return e.RecordBytes
		}
		return DefaultRecordBytes
	}
	switch {
	case e.HistoryBytes < 0:
		return 0
	case e.HistoryBytes == 0:
		return DefaultHistoryBytes
	}
	return e.HistoryBytes
}

// HistoryBound is the bound, in bytes, of the history s keeps under e; 0 when it keeps
// none.
func (e *Engine) HistoryBound(s *Session) int { return e.historyBudget(s) }

// msAt is t in milliseconds after the session's creation.
func (st *step) msAt(t time.Time) int64 { return t.Sub(st.s.CreatedAt).Milliseconds() }

// remember queues an entry made at the session's clock for this step's history.
func (st *step) remember(e HistoryEntry) {
	if !st.hist {
		return
	}
	e.MS, e.Seq = st.msAt(st.s.Now), st.s.LogSeq
	st.pending = append(st.pending, e)
}

// forget drops from the step's history the first pending entry match accepts (the
// last, when last is set), keeping the input's place (inputAt) right.
func (st *step) forget(match func(HistoryEntry) bool, last bool) {
	i := slices.IndexFunc(st.pending, match)
	if last {
		i = -1
		for k := len(st.pending) - 1; k >= 0; k-- {
			if match(st.pending[k]) {
				i = k
				break
			}
		}
	}
	if i < 0 {
		return
	}
	st.pending = slices.Delete(st.pending, i, i+1)
	if i < st.inputAt {
		st.inputAt--
	}
}

// noteHolds compares the holds on every undecided job with those open at the last
// look and remembers each that began or ended.
func (st *step) noteHolds() {
	if !st.hist {
		return
	}
	var now []Hold
	for _, j := range st.s.Jobs {
		now = st.appendJobHolds(now, j, st.holds)
	}
	st.noteHoldChanges(st.holds, now, st.jobTool)
	st.holds = now
}

// appendJobHolds appends to hs the holds open now on job j, in the order noteHolds
// keeps them (abandonment, or the holding utterances in utterance order), each with
// the start it has in prev, or beginning now.
func (st *step) appendJobHolds(hs []Hold, j *Job, prev []Hold) []Hold {
	if !j.SideEffect || j.Decision != Undecided {
		return hs
	}
	if j.Abandoned {
		return append(hs, st.hold(Hold{Job: j.ID}, prev))
	}
	if j.PreparedAt.IsZero() && !j.QuestionOpen {
		return hs
	}
	if j.QuestionOpen { // held by the question its unclear reply raised (questions.go)
		hs = append(hs, st.hold(Hold{Job: j.ID, Utterance: j.QuestionBy}, prev))
	}
	for _, u := range st.holding(j, st.e.Policy.lookup(j.Tool)) {
		if !(j.QuestionOpen && u.ID == j.QuestionBy) {
			hs = append(hs, st.hold(Hold{Job: j.ID, Utterance: u.ID}, prev))
		}
	}
	return hs
}

// noteHoldChanges remembers, and lists in Output.Holds, each hold of before that is
// not in after (it ended), then each of after that is not in before (it began); tool
// names a hold's job's tool.
func (st *step) noteHoldChanges(before, after []Hold, tool func(job string) string) {
	for _, h := range before {
		if !holdIn(after, h) {
			st.remember(HistoryEntry{Hold: &HoldEntry{Job: h.Job, Utterance: h.Utterance, End: true}})
			c := HoldChange{JobID: h.Job, Tool: tool(h.Job), Utterance: h.Utterance, End: true, At: st.s.Now}
			if !h.Since.IsZero() {
				c.Held = st.s.Now.Sub(h.Since)
			}
			st.out.Holds = append(st.out.Holds, c)
		}
	}
	for _, h := range after {
		if !holdIn(before, h) {
			st.remember(HistoryEntry{Hold: &HoldEntry{Job: h.Job, Utterance: h.Utterance}})
			st.out.Holds = append(st.out.Holds, HoldChange{JobID: h.Job, Tool: tool(h.Job), Utterance: h.Utterance, At: st.s.Now})
		}
	}
}

// hold is h as open now: with the start it had in prev (the holds at the last look),
// or beginning now.
func (st *step) hold(h Hold, prev []Hold) Hold {
	for _, o := range prev {
		if o.same(h) {
			return o
		}
	}
	h.Since = st.s.Now
	return h
}

// jobHolds tracks the holds of each job while advance fires timers: a timer changes
// one job at most (its own, or a deadline's call's), so after the first firing's full
// look (noteHolds) only that job's holds are compared, and st.holds is put back
// together, in noteHolds' order, when the firing is done. Without it every firing
// compared every job's holds: quadratic in the jobs when many timers fire at once.
type jobHolds map[string][]Hold

// trackHolds returns the holds open at the last look, by job.
func (st *step) trackHolds() jobHolds {
	by := jobHolds{}
	for _, h := range st.holds {
		by[h.Job] = append(by[h.Job], h)
	}
	return by
}

// noteJobHolds is noteHolds for job j alone, against and into by.
func (st *step) noteJobHolds(j *Job, by jobHolds) {
	if !st.hist || j == nil {
		return
	}
	before := by[j.ID]
	after := st.appendJobHolds(nil, j, before)
	st.noteHoldChanges(before, after, func(string) string { return j.Tool })
	if len(after) == 0 {
		delete(by, j.ID)
		return
	}
	by[j.ID] = after
}

// untrackHolds sets st.holds from by, in noteHolds' order: by job, in job order.
func (st *step) untrackHolds(by jobHolds) {
	var hs []Hold
	for _, j := range st.s.Jobs {
		hs = append(hs, by[j.ID]...)
	}
	st.holds = hs
}

// jobTool is the tool of the job named id ("" for none).
func (st *step) jobTool(id string) string {
	if j := st.s.job(id); j != nil {
		return j.Tool
	}
	return ""
}

// beginHistory readies the step's history: whether the session keeps one, and the
// holds open at its last step.
// jobOf is the id of the job a Decide or Complete named (jobRef), for its entry;
// jobID as given when it names none.
func (st *step) jobOf(jobID, callID string) string {
	if j, err := jobRef(st.s, jobID, callID); err == nil {
		return j.ID
	}
	return jobID
}

func (st *step) beginHistory() {
	st.hist = st.e.historyBudget(st.s) > 0
	if st.hist && st.s.History != nil {
		st.holds = st.s.History.Holds
	}
}

// inputEntry is the history entry of the event the step applied, at now (its
// arrival) and at (when the engine placed it); ok is false for an event that is not
// an input (Tick, a Decide that recorded nothing).
func (st *step) inputEntry(ev Event, now, at time.Time, seq uint64) (HistoryEntry, bool) {
	e := HistoryEntry{MS: st.msAt(now), Seq: seq}
	if !at.Equal(now) {
		obs := st.msAt(at)
		e.ObservedMS = &obs
	}
	switch ev := ev.(type) {
	case RegisterCall:
		c := st.out.Call
		if c == nil {
			return e, false
		}
		ce := &CallEntry{
			ID: c.CallID, Minted: ev.CallID == "", Tool: ev.Tool, Args: ev.Args, RawArgs: ev.RawArgs,
			Behavior: ev.Behavior, ToolChoiceNone: ev.ToolChoiceNone, BusinessKey: ev.BusinessKey,
			Disposition: c.Disposition, Job: c.JobID, Run: c.RunID, DuplicateOf: c.DuplicateOf,
		}
		if c.Disposition == Execute {
			ce.SideEffect = c.SideEffect
			if c.Tool != ev.Tool {
				ce.JobTool = c.Tool
			}
		}
		if ev.RawArgs != "" {
			ce.Args = nil
		}
		e.Call = ce
	case Speech:
		e.Speech = &SpeechEntry{Kind: ev.Kind, UtteranceID: ev.UtteranceID, Utterance: st.utt}
	case Transcript:
		e.Transcript = &TranscriptEntry{Model: ev.Model, Text: ev.Text, Interim: ev.Interim, UtteranceID: ev.UtteranceID,
			Utterance: st.utt, Intent: st.out.Intent, Discarded: st.discarded(), Reading: ev.Reading}
	case ToolCallCancellation:
		e.Withdraw = &WithdrawEntry{CallIDs: ev.CallIDs, Reason: ev.Reason}
	case Decide:
		if !ev.Prepared || !st.prepared {
			return e, false
		}
		e.Prepared = &JobEntry{Job: st.jobOf(ev.JobID, ev.CallID)}
	case Complete:
		ce := &CompleteEntry{Job: st.jobOf(ev.JobID, ev.CallID), Outcome: ev.Outcome}
		if j := st.s.job(ce.Job); j != nil {
			ce.Result, ce.ResultOmitted, ce.Error = j.Result, j.ResultOmitted, j.Error
		}
		e.Complete = ce
	case Configure:
		e.Configure = &ConfigureEntry{Language: ev.Language, TimeZone: ev.TimeZone, ResponseScheduling: ev.ResponseScheduling, Record: ev.Record}
	case Connect:
		e.Connect = &ConnectEntry{ID: ev.ConnectionID, State: st.out.Connect.State}
	case Progress:
		e.Progress = &ProgressEntry{Job: ev.JobID, Result: ev.Result}
	case Close:
		e.Close = &struct{}{}
	default:
		return e, false
	}
	return e, true
}

// finishHistory adds the step's entries to the session's history: those queued (with
// the input's entry, when the event changed the session, where the event was applied:
// after the timers that fired before it), then keeps the history within its bound.
func (st *step) finishHistory(input *HistoryEntry) {
	if !st.hist {
		return
	}
	entries := st.pending
	if input != nil {
		entries = slices.Insert(slices.Clip(entries), st.inputAt, *input)
	}
	h := st.s.History
	holdsChanged := h != nil && !slices.Equal(h.Holds, st.holds)
	if len(entries) == 0 && !holdsChanged {
		return
	}
	if h == nil {
		h = &History{Partial: st.s.Version != 0}
		st.s.History = h
	}
	if h.Policy == "" && h.Bytes == 0 && len(h.Entries) == 0 {
		h.Policy = st.e.Policy.Digest()
	}
	h.Holds = st.holds
	budget := st.e.historyBudget(st.s)
	for _, e := range entries {
		h.add(e, budget)
	}
	st.out.Changed = true
}

// add appends e, clipped if it alone is over budget, and drops the oldest entries
// while the history is over it.
func (h *History) add(e HistoryEntry, budget int) {
	n := e.size()
	if n > budget {
		e = e.clip()
		n = e.size()
	}
	h.Entries = append(h.Entries, e)
	h.Bytes += n
	for h.Bytes > budget && len(h.Entries) > 1 {
		h.Bytes -= h.Entries[0].size()
		h.Entries = h.Entries[1:]
		h.Dropped++
	}
}

// size is e's JSON-encoded size, with its separator.
func (e HistoryEntry) size() int {
	b, err := json.Marshal(e)
	if err != nil {
		return 0
	}
	return len(b) + 1
}

// clip returns e without its bulky fields: no args, raw args or results; texts,
// reasons and errors cut to clipText bytes.
func (e HistoryEntry) clip() HistoryEntry {
	e.Clipped = true
	if c := e.Call; c != nil {
		cc := *c
		cc.Args, cc.RawArgs = nil, ""
		e.Call = &cc
	}
	if t := e.Transcript; t != nil {
		tt := *t
		tt.Text = speech.KeepTail(tt.Text, clipText)
		e.Transcript = &tt
	}
	if c := e.Complete; c != nil {
		cc := *c
		cc.Result, cc.Error = nil, speech.KeepTail(cc.Error, clipText)
		e.Complete = &cc
	}
	if p := e.Progress; p != nil {
		pp := *p
		pp.Result = nil
		e.Progress = &pp
	}
	if d := e.Decision; d != nil {
		dd := *d
		if len(dd.Reason) > clipText {
			dd.Reason = strings.ToValidUTF8(dd.Reason[:clipText], "")
		}
		e.Decision = &dd
	}
	if w := e.Withdraw; w != nil && len(w.CallIDs) > 4 {
		ww := *w
		ww.CallIDs = ww.CallIDs[:4]
		e.Withdraw = &ww
	}
	return e
}

// kinds counts the kind fields set in e (one for a well-formed entry).
func (e HistoryEntry) kinds() int {
	n := 0
	for _, set := range []bool{e.Call != nil, e.Speech != nil, e.Transcript != nil, e.Withdraw != nil,
		e.Prepared != nil, e.Complete != nil, e.Configure != nil, e.Connect != nil, e.Progress != nil,
		e.Close != nil, e.Decision != nil, e.Revoked != nil, e.Hold != nil, e.Answered != nil} {
		if set {
			n++
		}
	}
	return n
}

// Complete reports whether h holds every input since its session began: it began
// with the session, nothing was dropped, nothing clipped. Only such a history
// exports to a trace that replays as the session ran.
func (h *History) Complete() bool {
	if h == nil || h.Partial || h.Dropped > 0 {
		return false
	}
	for _, e := range h.Entries {
		if e.Clipped {
			return false
		}
	}
	return true
}
