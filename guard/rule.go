package guard

import (
	"fmt"
	"sort"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
)

// The rule: one connection's state and what each message does to it (the protocol
// halves are gemini.go and openai.go). Step is a pure function of the state and one
// input: no clock (the time comes in), no socket, no store. Its output is actions the
// connection carries out: frames to send each way, events to report to the arbiter,
// log lines. What the arbiter answers comes back as inputs (Registered, Answered,
// Effects), so a test drives the rule with any interleaving it likes (rule_test.go).

// Side is a direction of the proxy.
type Side int

// The two peers.
const (
	// Agent is the client: the agent's framework or SDK.
	Agent Side = iota
	// Server is the model server (the upstream).
	Server
)

func (s Side) String() string {
	if s == Agent {
		return "agent"
	}
	return "server"
}

// Frame is one WebSocket message.
type Frame struct {
	Data []byte
	// Binary: a binary message (Gemini's server sends JSON in binary frames).
	Binary bool
}

// Input is what Step takes: FromServer, FromAgent, Registered, Answered, Effects, Tick.
type Input interface{ input() }

// FromServer is a message the model server sent.
type FromServer struct{ Frame }

// FromAgent is a message the agent sent.
type FromAgent struct{ Frame }

// Registered is the arbiter's answer to the RegisterCall of CallID (the Report tagged
// with it): Result, or Err when the call could not be registered (the store did not
// answer within the connection's patience: the call fails closed).
type Registered struct {
	CallID string
	Result *arbiter.CallResult
	Err    error
}

// Answered is the arbiter's verdict on an answer the agent sent for CallID
// (ToolAnswer), or Err when it could not be asked.
type Answered struct {
	CallID string
	Answer *arbiter.AnswerResult
	Err    error
}

// Effects are entries of the session's effect log (from a report's output or the
// session's watch), and whether this connection is the session's current one (only
// that one sends notes: another connection of the session is on its way out).
type Effects struct {
	Entries []arbiter.LogEntry
	Current bool
}

// Tick says time passed: deadlines may be due.
type Tick struct{}

func (FromServer) input() {}
func (FromAgent) input()  {}
func (Registered) input() {}
func (Answered) input()   {}
func (Effects) input()    {}
func (Tick) input()       {}

// Action is one thing the connection does, in order: exactly one of Send, Report,
// Log is set.
type Action struct {
	// Send: a frame to write to To.
	Send *Frame
	To   Side
	// Through: Send is the frame of the Step's FromServer or FromAgent, forwarded as
	// it came (audio, on its fast path), and the rule keeps no reference to it: once
	// written, its buffer may be used for another frame. At most one per Step.
	Through bool
	// Report: an event for the arbiter's session (applied in order, one at a time);
	// Tag is the call id whose answer the rule waits for (a RegisterCall, a
	// ToolAnswer), "" for the others.
	Report arbiter.Event
	Tag    string
	// Abandon: stop trying to deliver the report tagged Tag (it failed closed).
	Abandon string
	// Log: a line for the log (Level, Msg, Attrs).
	Log *LogLine
	// Bind: the arbiter session this connection reports to, from now on (before its
	// first report).
	Bind string
}

// LogLine is a log line of the rule: every drop, injection and refusal, with why.
// A line that counts (Counts) names its entry: What (the line's Msg: "dropped agent
// answer", "injected response", ...) and Why ("dead id: abandoned", "deadline", ...;
// "" for an injected note), words from a fixed set, never an id; Options.Metrics
// counts it.
type LogLine struct {
	Warn      bool
	Msg       string
	Attrs     []any
	What, Why string
}

