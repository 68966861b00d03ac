package guard

import (
	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/realtime"
	"github.com/voicearbiter/arbiter/internal/realtime/openai"
)

// OpenAI Realtime's half of the rule. Server events:
//
//	session.created                               read: input transcription on already (the
//	                                              agent's choice) or not
//	session.updated                               the answer to the guard's own: not forwarded;
//	                                              the input transcription the guard asked for
//	                                              shown null
//	input_audio_buffer.speech_started/_stopped   Speech user activity (item_id: the utterance)
//	...input_audio_transcription.completed/.delta Transcript (final / interim), item_id; all
//	  (and .failed)                               of them kept back when the guard asked for them
//	response.output_audio.delta                   Speech model output (1st); forwarded at once
//	response.output_audio_transcript.delta        Transcript (model)
//	response.output_item.added (function_call)    held, with every later event about the item,
//	  ... function_call_arguments.done             RegisterCall (tool choice none when the response
//	                                               or the session runs under it); released once
//	                                               registered, or dropped for a call the agent is
//	                                               not to run (duplicate, rejected, run prompt).
//	                                               Whichever of the call's events comes first
//	                                               (its arguments, its item done, its conversation
//	                                               item, response.done) makes it known, once
//	                                               (serverCall); registered once its name and
//	                                               final arguments are both known
//	response.done                                 Speech interrupted (cut off by barge-in,
//	                                              openai.BargeIn) or generation and turn complete;
//	                                              its output without hidden items;
//	                                              notes waiting for the model to be idle go
//	conversation.item.deleted of a call's item    ToolCallCancellation, unless the agent asked for
//	                                              the delete (its own delete is not a withdrawal)
//	events about the guard's own items            not forwarded (the agent never sees them; a
//	                                              previous_item_id naming one names the item before)
//	error naming one of the guard's events        not forwarded
//
// Agent events:
//
//	conversation.item.create function_call_output  ToolAnswer: the arbiter's response goes in its
//	                                               place (the agent's item id kept), held with the
//	                                               events behind it until the arbiter's is due;
//	                                               or dropped, and its echo made by the guard
//	conversation.item.create function_call        the agent's own history (after a reconnect): its
//	                                              outputs go as they are
//	conversation.item.delete of an answer          the answer stays; the delete is echoed by the guard
//	response.create, session.update               tool choice read; forwarded in order; the
//	                                              first session.update without input transcription
//	                                              gets it (Config.AddTranscription)
//	input_audio_buffer.append                     forwarded at once, never held
//	the agent's first event, no session.update    preceded by a session.update of the guard's own
//	  before it                                   asking for input transcription
//	                                              (Config.AddTranscription)
type openaiRule struct {
	beta bool
	// toolChoiceNone: the session's tool_choice is none; choices: the tool choice of
	// each response.create the agent sent (none: true) not matched to a response
	// yet; respNone: the response in progress runs under none.
	toolChoiceNone bool
	choices        []bool
	respNone       bool
	respOpen       bool
	// speechDuring: input_audio_buffer.speech_started came while the response in
	// progress was open (openai.BargeIn: a client cancel after it is barge-in).
	speechDuring bool
	// wantResponse: the guard added items while a response was open: a
	// response.create goes once it is done.
	wantResponse bool
	// itemCall: a server function_call item's call id; agentCalls: call ids of
	// function_call items the agent created (history it replays).
	itemCall   map[string]string
	agentCalls map[string]bool
	// args: a server call's final arguments, once an event carried them (argsDone),
	// until it is registered with its name (serverCall).
	args     map[string]string
	argsDone map[string]bool
	// hidden: items the agent does not know (the guard's own, the calls it is not to
	// run); prev: each item's previous_item_id as the server said.
	hidden map[string]bool
	prev   map[string]string
	// phantom: items the agent believes in and the server does not have (an answer
	// dropped, echoed by the guard), or has and the agent deleted (an answer kept).
	phantom map[string]bool
	// answers: items of function_call_outputs that answer a call upstream.
	answers map[string]string
	// agentDeletes: items the agent asked to delete (their echo is no withdrawal).
	agentDeletes map[string]bool
	// shown: output items whose output_item.added the agent got; lastShown: the last
	// conversation item the agent was told of (what the guard's echoes follow).
	shown     map[string]bool
	lastShown string
	// Input transcription (Config.AddTranscription): agentSet, the agent's session
	// has carried the field (on or null: its choice, never overridden); asked, the
	// guard turned it on (in the agent's first session.update, or its own before
	// the agent's first other event); refused, the server refused the guard's model
	// (never asked again); updated, the agent has sent a session.update; started, it
	// has sent another event; created, session.created came. updates: the
	// session.updates not answered yet, in order, so that the session.updated of the
	// guard's own is kept from the agent.
	agentSet, asked, refused, updated, started, created bool
	updates                                             []pendingUpdate
}

