package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// Epoch is the virtual clock's t_ms = 0: the morning the fixtures were recorded, so
// "tomorrow 3pm" resolves the same in every replay.
var Epoch = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

// DefaultPrepareMS is the fake backend's prepare time when neither the trace nor a
// flag sets one (spec: 4000).
const DefaultPrepareMS = 4000

// MaxPrepareMS bounds a prepare time (24 h), so time arithmetic cannot overflow.
const MaxPrepareMS = 24 * 3600 * 1000

// Timebase is the replay's clock: virtual (the in-process server runs on it) or real
// (remote servers; AdvanceTo sleeps).
type Timebase interface {
	// Now returns the current time.
	Now() time.Time
	// AdvanceTo moves the clock to t (never backwards).
	AdvanceTo(t time.Time)
}

// Options configure one replay.
type Options struct {
	// SessionID names the arbiter session; required.
	SessionID string
	// PrepareMS, when not nil, overrides every prepare time (the --prepare-ms flag).
	PrepareMS *int64
	// Start is the time of t_ms = 0.
	Start time.Time
}

// Line is one output line (the spec's `out` objects). Only the fields of its kind are
// set; JSON omits the rest.
type Line struct {
	Out string `json:"out"`
	TMs *int64 `json:"t_ms,omitempty"`
	// RunID is set on `run` lines, on `call` lines of calls that opened, joined or
	// answered a confirm-then-act run, and on notes about a run that started no job.
	RunID string `json:"run_id,omitempty"`
	// State is a `run` line's new run state.
	State       string         `json:"state,omitempty"`
	CallID      string         `json:"call_id,omitempty"`
	Disposition string         `json:"disposition,omitempty"`
	JobID       string         `json:"job_id,omitempty"`
	Decision    string         `json:"decision,omitempty"`
	Reason      string         `json:"reason,omitempty"`
	Payload     map[string]any `json:"payload,omitempty"`
	Text        string         `json:"text,omitempty"`
	Deliver     string         `json:"deliver,omitempty"`
	// Final is false on an interim (non-final) `response` line; omitted otherwise.
	Final *bool `json:"final,omitempty"`
	// Outcome is set on a `commit` line that did not commit: the backend refused it
	// ("failed") or did not learn its outcome ("unknown"); and on the `resolved` line
	// that reports an unknown one later.
	Outcome string `json:"outcome,omitempty"`
}

// Summary is the last line of a replay.
type Summary struct {
	Out           string   `json:"out"`
	Trace         string   `json:"trace,omitempty"`
	Commits       int      `json:"commits"`
	Cancels       int      `json:"cancels"`
	DoubleCommits int      `json:"double_commits"`
	Calls         int      `json:"calls"`
	Answered      int      `json:"answered"`
	Skipped       int      `json:"skipped"`
	Unanswered    []string `json:"unanswered"`
}

// Decision is one decision the arbiter made, with the reference implementation's
// decision for the same job where the trace recorded one.
type Decision struct {
	TMs      int64
	JobID    string
	CallID   string
	Decision string
	Reason   string
	// RefTMs is the ref_decision's time for CallID, -1 when the trace has none.
	RefTMs      int64
	RefDecision string
}

// Result is everything a replay produced.
type Result struct {
	Lines     []Line
	Summary   Summary
	Decisions []Decision
	// Notes counts notes handed out.
	Notes int
}

// Failed reports whether the trace ended with an unanswered call or a double commit.
func (r *Result) Failed() bool { return len(r.Summary.Unanswered) > 0 || r.Summary.DoubleCommits > 0 }

// backend is the fake backend's behaviour for one tool (session_start.backend).
type backend struct {
	PrepareMS *int64 `json:"prepare_ms"`
	// Commit is ok (default), fail, or unknown (the commit timed out: the outcome is
	// reported as unknown, and as ResolvesTo ResolvesAfterMS later if set).
	Commit          string `json:"commit"`
	ResolvesAfterMS *int64 `json:"resolves_after_ms"`
	ResolvesTo      string `json:"resolves_to"`
	// CommitMS is how long after its COMMIT the commit's outcome is reported
	// (Complete): absent or 0, at once.
	CommitMS *int64 `json:"commit_ms"`
	// ResultMS is a read-only tool's result time: absent is 0, JSON null never.
	ResultMS json.RawMessage `json:"result_ms"`
	// Result is a read-only tool's result (default {"status": "ok"}).
	Result map[string]any `json:"result"`
	// ProgressMS are the times after the call (ms, increasing) at which a read-only
	// tool still running reports progress (ReportProgress with {"progress": "i/n"}).
	ProgressMS []int64 `json:"progress_ms"`
	// CommitResult is what a commit of this job returns (over the trace's
	// commit_result; {} is an empty result).
	CommitResult map[string]any `json:"commit_result"`
}