// Config is what the rule needs to know besides the messages.
type Config struct {
	// Policy is the tool policy (for each tool's max_pending).
	Policy *arbiter.Policy
	// AnswerWait is how long, after the arbiter's response for a call the agent ran is
	// due, the agent's own answer is waited for before the guard sends the arbiter's
	// itself (the agent's then dropped). Zero means 2 s.
	AnswerWait time.Duration
	// RegisterWait is how long a function call waits for its registration before it
	// fails closed (answered "not executed", never given to the agent). Zero: 3 s.
	RegisterWait time.Duration
	// Slack is how long after a call's max_pending the guard answers it itself when
	// the arbiter has not (its store is down). Zero means 5 s.
	Slack time.Duration
	// AddTranscription: ask the model server for the user's input transcription when
	// the agent did not (without it no stop can be read), and keep it from the agent:
	// Gemini's setup without inputAudioTranscription gets it; on OpenAI the agent's
	// first session.update without the field, or, when it sends none, a session.update
	// of the guard's own before its first event (openai.go). An agent's own choice (on
	// or null) is never overridden. False: the guard never asks.
	AddTranscription bool
	// Record makes every session of the connection record (ConfigureSession record:
	// its whole history kept, to export and replay it).
	Record bool
}

func (c Config) answerWait() time.Duration   { return orDefault(c.AnswerWait, 2*time.Second) }
func (c Config) registerWait() time.Duration { return orDefault(c.RegisterWait, 3*time.Second) }
func (c Config) slack() time.Duration        { return orDefault(c.Slack, 5*time.Second) }

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Counts are what the rule did, by what and why: "dropped agent answer: abandoned",
// "injected response: duplicate", ... (Rule.Counts).
type Counts map[string]int

// callState is where one call id of this connection stands.
type callState struct {
	id, name   string
	seen       time.Time // when the server's call arrived
	registered bool
	// registering: its RegisterCall is reported (OpenAI reports it once the
	// arguments are complete).
	registering bool
	// disp: the arbiter's disposition; "" until registered (or when it failed).
	disp       arbiter.Disposition
	sideEffect bool
	// toAgent: the agent was given the call to run.
	toAgent bool
	// dead (never answer) with why; sent: a final response went upstream.
	dead       bool
	deadReason string
	sent       bool
	// due: the arbiter's final response, once due, not sent yet (the agent's own
	// answer is waited for until dueAt + AnswerWait).
	due   *arbiter.Response
	dueAt time.Time
	// sched: the scheduling a note riding on the response asks for.
	sched arbiter.Scheduling
	// answer: the agent's answer held while the arbiter decides (nil: none held).
	answer *held
	// asked: a ToolAnswer for the agent's answer is in flight.
	asked bool
	// failed: the registration failed closed.
	failed bool
	// item: (OpenAI) the function_call item's id.
	item string
	// toolChoiceNone: the call came under tool choice none.
	toolChoiceNone bool
}

// held is a frame kept back, in a direction's queue, until it can go: out is what it
// becomes (several frames, or none), ready once its wait is over.
type held struct {
	out   []Frame
	ready bool
	// calls: the call ids it waits for (a server message with calls being
	// registered); call: the call whose answer it is (an agent answer).
	calls map[string]bool
	call  string
	// build, when set, makes out once ready (from the state then).
	build func() []Frame
	// agent is the agent's message the answer came in (OpenAI: the event to rewrite).
	agent any
}

// Rule is one proxied connection's state. Not safe for concurrent use: the
// connection steps it under its lock.
type Rule struct {
	cfg   Config
	proto protocol
	// now is the time of the step running.
	now time.Time
	out []Action

	calls  map[string]*callState
	acted  map[uint64]bool // effect seqs acted on
	actedN int
	// busy: the model is producing a turn (its audio or text, a call); notes that
	// must wait for it to finish wait in idleNotes.
	busy      bool
	idleNotes []arbiter.Note
	// queues of held frames, per destination.
	toAgent, toServer []*held
	// session: the arbiter session (bound once: OpenAI at the start, Gemini at its
	// setup, which may name one in its resumption handle); conn: this connection's id.
	session, conn string
	bound         bool
	// resumable: the connection's session may go on on another connection (a
	// Gemini setup asking for resumption, or a session the agent named).
	resumable bool
	named     bool
	// language: the one the agent gave the provider (configureLanguage); "" none.
	language string
	counts   Counts
	seq      int // the guard's own ids
	bad      int // bad frames logged
}

