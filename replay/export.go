package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// ErrIncomplete is returned by Export for a history that does not hold every input
// since its session started (see arbiterv1.GetHistoryResponse.complete).
var ErrIncomplete = errors.New("the history does not hold every input of the session")

// ExportOptions configure Export.
type ExportOptions struct {
	// Partial exports a history that is not complete (dropped or clipped entries, or
	// kept only from some point on) instead of failing with ErrIncomplete: the trace
	// then starts where the history does and may not replay as the session ran.
	Partial bool
}

// Export writes a session's history (GetHistory) as a trace (docs/trace-format.md)
// to w, one JSON object a line, so the session replays locally: the agent's inputs as
// trace events at the times the agent observed them, the agent's own actions as the
// fake backend's behaviour (per job, on the tool_call that opened it: how long its
// prepare took, whether its commit went ok, failed or was unknown and what it became,
// a read-only result and when it came, its progress reports), and the arbiter's own
// outcomes as ref_call, ref_decision, ref_response, ref_skip, ref_note and ref_run
// lines, which a replay does not play (`arbiter replay --diff` compares against
// them). session_start carries the policy the session's tools ran under (`tools`),
// the server's policy digest, the language and response scheduling.
//
// What a trace cannot say goes to warn, one line each, and the export goes on: a
// ConfigureSession after the session began (the trace configures once, at its
// start), a read-only call that failed or a job that failed before a commit was
// decided (the fake backend fails only commits), a policy the server changed since
// the session began. Times are shifted so the first input is at t_ms 0 or later.
//
// Errors: ErrIncomplete (wrapped, saying why) unless opt.Partial; w's.
func Export(h *arbiterv1.GetHistoryResponse, w io.Writer, warn io.Writer, opt ExportOptions) error {
	if warn == nil {
		warn = io.Discard
	}
	if !h.GetComplete() {
		why := "its first entries are missing"
		switch {
		case h.GetDropped() > 0:
			why = fmt.Sprintf("%d entries were dropped to keep it within %d bytes", h.GetDropped(), h.GetMaxBytes())
		case hasClipped(h):
			why = "an entry was larger than its bound and was clipped"
		}
		if !opt.Partial {
			return fmt.Errorf("session %q: %w: %s. Record the session to export it whole (ConfigureSession record, or serve --history-sample), or export what there is with --partial", h.GetSessionId(), ErrIncomplete, why)
		}
		fmt.Fprintf(warn, "warning: session %q: %v: %s; the trace may not replay as the session ran\n", h.GetSessionId(), ErrIncomplete, why)
	}
	x := &exporter{h: h, warn: warn, jobs: map[string]*exportJob{}}
	x.walk()
	return x.write(w)
}

func hasClipped(h *arbiterv1.GetHistoryResponse) bool {
	for _, e := range h.GetEntries() {
		if e.GetClipped() {
			return true
		}
	}
	return false
}

// exportJob is what the history says of one job, for its backend.
type exportJob struct {
	opener     *traceLine // the tool_call that opened it
	t0         int64      // when it was opened
	sideEffect bool
	prepared   *int64
	commitDue  bool  // a commit was decided
	commitAt   int64 // when the (last) commit was decided
	completes  []*arbiterv1.HistoryComplete
	completeAt []int64
	progress   []int64
}

// traceLine is one line of the trace being written, with its place in the history.
type traceLine struct {
	t     int64
	order int
	m     map[string]any
}

type exporter struct {
	h     *arbiterv1.GetHistoryResponse
	warn  io.Writer
	lines []*traceLine
	jobs  map[string]*exportJob
	start map[string]any
	// configured: a ConfigureSession was turned into session_start; inputs: an input
	// was written.
	configured, inputs bool
	end                bool
}

func (x *exporter) add(t int64, event string, fields map[string]any) *traceLine {
	fields["event"] = event
	l := &traceLine{t: t, order: len(x.lines), m: fields}
	x.lines = append(x.lines, l)
	return l
}

