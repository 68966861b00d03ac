package fakeprovider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/voicearbiter/arbiter/replay"
)

// Reference is one trace and what `arbiter replay` made of it under the tools policy
// the agent runs with.
type Reference struct {
	Trace Trace
	// Lines is the replay's output (its `out` lines) for sessions played over Gemini,
	// and over OpenAI unless OpenAI is set.
	Lines []replay.Line
	// OpenAI, when not nil, is the replay's output for the trace as an OpenAI session
	// sees it: OpenAI calls carry no behavior, so it is the replay of the trace with
	// every tool_call's behavior left to the policy (StripBehaviors).
	OpenAI []replay.Line
}

// StripBehaviors returns events with every tool_call's behavior removed (the policy
// decides it): what an OpenAI agent can tell the arbiter about the calls.
func StripBehaviors(events []replay.TraceEvent) []replay.TraceEvent {
	out := make([]replay.TraceEvent, len(events))
	copy(out, events)
	for i := range out {
		if out[i].Event == "tool_call" {
			out[i].Behavior = ""
		}
	}
	return out
}

// BackendLine is one line of an agent's backend log (docs/fake-provider.md): what the
// agent's fake or real backend did, as JSON lines {"out": "commit", "job_id": "job-1"}.
type BackendLine struct {
	// Out is execute, commit, cancel or abort_prepare (others are ignored).
	Out   string `json:"out"`
	JobID string `json:"job_id"`
	// CallID is the call that started the job (execute lines).
	CallID string `json:"call_id,omitempty"`
	// TMs is the agent's time, ms since its model session started; optional.
	TMs *int64 `json:"t_ms,omitempty"`
	// Trace names the session's trace; required when the log covers several sessions.
	Trace string `json:"trace,omitempty"`
	// Line is the line number in the log.
	Line int `json:"-"`
}

// ReadBackendLog parses a backend log. Lines that are not JSON objects with an `out`
// field (the agent's other output) are skipped; a line with out commit, cancel or
// abort_prepare and no job_id is an error naming the line.
func ReadBackendLog(r io.Reader, name string) ([]BackendLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var out []BackendLine
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] != '{' {
			continue
		}
		var l BackendLine
		if json.Unmarshal(b, &l) != nil || l.Out == "" {
			continue
		}
		l.Line, l.JobID = n, jobKey(l.JobID)
		if isDecisionOut(l.Out) && l.JobID == "" {
			return nil, fmt.Errorf("%s:%d: %s without job_id", name, n, l.Out)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}

func isDecisionOut(out string) bool {
	return out == "commit" || out == "cancel" || out == "abort_prepare"
}

