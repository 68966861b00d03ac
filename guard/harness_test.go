package guard

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/realtime"
	"github.com/voicearbiter/arbiter/internal/realtime/openai"
)

// harness drives a Rule with the real engine on a session held in memory (no store,
// no socket): reports queue up and are applied when the test says (deliver), or fail
// (fail), as a slow or broken store would; the session's log is fed back as a watch
// would (watch). Every frame the rule sends is kept, with the engine's view of its
// call at that moment.
type harness struct {
	t     testing.TB
	eng   *arbiter.Engine
	sess  *arbiter.Session
	rule  *Rule
	now   time.Time
	start time.Time
	// queued reports, in order.
	queue   []Action
	watched uint64
	// sent frames per side, and for each response upstream its call id, time and
	// whether the engine had the id dead then.
	toServer, toAgent []Frame
	answers           []sentAnswer
	// reported: every event the rule reported, in order.
	reported    []arbiter.Event
	logs        []string
	counted     [][2]string // each counted line's What and Why
	countedFrom int         // where the current connection's begin in counted
	// down: the store is down for good: every report fails, the watch sees nothing.
	down bool
	// replies: the arbiter's answers to applied reports, not yet fed to the rule (the
	// watch may bring a step's effects before its reply).
	replies []Input
	// lateReplies: replies wait for reply() (else each is fed as its report applies).
	lateReplies bool
}

type sentAnswer struct {
	call      string
	at        time.Time
	deadThen  bool
	payload   map[string]any
	connRule  *Rule
	willCont  bool
	schedules string
}

var t0 = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