// over returns b with every field o sets taken from o (a tool_call's backend over its
// tool's).
func (b backend) over(o backend) backend {
	if o.PrepareMS != nil {
		b.PrepareMS = o.PrepareMS
	}
	if o.Commit != "" {
		b.Commit, b.ResolvesAfterMS, b.ResolvesTo = o.Commit, o.ResolvesAfterMS, o.ResolvesTo
	}
	if o.CommitMS != nil {
		b.CommitMS = o.CommitMS
	}
	if len(o.ResultMS) > 0 {
		b.ResultMS = o.ResultMS
	}
	if o.Result != nil {
		b.Result = o.Result
	}
	if o.ProgressMS != nil {
		b.ProgressMS = o.ProgressMS
	}
	if o.CommitResult != nil {
		b.CommitResult = o.CommitResult
	}
	return b
}

// check validates one backend entry, named for errors ("backend.TOOL").
func (b backend) check(name string) error {
	if b.PrepareMS != nil && (*b.PrepareMS < 0 || *b.PrepareMS > MaxPrepareMS) {
		return fmt.Errorf("%s.prepare_ms: %d is outside 0..%d", name, *b.PrepareMS, MaxPrepareMS)
	}
	if b.CommitMS != nil && (*b.CommitMS < 0 || *b.CommitMS > MaxPrepareMS) {
		return fmt.Errorf("%s.commit_ms: %d is outside 0..%d", name, *b.CommitMS, MaxPrepareMS)
	}
	switch b.Commit {
	case "", "ok", "fail":
		if b.ResolvesAfterMS != nil || b.ResolvesTo != "" {
			return fmt.Errorf("%s: resolves_after_ms and resolves_to apply only to commit: unknown", name)
		}
	case "unknown":
		switch b.ResolvesTo {
		case "", "committed", "failed":
		default:
			return fmt.Errorf("%s.resolves_to: %q is not committed or failed", name, b.ResolvesTo)
		}
		if (b.ResolvesAfterMS == nil) != (b.ResolvesTo == "") {
			return fmt.Errorf("%s: resolves_after_ms and resolves_to go together (leave both out for an outcome that never becomes known)", name)
		}
		if b.ResolvesAfterMS != nil && (*b.ResolvesAfterMS < 0 || *b.ResolvesAfterMS > MaxPrepareMS) {
			return fmt.Errorf("%s.resolves_after_ms: %d is outside 0..%d", name, *b.ResolvesAfterMS, MaxPrepareMS)
		}
	default:
		return fmt.Errorf("%s.commit: %q is not ok, fail or unknown", name, b.Commit)
	}
	if _, err := structpb.NewStruct(b.Result); err != nil {
		return fmt.Errorf("%s.result: %v", name, err)
	}
	if _, err := structpb.NewStruct(b.CommitResult); err != nil {
		return fmt.Errorf("%s.commit_result: %v", name, err)
	}
	for i, ms := range b.ProgressMS {
		if ms < 0 || ms > MaxPrepareMS || (i > 0 && ms <= b.ProgressMS[i-1]) {
			return fmt.Errorf("%s.progress_ms[%d]: %d is not increasing within 0..%d", name, i, ms, MaxPrepareMS)
		}
	}
	if len(b.ResultMS) > 0 && string(b.ResultMS) != "null" {
		if v, err := strconv.ParseInt(string(b.ResultMS), 10, 64); err != nil || v < 0 || v > MaxPrepareMS {
			return fmt.Errorf("%s.result_ms: %s is not null or an integer in 0..%d", name, b.ResultMS, MaxPrepareMS)
		}
	}
	return nil
}

// parseBackend reads one backend entry (a tool's, or a tool_call's) and checks it.
func parseBackend(name string, raw []byte) (backend, error) {
	var b backend
	if err := json.Unmarshal(raw, &b); err != nil {
		return b, fmt.Errorf("%s: %v", name, err)
	}
	return b, b.check(name)
}

type job struct {
	id, callID, key, tool string
	sideEffect            bool
	prepared              bool
	prepareAt             time.Time
	decided               bool
	// done is set once a read-only job's result was reported.
	done bool
	// b is the fake backend's behaviour for this job: its tool's, with the opening
	// tool_call's backend over it.
	b backend
}

// step kinds of the fake backend.
const (
	stepPrepared  = iota // a side-effecting job's prepare finished
	stepResult           // a read-only job's result arrived
	stepResolved         // the backend learned the real outcome of an unknown commit
	stepProgress         // a read-only job still running reported progress
	stepCommitted        // a commit's outcome is reported (commit_ms after its COMMIT)
)