// ReadReference parses `arbiter replay` output (JSON lines; the summary line and
// unknown fields are kept or ignored as replay.Line allows). Errors name the line.
func ReadReference(r io.Reader, name string) ([]replay.Line, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var out []replay.Line
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var l replay.Line
		if err := json.Unmarshal(b, &l); err != nil || l.Out == "" {
			return nil, fmt.Errorf("%s:%d: not a replay output line", name, n)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}

// CheckInput is what Check compares.
type CheckInput struct {
	// Stack names the agent stack in the summary line ("livekit-google").
	Stack string
	// References are the traces to check; every one must have a session in Record.
	References []Reference
	// Record is the fake provider's record of the agent's sessions.
	Record []RecordLine
	// Backend is the agent's backend log; nil when there is none (commits are then
	// not checked).
	Backend []BackendLine
}

// Report is what Check found.
type Report struct {
	Stack string
	// Sessions checked; final function responses sent on the wire; responses sent for
	// dead ids; reference notes delivered (as user turns or status_note riders); commits
	// in the backend log.
	Sessions, Responses, DeadAnswered, Notes, Commits int
	// MaxOffsetMS is the largest |agent time - reference time| over the responses and
	// notes matched to the reference (and the backend's decisions that carry t_ms).
	MaxOffsetMS int64
	// Details describe each session (one line each, for people).
	Details []string
	// Mismatches are the failures, one sentence each; Check passed when it is empty.
	Mismatches []string
	// Warnings are the record's warning lines and things worth knowing that are not
	// failures.
	Warnings []string
}

// OK reports whether nothing mismatched.
func (r *Report) OK() bool { return len(r.Mismatches) == 0 }

// Summary is the one summary line.
func (r *Report) Summary() string {
	return fmt.Sprintf("%s: sessions %d, responses %d, dead ids answered %d, notes %d, commits %d, max decision offset %dms",
		r.Stack, r.Sessions, r.Responses, r.DeadAnswered, r.Notes, r.Commits, r.MaxOffsetMS)
}

func (r *Report) fail(format string, a ...any) {
	r.Mismatches = append(r.Mismatches, fmt.Sprintf(format, a...))
}

func (r *Report) offset(d int64) {
	if d < 0 {
		d = -d
	}
	if d > r.MaxOffsetMS {
		r.MaxOffsetMS = d
	}
}

// wireResponse is a function response the agent sent.
type wireResponse struct {
	callID  string
	final   bool
	payload obj
	tMs     int64
}

// wireText is a user turn the agent sent (or a status_note riding on a response).
type wireText struct {
	text string
	via  string
	tMs  int64
	conn int
}

// sessionRecord is one session's lines.
type sessionRecord struct {
	num   int
	trace string
	proto string
	lines []RecordLine
}

// Check compares the record with each trace's reference (see Report). Only what the
// agent sent is judged: the recorded model's later turns do not follow from the
// arbiter's decisions.
func Check(in CheckInput) *Report {
	rep := &Report{Stack: in.Stack}
	sessions := groupSessions(in.Record)
	refs := map[string]*Reference{}
	for i := range in.References {
		refs[in.References[i].Trace.Name] = &in.References[i]
	}
	played := map[string]int{}
	var checked []*sessionRecord
	for _, s := range sessions {
		if refs[s.trace] == nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("session %d plays %s, which is not among the traces checked: skipped", s.num, s.trace))
			continue
		}
		played[s.trace]++
		checked = append(checked, s)
	}
	for _, r := range in.References {
		if played[r.Trace.Name] == 0 {
			rep.fail("%s: no session in the record played it", r.Trace.Name)
		}
	}
	backend := splitBackend(rep, in.Backend, checked)
	for _, s := range checked {
		rep.Sessions++
		ref := refs[s.trace]
		lines := ref.Lines
		if s.proto == ProtoOpenAI && ref.OpenAI != nil {
			lines = ref.OpenAI
		}
		checkSession(rep, s, ref.Trace, lines, backend[s.num], in.Backend != nil)
	}
	return rep
}

func groupSessions(record []RecordLine) []*sessionRecord {
	by := map[int]*sessionRecord{}
	var order []*sessionRecord
	for _, l := range record {
		s := by[l.Session]
		if s == nil {
			s = &sessionRecord{num: l.Session, trace: l.Trace, proto: l.Proto}
			by[l.Session] = s
			order = append(order, s)
		}
		s.lines = append(s.lines, l)
	}
	sort.Slice(order, func(i, j int) bool { return order[i].num < order[j].num })
	return order
}

// splitBackend gives each checked session its backend lines: those naming its trace
// (the first session of a trace played twice), or every line when the log names no
// trace and one session is checked.
func splitBackend(rep *Report, lines []BackendLine, sessions []*sessionRecord) map[int][]BackendLine {
	out := map[int][]BackendLine{}
	first := map[string]int{}
	for _, s := range sessions {
		if _, ok := first[s.trace]; !ok {
			first[s.trace] = s.num
		}
	}
	unnamed := 0
	for _, l := range lines {
		switch {
		case l.Trace != "":
			if n, ok := first[l.Trace]; ok {
				out[n] = append(out[n], l)
			}
		case len(sessions) == 1:
			out[sessions[0].num] = append(out[sessions[0].num], l)
		default:
			unnamed++
		}
	}
	if unnamed > 0 {
		rep.fail("backend log: %d lines name no trace, and the record has %d sessions: give each line a \"trace\"", unnamed, len(sessions))
	}
	return out
}

// jobKey is a job id without its session's epoch ("job-1" for "job-1.xdts00"): the
// reference (a replay on a virtual clock) and the agent's session (real time) were
// created at different times, so their epochs differ; within one session the job
// number names the job.
func jobKey(id string) string {
	n, _, _ := strings.Cut(id, ".")
	return n
}

// refFacts is what a reference says about a session.
type refFacts struct {
	live      map[string]replay.Line // call id -> its final response
	dead      map[string]string      // call id -> skip reason
	notes     []replay.Line
	decisions map[string]replay.Line // job id -> decision
	commits   int
}

