package fakeprovider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/voicearbiter/arbiter/internal/realtime"
	"github.com/voicearbiter/arbiter/replay"
)

// Reference is one trace, and what `arbiter replay` made of it when it is given as
// is (Lines: `arbiter fake-provider check --reference`); see CheckInput.Replay for the
// reference each session gets otherwise.
type Reference struct {
	Trace Trace
	// Lines is the replay's output (its `out` lines); it serves every session of the
	// trace, whatever its protocol, when CheckInput.Replay is nil.
	Lines []replay.Line
}

// ReplayFunc replays events (a trace as one session's wire carried it) under the tools
// policy the agent runs with, as `arbiter replay --tools` does, and returns its output
// lines. An error (the arbiter refused an event of the trace) is reported as that
// session's mismatch.
type ReplayFunc func(tr Trace, events []replay.TraceEvent) ([]replay.Line, error)

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
	// Replay, when not nil, gives each session its own reference: the replay of its
	// trace as its wire carried it (wireView: what the protocol and the session's
	// connections let its agent see). When nil, each Reference's Lines serve.
	Replay ReplayFunc
	// Record is the fake provider's record of the agent's sessions.
	Record []RecordLine
	// Backend is the agent's backend log; nil when there is none (commits are then
	// not checked).
	Backend []BackendLine
}