type pending struct {
	at   time.Time
	job  *job
	kind int
	// n is the progress report's number (1-based), for stepProgress.
	n int
}

type runner struct {
	ctx    context.Context
	c      arbiterv1.ArbiterServiceClient
	clock  Timebase
	opt    Options
	res    *Result
	out    io.Writer
	events []TraceEvent

	prepareMS    int64
	commitResult map[string]any
	backends     map[string]backend
	jobs         map[string]*job
	order        []*job
	queue        []pending
	answered     map[string]map[string]any
	skipped      map[string]bool
	calls        map[string]bool
	callOrder    []string
	commitsByKey map[string]int
	refs         map[string]TraceEvent
	commitN      int
	closed       bool
	started      bool // an RPC has created the session
	// observed is when the agent observed the event being applied (its t_ms): each
	// event goes out with its age (see age).
	observed   time.Time
	closeSkips int // ids first marked dead by CloseSession
}

// Run replays one parsed trace against the arbiter behind c, on clock, writing output
// lines as JSON to out (nil: nowhere). It returns the result; an error means the
// replay itself could not go on (an RPC failed, the trace uses a feature this replay
// does not support, or the arbiter changed an answer it had given).
func Run(ctx context.Context, c arbiterv1.ArbiterServiceClient, clock Timebase, events []TraceEvent, opt Options, out io.Writer) (*Result, error) {
	r := &runner{
		ctx: ctx, c: c, clock: clock, opt: opt, res: &Result{}, out: out, events: events,
		prepareMS: DefaultPrepareMS, backends: map[string]backend{}, jobs: map[string]*job{},
		answered: map[string]map[string]any{}, skipped: map[string]bool{}, calls: map[string]bool{},
		commitsByKey: map[string]int{}, refs: map[string]TraceEvent{},
	}
	if err := r.run(); err != nil {
		return r.res, err
	}
	return r.res, nil
}

func (r *runner) at(ms int64) time.Time { return r.opt.Start.Add(time.Duration(ms) * time.Millisecond) }
func (r *runner) ms(t time.Time) int64  { return t.Sub(r.opt.Start).Milliseconds() }

func (r *runner) emit(l Line) {
	r.res.Lines = append(r.res.Lines, l)
	if r.out != nil {
		b, _ := json.Marshal(l)
		fmt.Fprintf(r.out, "%s\n", b)
	}
}

func (r *runner) nowMS() *int64 { v := r.ms(r.clock.Now()); return &v }

func (r *runner) run() error {
	for _, ev := range r.events {
		if ev.Event == "ref_decision" {
			r.refs[ev.CallID] = ev
		}
	}
	for _, ev := range r.events {
		if len(ev.Event) > 4 && ev.Event[:4] == "ref_" {
			continue
		}
		if r.closed {
			break
		}
		if err := r.fireUntil(r.at(ev.TMs)); err != nil {
			return err
		}
		r.clock.AdvanceTo(r.at(ev.TMs))
		r.observed = r.at(ev.TMs)
		if err := r.apply(ev); err != nil {
			return fmt.Errorf("line %d (%s): %w", ev.Line, ev.Event, err)
		}
		if err := r.poll(); err != nil {
			return err
		}
	}
	if !r.closed {
		// No `end`: let every timer and backend step run out, then close.
		last := r.clock.Now()
		if err := r.fireUntil(last.Add(5 * time.Minute)); err != nil {
			return err
		}
		if err := r.close(); err != nil {
			return err
		}
	}
	r.summarize()
	return nil
}

// fireUntil runs backend steps and arbiter timers due at or before t, in time order.
func (r *runner) fireUntil(t time.Time) error {
	for guard := 0; guard < 10000; guard++ {
		next, isTimer, ok, err := r.nextDue()
		if err != nil {
			return err
		}
		if !ok || next.After(t) {
			return nil
		}
		if next.After(r.clock.Now()) {
			r.clock.AdvanceTo(next)
		}
		if !isTimer {
			p := r.queue[0]
			r.queue = r.queue[1:]
			if err := r.backendStep(p); err != nil {
				return err
			}
		} else {
			// A timer came due: collect what it answered (deadlines), as an agent
			// polling at next_timer would.
			resp, err := r.c.Poll(r.ctx, &arbiterv1.PollRequest{SessionId: r.opt.SessionID})
			if err != nil {
				return fmt.Errorf("Poll: %w", err)
			}
			if err := r.effects(resp.GetEffects()); err != nil {
				return err
			}
		}
		if err := r.poll(); err != nil {
			return err
		}
	}
	return fmt.Errorf("replay: timers did not settle (more than 10000 steps)")
}