// pendingUpdate is a session.update waiting for its session.updated: its event id
// ("" when the agent gave none) and whether it is the guard's own.
type pendingUpdate struct {
	id  string
	own bool
}

func newOpenAI(beta bool) *openaiRule {
	return &openaiRule{beta: beta, itemCall: map[string]string{}, agentCalls: map[string]bool{}, args: map[string]string{}, argsDone: map[string]bool{}, hidden: map[string]bool{},
		prev: map[string]string{}, phantom: map[string]bool{}, answers: map[string]string{}, agentDeletes: map[string]bool{},
		shown: map[string]bool{}}
}

// behavior: an OpenAI call carries none; the policy decides.
func (o *openaiRule) behavior(string) arbiter.Behavior { return "" }

func (o *openaiRule) fromServer(r *Rule, f Frame) {
	ev, err := openai.ParseServer(f.Data)
	if err != nil {
		r.badFrame(Server, f, err)
		r.pass(Agent, f, true)
		return
	}
	if ev.Audio {
		r.modelOutput()
		r.passThrough(Agent, f, !o.shown[ev.ItemID])
		return
	}
	if o.hideInput() && openai.IsTranscriptionEvent(ev.Type) {
		// The guard asked for it: reported (below), never shown to the agent.
		if ev.Type == openai.TranscriptionCompleted || ev.Type == openai.TranscriptionDelta {
			if ev.Text != "" {
				r.report(arbiter.Transcript{Text: ev.Text, Interim: ev.Type == openai.TranscriptionDelta, UtteranceID: utteranceID(ev.ItemID), ObservedAt: r.now}, "")
			}
		}
		return
	}
	switch ev.Type {
	case openai.SessionCreated:
		o.toolChoiceNone = ev.ToolChoice == "none"
		o.sessionCreated(r, f)
	case openai.SessionUpdated:
		o.toolChoiceNone = ev.ToolChoice == "none"
		if !o.sessionUpdated(r, f) {
			return
		}
		f = o.hideEcho(f)
	case openai.SpeechStarted:
		o.speechDuring = o.speechDuring || o.respOpen
		r.report(arbiter.Speech{Kind: arbiter.UserActivityStart, UtteranceID: utteranceID(ev.ItemID), ObservedAt: r.now}, "")
	case openai.SpeechStopped:
		r.report(arbiter.Speech{Kind: arbiter.UserActivityEnd, UtteranceID: utteranceID(ev.ItemID), ObservedAt: r.now}, "")
	case openai.TranscriptionCompleted, openai.TranscriptionDelta:
		if ev.Text != "" {
			r.report(arbiter.Transcript{Text: ev.Text, Interim: ev.Type == openai.TranscriptionDelta, UtteranceID: utteranceID(ev.ItemID), ObservedAt: r.now}, "")
		}
	case openai.AudioTranscriptDelta, openai.AudioTranscriptDeltaB:
		if ev.Text != "" {
			r.busy = true
			r.report(arbiter.Transcript{Model: true, Text: ev.Text, ObservedAt: r.now}, "")
		}
	case openai.ResponseCreated:
		o.respOpen, o.speechDuring = true, false
		o.respNone = o.toolChoiceNone
		if len(o.choices) > 0 {
			o.respNone = o.choices[0] || o.respNone
			o.choices = o.choices[1:]
		}
	case openai.OutputItemAdded, openai.OutputItemDone, openai.ArgumentsDelta, openai.ArgumentsDone,
		openai.ItemAdded, openai.ItemCreated, openai.ItemDone:
		if fcs := ev.FunctionCalls(); len(fcs) == 1 && o.serverCall(r, f, fcs[0], nil) {
			return // held as its call's first event, or dropped as a repeat's
		}
		if ev.Type == openai.OutputItemAdded && ev.Item != nil && ev.Item.Type != openai.FunctionCallType {
			o.shown[ev.Item.ID] = true
		}
	case openai.ResponseDone:
		o.responseDone(r, f, ev)
		return
	case openai.ItemDeleted:
		o.deleted(r, f, ev)
		return
	case openai.ErrorEvent:
		if m, err := realtime.DecodeObject(f.Data); err == nil {
			o.refusedUpdate(r, m)
			if isGuards(openai.ErrorEventID(m)) {
				r.logf(true, "the server refused an event of the guard's", "event", string(f.Data))
				return
			}
		}
	}
	o.forward(r, f, ev)
}