// input adds a line for an input at t and notes that the session has begun.
func (x *exporter) input(t int64, event string, fields map[string]any) *traceLine {
	x.inputs = true
	return x.add(t, event, fields)
}

func (x *exporter) walk() {
	x.start = map[string]any{"exported_from": x.h.GetSessionId()}
	if d := x.h.GetPolicyDigest(); d != "" {
		x.start["policy_digest"] = d
	}
	if p := x.h.GetPolicy(); p != nil {
		x.start["tools"] = p.AsMap()
	}
	if a, b := x.h.GetPolicyDigest(), x.h.GetServerPolicyDigest(); a != "" && b != "" && a != b {
		fmt.Fprintf(x.warn, "warning: the session began under policy %s; the server now runs %s, whose tools are the trace's\n", a, b)
	}
	opener := map[string]string{} // job id -> opening call id
	// commits: when each standing commit decision was made; answered: the jobs whose
	// COMMIT a Decide handed out (it stands: see lateInput).
	commits, answered := map[string]int64{}, map[string]bool{}
	for _, e := range x.h.GetEntries() {
		t := e.GetTMs()
		if e.ObservedMs != nil {
			t = lateInput(e.GetObservedMs(), commits, answered)
		}
		switch v := e.Entry.(type) {
		case *arbiterv1.HistoryEntry_Call:
			x.call(t, v.Call, opener)
		case *arbiterv1.HistoryEntry_Speech:
			f := map[string]any{}
			if id := v.Speech.GetUtteranceId(); id != "" {
				f["utterance"] = id
			}
			if name := speechEvents[v.Speech.GetEvent()]; name != "" {
				x.input(t, name, f)
			}
		case *arbiterv1.HistoryEntry_Transcript:
			tr := v.Transcript
			f := map[string]any{"text": tr.GetText()}
			if tr.GetInterim() {
				f["final"] = false
			}
			if id := tr.GetUtteranceId(); id != "" {
				f["utterance"] = id
			}
			if r := tr.GetReading(); r != nil {
				rf := map[string]any{"intent": r.GetIntent(), "confidence": r.GetConfidence()}
				if r.GetSource() != "" {
					rf["source"] = r.GetSource()
				}
				f["reading"] = rf
			}
			ev := "transcript"
			if tr.GetRole() == arbiterv1.Role_ROLE_MODEL {
				ev = "model_transcript"
			}
			x.input(t, ev, f)
		case *arbiterv1.HistoryEntry_Withdraw:
			f := map[string]any{"call_ids": v.Withdraw.GetCallIds()}
			if v.Withdraw.GetReason() == arbiterv1.CancellationReason_CANCELLATION_REASON_PROVIDER_TIMEOUT {
				f["reason"] = "provider_timeout"
			}
			x.input(t, "tool_call_cancellation", f)
		case *arbiterv1.HistoryEntry_Prepared:
			if j := x.jobs[v.Prepared.GetJobId()]; j != nil && j.prepared == nil {
				j.prepared = &t
			}
		case *arbiterv1.HistoryEntry_Complete:
			if j := x.jobs[v.Complete.GetJobId()]; j != nil {
				j.completes = append(j.completes, v.Complete)
				j.completeAt = append(j.completeAt, t)
			}
		case *arbiterv1.HistoryEntry_Progress:
			if j := x.jobs[v.Progress.GetJobId()]; j != nil {
				j.progress = append(j.progress, t)
			}
		case *arbiterv1.HistoryEntry_Configure:
			x.configure(t, v.Configure)
		case *arbiterv1.HistoryEntry_Connect:
			x.input(t, "connection", map[string]any{"id": v.Connect.GetConnectionId()})
		case *arbiterv1.HistoryEntry_Close:
			x.input(t, "end", map[string]any{})
			x.end = true
		case *arbiterv1.HistoryEntry_Decision:
			d := v.Decision
			if j := x.jobs[d.GetJobId()]; j != nil && d.GetDecision() == arbiterv1.Decision_DECISION_COMMIT {
				j.commitDue, j.commitAt = true, t
			}
			if d.GetDecision() == arbiterv1.Decision_DECISION_COMMIT {
				commits[d.GetJobId()] = t
			}
			x.add(t, "ref_decision", map[string]any{"call_id": opener[d.GetJobId()], "job_id": d.GetJobId(),
				"decision": decisionName(d.GetDecision()), "reason": d.GetReason()})
		case *arbiterv1.HistoryEntry_Revoked:
			delete(commits, v.Revoked.GetJobId())
		case *arbiterv1.HistoryEntry_Answered:
			answered[v.Answered.GetJobId()] = true
		case *arbiterv1.HistoryEntry_Response:
			r := v.Response
			f := map[string]any{"call_id": r.GetCallId(), "payload": r.GetPayload().AsMap()}
			if r.GetInterim() {
				f["final"] = false
			}
			x.add(t, "ref_response", f)
		case *arbiterv1.HistoryEntry_Skip:
			x.add(t, "ref_skip", map[string]any{"call_id": v.Skip.GetCallId(), "reason": v.Skip.GetReason()})
		case *arbiterv1.HistoryEntry_Note:
			n := v.Note
			f := map[string]any{"text": n.GetText(), "deliver": deliveryName(n.GetDeliver())}
			if n.GetJobId() != "" {
				f["job_id"], f["call_id"] = n.GetJobId(), opener[n.GetJobId()]
			}
			if n.GetRunId() != "" {
				f["run_id"] = n.GetRunId()
			}
			x.add(t, "ref_note", f)
		case *arbiterv1.HistoryEntry_Run:
			u := v.Run
			f := map[string]any{"run_id": u.GetRunId(), "state": runState(u.GetState())}
			for k, s := range map[string]string{"call_id": u.GetCallId(), "job_id": u.GetJobId(), "reason": u.GetReason()} {
				if s != "" {
					f[k] = s
				}
			}
			x.add(t, "ref_run", f)
		}
	}
}