// nextDue returns the earliest of the next backend step and the arbiter's next timer.
func (r *runner) nextDue() (time.Time, bool, bool, error) {
	var next time.Time
	ok, isTimer := false, false
	if len(r.queue) > 0 {
		next, ok = r.queue[0].at, true
	}
	if len(r.callOrder) == 0 {
		return next, false, ok, nil // no session yet
	}
	gs, err := r.c.GetSession(r.ctx, &arbiterv1.GetSessionRequest{SessionId: r.opt.SessionID})
	if err != nil {
		return next, false, false, fmt.Errorf("GetSession: %w", err)
	}
	if gs.NextTimer != nil {
		due := gs.NextTimer.AsTime()
		if due.Before(r.clock.Now()) {
			due = r.clock.Now()
		}
		if !ok || due.Before(next) {
			next, isTimer, ok = due, true, true
		}
	}
	return next, isTimer, ok, nil
}

func (r *runner) schedule(p pending) {
	r.queue = append(r.queue, p)
	sort.SliceStable(r.queue, func(a, b int) bool { return r.queue[a].at.Before(r.queue[b].at) })
}

func (r *runner) apply(ev TraceEvent) error {
	switch ev.Event {
	case "session_start", "end":
	default:
		r.started = true // every other event reaches the arbiter and creates the session
	}
	switch ev.Event {
	case "session_start":
		return r.sessionStart(ev)
	case "connection":
		resp, err := r.c.Connect(r.ctx, &arbiterv1.ConnectRequest{SessionId: r.opt.SessionID, ConnectionId: ev.ID})
		if err != nil {
			return fmt.Errorf("Connect: %w", err)
		}
		return r.effects(resp.GetEffects())
	case "speech_start":
		return r.speech(arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START, ev.Utterance)
	case "speech_end":
		return r.speech(arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END, ev.Utterance)
	case "interrupted":
		return r.speech(arbiterv1.SpeechEvent_SPEECH_EVENT_INTERRUPTED, "")
	case "model_audio_start":
		return r.speech(arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START, "")
	case "generation_complete":
		return r.speech(arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_GENERATION_COMPLETE, "")
	case "turn_complete":
		return r.speech(arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_TURN_COMPLETE, "")
	case "transcript", "model_transcript":
		role := arbiterv1.Role_ROLE_USER
		if ev.Event == "model_transcript" {
			role = arbiterv1.Role_ROLE_MODEL
		}
		if role == arbiterv1.Role_ROLE_USER && len(ev.Text) == 0 {
			return nil // nothing said
		}
		req := &arbiterv1.ReportTranscriptRequest{
			SessionId: r.opt.SessionID, Role: role, Text: ev.Text, Interim: ev.Final != nil && !*ev.Final,
			UtteranceId: ev.Utterance, Age: r.age(),
		}
		if rd := ev.Reading; rd != nil {
			req.Reading = &arbiterv1.AgentReading{Intent: rd.Intent, Confidence: rd.Confidence, Source: rd.Source}
		}
		resp, err := r.c.ReportTranscript(r.ctx, req)
		if err != nil {
			return fmt.Errorf("ReportTranscript: %w", err)
		}
		return r.effects(resp.GetEffects())
	case "tool_call":
		return r.toolCall(ev)
	case "tool_call_cancellation":
		resp, err := r.c.ReportToolCallCancellation(r.ctx, &arbiterv1.ReportToolCallCancellationRequest{
			SessionId: r.opt.SessionID, CallIds: ev.CallIDs, Reason: cancellationReasons[ev.Reason], Age: r.age(),
		})
		if err != nil {
			return fmt.Errorf("ReportToolCallCancellation: %w", err)
		}
		return r.effects(resp.GetEffects())
	case "end":
		return r.close()
	}
	return nil
}

func (r *runner) sessionStart(ev TraceEvent) error {
	if ev.PrepareMS != nil {
		if *ev.PrepareMS < 0 || *ev.PrepareMS > MaxPrepareMS {
			return fmt.Errorf("prepare_ms: %d is outside 0..%d", *ev.PrepareMS, MaxPrepareMS)
		}
		r.prepareMS = *ev.PrepareMS
	}
	if ev.CommitResult != nil {
		r.commitResult = ev.CommitResult
	}
	if ev.ResponseScheduling != nil || ev.Language != "" || ev.TimeZone != "" {
		// One call sets them all (ConfigureSession): response_scheduling left out is false.
		if _, err := r.c.ConfigureSession(r.ctx, &arbiterv1.ConfigureSessionRequest{
			SessionId: r.opt.SessionID, ResponseScheduling: ev.ResponseScheduling != nil && *ev.ResponseScheduling,
			Language: ev.Language, TimeZone: ev.TimeZone,
		}); err != nil {
			return fmt.Errorf("ConfigureSession: %w", err)
		}
	}
	for tool, raw := range ev.Backend {
		b, err := parseBackend("backend."+tool, raw)
		if err != nil {
			return err
		}
		r.backends[tool] = b
	}
	return nil
}