// serverCall makes the function call fc, named by the server event in frame f, known to
// the rule, whatever event names it first: a real server sends the item's
// response.output_item.added first, but its arguments, its item done, its
// conversation item or response.done may be the first the guard reads, and a call
// must not get past the rule for the order its events came in. A call id not seen
// before is a new call (newCall), held until registered: in into when set (the
// response.done that names several), else in a hold of f of its own, and then true
// is returned (f is taken). A call id known already with another item is the server
// repeating it (a re-issue): that item is the guard's from then on, hidden from the
// agent in every event (response.done's output included), so the agent's tool never
// runs the call twice; true (f dropped). Else (the same call's next event) false: f
// goes on as any event about the call (forward). Each event adds what it knows: the
// item, the name, the final arguments; the call is registered (RegisterCall) once,
// when its name and final arguments are both known. A conversation item of a call the
// agent created (its own history) is no server call.
func (o *openaiRule) serverCall(r *Rule, f Frame, fc openai.FunctionCall, into *held) bool {
	if o.hidden[fc.ItemID] || (o.agentCalls[fc.CallID] && !fc.Model) {
		return false // a repeat's item (forward drops it), or the agent's own
	}
	c := r.calls[fc.CallID]
	fresh := c == nil
	switch {
	case fresh:
		h := into
		if h == nil {
			h = &held{calls: map[string]bool{}, out: []Frame{f}}
		}
		c = r.newCall(fc.CallID, fc.Name, h)
		if into == nil {
			r.hold(Agent, h)
		}
	case fc.ItemID != "" && c.item != "" && fc.ItemID != c.item:
		r.count("dropped server call", "repeated call id", fc.CallID)
		o.hidden[fc.ItemID] = true
		o.itemCall[fc.ItemID] = fc.CallID
		return true
	}
	if fc.ItemID != "" && c.item == "" {
		c.item = fc.ItemID
		o.itemCall[fc.ItemID] = fc.CallID
	}
	if c.registering || c.registered || c.failed {
		return fresh
	}
	if c.name == "" {
		c.name = fc.Name
	}
	if fc.Complete && !o.argsDone[c.id] {
		o.argsDone[c.id], o.args[c.id] = true, fc.Arguments
	}
	if o.argsDone[c.id] && c.name != "" {
		args, raw := openai.ReadArguments(o.args[c.id])
		r.register(c, args, raw, o.respNone)
		delete(o.args, c.id)
		delete(o.argsDone, c.id)
	}
	return fresh
}

// utteranceID is an OpenAI item id as an utterance id (the arbiter's charset; an id
// outside it is left out: the transcript is then attributed by order).
func utteranceID(id string) string {
	if arbiter.CheckName("utterance_id", id) != nil {
		return ""
	}
	return id
}

// call is the server call a function_call item (or call id) is about; nil when none.
func (o *openaiRule) call(r *Rule, item, callID string) *callState {
	if id, ok := o.itemCall[item]; ok {
		callID = id
	}
	return r.calls[callID]
}

// about is the server call an event is about (its item, its item_id, its call_id);
// nil when none.
func (o *openaiRule) about(r *Rule, ev openai.ServerEvent) *callState {
	if it := ev.Item; it != nil {
		if c := o.call(r, it.ID, ""); c != nil {
			return c
		}
		if it.Type == openai.FunctionCallType && !o.agentCalls[it.CallID] {
			return r.calls[it.CallID]
		}
		return nil
	}
	if c := o.call(r, ev.ItemID, ""); c != nil {
		return c
	}
	if ev.CallID != "" {
		return r.calls[ev.CallID]
	}
	return nil
}