// Report is what Check found.
type Report struct {
	Stack string
	// Sessions checked (refused ones not counted); call ids the model ends up holding
	// a final function response for; dead ids answered (each send counted); reference
	// notes delivered (as user turns or status_note riders); commits in the backend
	// log; sessions the fake refused to play (their trace's protocol cannot carry it).
	Sessions, Responses, DeadAnswered, Notes, Commits, Skipped int
	// MaxOffsetMS is the largest |agent time - reference time| over the responses and
	// notes matched to the reference (and the backend's decisions that carry t_ms).
	MaxOffsetMS int64
	// Details describe each session (one line each, for people).
	Details []string
	// Skips name each refused session and the fake's reason, one line each.
	Skips []string
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
	return fmt.Sprintf("%s: sessions %d, responses %d, dead ids answered %d, notes %d, commits %d, max decision offset %dms, skipped %d",
		r.Stack, r.Sessions, r.Responses, r.DeadAnswered, r.Notes, r.Commits, r.MaxOffsetMS, r.Skipped)
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

// sessionRecord is one session's lines.
type sessionRecord struct {
	num   int
	trace string
	proto string
	lines []RecordLine
}

// Check compares the record with each trace's reference (see Report). Only what the
// agent sent is judged: the recorded model's later turns do not follow from the
// arbiter's decisions. A session the fake refused (its trace's protocol cannot carry
// it) is listed in Skips, not judged; a session whose reference cannot be made (the
// replay failed) is a mismatch, and the others are still judged.
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
		if why := refusedReason(s); why != "" {
			rep.Skipped++
			rep.Skips = append(rep.Skips, fmt.Sprintf("session %d (%s, %s): refused by the fake provider: %s", s.num, s.trace, s.proto, why))
			continue
		}
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
		if in.Replay != nil {
			var err error
			if lines, err = in.Replay(ref.Trace, wireView(ref.Trace, s)); err != nil {
				rep.fail("session %d (%s, %s): no reference: the replay of its trace as the wire carried it failed: %v", s.num, s.trace, s.proto, err)
				continue
			}
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
	dead      map[string]replay.Line // call id -> its skip
	notes     []replay.Line
	decisions map[string]replay.Line // job id -> decision
	commits   int
}

func readReference(lines []replay.Line) refFacts {
	f := refFacts{live: map[string]replay.Line{}, dead: map[string]replay.Line{}, decisions: map[string]replay.Line{}}
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
			f.dead[l.CallID] = l
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
	ops := heldOps(s)
	var detail []string
	checkResponses(rep, name, tr, ref, ops, &detail)
	checkNotes(rep, name, ref.notes, ops, &detail)
	if haveBackend {
		checkBackend(rep, name, ref, backend, &detail)
	}
	rep.Details = append(rep.Details, fmt.Sprintf("%s: %s", name, strings.Join(detail, "; ")))
}

// checkResponses judges the function responses the model ends up holding, per context
// (heldOps): a dead id is never answered (a final response at any time, an answer
// deleted later included: the model had it; an interim one once the id died, by the
// reference's time of death: one sent while it was live answers nothing); an id the trace never called never;
// a live id is held by some context exactly once at its end (with the reference's
// status when both say one), and no context ever holds two answers for one id at once
// (a later context holding it once is history: LiveKit replays its chat context on a
// new OpenAI connection).
func checkResponses(rep *Report, name string, tr Trace, ref refFacts, ops []heldOp, detail *[]string) {
	calls := map[string]bool{}
	for _, ev := range tr.Events {
		if ev.Event == "tool_call" {
			calls[ev.CallID] = true
		}
	}
	var ids []string
	seen := map[string]bool{}
	for _, op := range ops {
		for _, it := range op.add {
			if it.callID == "" && it.payload == nil {
				continue
			}
			if !seen[it.callID] {
				seen[it.callID] = true
				ids = append(ids, it.callID)
			}
			if d, dead := ref.dead[it.callID]; dead && (it.final || it.tMs >= tms(d)) {
				// An interim response sent while the id was still live (LiveKit's
				// acknowledgement of a NON_BLOCKING Gemini call) answers nothing.
				rep.DeadAnswered++
				rep.fail("%s: %s answered at %d ms, but it is dead (%s): it must never be answered", name, it.callID, it.tMs, d.Reason)
			}
		}
	}
	answered := map[string]bool{}
	for _, id := range ids {
		counts, order := countHeld(ops, func(it wireItem) int {
			if it.callID == id && it.final && it.text == "" {
				return 1
			}
			return 0
		})
		if len(order) == 0 {
			continue // interim responses only
		}
		rep.Responses++
		answered[id] = true
		want, live := ref.live[id]
		var got *heldCount
		for _, c := range order {
			hc := counts[c]
			if hc.max > 1 && live {
				rep.fail("%s: %s answered %d times (at %s ms), the model holding them at once on connection %d%s; a call id gets exactly one response", name, id, hc.max, times(hc.adds), c, resumed(ops, c))
			}
			if got == nil && hc.end >= 1 {
				got = hc
			}
		}
		switch {
		case !calls[id]:
			rep.fail("%s: a function response for %s, which the trace never called", name, id)
		case !live:
			if _, dead := ref.dead[id]; !dead {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %s answered; the reference leaves it unanswered", name, id))
			}
		case got == nil:
			first := counts[order[0]]
			rep.fail("%s: %s answered at %s ms, and the model ends up holding no answer for it (deleted, never sent again)", name, id, times(first.adds))
		default:
			r := got.adds[0]
			d := r.tMs - tms(want)
			rep.offset(d)
			*detail = append(*detail, fmt.Sprintf("%s answered at %d ms (reference %d, %+d ms)", id, r.tMs, tms(want), d))
			if g, w := payloadStatus(r.payload), payloadStatus(want.Payload); g != "" && w != "" && g != w {
				rep.fail("%s: %s answered with status %q; the reference's status is %q", name, id, g, w)
			}
		}
	}
	for _, id := range sortedKeys(ref.live) {
		if !answered[id] {
			rep.fail("%s: %s is live and was never answered (the reference answers it at %d ms)", name, id, tms(ref.live[id]))
		}
	}
	for _, id := range sortedKeys(ref.dead) {
		if !seen[id] {
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

func times(items []wireItem) string {
	var t []string
	for _, it := range items {
		t = append(t, fmt.Sprint(it.tMs))
	}
	return strings.Join(t, ", ")
}

// checkNotes judges the texts the model ends up holding against the reference's notes.
// A text holds a note as often as the note's text occurs in it (a turn may carry two
// notes); no context ever holds a note more often at once than the reference hands it
// out, and some context holds it that often at its end (a later context holding it
// again is history). A text that still reads "System note" once every reference note
// is taken out of it is a note the reference does not have.
func checkNotes(rep *Report, name string, notes []replay.Line, ops []heldOp, detail *[]string) {
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
		counts, ctxs := countHeld(ops, func(it wireItem) int { return strings.Count(norm(it.text), k) })
		var got *heldCount
		for _, c := range ctxs {
			hc := counts[c]
			if hc.max > len(refs) {
				rep.fail("%s: note sent %d times on connection %d, the model holding them at once%s; the reference hands it out %d: %q", name, hc.max, c, resumed(ops, c), len(refs), refs[0].Text)
			}
			if got == nil && hc.end >= len(refs) {
				got = hc
			}
		}
		switch {
		case len(ctxs) == 0:
			rep.fail("%s: note never sent: %q", name, refs[0].Text)
			continue
		case got == nil:
			rep.fail("%s: note sent %d times, and the model ends up holding it %d times, the reference hands it out %d: %q",
				name, len(counts[ctxs[0]].adds), counts[ctxs[0]].end, len(refs), refs[0].Text)
			continue
		}
		rep.Notes += len(refs)
		for i := 0; i < len(got.adds) && i < len(refs); i++ {
			d := got.adds[i].tMs - tms(refs[i])
			rep.offset(d)
			*detail = append(*detail, fmt.Sprintf("note via %s at %d ms (reference %d, %+d ms)", got.adds[i].via, got.adds[i].tMs, tms(refs[i]), d))
		}
		if len(ctxs) > 1 {
			*detail = append(*detail, fmt.Sprintf("the note again on %d later connections (history)", len(ctxs)-1))
		}
	}
	for _, op := range ops {
		for _, it := range op.add {
			rest := norm(it.text)
			for _, k := range order {
				rest = strings.ReplaceAll(rest, k, "")
			}
			if systemNote(rest) {
				rep.fail("%s: a note the reference does not have, at %d ms via %s: %q", name, it.tMs, it.via, it.text)
			}
		}
	}
}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// checkBackend compares the backend's commits and cancels per job with the
// reference's decisions.
func checkBackend(rep *Report, name string, ref refFacts, lines []BackendLine, detail *[]string) {
	commits := map[string]int{}
	cancels := map[string]bool{}
	committed := 0 // this session's commits
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
			committed++
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
	if ref.commits == 0 && committed > 0 {
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
			if m, err := realtime.DecodeObject([]byte(x)); err == nil {
				if s, ok := m["status"].(string); ok {
					return s
				}
			}
		}
	}
	return ""
}
