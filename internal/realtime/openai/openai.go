// Package openai reads and writes OpenAI Realtime events (GA names, and the beta
// names a client gets with `OpenAI-Beta: realtime=v1`) as far as the arbiter acts on
// them: the server's voice activity, transcriptions, responses and their output items
// (function calls among them), conversation items; the client's items
// (`function_call_output`, messages), `response.create`, `session.update` and item
// deletes. Field names follow the API reference and the openai SDK's types.
package openai

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/voicearbiter/arbiter/internal/realtime"
)

// Obj is a JSON object (realtime.Obj).
type Obj = realtime.Obj

// Item is a conversation item, as far as the arbiter reads one.
type Item struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Role   string `json:"role"`
	Status string `json:"status"`
	// CallID, Name and Arguments: a `function_call` (CallID also a
	// `function_call_output`'s).
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Output: a `function_call_output`'s output text.
	Output string `json:"output"`
	// Texts: a message's content parts' `text` (input_text, text), in order, those
	// that have one. Read from a client's item only (conversation.item.create): a
	// server item's content is not decoded.
	Texts []string `json:"-"`
}

// Response is a response object as far as the arbiter reads one.
type Response struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Output []Item `json:"output"`
	// ToolChoice is the response's tool_choice when it is a string ("none", "auto",
	// "required"); "" otherwise.
	ToolChoice string
	// Reason is `status_details.reason` ("turn_detected", "client_cancelled" for a
	// cancelled response; "" when absent).
	Reason string
}

// ServerEvent is one server event, as far as the arbiter reads it.
type ServerEvent struct {
	Type string
	// ItemID: the event's item_id (voice activity, transcriptions, output item
	// events, deletes).
	ItemID     string
	ResponseID string
	// Item: the event's item (output_item.added/.done, conversation.item.*).
	Item *Item
	// Response: response.created / response.done's response.
	Response *Response
	// Text: a transcription's (`transcript` of .completed, `delta` of the deltas).
	Text string
	// CallID, Name, Arguments: response.function_call_arguments.done's (.delta's call
	// id; Name only where a server sends one).
	CallID, Name, Arguments string
	// PreviousItemID: the event's previous_item_id, when it carries one (null: empty).
	PreviousItemID    string
	HasPreviousItemID bool
	// ToolChoice: session.created / session.updated's session.tool_choice when a
	// string.
	ToolChoice string
	// SessionID: session.created's session.id.
	SessionID string
	// Audio: a model audio delta (GA response.output_audio.delta, beta
	// response.audio.delta): what the guard forwards at once.
	Audio bool
}

// The server event types the arbiter reads, GA and beta spellings.
const (
	SessionCreated          = "session.created"
	SessionUpdated          = "session.updated"
	SpeechStarted           = "input_audio_buffer.speech_started"
	SpeechStopped           = "input_audio_buffer.speech_stopped"
	TranscriptionCompleted  = "conversation.item.input_audio_transcription.completed"
	TranscriptionDelta      = "conversation.item.input_audio_transcription.delta"
	ResponseCreated         = "response.created"
	ResponseDone            = "response.done"
	OutputItemAdded         = "response.output_item.added"
	OutputItemDone          = "response.output_item.done"
	ArgumentsDelta          = "response.function_call_arguments.delta"
	ArgumentsDone           = "response.function_call_arguments.done"
	AudioDelta              = "response.output_audio.delta"
	AudioDeltaBeta          = "response.audio.delta"
	AudioTranscriptDelta    = "response.output_audio_transcript.delta"
	AudioTranscriptDeltaB   = "response.audio_transcript.delta"
	ItemAdded               = "conversation.item.added"
	ItemCreated             = "conversation.item.created" // beta's conversation.item.added
	ItemDone                = "conversation.item.done"
	ItemDeleted             = "conversation.item.deleted"
	ItemRetrieved           = "conversation.item.retrieved"
	ItemTruncated           = "conversation.item.truncated"
	InputAudioBufferAppend  = "input_audio_buffer.append"
	ItemCreate              = "conversation.item.create"
	ItemDelete              = "conversation.item.delete"
	ItemRetrieve            = "conversation.item.retrieve"
	ItemTruncate            = "conversation.item.truncate"
	InputAudioBufferCommit  = "input_audio_buffer.commit"
	InputAudioBufferClear   = "input_audio_buffer.clear"
	OutputAudioBufferClear  = "output_audio_buffer.clear"
	ResponseCreate          = "response.create"
	ResponseCancel          = "response.cancel"
	SessionUpdate           = "session.update"
	ErrorEvent              = "error"
	FunctionCallType        = "function_call"
	FunctionCallOutputType  = "function_call_output"
	MessageType             = "message"
	ResponseStatusCancelled = "cancelled"
)