// age is how long ago the event being applied was observed, as an agent reports it:
// 0 on a virtual clock; against a real-time target, how late the request leaves. The
// arbiter then places the event at its t_ms, however late it lands.
func (r *runner) age() *durationpb.Duration {
	return durationpb.New(max(0, r.clock.Now().Sub(r.observed)))
}

func (r *runner) speech(e arbiterv1.SpeechEvent, utterance string) error {
	resp, err := r.c.ReportSpeech(r.ctx, &arbiterv1.ReportSpeechRequest{SessionId: r.opt.SessionID, Event: e, UtteranceId: utterance, Age: r.age()})
	if err != nil {
		return fmt.Errorf("ReportSpeech: %w", err)
	}
	return r.effects(resp.GetEffects())
}

// toolCall registers a tool_call event's call, starts the fake backend's work on the
// job it opened, if any, and hands out the effects; a read-only result due at once
// is reported before the next event.
func (r *runner) toolCall(ev TraceEvent) error {
	resp, err := r.register(ev)
	if err != nil {
		return err
	}
	disp := dispositions[resp.Disposition]
	if disp == "" {
		return fmt.Errorf("RegisterCall(%s): disposition %v is not supported by this replay", resp.CallId, resp.Disposition)
	}
	r.emit(Line{Out: "call", TMs: r.nowMS(), CallID: resp.CallId, Disposition: disp, JobID: resp.JobId, RunID: resp.RunId})
	if resp.Disposition == arbiterv1.Disposition_DISPOSITION_EXECUTE && r.jobs[resp.JobId] == nil {
		if err := r.startJob(resp, ev); err != nil {
			return err
		}
	}
	if err := r.effects(resp.GetEffects()); err != nil {
		return err
	}
	return r.dueResults()
}

// dispositions names RegisterCall's dispositions in `call` lines; one missing here is
// not supported by this replay.
var dispositions = map[arbiterv1.Disposition]string{
	arbiterv1.Disposition_DISPOSITION_EXECUTE:   "execute",
	arbiterv1.Disposition_DISPOSITION_DUPLICATE: "duplicate",
	arbiterv1.Disposition_DISPOSITION_REJECT:    "reject",
	arbiterv1.Disposition_DISPOSITION_RUN:       "run",
}

// register sends the event's RegisterCall and notes the call id (in the order first
// seen) for the summary.
func (r *runner) register(ev TraceEvent) (*arbiterv1.RegisterCallResponse, error) {
	args, err := structpb.NewStruct(ev.Args)
	if err != nil {
		return nil, fmt.Errorf("args: %v", err)
	}
	req := &arbiterv1.RegisterCallRequest{SessionId: r.opt.SessionID, CallId: ev.CallID, Tool: ev.Tool, Args: args, RawArgs: ev.RawArgs,
		BusinessKey: ev.BusinessKey, Age: r.age()}
	switch ev.Behavior {
	case "BLOCKING":
		req.Behavior = arbiterv1.Behavior_BEHAVIOR_BLOCKING
	case "NON_BLOCKING":
		req.Behavior = arbiterv1.Behavior_BEHAVIOR_NON_BLOCKING
	}
	if ev.ToolChoice == "none" {
		req.ToolChoice = arbiterv1.ToolChoice_TOOL_CHOICE_NONE
	}
	resp, err := r.c.RegisterCall(r.ctx, req)
	if err != nil {
		return nil, fmt.Errorf("RegisterCall: %w", err)
	}
	if !r.calls[resp.CallId] {
		r.calls[resp.CallId] = true
		r.callOrder = append(r.callOrder, resp.CallId)
	}
	return resp, nil
}

// startJob starts the fake backend on the job a call (ev) opened: a side-effecting
// job's prepare, or a read-only job's result and progress reports. The job runs
// job_tool: the call's own tool, or the run's tool for a confirmation call that
// confirmed its run; its backend is that tool's with the call's backend over it.
func (r *runner) startJob(resp *arbiterv1.RegisterCallResponse, ev TraceEvent) error {
	tool := resp.JobTool
	if tool == "" {
		tool = ev.Tool
	}
	j := &job{id: resp.JobId, callID: resp.CallId, key: resp.BusinessKey, tool: tool, sideEffect: resp.SideEffect, b: r.backends[tool]}
	if ev.Backend != nil {
		raw, _ := json.Marshal(ev.Backend)
		over, err := parseBackend("backend", raw)
		if err != nil {
			return err
		}
		j.b = j.b.over(over)
	}
	r.jobs[j.id] = j
	r.order = append(r.order, j)
	if j.sideEffect {
		r.schedulePrepare(j)
		return nil
	}
	return r.scheduleReadOnly(j)
}