// lateInput is when the trace places an input the agent observed at observed: then,
// unless a COMMIT decided after that was already handed out when the input arrived
// (answered; commits holds the standing commit decisions so far). The live session
// applied such an input after that commit, which it had answered and which stood
// (arbiter.Engine.Step); the replay, which hands out each COMMIT when it is decided,
// must see the input after it too, so it is placed at the latest such commit's time
// (the replay fires timers due at an event's time before the event). Without it the
// replay would let the input, a stop say, cancel a commit the live session answered.
func lateInput(observed int64, commits map[string]int64, answered map[string]bool) int64 {
	t := observed
	for job, at := range commits {
		if answered[job] && at > t {
			t = at
		}
	}
	return t
}

// call adds a tool_call line and its ref_call, and notes the job it opened.
func (x *exporter) call(t int64, c *arbiterv1.HistoryCall, opener map[string]string) {
	f := map[string]any{"tool": c.GetTool()}
	if !c.GetMinted() {
		f["call_id"] = c.GetCallId()
	}
	switch {
	case c.GetRawArgs() != "":
		f["raw_args"] = c.GetRawArgs()
	case c.GetArgs() != nil:
		f["args"] = c.GetArgs().AsMap()
	default:
		f["args"] = map[string]any{}
	}
	switch c.GetBehavior() {
	case arbiterv1.Behavior_BEHAVIOR_BLOCKING:
		f["behavior"] = "BLOCKING"
	case arbiterv1.Behavior_BEHAVIOR_NON_BLOCKING:
		f["behavior"] = "NON_BLOCKING"
	}
	if c.GetToolChoice() == arbiterv1.ToolChoice_TOOL_CHOICE_NONE {
		f["tool_choice"] = "none"
	}
	if c.GetBusinessKey() != "" {
		f["business_key"] = c.GetBusinessKey()
	}
	l := x.input(t, "tool_call", f)
	ref := map[string]any{"call_id": c.GetCallId(), "disposition": dispositions[c.GetDisposition()]}
	if c.GetJobId() != "" {
		ref["job_id"] = c.GetJobId()
	}
	if c.GetRunId() != "" {
		ref["run_id"] = c.GetRunId()
	}
	x.add(t, "ref_call", ref)
	if c.GetDisposition() == arbiterv1.Disposition_DISPOSITION_EXECUTE && x.jobs[c.GetJobId()] == nil {
		x.jobs[c.GetJobId()] = &exportJob{opener: l, t0: t, sideEffect: c.GetSideEffect()}
		opener[c.GetJobId()] = c.GetCallId()
	}
}

