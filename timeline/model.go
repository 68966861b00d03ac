// Package timeline draws one session as a picture: lanes of what the user said, what
// the model said, the function calls and their answers, the jobs with their prepare,
// holds, decision and outcome, the notes and the confirm-then-act runs, on one time
// axis in seconds. It is built from a session's history (GetHistory) and rendered as
// one self-contained HTML page (inline SVG, CSS and a little JS; nothing fetched), so
// `arbiter replay --html` and the metrics listener's /debug/sessions/{id} page draw
// the same model the same way.
package timeline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// Timeline is one session's story, lane by lane. Times are milliseconds on the
// picture's axis: the history's t_ms (since the session started) plus OffsetMS. A time not known (the history lost the entry that said it) is
// -1.
type Timeline struct {
	// Title heads the page; Source says where the history came from (a live
	// session, a replay of a trace file).
	Title, Source string
	SessionID     string
	// CreatedAt is the wall time of the history's t_ms 0 (zero when not known).
	CreatedAt time.Time
	// OffsetMS is what was added to every history time: CreatedAt less Options.Origin.
	OffsetMS int64
	// EndMS is the end of the axis: the session's close, else its last entry.
	EndMS int64
	// Closed is set when the history holds the session's close.
	Closed bool
	// Complete is GetHistory's complete (every input since the start is here);
	// Warnings say what the picture cannot show (dropped or clipped entries).
	Complete bool
	Record   bool
	Warnings []string

	User  []*Utterance
	Model []*ModelTurn
	Calls []*Call
	Jobs  []*Job
	Notes []*Note
	Runs  []*Run
	// Marks are instants of the speech lanes that are no span: `interrupted`, a
	// turn complete with no model output open.
	Marks []Mark
	// Session marks apply to every lane: a configuration, a connection, the close.
	Session []Mark
}

// Mark is an instant with a label.
type Mark struct {
	MS    int64
	Kind  string // interrupted, turn_complete, configure, connect, close
	Label string
}

// Utterance is one user utterance (the arbiter's number, as holds name it): its voice
// activity and the transcript pieces attributed to it.
type Utterance struct {
	N int
	// ProviderID is the model server's utterance id, when the agent reported one.
	ProviderID string
	// StartMS and EndMS bound its voice activity (EndMS -1: still open at the end).
	StartMS, EndMS int64
	Pieces         []Piece
	// Text is its final transcript (the final pieces joined as the arbiter joins
	// them) and Intent the intent the arbiter read in it (stop, amend, other,
	// unknown; empty before a final piece).
	Text, Intent string
}

// Piece is one transcript piece as it arrived.
type Piece struct {
	MS      int64
	Text    string
	Interim bool
	Intent  string
}

// ModelTurn is one span of model output: from its audio's start to the end of its
// turn, or to `interrupted`.
type ModelTurn struct {
	StartMS int64
	// GenerationMS is when its generation completed (-1: not reported).
	GenerationMS int64
	EndMS        int64
	Interrupted  bool
	Text         string
}

// Call is one function call id: its registration and how it ended.
type Call struct {
	ID, Tool string
	// AtMS is its registration (-1 when the history no longer holds it).
	AtMS        int64
	Args        map[string]any
	Disposition string // execute, duplicate, reject, run
	JobID       string
	RunID       string
	DuplicateOf string
	Behavior    string // blocking, non_blocking, or empty (the policy's)
	Minted      bool
	// Interim are its non-final (progress) responses.
	Interim []Response
	// Response is its final function response, Skip its death; at most one is set.
	Response *Response
	Skip     *Skip
	// WithdrawnMS is when the model server withdrew it (-1: never).
	WithdrawnMS int64
}

// Response is a function response handed out.
type Response struct {
	MS      int64
	Payload map[string]any
	// Status is the payload's status (committed, cancelled, duplicate, error, ...).
	Status string
}

// Skip is a call id marked dead: never answer it.
type Skip struct {
	MS     int64
	Reason string
}