func readReference(lines []replay.Line) refFacts {
	f := refFacts{live: map[string]replay.Line{}, dead: map[string]string{}, decisions: map[string]replay.Line{}}
	for _, l := range lines {
		l.JobID = jobKey(l.JobID)
		switch l.Out {
		case "response":
			if l.Final == nil || *l.Final {
				if _, ok := f.live[l.CallID]; !ok {
					f.live[l.CallID] = l
				}
			}
		case "skip":
			f.dead[l.CallID] = l.Reason
		case "note":
			f.notes = append(f.notes, l)
		case "decision":
			f.decisions[l.JobID] = l
		case "commit":
			if l.Outcome == "" {
				f.commits++
			}
		}
	}
	for id := range f.live {
		delete(f.dead, id) // answered before it died: it was live
	}
	return f
}

func checkSession(rep *Report, s *sessionRecord, tr Trace, lines []replay.Line, backend []BackendLine, haveBackend bool) {
	name := fmt.Sprintf("session %d (%s, %s)", s.num, s.trace, s.proto)
	ref := readReference(lines)
	ended := false
	for _, l := range s.lines {
		switch l.Kind {
		case KindClose:
			ended = ended || l.End
		case KindWarning:
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %s", name, l.Text))
		}
	}
	if !ended {
		rep.fail("%s: the trace's end was never played (the client left before it)", name)
	}
	responses, texts := readWire(s)
	var detail []string
	checkResponses(rep, name, tr, ref, responses, &detail)
	checkNotes(rep, name, ref.notes, texts, &detail)
	if haveBackend {
		checkBackend(rep, name, ref, backend, &detail)
	}
	rep.Details = append(rep.Details, fmt.Sprintf("%s: %s", name, strings.Join(detail, "; ")))
}