// forward sends a server event on: dropped when it is about an item the agent does
// not see, held behind a call being registered when it is about that call, with its
// previous_item_id mended when that names a hidden item.
func (o *openaiRule) forward(r *Rule, f Frame, ev openai.ServerEvent) {
	if it := ev.Item; it != nil && it.ID != "" && ev.HasPreviousItemID {
		o.prev[it.ID] = ev.PreviousItemID
	}
	if it := ev.Item; (it != nil && o.hidden[it.ID]) || (ev.ItemID != "" && o.hidden[ev.ItemID]) {
		return // the guard's own item (or a repeat's)
	}
	if c := o.about(r, ev); c != nil {
		switch {
		case !r.agentRuns(c.id) && (c.registered || c.failed):
			o.hide(c)
			return
		case !c.registered && !c.failed:
			id := c.id
			r.hold(Agent, &held{ready: true, build: func() []Frame {
				if !r.agentRuns(id) {
					return nil
				}
				return []Frame{o.mend(f, ev)}
			}})
			return
		}
	}
	if ev.Item != nil && (ev.Type == openai.ItemAdded || ev.Type == openai.ItemCreated || ev.Type == openai.ItemDone) {
		o.lastShown = ev.Item.ID
	}
	r.pass(Agent, o.mend(f, ev), true)
}

// hide marks a call the agent is not to run: its item is not the agent's.
func (o *openaiRule) hide(c *callState) {
	if c.item != "" {
		o.hidden[c.item] = true
	}
}

// mend returns f with its previous_item_id naming the nearest item before it that
// the agent knows (hidden items are the guard's business).
func (o *openaiRule) mend(f Frame, ev openai.ServerEvent) Frame {
	if !ev.HasPreviousItemID || !o.hidden[ev.PreviousItemID] {
		return f
	}
	p := ev.PreviousItemID
	for n := 0; o.hidden[p] && n < 1000; n++ {
		p = o.prev[p]
	}
	b, ok, err := openai.EditServer(f.Data, func(m openai.Obj) bool {
		if p == "" {
			m["previous_item_id"] = nil
		} else {
			m["previous_item_id"] = p
		}
		return true
	})
	if err != nil || !ok {
		return f
	}
	return Frame{Data: b, Binary: f.Binary}
}

// responseDone reports the response's end and sends it on without the items the
// agent does not see (held while one of its calls is being registered).
func (o *openaiRule) responseDone(r *Rule, f Frame, ev openai.ServerEvent) {
	// Its calls first (serverCall): one it names first is registered before the
	// response's end is reported, as one whose arguments came before it (a BLOCKING
	// call of a response cut off by barge-in is abandoned either way).
	first := &held{calls: map[string]bool{}}
	for _, fc := range ev.FunctionCalls() {
		o.serverCall(r, f, fc, first)
	}
	speech := o.speechDuring
	o.respOpen, o.speechDuring = false, false
	if ev.Response != nil && openai.BargeIn(ev.Response.Status, ev.Response.Reason, speech) {
		r.report(arbiter.Speech{Kind: arbiter.Interrupted, ObservedAt: r.now}, "")
	} else {
		r.report(arbiter.Speech{Kind: arbiter.ModelGenerationComplete, ObservedAt: r.now}, "")
		r.report(arbiter.Speech{Kind: arbiter.ModelTurnComplete, ObservedAt: r.now}, "")
	}
	pending := false
	if ev.Response != nil {
		for _, it := range ev.Response.Output {
			if c := o.call(r, it.ID, ""); c != nil && !c.registered && !c.failed {
				pending = true
			}
		}
	}
	strip := func() []Frame {
		b, ok, err := openai.EditServer(f.Data, func(m openai.Obj) bool {
			resp := realtime.ObjField(m, "response")
			var keep []any
			for _, x := range realtime.ListField(resp, "output") {
				it, _ := x.(openai.Obj)
				id, _ := it["id"].(string)
				if c := o.call(r, id, ""); (c != nil && !r.agentRuns(c.id)) || o.hidden[id] {
					continue
				}
				keep = append(keep, x)
			}
			if resp != nil {
				if keep == nil {
					keep = []any{}
				}
				resp["output"] = keep
			}
			return true
		})
		if err != nil || !ok {
			return []Frame{f}
		}
		return []Frame{{Data: b, Binary: f.Binary}}
	}
	switch {
	case len(first.calls) > 0:
		// Held until the calls it names first are registered.
		first.build = strip
		r.hold(Agent, first)
	case pending:
		r.hold(Agent, &held{ready: true, build: strip})
	default:
		for _, x := range strip() {
			r.pass(Agent, x, true)
		}
	}
	r.idle()
	if o.wantResponse {
		o.wantResponse = false
		r.send(Server, Frame{Data: openai.CreateResponse(r.newID("event_arb_"))})
	}
}