// Job is one job: a side-effecting one's prepare, holds, decisions and outcomes, or a
// read-only one's result.
type Job struct {
	ID, Tool string
	// CallID is the call that opened it, Calls every call answered with it.
	CallID     string
	Calls      []string
	SideEffect bool
	// OpenedMS is when it was opened (-1 when not known), PreparedMS when its prepare
	// was reported finished (-1: never).
	OpenedMS, PreparedMS int64
	Holds                []*Hold
	// Decisions are its decisions in order; all but a revoked one's successor are
	// final (a commit withdrawn by a late event is Revoked).
	Decisions []*Decision
	Outcomes  []Outcome
	// ProgressMS are its progress reports.
	ProgressMS []int64
}

// Hold is a hold on a job's commit: by an utterance, or by abandonment (Utterance 0).
type Hold struct {
	Utterance      int
	Abandoned      bool
	StartMS, EndMS int64 // EndMS -1: still held at the end
}

// Decision is a decision of the arbiter on a job.
type Decision struct {
	MS       int64
	Decision string // commit or cancel
	Cause    string
	Reason   string
	// RevokedMS is when a late event withdrew this commit (-1: never).
	RevokedMS int64
}

// Outcome is a Complete the agent reported.
type Outcome struct {
	MS      int64
	Outcome string // committed, cancelled, failed, result, unknown
	Error   string
	Result  map[string]any
}

// Note is a status note handed out.
type Note struct {
	MS      int64
	JobID   string
	RunID   string
	CallID  string
	Text    string
	Deliver string // now or when_idle
	Via     string // user_turn or function_response
	Why     string
}

// Run is a confirm-then-act run and its states.
type Run struct {
	ID, Tool string
	States   []RunState
}

// RunState is one state change of a run.
type RunState struct {
	MS                    int64
	State                 string // opened, confirmed, refused, expired, cancelled
	CallID, JobID, Reason string
}

// Decision returns the job's final decision (nil: undecided).
func (j *Job) Decision() *Decision {
	for i := len(j.Decisions) - 1; i >= 0; i-- {
		if j.Decisions[i].RevokedMS < 0 {
			return j.Decisions[i]
		}
	}
	return nil
}

// Options configure FromHistory.
type Options struct {
	// Title heads the page (default "Session ID").
	Title string
	// Source says where the history came from.
	Source string
	// Origin is the wall time of the axis's 0 (zero: the session's start, t_ms 0 of
	// the history). A replay passes the trace's t_ms 0, so the axis reads the trace's
	// times (the session starts at its first event that reaches the arbiter).
	Origin time.Time
}

// FromHistory builds the timeline of a GetHistory answer. Inputs are drawn when the
// agent observed them (observed_ms) when it says so, else when they arrived.
func FromHistory(h *arbiterv1.GetHistoryResponse, opt Options) *Timeline {
	t := &Timeline{
		Title: opt.Title, Source: opt.Source, SessionID: h.GetSessionId(),
		Complete: h.GetComplete(), Record: h.GetRecord(),
	}
	if t.Title == "" {
		t.Title = "Session " + h.GetSessionId()
	}
	if h.GetCreatedAt() != nil {
		t.CreatedAt = h.GetCreatedAt().AsTime()
		if !opt.Origin.IsZero() {
			t.OffsetMS = t.CreatedAt.Sub(opt.Origin).Milliseconds()
		}
	}
	b := &builder{t: t, calls: map[string]*Call{}, jobs: map[string]*Job{}, utts: map[int]*Utterance{}, runs: map[string]*Run{}}
	for _, e := range h.GetEntries() {
		b.entry(e, t.OffsetMS)
	}
	b.finish()
	t.warn(h)
	return t
}

// warn sets the warnings a partial history deserves.
func (t *Timeline) warn(h *arbiterv1.GetHistoryResponse) {
	if h.GetMaxBytes() == 0 {
		t.Warnings = append(t.Warnings, "the server keeps no history for this session: nothing to draw (serve --history-bytes, or record the session)")
	}
	if n := h.GetDropped(); n > 0 {
		t.Warnings = append(t.Warnings, fmt.Sprintf("%d older entries were dropped to keep the history within %d bytes: the picture starts where the history does (record the session for all of it: ConfigureSession record, or serve --history-sample)", n, h.GetMaxBytes()))
	} else if !h.GetComplete() && h.GetMaxBytes() > 0 {
		clipped := false
		for _, e := range h.GetEntries() {
			clipped = clipped || e.GetClipped()
		}
		if clipped {
			t.Warnings = append(t.Warnings, "an entry was larger than the history's bound and was clipped: its text is cut and its arguments left out")
		} else {
			t.Warnings = append(t.Warnings, "the history began after the session did: its first entries are missing")
		}
	}
	if fs := h.GetFirstSeq(); fs > 1 {
		t.Warnings = append(t.Warnings, fmt.Sprintf("the effect log keeps the last 256 effects: responses, skips and notes before effect %d are not drawn", fs))
	}
}