// protocol is one protocol's half of the rule.
type protocol interface {
	// fromServer handles a server message; fromAgent an agent message.
	fromServer(r *Rule, f Frame)
	fromAgent(r *Rule, f Frame)
	// respond sends the arbiter's final response for c upstream: in place of the
	// agent's held answer h when not nil (its place in the queue), else as the
	// guard's own message.
	respond(r *Rule, c *callState, payload map[string]any, h *held)
	// interim sends a non-final response for c (Gemini's willContinue).
	interim(r *Rule, c *callState, payload map[string]any)
	// note sends a status note as a user turn.
	note(r *Rule, text string)
	// dropAnswer tells the agent what it needs about an answer of its that went
	// nowhere (OpenAI: the item's echo, which its framework waits for).
	dropAnswer(r *Rule, h *held)
	// released: the call ids a held server message waits for were registered: its
	// frame without the calls the agent is not to run.
	released(r *Rule, h *held, f Frame) []Frame
	// behavior is a function's behavior as the session declared it ("": the
	// policy's).
	behavior(name string) arbiter.Behavior
}

// NewRule returns the state of a new connection speaking proto ("gemini" or
// "openai"; beta for OpenAI's beta event names), with connection id conn and the
// arbiter session id session (named: the agent named it, so the connection's end does
// not end it; else a new one the guard made up, which a Gemini resumption handle may
// replace).
func NewRule(cfg Config, proto string, beta bool, session, conn string, named bool) *Rule {
	r := &Rule{cfg: cfg, calls: map[string]*callState{}, acted: map[uint64]bool{}, counts: Counts{},
		session: session, conn: conn, named: named, resumable: named}
	if proto == "openai" {
		r.proto = newOpenAI(beta)
	} else {
		r.proto = newGemini()
	}
	return r
}

// Step applies one input at time now and returns what to do, in order. The slice
// is the caller's.
func (r *Rule) Step(now time.Time, in Input) []Action {
	r.now, r.out = now, nil
	switch x := in.(type) {
	case FromServer:
		r.proto.fromServer(r, x.Frame)
	case FromAgent:
		r.proto.fromAgent(r, x.Frame)
	case Registered:
		r.registered(x)
	case Answered:
		r.answered(x)
	case Effects:
		r.effects(x)
	case Tick:
	}
	r.tick()
	r.flush()
	out := r.out
	r.out = nil
	return out
}

// Start returns what the connection does as it opens: on OpenAI it binds its session
// and reports the Connect (a Gemini connection waits for its setup, which may resume
// a session).
func (r *Rule) Start(now time.Time) []Action {
	r.now, r.out = now, nil
	if _, ok := r.proto.(*openaiRule); ok {
		r.bind()
	}
	out := r.out
	r.out = nil
	return out
}

// End returns what the connection does once it is closed: a session that cannot go
// on on another connection is closed (undecided jobs cancelled, unanswered ids dead).
func (r *Rule) End(now time.Time) []Action {
	r.now, r.out = now, nil
	if r.bound && !r.resumable {
		r.report(arbiter.Close{}, "")
	}
	out := r.out
	r.out = nil
	return out
}

// Session returns the arbiter session id the connection reports to ("" before it is
// bound).
func (r *Rule) Session() string {
	if !r.bound {
		return ""
	}
	return r.session
}