type wireServer struct {
	Type           string          `json:"type"`
	ItemID         string          `json:"item_id"`
	ResponseID     string          `json:"response_id"`
	Item           *Item           `json:"item"`
	Response       json.RawMessage `json:"response"`
	Transcript     string          `json:"transcript"`
	Delta          json.RawMessage `json:"delta"`
	CallID         string          `json:"call_id"`
	Name           string          `json:"name"`
	Arguments      string          `json:"arguments"`
	PreviousItemID json.RawMessage `json:"previous_item_id"`
	Session        *struct {
		ID         string          `json:"id"`
		ToolChoice json.RawMessage `json:"tool_choice"`
	} `json:"session"`
}

type wireResponse struct {
	ID            string          `json:"id"`
	Status        string          `json:"status"`
	Output        []Item          `json:"output"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	StatusDetails json.RawMessage `json:"status_details"`
}

var (
	audioTypes = [][]byte{[]byte(`"` + AudioDelta + `"`), []byte(`"` + AudioDeltaBeta + `"`)}
	itemIDKey  = []byte(`"item_id":"`)
)

// quickAudio reads a model audio delta without a decode: its type and item_id (a
// quoted type naming the audio delta, the audio itself holding no quote); ok false
// for anything else.
func quickAudio(b []byte) (ServerEvent, bool) {
	if len(b) < 256 || !(bytes.Contains(b, audioTypes[0]) || bytes.Contains(b, audioTypes[1])) || bytes.Contains(b, []byte(`\"`)) {
		return ServerEvent{}, false
	}
	t := bytes.TrimSpace(b)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return ServerEvent{}, false
	}
	ev := ServerEvent{Type: AudioDelta, Audio: true}
	if i := bytes.Index(b, itemIDKey); i >= 0 {
		rest := b[i+len(itemIDKey):]
		if j := bytes.IndexByte(rest, '"'); j >= 0 {
			ev.ItemID = string(rest[:j])
		}
	}
	return ev, true
}

// ParseServer reads one server event; a model audio delta (the bulk of what the
// server sends) by a quick test, without a decode. Errors: realtime.ErrNotObject.
func ParseServer(b []byte) (ServerEvent, error) {
	if ev, ok := quickAudio(b); ok {
		return ev, nil
	}
	var w wireServer
	if err := json.Unmarshal(b, &w); err != nil || bytes.HasPrefix(bytes.TrimSpace(b), []byte("null")) {
		return ServerEvent{}, realtime.ErrNotObject
	}
	ev := ServerEvent{Type: w.Type, ItemID: w.ItemID, ResponseID: w.ResponseID, Item: w.Item,
		CallID: w.CallID, Name: w.Name, Arguments: w.Arguments}
	switch w.Type {
	case AudioDelta, AudioDeltaBeta:
		ev.Audio = true
		return ev, nil
	case TranscriptionCompleted:
		ev.Text = w.Transcript
	case TranscriptionDelta, AudioTranscriptDelta, AudioTranscriptDeltaB:
		_ = json.Unmarshal(w.Delta, &ev.Text)
	}
	if len(w.PreviousItemID) > 0 {
		ev.HasPreviousItemID = true
		_ = json.Unmarshal(w.PreviousItemID, &ev.PreviousItemID)
	}
	if len(w.Response) > 0 && !bytes.Equal(w.Response, []byte("null")) {
		var r wireResponse
		if json.Unmarshal(w.Response, &r) == nil {
			ev.Response = &Response{ID: r.ID, Status: r.Status, Output: r.Output, ToolChoice: stringOf(r.ToolChoice)}
			var d struct {
				Reason json.RawMessage `json:"reason"`
			}
			if json.Unmarshal(r.StatusDetails, &d) == nil {
				ev.Response.Reason = stringOf(d.Reason)
			}
		}
	}
	if s := w.Session; s != nil {
		ev.SessionID, ev.ToolChoice = s.ID, stringOf(s.ToolChoice)
	}
	return ev, nil
}

