package fakeprovider

import (
	"fmt"

	"github.com/voicearbiter/arbiter/internal/realtime"
	openaiwire "github.com/voicearbiter/arbiter/internal/realtime/openai"
	"github.com/voicearbiter/arbiter/replay"
)

// ids mints a session's deterministic OpenAI ids (event_001, item_001, resp_001),
// continuing across the session's connections; conns counts its OpenAI connections.
type ids struct {
	session                int
	event, item, resp, cnv int
	conns                  int
}

func (g *ids) next(prefix string, n *int) string { *n++; return fmt.Sprintf("%s_%03d", prefix, *n) }
func (g *ids) eventID() string                   { return g.next("event", &g.event) }
func (g *ids) itemID() string                    { return g.next("item", &g.item) }
func (g *ids) respID() string                    { return g.next("resp", &g.resp) }

// openai translates a trace into OpenAI Realtime server events, GA or beta names
// (docs/fake-provider.md has the table). It keeps the conversation (items in order),
// the user's utterances and the open response.
type openai struct {
	beta    bool
	ids     *ids
	session obj
	convID  string
	items   map[string]obj
	order   []string
	calls   map[string]string // call_id -> its function_call item id
	utters  []*utterance      // this connection's user utterances, oldest first
	resp    *response
	warned  map[string]bool
}

// utterance is one user turn: its item id, the trace's id for it (the `utterance`
// field, "" when the trace names none), whether its item exists yet (committed at
// speech_end or at its first final transcript, whichever comes first), when its voice
// activity ended (ended, endMs) and whether a final transcript piece came (final).
type utterance struct {
	item    string
	trace   string
	created bool
	ended   bool
	endMs   int64
	final   bool
}

// response is the model's open response.
type response struct {
	id       string
	output   []string // item ids, in output order
	msg      *message
	metadata any
}

// message is the response's open assistant message item.
type message struct {
	item       string
	index      int
	audio      bool
	transcript string
}

func newOpenAI(beta bool, model string, g *ids) *openai {
	o := &openai{beta: beta, ids: g, items: map[string]obj{}, calls: map[string]string{}, warned: map[string]bool{}}
	o.convID = fmt.Sprintf("conv_fake_%03d", g.session)
	// A real server starts a new session (with its own id) on every connection: the
	// first connection's is sess_fake_001, the next ones' sess_fake_001_2, ...
	g.conns++
	sid := fmt.Sprintf("sess_fake_%03d", g.session)
	if g.conns > 1 {
		sid = fmt.Sprintf("sess_fake_%03d_%d", g.session, g.conns)
	}
	if beta {
		o.session = obj{
			"id": sid, "object": "realtime.session", "model": model, "expires_at": 0,
			"modalities": []any{"audio", "text"}, "instructions": "", "voice": "alloy",
			"input_audio_format": "pcm16", "output_audio_format": "pcm16", "input_audio_transcription": nil,
			"turn_detection": obj{"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 200,
				"create_response": true, "interrupt_response": true},
			"tools": []any{}, "tool_choice": "auto", "temperature": 0.8, "max_response_output_tokens": "inf", "speed": 1, "tracing": nil,
		}
	} else {
		pcm := func() obj { return obj{"type": "audio/pcm", "rate": 24000} }
		o.session = obj{
			"type": "realtime", "object": "realtime.session", "id": sid, "model": model, "expires_at": 0,
			"output_modalities": []any{"audio"}, "instructions": "", "tools": []any{}, "tool_choice": "auto",
			"max_output_tokens": "inf", "tracing": nil, "truncation": "auto", "prompt": nil, "include": nil,
			"audio": obj{
				"input": obj{"format": pcm(), "transcription": nil, "noise_reduction": nil,
					"turn_detection": obj{"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 200,
						"idle_timeout_ms": nil, "create_response": true, "interrupt_response": true}},
				"output": obj{"format": pcm(), "voice": "alloy", "speed": 1},
			},
		}
	}
	return o
}

// ev is a server event of type typ with fields, stamped with the next event id.
func (o *openai) ev(typ string, fields obj) obj {
	m := obj{"type": typ, "event_id": o.ids.eventID()}
	for k, v := range fields {
		m[k] = v
	}
	return m
}

// name is a server event's name in this variant: GA renamed the output events.
func (o *openai) name(ga string) string {
	if !o.beta {
		return ga
	}
	switch ga {
	case "conversation.item.added":
		return "conversation.item.created"
	case "response.output_audio.delta":
		return "response.audio.delta"
	case "response.output_audio.done":
		return "response.audio.done"
	case "response.output_audio_transcript.delta":
		return "response.audio_transcript.delta"
	case "response.output_audio_transcript.done":
		return "response.audio_transcript.done"
	}
	return ga
}