// bind binds the session and reports the connection: Connect, then the options.
func (r *Rule) bind() {
	if r.bound {
		return
	}
	r.bound = true
	r.out = append(r.out, Action{Bind: r.session})
	r.report(arbiter.Connect{ConnectionID: r.conn}, "")
	_, gem := r.proto.(*geminiRule)
	if gem || r.cfg.Record || r.language != "" {
		// Gemini honours a NON_BLOCKING function response's scheduling: a note may
		// ride on one.
		r.report(arbiter.Configure{ResponseScheduling: gem, Record: r.cfg.Record, Language: r.language}, "")
	}
}

// configureLanguage reports the language the agent gave the provider (a Gemini
// setup's speechConfig, an OpenAI session.update's input transcription) as the
// session's, so business keys are read in it ("mañana 3 de la tarde"); once bound,
// when it changes. Not a BCP 47 tag: logged and left out (the engine would refuse the
// whole Configure).
func (r *Rule) configureLanguage(lang string) {
	if lang == "" || lang == r.language {
		return
	}
	if len(lang) > 35 || arbiter.CheckName("language", lang) != nil { // Configure's rule
		r.logf(true, "the agent's language is not a BCP 47 tag: business keys are read in the session's language", "language", arbiter.Clip(lang))
		return
	}
	r.language = lang
	if r.bound {
		_, gem := r.proto.(*geminiRule)
		r.report(arbiter.Configure{ResponseScheduling: gem, Language: lang}, "")
	}
}

// setup takes a Gemini setup's resumption handle (a handle the guard made names the
// session it resumes) and its language (configureLanguage).
func (r *Rule) setup(handle string, resumption bool, language string) {
	if id, _, ok := splitHandle(handle); ok && !r.bound {
		r.session = id
	}
	r.resumable = r.resumable || resumption
	r.configureLanguage(language)
	r.bind()
}

// handleFor is the handle the agent gets for the server's real one: it carries the
// session id, so a resumption (on any replica, after a restart) finds the session.
func (r *Rule) handleFor(real string) string { return joinHandle(r.session, real) }

// realHandle is the server's handle in one the agent sends; ok false when it is not
// one the guard made (it goes as it is).
func (r *Rule) realHandle(h string) (string, bool) {
	_, real, ok := splitHandle(h)
	return real, ok
}

// modelOutput: the model produces output (audio): reported once per turn.
func (r *Rule) modelOutput() {
	if !r.busy {
		r.report(arbiter.Speech{Kind: arbiter.ModelOutputStart, ObservedAt: r.now}, "")
	}
	r.busy = true
}

// badFrame logs a frame that could not be read (the first few per connection, then
// every hundredth): it goes on as it is.
func (r *Rule) badFrame(from Side, f Frame, err error) {
	r.bad++
	if r.bad <= 3 || r.bad%100 == 0 {
		r.logf(true, "frame not understood: forwarded as it is", "from", from.String(), "bytes", len(f.Data), "err", err.Error(), "count", r.bad)
	}
}

// Counts returns what the rule dropped and injected so far (a copy).
func (r *Rule) Counts() Counts {
	c := Counts{}
	for k, v := range r.counts {
		c[k] = v
	}
	return c
}

// Next is when the rule next needs a Tick (zero: no deadline pending).
func (r *Rule) Next() time.Time {
	var next time.Time
	at := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, c := range r.calls {
		switch {
		case c.sent || c.dead:
		case !c.registered && !c.failed:
			at(c.seen.Add(r.cfg.registerWait()))
		case c.due != nil:
			at(c.dueAt.Add(r.cfg.answerWait()))
		default:
			at(c.seen.Add(r.maxPending(c) + r.cfg.slack()))
		}
	}
	return next
}