// deleted: a call's item deleted by the server (not at the agent's request) withdraws
// the call; the guard's own items' deletes are not the agent's business.
func (o *openaiRule) deleted(r *Rule, f Frame, ev openai.ServerEvent) {
	id := ev.ItemID
	if o.hidden[id] {
		if callID, ok := o.itemCall[id]; ok && !o.agentDeletes[id] {
			r.report(arbiter.ToolCallCancellation{CallIDs: []string{callID}, ObservedAt: r.now}, "")
		}
		return
	}
	if o.agentDeletes[id] {
		delete(o.agentDeletes, id)
	} else if callID, ok := o.itemCall[id]; ok {
		r.report(arbiter.ToolCallCancellation{CallIDs: []string{callID}, ObservedAt: r.now}, "")
	}
	r.pass(Agent, f, true)
}

// isGuards reports whether a client event id is one of the guard's.
func isGuards(eventID string) bool {
	return len(eventID) > len("event_arb_") && eventID[:len("event_arb_")] == "event_arb_"
}

func (o *openaiRule) released(r *Rule, h *held, f Frame) []Frame {
	ev, err := openai.ParseServer(f.Data)
	if err != nil {
		return []Frame{f}
	}
	if c := o.about(r, ev); c != nil && !r.agentRuns(c.id) {
		o.hide(c)
		return nil
	}
	if ev.Item != nil {
		o.shown[ev.Item.ID] = true
	}
	return []Frame{f}
}

func (o *openaiRule) fromAgent(r *Rule, f Frame) {
	ev, err := openai.ParseClient(f.Data)
	if err != nil {
		r.badFrame(Agent, f, err)
		r.pass(Server, f, true)
		return
	}
	if ev.Type != openai.SessionUpdate {
		o.started = true
		o.maybeAskOwn(r)
	}
	switch ev.Type {
	case openai.InputAudioBufferAppend:
		r.through(Server, f) // never held
		return
	case openai.SessionUpdate:
		if ev.ToolChoice != "" {
			o.toolChoiceNone = ev.ToolChoice == "none"
		}
		r.configureLanguage(openai.Language(ev.Session, o.beta))
		o.sessionUpdate(r, f, ev)
		return
	case openai.ResponseCreate:
		o.choices = append(o.choices, ev.ToolChoice == "none")
		o.wantResponse = false // the agent's response answers what the guard added too
	case openai.ItemDelete:
		if o.phantom[ev.ItemID] || o.answers[ev.ItemID] != "" {
			// An item the server does not have (an answer of the agent's that went
			// nowhere), or an answer that must stay in the model's conversation (a
			// plugin that updates an output deletes and re-creates it): the delete
			// is the guard's to echo.
			o.phantom[ev.ItemID] = true
			r.count("kept answer from agent delete", "the model keeps one answer per call", o.answers[ev.ItemID])
			r.pass(Agent, Frame{Data: openai.Deleted(r.newID("event_arb_"), ev.ItemID)}, true)
			return
		}
		o.agentDeletes[ev.ItemID] = true
	case openai.ItemCreate:
		it := ev.Item
		switch {
		case it == nil:
		case it.Type == openai.FunctionCallType:
			o.agentCalls[it.CallID] = true
		case it.Type == openai.FunctionCallOutputType && o.agentCalls[it.CallID]:
			// history the agent replays on a new connection: its own pair
		case it.Type == openai.FunctionCallOutputType:
			h := &held{out: []Frame{f}, agent: ev}
			r.agentAnswer(it.CallID, openai.ReadOutput(it.Output), h)
			return
		}
	}
	r.pass(Server, f, true)
}