func (o *openai) greet() step {
	var s step
	s.send(o.ev("session.created", obj{"session": o.session}))
	return s
}

// goAway: OpenAI has no goAway; the socket just closes.
func (o *openai) goAway() step { return step{} }

// transcription reports whether the session asked for input transcription (GA:
// audio.input.transcription; beta: input_audio_transcription).
func (o *openai) transcription() bool {
	return openaiwire.InputTranscription(o.session, o.beta)
}

// last is the conversation's last item id (nil when empty), for previous_item_id.
func (o *openai) last() any {
	if len(o.order) == 0 {
		return nil
	}
	return o.order[len(o.order)-1]
}

// add appends item to the conversation and returns the events that announce it
// (beta: conversation.item.created; GA: conversation.item.added, and .done when done).
func (o *openai) add(item obj, done bool) []any {
	prev := o.last()
	id, _ := item["id"].(string)
	o.items[id] = item
	o.order = append(o.order, id)
	out := []any{o.ev(o.name("conversation.item.added"), obj{"previous_item_id": prev, "item": snap(item)})}
	if done && !o.beta {
		out = append(out, o.ev("conversation.item.done", obj{"previous_item_id": prev, "item": snap(item)}))
	}
	return out
}

// prevOf is the id before id in the conversation (nil for the first).
func (o *openai) prevOf(id string) any {
	for i, x := range o.order {
		if x == id && i > 0 {
			return o.order[i-1]
		}
	}
	return nil
}

// snap is a shallow copy of an item as it is now: items change after they are sent.
func snap(item obj) obj {
	c := make(obj, len(item))
	for k, v := range item {
		c[k] = v
	}
	return c
}

func (o *openai) event(ev replay.TraceEvent) step {
	var s step
	switch ev.Event {
	case "speech_start":
		u := o.openUtterance()
		if u == nil {
			u = o.newUtterance(ev.Utterance)
		} else if u.trace == "" {
			u.trace = ev.Utterance
		}
		s.send(o.ev("input_audio_buffer.speech_started", obj{"audio_start_ms": ev.TMs, "item_id": u.item}))
	case "speech_end":
		u := o.named(ev.Utterance)
		if u == nil || u.ended {
			u = o.openUtterance()
		}
		if u == nil { // no voice activity began: the turn is this event's own
			u = o.newUtterance(ev.Utterance)
		}
		u.ended, u.endMs = true, ev.TMs
		s.send(o.ev("input_audio_buffer.speech_stopped", obj{"audio_end_ms": ev.TMs, "item_id": u.item}))
		o.commit(&s, u)
	case "transcript":
		if !o.transcription() {
			s.warnOnce(o.warned, "input", "the session has no input audio transcription configured: the trace's user transcripts are not sent (the real server would not send them either)")
			break
		}
		u := o.transcribed(ev)
		if !isFinal(ev) {
			s.send(o.ev("conversation.item.input_audio_transcription.delta", obj{"item_id": u.item, "content_index": 0, "delta": ev.Text}))
			break
		}
		o.commit(&s, u)
		u.final = true
		item := o.items[u.item]
		if item != nil {
			prev := ""
			if c, ok := item["content"].([]any); ok && len(c) > 0 {
				prev, _ = c[0].(obj)["transcript"].(string)
			}
			item["content"] = []any{obj{"type": "input_audio", "transcript": prev + ev.Text}}
		}
		s.send(o.ev("conversation.item.input_audio_transcription.completed", obj{"item_id": u.item, "content_index": 0,
			"transcript": ev.Text, "usage": obj{"type": "duration", "seconds": 0}}))
	case "interrupted":
		if o.resp != nil {
			o.finish(&s, "cancelled", obj{"type": "cancelled", "reason": "turn_detected"})
		}
	case "tool_call":
		o.toolCall(&s, ev)
	case "tool_call_cancellation":
		for _, id := range ev.CallIDs {
			item, ok := o.calls[id]
			if !ok {
				s.warn("trace line %d: tool_call_cancellation names %s, which this connection never sent: nothing to delete", ev.Line, id)
				continue
			}
			o.remove(item)
			s.send(o.ev("conversation.item.deleted", obj{"item_id": item}))
		}
	case "model_audio_start":
		m := o.message(&s)
		m.audio = true
		s.send(o.ev(o.name("response.output_audio.delta"), obj{"response_id": o.resp.id, "item_id": m.item,
			"output_index": m.index, "content_index": 0, "delta": silence20ms}))
	case "model_transcript":
		m := o.message(&s)
		m.transcript += ev.Text
		s.send(o.ev(o.name("response.output_audio_transcript.delta"), obj{"response_id": o.resp.id, "item_id": m.item,
			"output_index": m.index, "content_index": 0, "delta": ev.Text}))
	case "generation_complete", "turn_complete":
		if o.resp != nil {
			o.finish(&s, "completed", nil)
		}
	}
	return s
}