func testPolicy(t testing.TB) *arbiter.Policy {
	p := &arbiter.Policy{
		Defaults: arbiter.Timings{MaxPending: 20 * time.Second},
		Tools: map[string]*arbiter.Tool{
			"book_slot": {Name: "book_slot", SideEffect: true, Behavior: arbiter.NonBlocking,
				Key: []arbiter.KeyArg{{Arg: "slot", As: arbiter.KeyDatetime}}, Describe: "the booking for {slot}"},
			"end_call": {Name: "end_call", SideEffect: true, Behavior: arbiter.Blocking, Key: []arbiter.KeyArg{{Arg: "why", Optional: true}}},
			"nope":     {Name: "nope", Disallowed: true},
		},
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

func newHarness(t testing.TB, proto string, cfg Config) *harness {
	if cfg.Policy == nil {
		cfg.Policy = testPolicy(t)
	}
	h := &harness{t: t, eng: &arbiter.Engine{Policy: cfg.Policy}, now: t0, start: t0}
	beta := proto == "openai-beta" // OpenAI with `OpenAI-Beta: realtime=v1`
	if beta {
		proto = "openai"
	}
	h.rule = NewRule(cfg, proto, beta, "s1", "c1", false)
	h.do(h.rule.Start(h.now))
	return h
}

// reconnect ends the connection and starts another on the same session (named).
func (h *harness) reconnect(proto string, n int) {
	h.do(h.rule.End(h.now))
	h.deliverAll()
	cfg := h.rule.cfg
	h.countedFrom = len(h.counted)
	h.rule = NewRule(cfg, proto, false, "s1", fmt.Sprintf("c%d", n), true)
	h.watched = 0
	h.do(h.rule.Start(h.now))
}

func (h *harness) step(in Input) { h.do(h.rule.Step(h.now, in)) }

func (h *harness) server(m any) { h.step(FromServer{Frame{Data: jsonOf(m), Binary: true}}) }
func (h *harness) agent(m any)  { h.step(FromAgent{Frame{Data: jsonOf(m)}}) }

func jsonOf(m any) []byte {
	if b, ok := m.([]byte); ok {
		return b
	}
	if s, ok := m.(string); ok {
		return []byte(s)
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func (h *harness) advance(d time.Duration) {
	h.now = h.now.Add(d)
	h.step(Tick{})
}

func (h *harness) do(acts []Action) {
	for _, a := range acts {
		switch {
		case a.Bind != "":
			if h.sess == nil {
				h.sess = arbiter.NewSession(arbiter.SessionKey{ID: a.Bind}, h.now)
			}
		case a.Send != nil && a.To == Server:
			h.toServer = append(h.toServer, *a.Send)
			h.noteAnswers(*a.Send)
		case a.Send != nil:
			h.toAgent = append(h.toAgent, *a.Send)
		case a.Report != nil:
			h.queue = append(h.queue, a)
			h.reported = append(h.reported, a.Report)
		case a.Abandon != "":
			for i, q := range h.queue {
				if q.Tag == a.Abandon {
					h.queue = append(h.queue[:i], h.queue[i+1:]...)
					break
				}
			}
		case a.Log != nil:
			h.logs = append(h.logs, fmt.Sprint(a.Log.Msg, a.Log.Attrs))
			if a.Log.What != "" {
				h.counted = append(h.counted, [2]string{a.Log.What, a.Log.Why})
			}
		}
	}
}

// noteAnswers records the function responses a frame upstream carries.
func (h *harness) noteAnswers(f Frame) {
	m, err := realtime.DecodeObject(f.Data)
	if err != nil {
		return
	}
	for _, x := range realtime.ListField(realtime.ObjField(m, "toolResponse"), "functionResponses") {
		fr := x.(realtime.Obj)
		id := realtime.StrField(fr, "id")
		dead := false
		if c := h.sess.Call(id); c != nil && c.Outcome != nil && c.Outcome.Dead {
			dead = true
		}
		h.answers = append(h.answers, sentAnswer{call: id, at: h.now, deadThen: dead, payload: realtime.PlainObj(realtime.ObjField(fr, "response")),
			connRule: h.rule, willCont: realtime.BoolField(fr, "willContinue"), schedules: realtime.StrField(fr, "scheduling")})
	}
	if m["type"] == "conversation.item.create" {
		it := realtime.ObjField(m, "item")
		if it["type"] == "function_call_output" {
			id, _ := it["call_id"].(string)
			dead := false
			if c := h.sess.Call(id); c != nil && c.Outcome != nil && c.Outcome.Dead {
				dead = true
			}
			out, _ := it["output"].(string)
			var p map[string]any
			_ = json.Unmarshal([]byte(out), &p)
			h.answers = append(h.answers, sentAnswer{call: id, at: h.now, deadThen: dead, payload: p, connRule: h.rule})
		}
	}
}

// deliver applies the oldest queued report to the engine and feeds back its answer.
func (h *harness) deliver() bool {
	if len(h.queue) == 0 {
		return false
	}
	if h.down {
		return h.fail()
	}
	a := h.queue[0]
	h.queue = h.queue[1:]
	h.apply(a)
	return true
}

func (h *harness) deliverAll() {
	for h.deliver() || h.reply() {
	}
}

// reply feeds the oldest pending answer of an applied report.
func (h *harness) reply() bool {
	if len(h.replies) == 0 {
		return false
	}
	in := h.replies[0]
	h.replies = h.replies[1:]
	h.step(in)
	return true
}

// fail fails the oldest queued report (the store did not answer): a tagged one's
// answer is an error, an untagged one is lost.
func (h *harness) fail() bool {
	if len(h.queue) == 0 {
		return false
	}
	a := h.queue[0]
	h.queue = h.queue[1:]
	err := arbiter.Errorf(arbiter.Unavailable, "store down")
	switch a.Report.(type) {
	case arbiter.RegisterCall:
		h.step(Registered{CallID: a.Tag, Err: err})
	case arbiter.ToolAnswer:
		h.step(Answered{CallID: a.Tag, Err: err})
	}
	return true
}

func (h *harness) apply(a Action) {
	out, err := h.eng.Step(h.sess, h.now, a.Report)
	if err != nil {
		h.logs = append(h.logs, fmt.Sprintf("report %T: %v", a.Report, err))
	}
	var in Input
	switch a.Report.(type) {
	case arbiter.RegisterCall:
		if err != nil {
			in = Registered{CallID: a.Tag, Err: err}
		} else {
			in = Registered{CallID: a.Tag, Result: out.Call}
		}
	case arbiter.ToolAnswer:
		if err != nil {
			in = Answered{CallID: a.Tag, Err: err}
		} else {
			in = Answered{CallID: a.Tag, Answer: out.Answer}
		}
	}
	if in != nil {
		h.replies = append(h.replies, in)
		if !h.lateReplies {
			h.reply()
		}
	}
	if err == nil {
		h.effects(out.LogStart)
	}
}

// effects feeds the log entries after seq (a report's own, or a watch's).
func (h *harness) effects(after uint64) {
	entries, err := h.sess.LogAfter(after)
	if err != nil || len(entries) == 0 {
		return
	}
	h.step(Effects{Entries: entries, Current: h.sess.Connection == h.rule.conn})
}

// watch feeds the log as a watch would, timers fired first.
func (h *harness) watch() {
	if h.sess == nil || h.down {
		return
	}
	if _, err := h.eng.Step(h.sess, h.now, arbiter.Tick{}); err != nil {
		h.t.Fatal(err)
	}
	h.effects(h.watched)
	h.watched = h.sess.LogSeq
}

// helper runs what a tool's helper does, by call id, on the engine (another process).
func (h *harness) helper(ev arbiter.Event) (arbiter.Output, error) {
	if h.down {
		return arbiter.Output{}, arbiter.Errorf(arbiter.Unavailable, "store down")
	}
	out, err := h.eng.Step(h.sess, h.now, ev)
	return out, err
}

// ---- Gemini messages ----------------------------------------------------------------

func gCall(id, name string, args map[string]any) map[string]any {
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"toolCall": map[string]any{"functionCalls": []any{map[string]any{"id": id, "name": name, "args": args}}}}
}

func gContent(k string, v any) map[string]any {
	return map[string]any{"serverContent": map[string]any{k: v}}
}

func gAnswer(id, name string, resp map[string]any) map[string]any {
	return map[string]any{"toolResponse": map[string]any{"functionResponses": []any{map[string]any{"id": id, "name": name, "response": resp}}}}
}

var gSetup = map[string]any{"setup": map[string]any{"model": "models/gemini-live", "tools": []any{map[string]any{"functionDeclarations": []any{
	map[string]any{"name": "book_slot", "behavior": "NON_BLOCKING"}, map[string]any{"name": "end_call"}, map[string]any{"name": "get_weather"},
}}}, "inputAudioTranscription": map[string]any{}}}

// agentCalls returns the call ids the agent was given (Gemini toolCall frames to it;
// OpenAI events that name a function call, response.done's output included).
func (h *harness) agentCalls() []string {
	var ids []string
	for _, f := range h.toAgent {
		m, err := realtime.DecodeObject(f.Data)
		if err != nil {
			continue
		}
		if _, ok := m["type"]; ok {
			ev, _ := openai.ParseServer(f.Data)
			for _, fc := range ev.FunctionCalls() {
				ids = append(ids, fc.CallID)
			}
			continue
		}
		for _, x := range realtime.ListField(realtime.ObjField(m, "toolCall"), "functionCalls") {
			ids = append(ids, realtime.StrField(x.(realtime.Obj), "id"))
		}
	}
	return ids
}

// finals returns the final responses sent upstream for id on connection r.
func (h *harness) finals(id string, r *Rule) []sentAnswer {
	var out []sentAnswer
	for _, a := range h.answers {
		if a.call == id && !a.willCont && (r == nil || a.connRule == r) {
			out = append(out, a)
		}
	}
	return out
}
