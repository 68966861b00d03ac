package arbiter

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A tiny script harness for the engine: a script is a list of events at explicit
// times (milliseconds after t0, on a fake clock), and the harness records every
// response, skip, note and decision that any step handed out, with its time.

// t0 is the session's start: the fixtures' recording day.
var t0 = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

// ms is the time ms milliseconds after t0.
func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// msOf is the inverse of ms.
func msOf(t time.Time) int { return int(t.Sub(t0) / time.Millisecond) }

// bookingPolicy is testdata/tools/booking.yaml built in Go, plus a read-only
// get_weather. Each mod edits it before Validate.
func bookingPolicy(mods ...func(*Policy)) *Policy {
	p := &Policy{
		Defaults: Timings{
			Grace:               1500 * time.Millisecond,
			TranscriptTimeout:   3 * time.Second,
			OnTranscriptTimeout: Cancel,
			DedupeWindow:        30 * time.Second,
			TriggerLookback:     2 * time.Second,
		},
		Tools: map[string]*Tool{
			"book_slot": {
				Name:       "book_slot",
				SideEffect: true,
				Behavior:   NonBlocking,
				Key:        []KeyArg{{Arg: "slot", As: KeyDatetime}},
				Describe:   "the booking for {slot}",
			},
			"get_weather": {Name: "get_weather"},
		},
	}
	for _, m := range mods {
		m(p)
	}
	if err := p.Validate(); err != nil {
		panic(err)
	}
	return p
}

func onTranscriptTimeout(o OnTimeout) func(*Policy) {
	return func(p *Policy) { p.Defaults.OnTranscriptTimeout = o }
}

func onAbandon(o OnTimeout) func(*Policy) {
	return func(p *Policy) { p.Defaults.OnAbandon = o }
}

// ---- script actions ---------------------------------------------------------------

// action builds the event to step; it may look up job ids by call id.
type action func(h *harness) Event

// timed is one script line: an action at a time.
type timed struct {
	ms int
	a  action
}

func at(n int, a action) timed { return timed{n, a} }

func ev(e Event) action { return func(*harness) Event { return e } }

var (
	userStart   = ev(Speech{Kind: UserActivityStart})
	userEnd     = ev(Speech{Kind: UserActivityEnd})
	interrupted = ev(Speech{Kind: Interrupted})
	modelStart  = ev(Speech{Kind: ModelOutputStart})
	modelDone   = ev(Speech{Kind: ModelTurnComplete})
	tick        = ev(Tick{})
)

// said is a final user transcript.
func said(text string) action { return ev(Transcript{Text: text}) }

// book is a book_slot call in the policy's behaviour (NON_BLOCKING).
func book(id, slot string) action {
	return ev(RegisterCall{CallID: id, Tool: "book_slot", Args: map[string]any{"slot": slot}})
}

// bookBlocking is a BLOCKING book_slot call.
func bookBlocking(id, slot string) action {
	return ev(RegisterCall{CallID: id, Tool: "book_slot", Args: map[string]any{"slot": slot}, Behavior: Blocking})
}

func withdrawn(ids ...string) action { return ev(ToolCallCancellation{CallIDs: ids}) }

// jobOf is the job id of a registered call ("" when it has none).
func (h *harness) jobOf(callID string) string {
	h.t.Helper()
	c := h.s.Call(callID)
	if c == nil {
		h.t.Fatalf("call %q is not registered", callID)
	}
	return c.JobID
}

// prepared is the agent reporting that prepare finished for the call's job.
func prepared(callID string) action {
	return func(h *harness) Event { return Decide{JobID: h.jobOf(callID), Prepared: true} }
}

// poll is the agent asking for the call's job's decision before prepare finished.
func poll(callID string) action {
	return func(h *harness) Event { return Decide{JobID: h.jobOf(callID)} }
}

// complete reports the outcome of the call's job.
func complete(callID string, o Outcome, result map[string]any) action {
	return func(h *harness) Event { return Complete{JobID: h.jobOf(callID), Outcome: o, Result: result} }
}

// ---- the harness ------------------------------------------------------------------

type gotResponse struct {
	ms int
	Response
}

type gotSkip struct {
	ms int
	Skip
}

type gotNote struct {
	ms int
	Note
}

type gotDecide struct {
	ms int
	DecisionResult
}

type harness struct {
	t *testing.T
	e *Engine
	s *Session

	responses []gotResponse
	skips     []gotSkip
	notes     []gotNote
	decisions []DecisionResult // every decision made, from Output.Decisions
	decides   []gotDecide      // what each Decide answered
	calls     map[string][]CallResult
}

func newHarness(t *testing.T, p *Policy) *harness {
	return &harness{
		t: t, e: &Engine{Policy: p},
		s:     NewSession(SessionKey{ID: "s1"}, t0),
		calls: map[string][]CallResult{},
	}
}

// step applies one event at ms n and records its output; it fails the test on error.
func (h *harness) step(n int, e Event) Output {
	h.t.Helper()
	out, err := h.try(n, e)
	if err != nil {
		h.t.Fatalf("t=%d %T%+v: %v", n, e, e, err)
	}
	return out
}