// configure puts the first ConfigureSession into session_start; a later one that
// changes something cannot be said.
func (x *exporter) configure(t int64, c *arbiterv1.HistoryConfigure) {
	if !x.configured && !x.inputs {
		x.configured = true
		if c.GetLanguage() != "" {
			x.start["language"] = c.GetLanguage()
		}
		if c.GetTimeZone() != "" {
			x.start["time_zone"] = c.GetTimeZone()
		}
		if c.GetResponseScheduling() {
			x.start["response_scheduling"] = true
		}
		return
	}
	lang, _ := x.start["language"].(string)
	zone, _ := x.start["time_zone"].(string)
	sched, _ := x.start["response_scheduling"].(bool)
	if (c.GetLanguage() != "" && c.GetLanguage() != lang) || (c.GetTimeZone() != "" && c.GetTimeZone() != zone) || c.GetResponseScheduling() != sched {
		fmt.Fprintf(x.warn, "warning: t_ms %d: a ConfigureSession (language %q, time zone %q, response scheduling %v) after the session began: a trace configures at its start only, so it is left out\n",
			t, c.GetLanguage(), c.GetTimeZone(), c.GetResponseScheduling())
	}
}

// backends sets each opening tool_call's backend from what the agent did with its job.
func (x *exporter) backends() {
	ids := make([]string, 0, len(x.jobs))
	for id := range x.jobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		j := x.jobs[id]
		b := map[string]any{}
		if j.sideEffect {
			x.sideEffectBackend(id, j, b)
		} else {
			x.readOnlyBackend(id, j, b)
		}
		if len(b) > 0 {
			j.opener.m["backend"] = b
		}
	}
}

func (x *exporter) sideEffectBackend(id string, j *exportJob, b map[string]any) {
	if j.prepared != nil {
		b["prepare_ms"] = max(0, *j.prepared-j.t0)
	}
	if len(j.completes) == 0 {
		return
	}
	first := j.completes[0]
	if j.commitDue && first.GetOutcome() != arbiterv1.Outcome_OUTCOME_CANCELLED && j.completeAt[0] > j.commitAt {
		// The replay hands out a COMMIT when it is decided: its outcome comes as late
		// after that as the live one came (what the user said meanwhile goes into its
		// note as it did).
		b["commit_ms"] = j.completeAt[0] - j.commitAt
	}
	result := func(c *arbiterv1.HistoryComplete) map[string]any {
		x.omitted(id, c)
		if c.GetResult() == nil {
			return map[string]any{}
		}
		return c.GetResult().AsMap()
	}
	switch first.GetOutcome() {
	case arbiterv1.Outcome_OUTCOME_COMMITTED:
		b["commit_result"] = result(first)
	case arbiterv1.Outcome_OUTCOME_FAILED:
		if !j.commitDue {
			fmt.Fprintf(x.warn, "warning: job %s failed before a commit was decided (%q): the fake backend fails only commits; the replay plays it as decided\n", id, first.GetError())
			return
		}
		b["commit"] = "fail"
	case arbiterv1.Outcome_OUTCOME_UNKNOWN:
		b["commit"] = "unknown"
		if len(j.completes) > 1 {
			second := j.completes[1]
			b["resolves_after_ms"] = max(0, j.completeAt[1]-j.completeAt[0])
			if second.GetOutcome() == arbiterv1.Outcome_OUTCOME_COMMITTED {
				b["resolves_to"] = "committed"
				b["commit_result"] = result(second)
			} else {
				b["resolves_to"] = "failed"
			}
		}
	}
}