// FunctionCall is what one server event says of a function call the model issued:
// its item, its call id, and its name and arguments when the event carries them.
type FunctionCall struct {
	ItemID, CallID string
	// Name: "" when the event does not carry it (function_call_arguments.delta/.done:
	// the API reference gives them none).
	Name string
	// Arguments: the arguments text, final when Complete.
	Arguments string
	// Model: the event is the model's response (response.*); a conversation item event
	// may be the echo of an item a client created.
	Model bool
	// Complete: the event carries the call's final arguments
	// (function_call_arguments.done, response.output_item.done, conversation.item.done,
	// a function_call item whose status is no longer in_progress in
	// conversation.item.added/.created or response.done's output).
	Complete bool
}

// FunctionCalls returns the model's function calls a server event names, in order:
// the function_call item of response.output_item.added/.done and
// conversation.item.added/.created/.done (GA, beta), the call of
// response.function_call_arguments.delta/.done, and the function_call items of
// response.done's output. A real server names a call first in
// response.output_item.added; any of these may be the first a reader sees of it (the
// rule of the wire guard does not depend on their order). Only calls with a call id;
// none for any other event. A conversation item event names an item a client created
// too (its own history; Model false): telling those apart is the caller's.
func (ev ServerEvent) FunctionCalls() []FunctionCall {
	model := ev.Type != ItemAdded && ev.Type != ItemCreated && ev.Type != ItemDone
	of := func(it Item, complete bool) FunctionCall {
		return FunctionCall{ItemID: it.ID, CallID: it.CallID, Name: it.Name, Arguments: it.Arguments, Model: model, Complete: complete}
	}
	finished := func(it Item) bool { return it.Status != "" && it.Status != "in_progress" }
	switch ev.Type {
	case OutputItemAdded, OutputItemDone, ItemAdded, ItemCreated, ItemDone:
		if it := ev.Item; it != nil && it.Type == FunctionCallType && it.CallID != "" {
			return []FunctionCall{of(*it, ev.Type == OutputItemDone || ev.Type == ItemDone || finished(*it))}
		}
	case ArgumentsDelta, ArgumentsDone:
		if ev.CallID != "" {
			fc := FunctionCall{ItemID: ev.ItemID, CallID: ev.CallID, Name: ev.Name, Model: true}
			if ev.Type == ArgumentsDone {
				fc.Arguments, fc.Complete = ev.Arguments, true
			}
			return []FunctionCall{fc}
		}
	case ResponseDone:
		if ev.Response == nil {
			return nil
		}
		var out []FunctionCall
		for _, it := range ev.Response.Output {
			if it.Type == FunctionCallType && it.CallID != "" {
				out = append(out, of(it, finished(it)))
			}
		}
		return out
	}
	return nil
}