func (o *openaiRule) respond(r *Rule, c *callState, payload map[string]any, h *held) {
	if h != nil {
		ev, _ := h.agent.(openai.ClientEvent)
		out := openai.RewriteOutput(ev.Obj, payload)
		h.out, h.ready = []Frame{{Data: out}}, true
		if ev.Item != nil && ev.Item.ID != "" {
			o.answers[ev.Item.ID] = c.id
		}
		return
	}
	id := r.newID("arb_r_")
	o.hidden[id] = true
	r.pass(Server, Frame{Data: openai.FunctionCallOutput(r.newID("event_arb_"), id, c.id, payload)}, true)
	o.respondNow(r)
}

// respondNow asks the model to speak about what the guard added: now, or once the
// response in progress is done (the server refuses a second one).
func (o *openaiRule) respondNow(r *Rule) {
	if o.respOpen {
		o.wantResponse = true
		return
	}
	r.pass(Server, Frame{Data: openai.CreateResponse(r.newID("event_arb_"))}, true)
}

func (o *openaiRule) interim(*Rule, *callState, map[string]any) {} // OpenAI has no interim output

func (o *openaiRule) note(r *Rule, text string) {
	id := r.newID("arb_n_")
	o.hidden[id] = true
	r.pass(Server, Frame{Data: openai.UserMessage(r.newID("event_arb_"), id, text)}, true)
	o.respondNow(r)
}

// dropAnswer echoes the agent's dropped function_call_output as if the server had
// added it (its framework waits for that), and remembers it is not the server's.
func (o *openaiRule) dropAnswer(r *Rule, h *held) {
	ev, _ := h.agent.(openai.ClientEvent)
	item := realtime.ObjField(ev.Obj, "item")
	if item == nil {
		return
	}
	id, _ := item["id"].(string)
	if id == "" {
		id = r.newID("item_arb_")
		item["id"] = id
	}
	item["object"] = "realtime.item"
	item["status"] = "completed"
	o.phantom[id] = true
	var prev any
	if o.lastShown != "" {
		prev = o.lastShown
	}
	for _, b := range openai.Echo(o.beta, r.newID("event_arb_"), prev, item) {
		r.pass(Agent, Frame{Data: b}, true)
	}
	o.lastShown = id
}

// ---- input transcription ------------------------------------------------------------
//
// The arbiter reads the user's stops from the server's input transcription; an OpenAI
// session has none unless its session asks for it. With Config.AddTranscription the
// guard asks where the agent did not, and keeps what it asked for out of the agent's
// view (a framework that mirrors the session or the conversation sees only what it
// set):
//
//   - the agent's session.update that does not carry the field: the field added
//     (openai.AskTranscription), once; a later update that omits it keeps the
//     server's value (OpenAI changes only the fields an update carries);
//   - an agent that begins its conversation (audio, an item, a response.create)
//     without any session.update, once session.created showed no transcription: the
//     guard sends its own, with only the field, just before the agent's first event,
//     and keeps its session.updated from the agent;
//   - the agent's own choice, on or null, in any update (or already on in
//     session.created: a session made with a client secret): left alone from then on,
//     the guard's addition included (null turns transcription off and the guard goes
//     deaf to stops: logged);
//   - while the guard's addition stands: the transcription events are reported and
//     not forwarded, and session.updated shows the field null, as the agent left it.

// hideInput: the guard's transcription stands: the agent does not see it.
func (o *openaiRule) hideInput() bool { return o.asked && !o.agentSet }

// sessionUpdate forwards the agent's session.update: with input transcription asked
// for when the guard is to ask (wantTranscription: it has not yet, neither this update
// nor an earlier one carried the field); an update that carries it is the agent's
// choice from then on.
func (o *openaiRule) sessionUpdate(r *Rule, f Frame, ev openai.ClientEvent) {
	o.updated = true
	out := f
	if ev.Session != nil {
		present, on := openai.TranscriptionField(ev.Session, o.beta)
		switch {
		case present:
			if !o.agentSet && !on {
				r.logf(true, "the agent turned input transcription off: the arbiter cannot read a spoken stop")
			}
			o.agentSet = true
		case openai.SessionType(ev.Session) == "transcription":
			o.agentSet = true // a transcription session: transcription is its purpose
		case o.wantTranscription(r):
			openai.AskTranscription(ev.Session, o.beta)
			out.Data = realtime.Marshal(ev.Obj)
			o.asked = true
			r.logf(false, "asked the server for input transcription (the agent did not): stops can be read", "model", o.model())
		}
	}
	id, _ := ev.Obj["event_id"].(string)
	o.updates = append(o.updates, pendingUpdate{id: id})
	r.pass(Server, out, true)
}