type builder struct {
	t     *Timeline
	calls map[string]*Call
	jobs  map[string]*Job
	utts  map[int]*Utterance
	runs  map[string]*Run
	turn  *ModelTurn // the model turn open
	last  int64
}

func (b *builder) call(id string) *Call {
	c := b.calls[id]
	if c == nil {
		c = &Call{ID: id, AtMS: -1, WithdrawnMS: -1}
		b.calls[id] = c
		b.t.Calls = append(b.t.Calls, c)
	}
	return c
}

func (b *builder) job(id string) *Job {
	j := b.jobs[id]
	if j == nil {
		j = &Job{ID: id, OpenedMS: -1, PreparedMS: -1}
		b.jobs[id] = j
		b.t.Jobs = append(b.t.Jobs, j)
	}
	return j
}

func (b *builder) utt(n int, ms int64) *Utterance {
	u := b.utts[n]
	if u == nil {
		u = &Utterance{N: n, StartMS: ms, EndMS: -1}
		b.utts[n] = u
		b.t.User = append(b.t.User, u)
	}
	return u
}

func (b *builder) run(id string) *Run {
	r := b.runs[id]
	if r == nil {
		r = &Run{ID: id}
		b.runs[id] = r
		b.t.Runs = append(b.t.Runs, r)
	}
	return r
}