// stringOf is a JSON string's value; "" for anything else.
func stringOf(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// ClientEvent is one client event, as far as the arbiter reads it.
type ClientEvent struct {
	Type string
	// Item: conversation.item.create's item (its ID as the client gave it, or "").
	Item *Item
	// ItemID: conversation.item.delete's (and .retrieve's, .truncate's) item_id.
	ItemID string
	// ToolChoice: session.update's session.tool_choice, or response.create's
	// response.tool_choice, when a string.
	ToolChoice string
	// Session: session.update's session object as sent (nil when absent or not an
	// object): the fields it changes.
	Session Obj
	// Metadata: response.create's response.metadata as sent (nil when absent).
	Metadata any
	// Obj is the event, parsed (nil for an audio append read by the quick test).
	Obj Obj
}

// ParseClient reads one client event. An `input_audio_buffer.append` is read by a
// quick test, without a decode. Errors: realtime.ErrNotObject.
func ParseClient(b []byte) (ClientEvent, error) {
	if bytes.Contains(b, []byte(`"`+InputAudioBufferAppend+`"`)) {
		// The quoted type: base64 audio holds no quote, and text holding the name has
		// its quotes escaped.
		return ClientEvent{Type: InputAudioBufferAppend}, nil
	}
	m, err := realtime.DecodeObject(b)
	if err != nil {
		return ClientEvent{}, err
	}
	ev := ClientEvent{Obj: m}
	ev.Type, _ = m["type"].(string)
	switch ev.Type {
	case ItemCreate:
		if it := realtime.ObjField(m, "item"); it != nil {
			ev.Item = itemOf(it)
		}
	case ItemDelete, ItemRetrieve, ItemTruncate:
		ev.ItemID, _ = m["item_id"].(string)
	case SessionUpdate:
		ev.Session = realtime.ObjField(m, "session")
		ev.ToolChoice, _ = ev.Session["tool_choice"].(string)
	case ResponseCreate:
		r := realtime.ObjField(m, "response")
		ev.ToolChoice, _ = r["tool_choice"].(string)
		ev.Metadata = r["metadata"]
	}
	return ev, nil
}

// itemOf reads an item object.
func itemOf(it Obj) *Item {
	str := func(k string) string { s, _ := it[k].(string); return s }
	out := &Item{ID: str("id"), Type: str("type"), Role: str("role"), Status: str("status"), CallID: str("call_id"),
		Name: str("name"), Arguments: str("arguments"), Output: str("output")}
	for _, c := range realtime.ListField(it, "content") {
		co, _ := c.(Obj)
		if s := realtime.StrField(co, "text"); s != "" {
			out.Texts = append(out.Texts, s)
		}
	}
	return out
}

// InputTranscription reports whether a session object asks for input audio
// transcription (GA: `audio.input.transcription`; beta, the `OpenAI-Beta:
// realtime=v1` names: `input_audio_transcription`) set, not null. Without, the server
// sends no transcriptions of the user's audio.
func InputTranscription(session Obj, beta bool) bool {
	_, on := TranscriptionField(session, beta)
	return on
}

// Language is the language a session object gives its input audio transcription (GA:
// `audio.input.transcription.language`; beta: `input_audio_transcription.language`),
// ISO-639-1 such as "es"; "" when it names none.
func Language(session Obj, beta bool) string {
	if beta {
		return realtime.StrField(realtime.ObjField(session, "input_audio_transcription"), "language")
	}
	return realtime.StrField(realtime.ObjField(realtime.ObjField(realtime.ObjField(session, "audio"), "input"), "transcription"), "language")
}

// ToolNames are the names of the functions a session object declares (`tools`, each
// `{"type": "function", "name": ...}`), in order.
func ToolNames(session Obj) []string {
	var out []string
	tools, _ := session["tools"].([]any)
	for _, t := range tools {
		to, _ := t.(Obj)
		if n := realtime.StrField(to, "name"); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// ReadArguments reads a function call's argument text: an object (numbers as
// float64), nothing (empty text), or raw text the caller reports as unreadable.
func ReadArguments(text string) (map[string]any, string) {
	t := bytes.TrimSpace([]byte(text))
	if len(t) == 0 {
		return map[string]any{}, ""
	}
	var args map[string]any
	if json.Unmarshal(t, &args) == nil && args != nil {
		return args, ""
	}
	return nil, text
}

// ReadOutput reads a function_call_output's output as the object the arbiter keeps
// as a result: the output itself when it is a JSON object, else {"output": text}.
func ReadOutput(text string) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(text), &m) == nil && m != nil {
		return m
	}
	return map[string]any{"output": text}
}

// FunctionCallOutput builds conversation.item.create with a function_call_output for
// callID, output the payload as JSON, the item's id itemID (client-chosen: the guard
// names its own items to know their echoes) and the event's eventID (an error the
// server answers it with names it).
func FunctionCallOutput(eventID, itemID, callID string, payload map[string]any) []byte {
	return realtime.Marshal(Obj{"type": ItemCreate, "event_id": eventID, "item": Obj{"id": itemID, "type": FunctionCallOutputType,
		"call_id": callID, "output": string(realtime.Marshal(payload))}})
}

// RewriteOutput returns the client event m (a conversation.item.create of a
// function_call_output) with its output replaced by payload as JSON, encoded.
func RewriteOutput(m Obj, payload map[string]any) []byte {
	if it := realtime.ObjField(m, "item"); it != nil {
		it["output"] = string(realtime.Marshal(payload))
	}
	return realtime.Marshal(m)
}

// UserMessage builds conversation.item.create with a user message of text, the item's
// id itemID, the event's eventID.
func UserMessage(eventID, itemID, text string) []byte {
	return realtime.Marshal(Obj{"type": ItemCreate, "event_id": eventID, "item": Obj{"id": itemID, "type": MessageType, "role": "user",
		"content": []any{Obj{"type": "input_text", "text": text}}}})
}

// CreateResponse builds response.create, the event's eventID.
func CreateResponse(eventID string) []byte {
	return realtime.Marshal(Obj{"type": ResponseCreate, "event_id": eventID})
}

// ErrorEventID is the client event id an error event names (error.event_id); "" when
// none.
func ErrorEventID(m Obj) string {
	s, _ := realtime.ObjField(m, "error")["event_id"].(string)
	return s
}

// Echo builds what the server sends a client once an item it created is in the
// conversation: GA conversation.item.added then conversation.item.done, beta
// conversation.item.created, after previous (nil for none); eventID names the
// event(s) ("-1", "-2" appended for GA's two).
func Echo(beta bool, eventID string, previous any, item Obj) [][]byte {
	if beta {
		return [][]byte{realtime.Marshal(Obj{"type": ItemCreated, "event_id": eventID, "previous_item_id": previous, "item": item})}
	}
	return [][]byte{
		realtime.Marshal(Obj{"type": ItemAdded, "event_id": eventID + "-1", "previous_item_id": previous, "item": item}),
		realtime.Marshal(Obj{"type": ItemDone, "event_id": eventID + "-2", "previous_item_id": previous, "item": item}),
	}
}

// Deleted builds conversation.item.deleted for itemID.
func Deleted(eventID, itemID string) []byte {
	return realtime.Marshal(Obj{"type": ItemDeleted, "event_id": eventID, "item_id": itemID})
}

// EditServer returns the server event b with edit applied to its decoded object,
// encoded; ok is false when edit says drop it. Errors: realtime.ErrNotObject.
func EditServer(b []byte, edit func(m Obj) bool) ([]byte, bool, error) {
	m, err := realtime.DecodeObject(b)
	if err != nil {
		return nil, false, err
	}
	if !edit(m) {
		return nil, false, nil
	}
	return realtime.Marshal(m), true, nil
}

// EventID makes the guard's own event ids: "event_arb_N".
func EventID(n int) string { return "event_arb_" + strconv.Itoa(n) }

// The reasons of a cancelled response (response.done, `status_details.reason`).
const (
	ReasonTurnDetected    = "turn_detected"
	ReasonClientCancelled = "client_cancelled"
)

// BargeIn is the rule for an OpenAI Realtime response that ends `cancelled`
// (response.done, status_details.reason): it was cut off by barge-in when the server's
// voice activity detection cut it (turn_detected), or when the client cancelled it
// (client_cancelled, its response.cancel) after input_audio_buffer.speech_started
// arrived while the response was in progress (speechDuring: the client cancelled for
// the user's speech, as @openai/agents-realtime and LiveKit do). A response cut off by
// barge-in is reported to the arbiter as `interrupted`, exactly as Gemini Live's
// serverContent.interrupted: its unanswered function calls whose behavior is BLOCKING
// (the tool policy's: an OpenAI call carries none) are abandoned, never answered and
// never run unless re-issued; NON_BLOCKING ones stay live. Any other response.done
// (completed, incomplete, failed, a client cancel with no speech, a cancel naming no
// reason) ends the model's turn.
//
// Why: the function_call item of a cut-off response stays in the conversation, but the
// response that issued it did not finish, and the user spoke over it; a side effect the
// model asked for in a sentence the user talked over (an end_call) must not run on its
// own, and the tool policy is where BLOCKING (abandon on barge-in) is said. Gemini Live
// drops an interrupted BLOCKING call itself; an OpenAI server never withdraws a call,
// so this is the agent's (and the arbiter's) decision, taken the same way everywhere:
// the wire guard (package guard), the fake provider's checker (fakeprovider.OpenAIBargeIn)
// and the adapters (clients/node/src/openai.ts, clients/python/arbiter_client/realtime.py).
func BargeIn(status, reason string, speechDuring bool) bool {
	if status != ResponseStatusCancelled {
		return false
	}
	switch reason {
	case ReasonTurnDetected:
		return true
	case ReasonClientCancelled:
		return speechDuring
	}
	return false
}