// newUtterance starts a user utterance with a new item id (trace: the trace's id for
// it, if any).
func (o *openai) newUtterance(trace string) *utterance {
	u := &utterance{item: o.ids.itemID(), trace: trace}
	o.utters = append(o.utters, u)
	return u
}

// openUtterance is the utterance whose voice activity goes on (the latest, if it has
// not ended), or nil.
func (o *openai) openUtterance() *utterance {
	if n := len(o.utters); n > 0 && !o.utters[n-1].ended {
		return o.utters[n-1]
	}
	return nil
}

// named is the latest utterance the trace gave the id id, or nil (for "" too).
func (o *openai) named(id string) *utterance {
	if id == "" {
		return nil
	}
	for i := len(o.utters) - 1; i >= 0; i-- {
		if o.utters[i].trace == id {
			return o.utters[i]
		}
	}
	return nil
}

// latePieceMS is arbiter.LatePieceWindow in ms.
const latePieceMS = 5000

// transcribed is the utterance a transcript event transcribes, as a real server names
// it (the item it transcribed) and as the arbiter attributes a piece that names none
// (arbiter/utterances.go, Transcript.apply): the utterance the trace names; else the
// oldest whose voice activity ended and that has no final transcript yet (a
// transcript that comes after the next speech_start is the older utterance's); else
// the open one; else, for a final piece, the latest if it has final text and ended at
// most 5 s (arbiter.LatePieceWindow) before; else a new utterance of its own (a turn
// with no voice activity).
func (o *openai) transcribed(ev replay.TraceEvent) *utterance {
	if u := o.named(ev.Utterance); u != nil {
		return u
	}
	for _, u := range o.utters {
		if u.ended && !u.final {
			return u
		}
	}
	if u := o.openUtterance(); u != nil {
		return u
	}
	if n := len(o.utters); n > 0 && isFinal(ev) {
		if u := o.utters[n-1]; u.ended && u.final && ev.TMs-u.endMs <= latePieceMS {
			return u
		}
	}
	u := o.newUtterance(ev.Utterance)
	u.ended, u.endMs = true, ev.TMs
	return u
}

// commit creates utterance u's user item unless it exists: input_audio_buffer.committed
// and the item's creation.
func (o *openai) commit(s *step, u *utterance) {
	if u.created {
		return
	}
	u.created = true
	s.send(o.ev("input_audio_buffer.committed", obj{"previous_item_id": o.last(), "item_id": u.item}))
	item := obj{"id": u.item, "object": "realtime.item", "type": "message", "role": "user", "status": "completed",
		"content": []any{obj{"type": "input_audio", "transcript": nil}}}
	s.send(o.add(item, true)...)
}

// open returns the open response, creating one (response.created) when there is none.
func (o *openai) open(s *step, metadata any) *response {
	if o.resp != nil {
		return o.resp
	}
	o.resp = &response{id: o.ids.respID(), metadata: metadata}
	s.send(o.ev("response.created", obj{"response": o.responseObj("in_progress", nil)}))
	return o.resp
}

func (o *openai) responseObj(status string, details any) obj {
	r := o.resp
	out := []any{}
	for _, id := range r.output {
		if item, ok := o.items[id]; ok {
			out = append(out, snap(item))
		}
	}
	m := obj{"id": r.id, "object": "realtime.response", "status": status, "status_details": details, "output": out,
		"conversation_id": o.convID, "metadata": r.metadata, "usage": nil}
	if o.beta {
		m["modalities"] = []any{"audio", "text"}
	} else {
		m["output_modalities"] = []any{"audio"}
	}
	if status != "in_progress" {
		m["usage"] = obj{"total_tokens": 0, "input_tokens": 0, "output_tokens": 0,
			"input_token_details":  obj{"text_tokens": 0, "audio_tokens": 0, "cached_tokens": 0},
			"output_token_details": obj{"text_tokens": 0, "audio_tokens": 0}}
	}
	return m
}