func (b *builder) entry(e *arbiterv1.HistoryEntry, off int64) {
	ms := e.GetTMs() + off
	if e.ObservedMs != nil {
		ms = e.GetObservedMs() + off
	}
	b.last = max(b.last, e.GetTMs()+off)
	switch x := e.Entry.(type) {
	case *arbiterv1.HistoryEntry_Speech:
		b.speech(x.Speech, ms)
	case *arbiterv1.HistoryEntry_Transcript:
		b.transcript(x.Transcript, ms)
	case *arbiterv1.HistoryEntry_Call:
		hc := x.Call
		c := b.call(hc.GetCallId())
		c.Tool, c.AtMS, c.Args = hc.GetTool(), ms, structMap(hc.GetArgs())
		c.Disposition = enumName(hc.GetDisposition().String(), "DISPOSITION_")
		c.JobID, c.RunID, c.DuplicateOf, c.Minted = hc.GetJobId(), hc.GetRunId(), hc.GetDuplicateOf(), hc.GetMinted()
		if hc.GetBehavior() != arbiterv1.Behavior_BEHAVIOR_UNSPECIFIED {
			c.Behavior = enumName(hc.GetBehavior().String(), "BEHAVIOR_")
		}
		if c.JobID != "" {
			j := b.job(c.JobID)
			if hc.GetDisposition() == arbiterv1.Disposition_DISPOSITION_EXECUTE && j.CallID == "" {
				j.CallID, j.OpenedMS, j.SideEffect = c.ID, ms, hc.GetSideEffect()
				j.Tool = cmp.Or(hc.GetJobTool(), hc.GetTool())
			}
			if j.Tool == "" {
				j.Tool = hc.GetTool()
			}
			if !slices.Contains(j.Calls, c.ID) {
				j.Calls = append(j.Calls, c.ID)
			}
		}
	case *arbiterv1.HistoryEntry_Withdraw:
		// An id never registered (or whose registration the history dropped) is
		// no call to draw: its skip, if any, draws it.
		for _, id := range x.Withdraw.GetCallIds() {
			if c := b.calls[id]; c != nil {
				c.WithdrawnMS = ms
			}
		}
	case *arbiterv1.HistoryEntry_Prepared:
		if j := b.job(x.Prepared.GetJobId()); j.PreparedMS < 0 {
			j.PreparedMS = ms
		}
	case *arbiterv1.HistoryEntry_Complete:
		c := x.Complete
		b.job(c.GetJobId()).Outcomes = append(b.job(c.GetJobId()).Outcomes, Outcome{
			MS: ms, Outcome: enumName(c.GetOutcome().String(), "OUTCOME_"), Error: c.GetError(), Result: structMap(c.GetResult())})
	case *arbiterv1.HistoryEntry_Progress:
		j := b.job(x.Progress.GetJobId())
		j.ProgressMS = append(j.ProgressMS, ms)
	case *arbiterv1.HistoryEntry_Decision:
		d := x.Decision
		b.job(d.GetJobId()).Decisions = append(b.job(d.GetJobId()).Decisions, &Decision{
			MS: ms, Decision: enumName(d.GetDecision().String(), "DECISION_"), Cause: d.GetCause(), Reason: d.GetReason(), RevokedMS: -1})
	case *arbiterv1.HistoryEntry_Revoked:
		j := b.job(x.Revoked.GetJobId())
		for i := len(j.Decisions) - 1; i >= 0; i-- {
			if j.Decisions[i].RevokedMS < 0 {
				j.Decisions[i].RevokedMS = ms
				break
			}
		}
	case *arbiterv1.HistoryEntry_Hold:
		hh := x.Hold
		j := b.job(hh.GetJobId())
		utt := int(hh.GetUtterance())
		if !hh.GetEnd() {
			j.Holds = append(j.Holds, &Hold{Utterance: utt, Abandoned: hh.GetAbandoned(), StartMS: ms, EndMS: -1})
			break
		}
		found := false
		for _, h := range j.Holds {
			if h.EndMS < 0 && h.Utterance == utt && h.Abandoned == hh.GetAbandoned() {
				h.EndMS, found = ms, true
				break
			}
		}
		if !found { // its beginning was dropped
			j.Holds = append(j.Holds, &Hold{Utterance: utt, Abandoned: hh.GetAbandoned(), StartMS: -1, EndMS: ms})
		}
	case *arbiterv1.HistoryEntry_Response:
		r := x.Response
		c := b.call(r.GetCallId())
		if c.Tool == "" {
			c.Tool = r.GetName()
		}
		if c.JobID == "" {
			c.JobID = r.GetJobId()
		}
		resp := Response{MS: ms, Payload: structMap(r.GetPayload())}
		resp.Status, _ = resp.Payload["status"].(string)
		if r.GetInterim() {
			c.Interim = append(c.Interim, resp)
		} else if c.Response == nil {
			c.Response = &resp
		}
	case *arbiterv1.HistoryEntry_Skip:
		s := x.Skip
		c := b.call(s.GetCallId())
		if c.Tool == "" {
			c.Tool = s.GetName()
		}
		if c.JobID == "" {
			c.JobID = s.GetJobId()
		}
		if c.Skip == nil {
			c.Skip = &Skip{MS: ms, Reason: s.GetReason()}
		}
	case *arbiterv1.HistoryEntry_Note:
		n := x.Note
		deliver := "now"
		if n.GetDeliver() == arbiterv1.Delivery_DELIVERY_WHEN_IDLE {
			deliver = "when_idle"
		}
		b.t.Notes = append(b.t.Notes, &Note{MS: ms, JobID: n.GetJobId(), RunID: n.GetRunId(), CallID: n.GetCallId(),
			Text: n.GetText(), Deliver: deliver, Via: enumName(n.GetVia().String(), "NOTE_VIA_"), Why: n.GetWhy()})
	case *arbiterv1.HistoryEntry_Run:
		u := x.Run
		r := b.run(u.GetRunId())
		if r.Tool == "" {
			r.Tool = u.GetTool()
		}
		r.States = append(r.States, RunState{MS: ms, State: enumName(u.GetState().String(), "RUN_STATE_"),
			CallID: u.GetCallId(), JobID: u.GetJobId(), Reason: u.GetReason()})
	case *arbiterv1.HistoryEntry_Configure:
		c := x.Configure
		var parts []string
		if c.GetLanguage() != "" {
			parts = append(parts, "language "+c.GetLanguage())
		}
		if c.GetResponseScheduling() {
			parts = append(parts, "response scheduling")
		}
		if c.GetRecord() {
			parts = append(parts, "record")
		}
		b.t.Session = append(b.t.Session, Mark{MS: ms, Kind: "configure", Label: "configure: " + cmp.Or(strings.Join(parts, ", "), "defaults")})
	case *arbiterv1.HistoryEntry_Connect:
		c := x.Connect
		b.t.Session = append(b.t.Session, Mark{MS: ms, Kind: "connect",
			Label: fmt.Sprintf("connection %s (%s)", c.GetConnectionId(), enumName(c.GetState().String(), "SESSION_STATE_"))})
	case *arbiterv1.HistoryEntry_Close:
		b.t.Session = append(b.t.Session, Mark{MS: ms, Kind: "close", Label: "session closed"})
		b.t.Closed, b.t.EndMS = true, ms
	}
}