// omitted warns that a job's result was over its bound and left out (the session's
// responses said result_omitted): the trace has no result to replay in its place.
func (x *exporter) omitted(id string, c *arbiterv1.HistoryComplete) {
	if o := c.GetResultOmitted(); o != nil {
		fmt.Fprintf(x.warn, "warning: job %s: its result was left out (%v): the trace replays it as an empty result, so its responses differ\n", id, o.AsMap()["message"])
	}
}

func (x *exporter) readOnlyBackend(id string, j *exportJob, b map[string]any) {
	for _, p := range j.progress {
		ms, _ := b["progress_ms"].([]any)
		b["progress_ms"] = append(ms, max(0, p-j.t0))
	}
	if len(j.completes) == 0 {
		b["result_ms"] = nil // its result never came
		return
	}
	c := j.completes[0]
	b["result_ms"] = max(0, j.completeAt[0]-j.t0)
	if c.GetOutcome() == arbiterv1.Outcome_OUTCOME_FAILED {
		fmt.Fprintf(x.warn, "warning: read-only job %s failed (%q): the fake backend's read-only results do not fail; the replay reports a result\n", id, c.GetError())
	}
	x.omitted(id, c)
	if c.GetResult() != nil {
		b["result"] = c.GetResult().AsMap()
	} else {
		b["result"] = map[string]any{}
	}
}

// write writes session_start, then every line by time (in history order within a
// time), times shifted so none is negative.
func (x *exporter) write(w io.Writer) error {
	x.backends()
	shift := int64(0)
	for _, l := range x.lines {
		shift = max(shift, -l.t)
	}
	sort.SliceStable(x.lines, func(a, b int) bool { return x.lines[a].t < x.lines[b].t })
	x.start["event"], x.start["t_ms"] = "session_start", 0
	if c := x.h.GetCreatedAt(); c != nil {
		x.start["created_at"] = c.AsTime().Add(-time.Duration(shift) * time.Millisecond).UTC().Format(time.RFC3339Nano)
	}
	out := append([]*traceLine{{m: x.start}}, x.lines...)
	for i, l := range out {
		if i > 0 {
			l.m["t_ms"] = l.t + shift
		}
		b, err := marshalLine(l.m)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	}
	return nil
}

// marshalLine encodes a line with t_ms and event first, the other keys sorted.
func marshalLine(m map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "t_ms" && k != "event" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{")
	for i, k := range append([]string{"t_ms", "event"}, keys...) {
		if i > 0 {
			b.WriteString(", ")
		}
		kv, _ := json.Marshal(k)
		v, err := json.Marshal(m[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
		fmt.Fprintf(&b, "%s: %s", kv, v)
	}
	b.WriteString("}")
	return []byte(b.String()), nil
}

// speechEvents names the speech events in traces.
var speechEvents = map[arbiterv1.SpeechEvent]string{
	arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START:       "speech_start",
	arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END:         "speech_end",
	arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START:        "model_audio_start",
	arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_GENERATION_COMPLETE: "generation_complete",
	arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_TURN_COMPLETE:       "turn_complete",
	arbiterv1.SpeechEvent_SPEECH_EVENT_INTERRUPTED:               "interrupted",
}

func decisionName(d arbiterv1.Decision) string {
	switch d {
	case arbiterv1.Decision_DECISION_COMMIT:
		return "commit"
	case arbiterv1.Decision_DECISION_CANCEL:
		return "cancel"
	}
	return "pending"
}

func deliveryName(d arbiterv1.Delivery) string {
	if d == arbiterv1.Delivery_DELIVERY_WHEN_IDLE {
		return "when_idle"
	}
	return "now"
}