// message returns the open response's assistant message, opening the response and
// the message (output_item.added, the item's creation, content_part.added) as needed.
func (o *openai) message(s *step) *message {
	r := o.open(s, nil)
	if r.msg != nil {
		return r.msg
	}
	id := o.ids.itemID()
	r.msg = &message{item: id, index: len(r.output)}
	r.output = append(r.output, id)
	item := obj{"id": id, "object": "realtime.item", "type": "message", "role": "assistant", "status": "in_progress", "content": []any{}}
	s.send(o.ev("response.output_item.added", obj{"response_id": r.id, "output_index": r.msg.index, "item": snap(item)}))
	s.send(o.add(item, false)...)
	s.send(o.ev("response.content_part.added", obj{"response_id": r.id, "item_id": id, "output_index": r.msg.index,
		"content_index": 0, "part": obj{"type": "audio", "transcript": ""}}))
	return r.msg
}

// closeMessage finishes the open assistant message with status: audio and transcript
// done, content_part.done, output_item.done (GA: conversation.item.done too).
func (o *openai) closeMessage(s *step, status string) {
	r := o.resp
	m := r.msg
	if m == nil {
		return
	}
	r.msg = nil
	at := obj{"response_id": r.id, "item_id": m.item, "output_index": m.index, "content_index": 0}
	with := func(k string, v any) obj { c := snap(at); c[k] = v; return c }
	if m.audio {
		s.send(o.ev(o.name("response.output_audio.done"), snap(at)))
	}
	s.send(o.ev(o.name("response.output_audio_transcript.done"), with("transcript", m.transcript)))
	s.send(o.ev("response.content_part.done", with("part", obj{"type": "audio", "transcript": m.transcript})))
	item := o.items[m.item]
	if item == nil {
		return // deleted by the client meanwhile
	}
	kind := "output_audio"
	if o.beta {
		kind = "audio"
	}
	item["status"] = status
	item["content"] = []any{obj{"type": kind, "transcript": m.transcript}}
	s.send(o.ev("response.output_item.done", obj{"response_id": r.id, "output_index": m.index, "item": snap(item)}))
	if !o.beta {
		s.send(o.ev("conversation.item.done", obj{"previous_item_id": o.prevOf(m.item), "item": snap(item)}))
	}
}

// finish ends the open response: its message closed, then response.done.
func (o *openai) finish(s *step, status string, details any) {
	item := "completed"
	if status != "completed" {
		item = "incomplete"
	}
	o.closeMessage(s, item)
	s.send(o.ev("response.done", obj{"response": o.responseObj(status, details)}))
	o.resp = nil
}

// toolCall adds a function_call item with the trace's call id to the open response.
func (o *openai) toolCall(s *step, ev replay.TraceEvent) {
	r := o.open(s, nil)
	o.closeMessage(s, "completed")
	id := o.ids.itemID()
	idx := len(r.output)
	r.output = append(r.output, id)
	args := argsJSON(ev.Args)
	if ev.RawArgs != "" {
		args = ev.RawArgs // the recorded arguments the agent could not read, as they came
	}
	item := obj{"id": id, "object": "realtime.item", "type": "function_call", "status": "in_progress",
		"name": ev.Tool, "call_id": ev.CallID, "arguments": ""}
	s.send(o.ev("response.output_item.added", obj{"response_id": r.id, "output_index": idx, "item": snap(item)}))
	s.send(o.add(item, false)...)
	at := obj{"response_id": r.id, "item_id": id, "output_index": idx, "call_id": ev.CallID}
	d := snap(at)
	d["delta"] = args
	s.send(o.ev("response.function_call_arguments.delta", d))
	d = snap(at)
	d["name"], d["arguments"] = ev.Tool, args
	s.send(o.ev("response.function_call_arguments.done", d))
	item["status"], item["arguments"] = "completed", args
	s.send(o.ev("response.output_item.done", obj{"response_id": r.id, "output_index": idx, "item": snap(item)}))
	if !o.beta {
		s.send(o.ev("conversation.item.done", obj{"previous_item_id": o.prevOf(id), "item": snap(item)}))
	}
	o.calls[ev.CallID] = id
	o.checkTool(s, ev)
}

// hold: a function call waits while the session declares no tools. A real server can
// only call a function the session declares, and a client declares its tools with a
// session.update after session.created; a client slow to send it (LiveKit's OpenAI
// plugin under load took over 500 ms) would otherwise be sent a call no real server
// would make, before it is ready to take one.
func (o *openai) hold(ev replay.TraceEvent) string {
	if ev.Event != "tool_call" {
		return ""
	}
	if tools, _ := o.session["tools"].([]any); len(tools) > 0 {
		return ""
	}
	return "the session declares no tools yet (a function call needs its function declared)"
}