func (b *builder) speech(s *arbiterv1.HistorySpeech, ms int64) {
	switch s.GetEvent() {
	case arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START:
		u := b.utt(int(s.GetUtterance()), ms)
		u.ProviderID = cmp.Or(u.ProviderID, s.GetUtteranceId())
	case arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END:
		u := b.utt(int(s.GetUtterance()), -1)
		u.ProviderID = cmp.Or(u.ProviderID, s.GetUtteranceId())
		u.EndMS = ms
	case arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START:
		if b.turn == nil {
			b.turn = &ModelTurn{StartMS: ms, GenerationMS: -1, EndMS: -1}
			b.t.Model = append(b.t.Model, b.turn)
		}
	case arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_GENERATION_COMPLETE:
		if b.turn != nil {
			b.turn.GenerationMS = ms
		} else {
			b.t.Marks = append(b.t.Marks, Mark{MS: ms, Kind: "generation_complete", Label: "generation complete"})
		}
	case arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_TURN_COMPLETE:
		if b.turn != nil {
			b.turn.EndMS, b.turn = ms, nil
		} else {
			b.t.Marks = append(b.t.Marks, Mark{MS: ms, Kind: "turn_complete", Label: "turn complete"})
		}
	case arbiterv1.SpeechEvent_SPEECH_EVENT_INTERRUPTED:
		if b.turn != nil {
			b.turn.EndMS, b.turn.Interrupted, b.turn = ms, true, nil
		}
		b.t.Marks = append(b.t.Marks, Mark{MS: ms, Kind: "interrupted", Label: "interrupted"})
	}
}

func (b *builder) transcript(tr *arbiterv1.HistoryTranscript, ms int64) {
	if tr.GetRole() == arbiterv1.Role_ROLE_MODEL {
		turn := b.turn
		if turn == nil {
			// Output transcription without a reported audio start: a turn of its own.
			turn = &ModelTurn{StartMS: ms, GenerationMS: -1, EndMS: -1}
			b.t.Model = append(b.t.Model, turn)
			b.turn = turn
		}
		if !tr.GetInterim() {
			turn.Text += tr.GetText()
		}
		return
	}
	u := b.utt(int(tr.GetUtterance()), ms)
	u.Pieces = append(u.Pieces, Piece{MS: ms, Text: tr.GetText(), Interim: tr.GetInterim(), Intent: tr.GetIntent()})
	if !tr.GetInterim() {
		// As the arbiter joins them (Utterance.Text).
		u.Text = strings.TrimSpace(u.Text + " " + strings.TrimSpace(tr.GetText()))
		if tr.GetIntent() != "" {
			u.Intent = tr.GetIntent()
		}
	}
}

// finish sets the end of the axis and orders the lanes.
func (b *builder) finish() {
	t := b.t
	if !t.Closed {
		t.EndMS = b.last
	}
	// Every time drawn lies within the axis (an observed time may precede a later
	// arrival; never past the end).
	for _, u := range t.User {
		t.EndMS = max(t.EndMS, u.StartMS, u.EndMS)
	}
	slices.SortStableFunc(t.User, func(a, b *Utterance) int { return cmp.Compare(a.N, b.N) })
	slices.SortStableFunc(t.Runs, func(a, b *Run) int { return cmp.Compare(firstMS(a), firstMS(b)) })
}

func firstMS(r *Run) int64 {
	if len(r.States) == 0 {
		return 0
	}
	return r.States[0].MS
}

// enumName is a proto enum value's name without its prefix, in lower case
// ("DISPOSITION_EXECUTE" -> "execute").
func enumName(s, prefix string) string {
	s = strings.TrimPrefix(s, prefix)
	if s == "UNSPECIFIED" {
		return ""
	}
	return strings.ToLower(s)
}

func structMap(s *structpb.Struct) map[string]any {
	if s == nil {
		return nil
	}
	return s.AsMap()
}