// Pending lists the call ids still waiting for an answer upstream, sorted (for tests
// and the connection's end-of-life log).
func (r *Rule) Pending() []string {
	var ids []string
	for id, c := range r.calls {
		if !c.sent && !c.dead {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// ---- actions ----------------------------------------------------------------------

func (r *Rule) send(to Side, f Frame) {
	r.out = append(r.out, Action{Send: &Frame{Data: f.Data, Binary: f.Binary}, To: to})
}

// through sends the Step's own frame on, as it came, keeping no reference to it
// (Action.Through): the fast path of audio. Only for the input frame, once.
func (r *Rule) through(to Side, f Frame) {
	r.out = append(r.out, Action{Send: &Frame{Data: f.Data, Binary: f.Binary}, To: to, Through: true})
}

func (r *Rule) report(ev arbiter.Event, tag string) {
	r.out = append(r.out, Action{Report: ev, Tag: tag})
}

func (r *Rule) logf(warn bool, msg string, attrs ...any) {
	r.out = append(r.out, Action{Log: &LogLine{Warn: warn, Msg: msg, Attrs: attrs}})
}

// count adds one to what the rule did (Counts) and logs it.
func (r *Rule) count(what, why, callID string) {
	r.tally(false, what, why, "why", why, "call_id", callID)
}

// tally adds one to Counts' entry "what: why" (just what when why is empty) and logs
// it: the line's message is what, and it names the entry (LogLine.What, Why).
func (r *Rule) tally(warn bool, what, why string, attrs ...any) {
	key := what
	if why != "" {
		key += ": " + why
	}
	r.counts[key]++
	r.out = append(r.out, Action{Log: &LogLine{Warn: warn, Msg: what, Attrs: attrs, What: what, Why: why}})
}

// ---- queues -------------------------------------------------------------------------

// queue returns the queue of frames held for side to.
func (r *Rule) queue(to Side) *[]*held {
	if to == Agent {
		return &r.toAgent
	}
	return &r.toServer
}

// pass sends f to `to` now, or behind the frames held for it when dependent is set
// and some are (a frame that does not depend on them, audio, goes at once).
func (r *Rule) pass(to Side, f Frame, dependent bool) {
	if !r.mustWait(to, dependent) {
		r.send(to, f)
		return
	}
	r.hold(to, &held{out: []Frame{f}, ready: true})
}

// passThrough is pass for the Step's own frame as it came (audio): sent at once, it
// goes as through (its buffer reused once written); held, as pass holds it.
func (r *Rule) passThrough(to Side, f Frame, dependent bool) {
	if !r.mustWait(to, dependent) {
		r.through(to, f)
		return
	}
	r.hold(to, &held{out: []Frame{f}, ready: true})
}

// mustWait reports whether a frame for `to` waits behind what is held for it: only a
// dependent one, and only while something is held.
func (r *Rule) mustWait(to Side, dependent bool) bool {
	return dependent && len(*r.queue(to)) > 0
}

// hold appends h to the queue of frames for `to`.
func (r *Rule) hold(to Side, h *held) { q := r.queue(to); *q = append(*q, h) }

// flush sends, for each side, the frames at the head of its queue that are ready.
func (r *Rule) flush() {
	for _, to := range []Side{Agent, Server} {
		q := r.queue(to)
		for len(*q) > 0 && (*q)[0].ready {
			h := (*q)[0]
			*q = (*q)[1:]
			out := h.out
			if h.build != nil {
				out = h.build()
			}
			for _, f := range out {
				r.send(to, f)
			}
		}
	}
}

// ---- calls ------------------------------------------------------------------------

// serverCall registers a function call the server issued: reported to the arbiter,
// held (the frame that carries it, with the frame's hold h) until its answer.
// Returns false for a call id this connection has seen (the server repeated it: the
// repeat is dropped from the frame).
func (r *Rule) serverCall(id, name string, args map[string]any, raw string, toolChoiceNone bool, h *held) bool {
	c := r.newCall(id, name, h)
	if c == nil {
		return false
	}
	r.register(c, args, raw, toolChoiceNone)
	return true
}

// newCall records a call the server issued, waiting for its registration in h; nil
// for an id seen before (dropped as a repeat).
func (r *Rule) newCall(id, name string, h *held) *callState {
	if c := r.calls[id]; c != nil {
		r.count("dropped server call", "repeated call id", id)
		return nil
	}
	c := &callState{id: id, name: name, seen: r.now}
	r.calls[id] = c
	h.calls[id] = true
	r.busy = true
	return c
}

// register reports c to the arbiter (its arguments complete); once.
func (r *Rule) register(c *callState, args map[string]any, raw string, toolChoiceNone bool) {
	if c.registering || c.registered || c.failed {
		return
	}
	c.registering, c.toolChoiceNone = true, toolChoiceNone
	ev := arbiter.RegisterCall{CallID: c.id, Tool: c.name, Args: args, RawArgs: raw, ToolChoiceNone: toolChoiceNone, ObservedAt: r.now}
	if b := r.proto.behavior(c.name); b != "" {
		ev.Behavior = b
	}
	r.report(ev, c.id)
}

// registered takes the arbiter's answer to a RegisterCall.
func (r *Rule) registered(x Registered) {
	c := r.calls[x.CallID]
	if c == nil || c.registered || c.failed {
		return // failed closed already: the late answer changes nothing here
	}
	if x.Err != nil {
		r.failClosed(c, fmt.Sprintf("the arbiter could not register it: %v", arbiter.MessageOf(x.Err)))
		return
	}
	c.registered = true
	c.disp = x.Result.Disposition
	c.sideEffect = x.Result.SideEffect
	c.toAgent = c.disp == arbiter.Execute
	if !c.toAgent {
		r.count("kept call from agent", string(c.disp), c.id)
	}
	r.releaseCall(c)
	r.maybeRespond(c)
}

// failClosed answers c upstream with the guard's own "not executed" response and
// never gives it to the agent: the arbiter could not be asked in time.
func (r *Rule) failClosed(c *callState, why string) {
	c.failed = true
	r.out = append(r.out, Action{Abandon: c.id})
	r.logf(true, "function call failed closed", "call_id", c.id, "tool", c.name, "why", why)
	r.releaseCall(c)
	switch {
	case c.sent || c.dead:
	case c.due != nil:
		r.respond(c) // the arbiter did answer (its log said so before its reply came)
	default:
		r.inject(c, map[string]any{"status": string(arbiter.StatusRejected), "executed": false,
			"error": fmt.Sprintf("%s was not executed: %s", c.name, why)}, "failed closed")
	}
}

// releaseCall marks c resolved in the server message that carries it; the message
// goes once all its calls are.
func (r *Rule) releaseCall(c *callState) {
	for _, h := range r.toAgent {
		if !h.calls[c.id] {
			continue
		}
		delete(h.calls, c.id)
		if len(h.calls) == 0 && !h.ready {
			h.ready = true
			src := h.out
			h.out = nil
			for _, f := range src {
				h.out = append(h.out, r.proto.released(r, h, f)...)
			}
		}
	}
}

// agentRuns reports whether the agent may see call id (it runs it).
func (r *Rule) agentRuns(id string) bool {
	c := r.calls[id]
	return c != nil && c.toAgent && !c.failed
}

// agentAnswer takes the agent's answer for call id, h its place in the queue of
// frames to the server (ready false; its out the agent's own frames), payload what
// it said. Returns whether the answer is kept (held or on its way); false: it was
// dropped (h dropped with it).
func (r *Rule) agentAnswer(id string, payload map[string]any, h *held) bool {
	c := r.calls[id]
	why := ""
	switch {
	case c == nil:
		why = "unknown call id on this connection"
	case c.dead:
		why = "dead id: " + c.deadReason
	case c.sent || c.answer != nil:
		why = "already answered"
	case !c.registered && !c.failed:
		why = "call not given to the agent yet" // cannot happen: the agent never saw it
	case !c.toAgent || c.failed:
		why = "the arbiter answers this call itself"
	}
	if why != "" {
		r.count("dropped agent answer", why, id)
		r.proto.dropAnswer(r, h)
		if c != nil && c.sent && !c.dead && c.answer == nil && !c.asked {
			// The call has its one answer (its deadline's, say), but what the tool
			// answered is still its job's result: a read-only result that came late
			// gets the arbiter's note. The verdict is not waited for (asked stays
			// false): nothing more goes for this call.
			r.report(arbiter.ToolAnswer{CallID: id, Payload: payload, ObservedAt: r.now}, id)
		}
		return false
	}
	h.call = id
	c.answer = h
	r.hold(Server, h)
	if c.due != nil {
		r.respond(c)
		return true
	}
	c.asked = true
	r.report(arbiter.ToolAnswer{CallID: id, Payload: payload, ObservedAt: r.now}, id)
	return true
}

// answered takes the arbiter's verdict on the agent's answer.
func (r *Rule) answered(x Answered) {
	c := r.calls[x.CallID]
	if c == nil || !c.asked {
		return
	}
	c.asked = false
	if c.answer == nil {
		return // resolved meanwhile (its response or its skip came first)
	}
	switch {
	case x.Err != nil:
		// The arbiter cannot say: the agent's own answer goes (a read-only result, or
		// what a tool without arbiter code did); a tool with the helper failed closed
		// and says so itself.
		r.logf(true, "agent answer forwarded as it is: the arbiter could not be asked", "call_id", c.id, "err", arbiter.MessageOf(x.Err))
		c.sent = true
		h := c.answer
		c.answer = nil
		h.ready = true
	case x.Answer.Verdict == arbiter.AnswerSend:
		c.due, c.dueAt = x.Answer.Response, r.now
		r.respond(c)
	case x.Answer.Verdict == arbiter.AnswerDrop:
		r.kill(c, x.Answer.Reason)
	}
	// AnswerWait: held until the job's response or the call's skip.
}

// respond sends c's due response, in place of the agent's held answer if there is
// one.
func (r *Rule) respond(c *callState) {
	if c.sent || c.dead || c.due == nil {
		return
	}
	c.sent = true
	p := c.due.Payload
	h := c.answer
	c.answer = nil
	if h == nil {
		why := r.injectWhy(c)
		r.tally(false, "injected response", why, "why", why, "call_id", c.id)
	} else if h.ready {
		h = nil // cannot happen: an answer held is released here
	}
	r.proto.respond(r, c, p, h)
}

func (r *Rule) injectWhy(c *callState) string {
	switch {
	case c.failed:
		return "failed closed"
	case !c.toAgent:
		return string(c.disp)
	case !c.seen.IsZero() && r.now.Sub(c.seen) >= r.maxPending(c):
		return "deadline"
	default:
		return "agent did not answer"
	}
}

// inject sends a response the guard made itself (not the arbiter's: it could not be
// asked).
func (r *Rule) inject(c *callState, payload map[string]any, why string) {
	c.sent = true
	r.tally(true, "injected response", why, "why", why, "call_id", c.id)
	h := c.answer
	c.answer = nil
	r.proto.respond(r, c, payload, h)
}

// kill marks c dead: its held answer, if any, is dropped.
func (r *Rule) kill(c *callState, reason string) {
	if c.dead || c.sent {
		return
	}
	c.dead, c.deadReason = true, reason
	if h := c.answer; h != nil {
		c.answer = nil
		r.count("dropped agent answer", "dead id: "+reason, c.id)
		r.proto.dropAnswer(r, h)
		h.out, h.build, h.ready = nil, nil, true // its place in the queue goes empty
	}
}

func (r *Rule) maxPending(c *callState) time.Duration {
	if r.cfg.Policy == nil {
		return arbiter.DefaultTimings.MaxPending
	}
	return r.cfg.Policy.TimingsOf(c.name).MaxPending
}

// ---- effects ------------------------------------------------------------------------

func (r *Rule) effects(x Effects) {
	// A note riding on a response comes after it in the log: read the riders first.
	for _, e := range x.Entries {
		if n := e.Note; n != nil && n.Via == arbiter.ViaFunctionResponse {
			if c := r.calls[n.CallID]; c != nil {
				c.sched = n.Scheduling
			}
		}
	}
	for _, e := range x.Entries {
		if e.Seq != 0 {
			if r.acted[e.Seq] {
				continue
			}
			r.acted[e.Seq] = true
		}
		switch {
		case e.Response != nil:
			r.response(*e.Response)
		case e.Skip != nil:
			if c := r.calls[e.Skip.CallID]; c != nil {
				r.kill(c, string(e.Skip.Reason))
			}
		case e.Note != nil && x.Current:
			r.noteDue(*e.Note)
		}
	}
}

func (r *Rule) response(resp arbiter.Response) {
	c := r.calls[resp.CallID]
	if c == nil || c.sent || c.dead {
		return // another connection's call, or answered already
	}
	if resp.Interim {
		if !c.sent {
			r.proto.interim(r, c, resp.Payload)
		}
		return
	}
	c.due, c.dueAt = &resp, r.now
	r.maybeRespond(c)
}

// maybeRespond sends c's due response now, unless the agent runs the call and may
// still answer it: then its answer is waited for (AnswerWait), so that the answer
// goes in its place (on OpenAI its own item, and the response.create behind it). A
// call whose registration has not come back yet waits for it (the watch may bring
// the log entries of a step before its own answer does).
func (r *Rule) maybeRespond(c *callState) {
	if c.due == nil || (!c.registered && !c.failed) {
		return
	}
	if c.answer != nil || !c.toAgent || c.failed || r.now.Sub(c.seen) >= r.maxPending(c) {
		r.respond(c)
	}
}

// noteDue sends a status note now, or once the model is idle.
func (r *Rule) noteDue(n arbiter.Note) {
	if n.Via == arbiter.ViaFunctionResponse {
		return // it rides on its call's response (status_note in the payload)
	}
	if n.Deliver == arbiter.DeliverWhenIdle && r.busy {
		r.idleNotes = append(r.idleNotes, n)
		return
	}
	r.sendNote(n)
}

func (r *Rule) sendNote(n arbiter.Note) {
	r.tally(false, "injected note", "", "job_id", n.JobID, "deliver", string(n.Deliver))
	r.proto.note(r, n.Text)
}

// idle says the model finished its turn: notes waiting for it go.
func (r *Rule) idle() {
	r.busy = false
	notes := r.idleNotes
	r.idleNotes = nil
	for _, n := range notes {
		r.sendNote(n)
	}
}

// ---- time ---------------------------------------------------------------------------

func (r *Rule) tick() {
	ids := make([]string, 0, len(r.calls))
	for id := range r.calls {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		c := r.calls[id]
		switch {
		case c.sent || c.dead:
		case !c.registered && !c.failed:
			if !r.now.Before(c.seen.Add(r.cfg.registerWait())) {
				r.failClosed(c, fmt.Sprintf("the arbiter did not answer within %v", r.cfg.registerWait()))
			}
		case c.due != nil:
			if !r.now.Before(c.dueAt.Add(r.cfg.answerWait())) {
				r.respond(c)
			}
		default:
			if !r.now.Before(c.seen.Add(r.maxPending(c) + r.cfg.slack())) {
				r.inject(c, map[string]any{"status": string(arbiter.StatusTimeout), "executed": false,
					"error": fmt.Sprintf("%s: no outcome within max_pending %v (the arbiter could not be asked)", c.name, r.maxPending(c))}, "guard deadline")
			}
		}
	}
}

// newID makes one of the guard's own ids: prefix and a counter.
func (r *Rule) newID(prefix string) string {
	r.seq++
	return fmt.Sprintf("%s%d", prefix, r.seq)
}