// checkTool warns when the session declares tools and not this one.
func (o *openai) checkTool(s *step, ev replay.TraceEvent) {
	tools, _ := o.session["tools"].([]any)
	if len(tools) == 0 {
		s.warnOnce(o.warned, "notools", "trace line %d: %s calls %q, and the session declares no tools", ev.Line, ev.CallID, ev.Tool)
		return
	}
	for _, name := range openaiwire.ToolNames(o.session) {
		if name == ev.Tool {
			return
		}
	}
	s.warnOnce(o.warned, "undeclared:"+ev.Tool, "trace line %d: %s calls %q, which the session does not declare", ev.Line, ev.CallID, ev.Tool)
}

func (o *openai) remove(id string) {
	delete(o.items, id)
	for i, x := range o.order {
		if x == id {
			o.order = append(o.order[:i], o.order[i+1:]...)
			break
		}
	}
}

// client handles a client event (read by package internal/realtime/openai) and
// returns the server's replies. It never answers with an error except for a message
// that is not JSON (as the real server does); events it does not know are recorded
// with a warning.
func (o *openai) client(msg []byte) step {
	var s step
	ev, err := openaiwire.ParseClient(msg)
	if err == nil && ev.Obj == nil {
		_, err = realtime.DecodeObject(msg) // an audio append read by the quick test: JSON still?
	}
	if err != nil {
		s.send(o.ev(openaiwire.ErrorEvent, obj{"error": obj{"type": "invalid_request_error", "code": "invalid_json",
			"message": "the message is not a JSON object", "param": nil, "event_id": nil}}))
		s.warn("a client message is not a JSON object")
		return s
	}
	switch ev.Type {
	case openaiwire.SessionUpdate:
		if ev.Session != nil {
			merge(o.session, ev.Session)
		}
		s.send(o.ev(openaiwire.SessionUpdated, obj{"session": o.session}))
	case openaiwire.ItemCreate:
		if ev.Item == nil {
			s.warn("conversation.item.create without an item")
			break
		}
		item := snap(realtime.ObjField(ev.Obj, "item")) // kept as sent: the echo carries it all
		id := ev.Item.ID
		if id == "" {
			id = o.ids.itemID()
			item["id"] = id
		}
		item["object"] = "realtime.item"
		if _, ok := item["status"]; !ok {
			item["status"] = "completed"
		}
		s.send(o.add(item, true)...)
	case openaiwire.ItemRetrieve:
		if item, ok := o.items[ev.ItemID]; ok {
			s.send(o.ev(openaiwire.ItemRetrieved, obj{"item": snap(item)}))
		} else {
			s.warn("conversation.item.retrieve of %q, which the conversation does not hold", ev.ItemID)
		}
	case openaiwire.ItemDelete:
		o.remove(ev.ItemID)
		s.send(o.ev(openaiwire.ItemDeleted, obj{"item_id": ev.ItemID}))
	case openaiwire.ItemTruncate:
		// Echoed as sent.
		s.send(o.ev(openaiwire.ItemTruncated, obj{"item_id": ev.Obj["item_id"], "content_index": ev.Obj["content_index"], "audio_end_ms": ev.Obj["audio_end_ms"]}))
	case openaiwire.InputAudioBufferClear:
		s.send(o.ev("input_audio_buffer.cleared", nil))
	case openaiwire.ResponseCreate:
		if o.resp != nil {
			break // the recorded model is speaking: its response goes on
		}
		o.open(&s, ev.Metadata)
		o.finish(&s, "completed", nil) // the recorded model says nothing it did not say
	case openaiwire.ResponseCancel:
		if o.resp != nil {
			o.finish(&s, "cancelled", obj{"type": "cancelled", "reason": "client_cancelled"})
		}
	case openaiwire.InputAudioBufferAppend, openaiwire.InputAudioBufferCommit, openaiwire.OutputAudioBufferClear:
		// Audio in, and manual turns: the trace decides when the user speaks.
	default:
		s.warnOnce(o.warned, "type:"+ev.Type, "client event %q is not one the fake provider handles: recorded only", ev.Type)
	}
	return s
}

// merge merges src into dst: objects field by field, everything else replaced.
func merge(dst, src obj) {
	for k, v := range src {
		if vo, ok := v.(obj); ok {
			if do, ok := dst[k].(obj); ok {
				merge(do, vo)
				continue
			}
		}
		dst[k] = v
	}
}