// schedulePrepare schedules the end of a side-effecting job's prepare: --prepare-ms,
// else the tool's backend prepare_ms, else the trace's.
func (r *runner) schedulePrepare(j *job) {
	p := r.prepareMS
	if b := j.b; b.PrepareMS != nil {
		p = *b.PrepareMS
	}
	if r.opt.PrepareMS != nil {
		p = *r.opt.PrepareMS
	}
	j.prepareAt = r.clock.Now().Add(time.Duration(p) * time.Millisecond)
	r.schedule(pending{at: j.prepareAt, job: j, kind: stepPrepared})
}

// scheduleReadOnly schedules a read-only job's result (result_ms after now, never
// when null) and its progress reports (progress_ms).
func (r *runner) scheduleReadOnly(j *job) error {
	b := j.b
	var resultMS int64
	if len(b.ResultMS) > 0 {
		if string(b.ResultMS) == "null" {
			resultMS = -1 // its result never comes
		} else {
			var err error
			if resultMS, err = strconv.ParseInt(string(b.ResultMS), 10, 64); err != nil {
				return fmt.Errorf("backend.%s.result_ms: %s is not an integer or null", j.tool, b.ResultMS)
			}
		}
	}
	if resultMS >= 0 {
		r.schedule(pending{at: r.clock.Now().Add(time.Duration(resultMS) * time.Millisecond), job: j, kind: stepResult})
	}
	for i, ms := range b.ProgressMS {
		r.schedule(pending{at: r.clock.Now().Add(time.Duration(ms) * time.Millisecond), job: j, kind: stepProgress, n: i + 1})
	}
	return nil
}

// dueResults reports the read-only results due by now, so a call answered at once is
// answered before the next event.
func (r *runner) dueResults() error {
	for len(r.queue) > 0 && r.queue[0].kind == stepResult && !r.queue[0].at.After(r.clock.Now()) {
		p := r.queue[0]
		r.queue = r.queue[1:]
		if err := r.backendStep(p); err != nil {
			return err
		}
	}
	return nil
}

// backendStep runs one scheduled backend step: a prepare finishing, a read-only
// result arriving (late ones too: after the call's max_pending deadline answered it,
// the result goes out as a note), or an unknown commit's real outcome becoming known.
func (r *runner) backendStep(p pending) error {
	j := p.job
	if p.kind == stepResolved {
		return r.resolve(j)
	}
	if p.kind == stepCommitted {
		return r.completeCommit(j)
	}
	if p.kind == stepProgress {
		if j.done {
			return nil // the result came first: nothing is still running
		}
		n := len(j.b.ProgressMS)
		resp, err := r.c.ReportProgress(r.ctx, &arbiterv1.ReportProgressRequest{
			SessionId: r.opt.SessionID, JobId: j.id, Result: mustStruct(map[string]any{"progress": fmt.Sprintf("%d/%d", p.n, n)}),
		})
		if err != nil {
			return fmt.Errorf("ReportProgress: %w", err)
		}
		return r.effects(resp.GetEffects())
	}
	if p.kind == stepResult {
		j.done = true
		result := j.b.Result
		if result == nil {
			result = map[string]any{"status": "ok"}
		}
		resp, err := r.c.Complete(r.ctx, &arbiterv1.CompleteRequest{
			SessionId: r.opt.SessionID, JobId: j.id, Outcome: arbiterv1.Outcome_OUTCOME_RESULT,
			Result: mustStruct(result),
		})
		if err != nil {
			return fmt.Errorf("Complete(result): %w", err)
		}
		return r.effects(resp.GetEffects())
	}
	if j.decided {
		return nil // cancelled during prepare: the prepare was aborted
	}
	j.prepared = true
	return r.decide(j)
}