// checkResponses: a live id answered exactly once (with the reference's status when
// both say one), a dead id never (interim responses included), an id the trace never
// called never.
func checkResponses(rep *Report, name string, tr Trace, ref refFacts, responses []wireResponse, detail *[]string) {
	calls := map[string]bool{}
	for _, ev := range tr.Events {
		if ev.Event == "tool_call" {
			calls[ev.CallID] = true
		}
	}
	finals := map[string][]wireResponse{}
	var ids []string
	seen := map[string]bool{}
	for _, r := range responses {
		if !seen[r.callID] {
			seen[r.callID] = true
			ids = append(ids, r.callID)
		}
		if r.final {
			finals[r.callID] = append(finals[r.callID], r)
			rep.Responses++
		}
		if reason, dead := ref.dead[r.callID]; dead {
			rep.DeadAnswered++
			rep.fail("%s: %s answered at %d ms, but it is dead (%s): it must never be answered", name, r.callID, r.tMs, reason)
		}
	}
	for _, id := range ids {
		got := finals[id]
		want, live := ref.live[id]
		switch {
		case !calls[id]:
			rep.fail("%s: a function response for %s, which the trace never called", name, id)
		case !live:
			if _, dead := ref.dead[id]; !dead && len(got) > 0 {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %s answered; the reference leaves it unanswered", name, id))
			}
		case len(got) > 1:
			rep.fail("%s: %s answered %d times (at %s ms); a call id gets exactly one response", name, id, len(got), times(got))
		case len(got) == 1:
			d := got[0].tMs - tms(want)
			rep.offset(d)
			*detail = append(*detail, fmt.Sprintf("%s answered at %d ms (reference %d, %+d ms)", id, got[0].tMs, tms(want), d))
			if g, w := payloadStatus(got[0].payload), payloadStatus(want.Payload); g != "" && w != "" && g != w {
				rep.fail("%s: %s answered with status %q; the reference's status is %q", name, id, g, w)
			}
		}
	}
	for _, id := range sortedKeys(ref.live) {
		if len(finals[id]) == 0 {
			rep.fail("%s: %s is live and was never answered (the reference answers it at %d ms)", name, id, tms(ref.live[id]))
		}
	}
	for _, id := range sortedKeys(ref.dead) {
		if len(finals[id]) == 0 {
			*detail = append(*detail, fmt.Sprintf("%s dead, not answered", id))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// tms is a reference line's time (0 when it has none).
func tms(l replay.Line) int64 {
	if l.TMs == nil {
		return 0
	}
	return *l.TMs
}

func times(rs []wireResponse) string {
	var t []string
	for _, r := range rs {
		t = append(t, fmt.Sprint(r.tMs))
	}
	return strings.Join(t, ", ")
}

// checkNotes matches each reference note with the user turns (and status_note riders)
// that contain its text. On each connection a note goes out at most as often as the
// reference hands it out, and on some connection that often: a later connection of
// the session is a new model context, and agents replay their history there (LiveKit
// sends its chat context, notes included, when it reconnects). A "System note" the
// reference does not have is a mismatch.
func checkNotes(rep *Report, name string, notes []replay.Line, texts []wireText, detail *[]string) {
	used := make([]bool, len(texts))
	want := map[string][]replay.Line{}
	var order []string
	for _, n := range notes {
		k := norm(n.Text)
		if _, ok := want[k]; !ok {
			order = append(order, k)
		}
		want[k] = append(want[k], n)
	}
	for _, k := range order {
		refs := want[k]
		byConn := map[int][]wireText{}
		var conns []int
		for i, t := range texts {
			if !used[i] && strings.Contains(norm(t.text), k) {
				used[i] = true
				if _, ok := byConn[t.conn]; !ok {
					conns = append(conns, t.conn)
				}
				byConn[t.conn] = append(byConn[t.conn], t)
			}
		}
		var first []wireText // the connection that delivered it in full, first
		for _, c := range conns {
			got := byConn[c]
			if len(got) > len(refs) {
				rep.fail("%s: note sent %d times on connection %d, the reference hands it out %d: %q", name, len(got), c, len(refs), refs[0].Text)
			}
			if first == nil && len(got) >= len(refs) {
				first = got
			}
		}
		switch {
		case len(conns) == 0:
			rep.fail("%s: note never sent: %q", name, refs[0].Text)
			continue
		case first == nil:
			rep.fail("%s: note sent %d times, the reference hands it out %d: %q", name, len(byConn[conns[0]]), len(refs), refs[0].Text)
			first = byConn[conns[0]]
		}
		rep.Notes += len(refs)
		for i := 0; i < len(first) && i < len(refs); i++ {
			d := first[i].tMs - tms(refs[i])
			rep.offset(d)
			*detail = append(*detail, fmt.Sprintf("note via %s at %d ms (reference %d, %+d ms)", first[i].via, first[i].tMs, tms(refs[i]), d))
		}
		if len(conns) > 1 {
			*detail = append(*detail, fmt.Sprintf("the note again on %d later connections (history)", len(conns)-1))
		}
	}
	for i, t := range texts {
		if !used[i] && strings.HasPrefix(strings.ToLower(strings.TrimSpace(t.text)), "system note") {
			rep.fail("%s: a note the reference does not have, at %d ms via %s: %q", name, t.tMs, t.via, t.text)
		}
	}
}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// checkBackend compares the backend's commits and cancels per job with the
// reference's decisions.
func checkBackend(rep *Report, name string, ref refFacts, lines []BackendLine, detail *[]string) {
	commits := map[string]int{}
	cancels := map[string]bool{}
	var jobs []string
	seen := map[string]bool{}
	for _, l := range lines {
		if !isDecisionOut(l.Out) {
			continue
		}
		if !seen[l.JobID] {
			seen[l.JobID] = true
			jobs = append(jobs, l.JobID)
		}
		if l.Out == "commit" {
			commits[l.JobID]++
			rep.Commits++
		} else {
			cancels[l.JobID] = true
		}
		if d, ok := ref.decisions[l.JobID]; ok && l.TMs != nil {
			off := *l.TMs - tms(d)
			rep.offset(off)
			*detail = append(*detail, fmt.Sprintf("backend %s %s at %d ms (reference decision %d, %+d ms, agent clock)", l.Out, l.JobID, *l.TMs, tms(d), off))
		}
	}
	for _, j := range jobs {
		d, decided := ref.decisions[j]
		switch {
		case commits[j] > 1:
			rep.fail("%s: backend committed %s %d times", name, j, commits[j])
		case commits[j] == 1 && !decided:
			rep.fail("%s: backend committed %s; the reference has no decision for it", name, j)
		case commits[j] == 1 && d.Decision != "commit":
			rep.fail("%s: backend committed %s; the reference cancelled it (%s)", name, j, d.Reason)
		}
	}
	for _, j := range sortedKeys(ref.decisions) {
		d := ref.decisions[j]
		switch {
		case d.Decision == "commit" && commits[j] == 0:
			rep.fail("%s: the reference commits %s; the backend log has no commit for it", name, j)
		case d.Decision == "cancel" && commits[j] == 0 && !cancels[j]:
			rep.fail("%s: the reference cancels %s; the backend log has no cancel (or abort_prepare) for it", name, j)
		}
	}
	if ref.commits == 0 && rep.Commits > 0 {
		*detail = append(*detail, "backend committed where the reference commits nothing")
	}
}

// payloadStatus finds a response payload's status: its "status" field, or that of an
// object (or JSON text) one level down (frameworks wrap tool results, LiveKit as
// {"output": ...}); "" when there is none.
func payloadStatus(p map[string]any) string {
	if s, ok := p["status"].(string); ok {
		return s
	}
	for _, v := range p {
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x["status"].(string); ok {
				return s
			}
		case string:
			if m, ok := decodeObject([]byte(x)); ok {
				if s, ok := m["status"].(string); ok {
					return s
				}
			}
		}
	}
	return ""
}

// readWire extracts the function responses and user turns of a session's client
// messages.
func readWire(s *sessionRecord) ([]wireResponse, []wireText) {
	var rs []wireResponse
	var ts []wireText
	for _, l := range s.lines {
		if l.Kind != KindClient {
			continue
		}
		m, ok := decodeObject(l.Msg)
		if !ok {
			continue
		}
		var r []wireResponse
		var t []wireText
		if l.Proto == ProtoOpenAI {
			r, t = openaiWire(m, l.TMs)
		} else {
			r, t = geminiWire(m, l.TMs)
		}
		rs = append(rs, r...)
		for _, x := range r {
			if n, ok := x.payload["status_note"].(string); ok && n != "" {
				t = append(t, wireText{text: n, via: "status_note", tMs: x.tMs})
			}
		}
		for i := range t {
			t[i].conn = l.Conn
		}
		ts = append(ts, t...)
	}
	return rs, ts
}

// geminiWire reads toolResponse.functionResponses, clientContent user turns and
// realtimeInput.text.
func geminiWire(m obj, t int64) ([]wireResponse, []wireText) {
	var rs []wireResponse
	var ts []wireText
	for _, x := range listField(objField(m, "toolResponse"), "functionResponses") {
		fr, _ := x.(obj)
		rs = append(rs, wireResponse{callID: strField(fr, "id"), final: !boolField(fr, "willContinue"), payload: objField(fr, "response"), tMs: t})
	}
	for _, x := range listField(objField(m, "clientContent"), "turns") {
		turn, _ := x.(obj)
		if role := strField(turn, "role"); role != "" && role != "user" {
			continue
		}
		var parts []string
		for _, p := range listField(turn, "parts") {
			po, _ := p.(obj)
			if s := strField(po, "text"); s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) > 0 {
			ts = append(ts, wireText{text: strings.Join(parts, " "), via: "clientContent", tMs: t})
		}
	}
	if s := strField(objField(m, "realtimeInput"), "text"); s != "" {
		ts = append(ts, wireText{text: s, via: "realtimeInput.text", tMs: t})
	}
	return rs, ts
}

// openaiWire reads conversation.item.create: function_call_output items and user (or
// system) message items.
func openaiWire(m obj, t int64) ([]wireResponse, []wireText) {
	if m["type"] != "conversation.item.create" {
		return nil, nil
	}
	item := objField(m, "item")
	switch item["type"] {
	case "function_call_output":
		out, _ := item["output"].(string)
		p, ok := decodeObject([]byte(out))
		if !ok {
			p = obj{"output": out}
		}
		return []wireResponse{{callID: strField(item, "call_id"), final: true, payload: p, tMs: t}}, nil
	case "message":
		if role := strField(item, "role"); role != "user" && role != "system" {
			return nil, nil
		}
		var parts []string
		for _, c := range listField(item, "content") {
			co, _ := c.(obj)
			if s := strField(co, "text"); s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) > 0 {
			return nil, []wireText{{text: strings.Join(parts, " "), via: "conversation.item", tMs: t}}
		}
	}
	return nil, nil
}