// try applies one event at ms n and records its output.
func (h *harness) try(n int, e Event) (Output, error) {
	h.t.Helper()
	out, err := h.e.Step(h.s, ms(n), e)
	if err != nil {
		return out, err
	}
	for _, r := range out.Effects.Responses {
		h.responses = append(h.responses, gotResponse{n, r})
	}
	for _, s := range out.Effects.Skips {
		h.skips = append(h.skips, gotSkip{n, s})
	}
	for _, x := range out.Effects.Notes {
		h.notes = append(h.notes, gotNote{n, x})
	}
	h.decisions = append(h.decisions, out.Decisions...)
	if out.Decision != nil {
		h.decides = append(h.decides, gotDecide{n, *out.Decision})
	}
	if out.Call != nil {
		h.calls[out.Call.CallID] = append(h.calls[out.Call.CallID], *out.Call)
	}
	return out, nil
}

// run plays a script.
func (h *harness) run(script []timed) {
	h.t.Helper()
	for _, l := range script {
		h.step(l.ms, l.a(h))
	}
}

// opener is the call id that opened job id.
func (h *harness) opener(jobID string) string {
	if j := h.s.Job(jobID); j != nil {
		return j.opener()
	}
	return "?" + jobID
}

// ---- expectations -----------------------------------------------------------------

// want is what a script must have produced, in order, exactly: every response, skip,
// note and decision of the whole session. Jobs are named by the call that opened them.
type want struct {
	decisions []wantDecision
	responses []wantResponse
	skips     []wantSkip
	notes     []wantNote
}

type wantDecision struct {
	call     string // the job's opener
	ms       int
	decision Decision
	reason   string // substring of the reason
}

type wantResponse struct {
	call    string
	ms      int
	payload map[string]any // these keys with these values (others may be present)
}

type wantSkip struct {
	call   string
	ms     int
	reason string
}

type wantNote struct {
	call    string // the job's opener
	ms      int
	deliver Delivery
	has     []string // substrings of the text
}

func (h *harness) check(w want) {
	h.t.Helper()
	var got, exp []string
	for _, d := range h.decisions {
		got = append(got, fmt.Sprintf("decision %s t=%d %s", h.opener(d.JobID), msOf(d.DecidedAt), d.Decision))
	}
	for _, d := range w.decisions {
		exp = append(exp, fmt.Sprintf("decision %s t=%d %s", d.call, d.ms, d.decision))
	}
	h.same("decisions", got, exp)
	for i, d := range w.decisions {
		if i < len(h.decisions) && !strings.Contains(h.decisions[i].Reason, d.reason) {
			h.t.Errorf("decision %d for %s: reason %q does not contain %q", i, d.call, h.decisions[i].Reason, d.reason)
		}
	}

	got, exp = nil, nil
	for _, r := range h.responses {
		got = append(got, fmt.Sprintf("response %s t=%d", r.CallID, r.ms))
	}
	for _, r := range w.responses {
		exp = append(exp, fmt.Sprintf("response %s t=%d", r.call, r.ms))
	}
	h.same("responses", got, exp)
	for i, r := range w.responses {
		if i >= len(h.responses) {
			break
		}
		for k, v := range r.payload {
			if g := h.responses[i].Payload[k]; fmt.Sprint(g) != fmt.Sprint(v) {
				h.t.Errorf("response %d for %s: payload[%q] = %v, want %v (payload %v)", i, r.call, k, g, v, h.responses[i].Payload)
			}
		}
	}

	got, exp = nil, nil
	for _, s := range h.skips {
		got = append(got, fmt.Sprintf("skip %s t=%d %s", s.CallID, s.ms, s.Reason))
	}
	for _, s := range w.skips {
		exp = append(exp, fmt.Sprintf("skip %s t=%d %s", s.call, s.ms, s.reason))
	}
	h.same("skips", got, exp)

	got, exp = nil, nil
	for _, n := range h.notes {
		got = append(got, fmt.Sprintf("note %s t=%d %s", h.opener(n.JobID), n.ms, n.Deliver))
	}
	for _, n := range w.notes {
		exp = append(exp, fmt.Sprintf("note %s t=%d %s", n.call, n.ms, n.deliver))
	}
	h.same("notes", got, exp)
	for i, n := range w.notes {
		if i >= len(h.notes) {
			break
		}
		for _, s := range n.has {
			if !strings.Contains(h.notes[i].Text, s) {
				h.t.Errorf("note %d for %s: %q does not contain %q", i, n.call, h.notes[i].Text, s)
			}
		}
	}
}

func (h *harness) same(what string, got, exp []string) {
	h.t.Helper()
	if strings.Join(got, "\n") != strings.Join(exp, "\n") {
		h.t.Errorf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(exp, "\n  "))
	}
}

// callResult is the first answer RegisterCall gave for id.
func (h *harness) callResult(id string) CallResult {
	h.t.Helper()
	rs := h.calls[id]
	if len(rs) == 0 {
		h.t.Fatalf("call %q was never registered", id)
	}
	return rs[0]
}

// commits counts jobs decided commit in the session.
func (h *harness) commits() int {
	n := 0
	for _, j := range h.s.Jobs {
		if j.Decision == DecisionCommit {
			n++
		}
	}
	return n
}

func jsonOf(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// resultOf is the backend's result a function response carries (under "result"), or
// nil.
func resultOf(payload map[string]any) map[string]any {
	r, _ := payload["result"].(map[string]any)
	return r
}