// poll asks Decide (wait 0) for every undecided job, as the agent's long-polls would
// return at this instant.
func (r *runner) poll() error {
	for _, j := range r.order {
		if j.sideEffect && !j.decided {
			if err := r.decide(j); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *runner) decide(j *job) error {
	resp, err := r.c.Decide(r.ctx, &arbiterv1.DecideRequest{
		SessionId: r.opt.SessionID, JobId: j.id, Prepared: j.prepared, Wait: durationpb.New(0),
	})
	if err != nil {
		return fmt.Errorf("Decide(%s): %w", j.id, err)
	}
	var d string
	switch resp.Decision {
	case arbiterv1.Decision_DECISION_COMMIT:
		d = "commit"
	case arbiterv1.Decision_DECISION_CANCEL:
		d = "cancel"
	default:
		return nil
	}
	j.decided = true
	tms := r.ms(resp.DecidedAt.AsTime())
	r.emit(Line{Out: "decision", TMs: &tms, JobID: j.id, CallID: j.callID, Decision: d, Reason: resp.Reason})
	dec := Decision{TMs: tms, JobID: j.id, CallID: j.callID, Decision: d, Reason: resp.Reason, RefTMs: -1}
	if ref, ok := r.refs[j.callID]; ok {
		dec.RefTMs, dec.RefDecision = ref.TMs, ref.Decision
	}
	r.res.Decisions = append(r.res.Decisions, dec)
	if d == "commit" {
		if ms := j.b.CommitMS; ms != nil && *ms > 0 {
			r.schedule(pending{at: r.clock.Now().Add(time.Duration(*ms) * time.Millisecond), job: j, kind: stepCommitted})
			return nil
		}
		return r.completeCommit(j)
	}
	r.emit(Line{Out: "cancel", TMs: r.nowMS(), JobID: j.id})
	r.res.Summary.Cancels++
	resp2, err := r.c.Complete(r.ctx, &arbiterv1.CompleteRequest{SessionId: r.opt.SessionID, JobId: j.id, Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED})
	if err != nil {
		return fmt.Errorf("Complete(%s): %w", j.id, err)
	}
	return r.effects(resp2.GetEffects())
}

// completeCommit runs a COMMIT on the fake backend (ok, fail or unknown, as its
// backend says) and reports the outcome with Complete.
func (r *runner) completeCommit(j *job) error {
	req := &arbiterv1.CompleteRequest{SessionId: r.opt.SessionID, JobId: j.id}
	b := j.b
	switch b.Commit {
	case "fail":
		// The commit was attempted and the backend refused it: not a commit anywhere.
		r.emit(Line{Out: "commit", TMs: r.nowMS(), JobID: j.id, Outcome: "failed"})
		req.Outcome, req.Error = arbiterv1.Outcome_OUTCOME_FAILED, "the backend refused the commit"
	case "unknown":
		// The commit timed out: whether it happened is not known (yet).
		r.emit(Line{Out: "commit", TMs: r.nowMS(), JobID: j.id, Outcome: "unknown"})
		req.Outcome = arbiterv1.Outcome_OUTCOME_UNKNOWN
		if b.ResolvesAfterMS != nil {
			r.schedule(pending{at: r.clock.Now().Add(time.Duration(*b.ResolvesAfterMS) * time.Millisecond), job: j, kind: stepResolved})
		}
	default:
		r.emit(Line{Out: "commit", TMs: r.nowMS(), JobID: j.id})
		req.Outcome, req.Result = arbiterv1.Outcome_OUTCOME_COMMITTED, mustStruct(r.committed(j))
	}
	resp, err := r.c.Complete(r.ctx, req)
	if err != nil {
		return fmt.Errorf("Complete(%s): %w", j.id, err)
	}
	return r.effects(resp.GetEffects())
}

// committed counts a commit that happened and returns the backend's result for it.
func (r *runner) committed(j *job) map[string]any {
	r.commitN++
	r.res.Summary.Commits++
	r.commitsByKey[j.key]++
	if r.commitsByKey[j.key] > 1 {
		r.res.Summary.DoubleCommits++
	}
	result := map[string]any{"reference": "R-" + strconv.Itoa(r.commitN)}
	src := r.commitResult
	if j.b.CommitResult != nil {
		src = j.b.CommitResult
	}
	if src != nil {
		result = map[string]any{}
		for k, v := range src {
			result[k] = v
		}
	}
	return result
}

// resolve reports the real outcome of a commit first reported unknown, as the backend
// learned it (resolves_to).
func (r *runner) resolve(j *job) error {
	req := &arbiterv1.CompleteRequest{SessionId: r.opt.SessionID, JobId: j.id}
	outcome := j.b.ResolvesTo
	if outcome == "committed" {
		req.Outcome, req.Result = arbiterv1.Outcome_OUTCOME_COMMITTED, mustStruct(r.committed(j))
	} else {
		req.Outcome, req.Error = arbiterv1.Outcome_OUTCOME_FAILED, "the backend reports the commit did not happen"
	}
	r.emit(Line{Out: "resolved", TMs: r.nowMS(), JobID: j.id, Outcome: outcome})
	resp, err := r.c.Complete(r.ctx, req)
	if err != nil {
		return fmt.Errorf("Complete(%s, resolved %s): %w", j.id, outcome, err)
	}
	return r.effects(resp.GetEffects())
}

// effects "sends" what the arbiter handed back: each call id answered at most once. A
// repeated answer must be identical (an idempotent retry), or the replay fails.
func (r *runner) effects(e *arbiterv1.Effects) error {
	for _, resp := range e.GetResponses() {
		p := resp.GetPayload().AsMap()
		if resp.Interim {
			// A progress update: sent with will_continue; it answers nothing.
			if _, ok := r.answered[resp.CallId]; ok || r.skipped[resp.CallId] {
				return fmt.Errorf("call %s got an interim response after its final one or after it was marked dead", resp.CallId)
			}
			no := false
			r.emit(Line{Out: "response", TMs: r.nowMS(), CallID: resp.CallId, Payload: p, Final: &no})
			continue
		}
		if prev, ok := r.answered[resp.CallId]; ok {
			if !reflect.DeepEqual(prev, p) {
				return fmt.Errorf("call %s answered twice, differently: %v then %v", resp.CallId, prev, p)
			}
			continue
		}
		if r.skipped[resp.CallId] {
			return fmt.Errorf("call %s answered after it was marked dead", resp.CallId)
		}
		r.answered[resp.CallId] = p
		r.emit(Line{Out: "response", TMs: r.nowMS(), CallID: resp.CallId, Payload: p})
	}
	for _, sk := range e.GetSkips() {
		if r.skipped[sk.CallId] {
			continue
		}
		if _, ok := r.answered[sk.CallId]; ok {
			return fmt.Errorf("call %s marked dead after it was answered", sk.CallId)
		}
		r.skipped[sk.CallId] = true
		if r.closed {
			r.closeSkips++ // already counted as unanswered
		}
		r.emit(Line{Out: "skip", TMs: r.nowMS(), CallID: sk.CallId, Reason: sk.Reason})
	}
	for _, u := range e.GetRuns() {
		r.emit(Line{Out: "run", TMs: r.nowMS(), RunID: u.RunId, CallID: u.CallId, State: runState(u.State), JobID: u.JobId, Reason: u.Reason})
	}
	for _, n := range e.GetNotes() {
		d := "now"
		if n.Deliver == arbiterv1.Delivery_DELIVERY_WHEN_IDLE {
			d = "when_idle"
		}
		r.res.Notes++
		r.emit(Line{Out: "note", TMs: r.nowMS(), RunID: n.RunId, JobID: n.JobId, Text: n.Text, Deliver: d})
	}
	return nil
}

func (r *runner) close() error {
	r.closed = true
	for _, id := range r.callOrder {
		if _, ok := r.answered[id]; !ok && !r.skipped[id] {
			r.res.Summary.Unanswered = append(r.res.Summary.Unanswered, id)
		}
	}
	if !r.started {
		return nil // nothing ever reached the arbiter: there is no session to close
	}
	resp, err := r.c.CloseSession(r.ctx, &arbiterv1.CloseSessionRequest{SessionId: r.opt.SessionID})
	if err != nil {
		return fmt.Errorf("CloseSession: %w", err)
	}
	if err := r.effects(resp.GetEffects()); err != nil {
		return err
	}
	// Jobs decided at close (cancelled, fail closed) are released by the backend.
	return r.poll()
}

func (r *runner) summarize() {
	s := &r.res.Summary
	s.Out = "summary"
	s.Calls = len(r.callOrder)
	s.Answered = len(r.answered)
	s.Skipped = len(r.skipped) - r.closeSkips // ids dead only because the session closed are unanswered
	if s.Unanswered == nil {
		s.Unanswered = []string{}
	}
	if r.out != nil {
		b, _ := json.Marshal(s)
		fmt.Fprintf(r.out, "%s\n", b)
	}
}

// cancellationReasons are a tool_call_cancellation's reasons (absent: withdrawn).
var cancellationReasons = map[string]arbiterv1.CancellationReason{
	"":                 arbiterv1.CancellationReason_CANCELLATION_REASON_UNSPECIFIED,
	"withdrawn":        arbiterv1.CancellationReason_CANCELLATION_REASON_WITHDRAWN,
	"provider_timeout": arbiterv1.CancellationReason_CANCELLATION_REASON_PROVIDER_TIMEOUT,
}

// runState is a run state's name in output lines ("opened", "confirmed", ...).
func runState(s arbiterv1.RunState) string {
	if name, ok := arbiterv1.RunState_name[int32(s)]; ok && s != arbiterv1.RunState_RUN_STATE_UNSPECIFIED {
		return strings.ToLower(strings.TrimPrefix(name, "RUN_STATE_"))
	}
	return fmt.Sprintf("state_%d", s)
}

func mustStruct(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return s
}