// wantTranscription: the guard is to ask for input transcription (it has not, the
// agent has not chosen, the server has not refused it).
func (o *openaiRule) wantTranscription(r *Rule) bool {
	return r.cfg.AddTranscription && !o.asked && !o.agentSet && !o.refused
}

func (o *openaiRule) model() string {
	if o.beta {
		return openai.TranscriptionModelBeta
	}
	return openai.TranscriptionModelGA
}

// sessionCreated: a session that already transcribes (made with a client secret that
// says so) is the agent's choice; an agent that began without a session.update gets
// the guard's own now.
func (o *openaiRule) sessionCreated(r *Rule, f Frame) {
	o.created = true
	m, err := realtime.DecodeObject(f.Data)
	if err != nil {
		return
	}
	s := realtime.ObjField(m, "session")
	if _, on := openai.TranscriptionField(s, o.beta); on || openai.SessionType(s) == "transcription" {
		o.agentSet = true
		return
	}
	o.maybeAskOwn(r)
}

// maybeAskOwn sends the guard's own session.update asking for input transcription
// when the agent began its conversation (an event other than session.update) without
// configuring its session, once session.created said the session has none. An agent
// that configures its session (nearly every one, right after session.created) never
// gets one: its own update carries the field (sessionUpdate).
func (o *openaiRule) maybeAskOwn(r *Rule) {
	if !o.created || !o.started || o.updated || !o.wantTranscription(r) {
		return
	}
	o.asked = true
	o.askOwn(r, "asked the server for input transcription (the agent began without a session.update): stops can be read")
}

// askOwn sends the guard's own session.update turning input transcription on (at
// once: it depends on nothing the guard holds, and goes before the agent's event being
// handled).
func (o *openaiRule) askOwn(r *Rule, why string) {
	id := r.newID("event_arb_")
	o.updates = append(o.updates, pendingUpdate{id: id, own: true})
	r.logf(false, why, "model", o.model())
	r.send(Server, Frame{Data: openai.SessionUpdateTranscription(id, o.beta)})
}

// sessionUpdated matches a session.updated to the session.update it answers (the
// server answers them in order): false for the guard's own (not forwarded). An
// agent's update that left the session without the transcription the guard asked for
// (a server that reset it) has it asked for again.
func (o *openaiRule) sessionUpdated(r *Rule, f Frame) bool {
	own := false
	if len(o.updates) > 0 {
		own = o.updates[0].own
		o.updates = o.updates[1:]
	}
	if own {
		return false
	}
	if o.hideInput() {
		if m, err := realtime.DecodeObject(f.Data); err == nil {
			if _, on := openai.TranscriptionField(realtime.ObjField(m, "session"), o.beta); !on {
				o.askOwn(r, "the session lost the input transcription the guard asked for: asked again")
			}
		}
	}
	return true
}

// hideEcho returns session.updated f with the input transcription null while the
// guard's addition stands (the session as the agent set it).
func (o *openaiRule) hideEcho(f Frame) Frame {
	if !o.hideInput() {
		return f
	}
	b, ok, err := openai.EditServer(f.Data, func(m openai.Obj) bool {
		openai.HideTranscription(realtime.ObjField(m, "session"), o.beta)
		return true
	})
	if err != nil || !ok {
		return f
	}
	return Frame{Data: b, Binary: f.Binary}
}

// refusedUpdate reads an error event: one naming a session.update waiting for its
// session.updated takes it off the list (none will come), and so does one that names
// no event but a session parameter while the oldest waiting is the agent's (an agent
// that gives its events no id); one about the transcription field while the guard
// asked for it means the server refuses the guard's model: the guard never asks again
// (logged).
func (o *openaiRule) refusedUpdate(r *Rule, m openai.Obj) {
	id := openai.ErrorEventID(m)
	for i, u := range o.updates {
		if (id != "" && u.id == id) || (id == "" && i == 0 && !u.own && openai.SessionError(m)) {
			o.updates = append(o.updates[:i], o.updates[i+1:]...)
			break
		}
	}
	if o.asked && !o.agentSet && openai.TranscriptionError(m) {
		o.refused, o.asked = true, false
		r.logf(true, "the server refused the input transcription the guard asked for: not asked again (--no-proxy-add-transcription turns the addition off)", "model", o.model())
	}
}
