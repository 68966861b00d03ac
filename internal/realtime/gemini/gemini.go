// Package gemini reads and writes the Gemini Live API's BidiGenerateContent messages
// (the Gemini API's and Vertex AI's, which share them) as far as the arbiter acts on
// them: what the server says (voice activity, transcriptions, model output,
// interruptions, turns, function calls and their cancellation, goAway, session
// resumption) and what the client sends (the setup, function responses, user turns).
// Field names follow the API reference and @google/genai's types; the server writes
// camelCase, clients may write either spelling (protobuf JSON).
package gemini

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/voicearbiter/arbiter/internal/realtime"
)

// Obj is a JSON object (realtime.Obj).
type Obj = realtime.Obj

// FunctionCall is one of `toolCall.functionCalls`.
type FunctionCall struct {
	ID   string
	Name string
	// Args are the arguments (nil when absent); RawArgs is their text when they are
	// not a JSON object (the guard registers such a call with raw_args).
	Args    map[string]any
	RawArgs string
}

// ServerMessage is what one server message says, for the arbiter. A message may say
// several things (a transcription with turnComplete).
type ServerMessage struct {
	SetupComplete bool
	// VoiceActivity is the kind of `voiceActivity` ("ACTIVITY_START",
	// "ACTIVITY_END"), "" when absent: `voiceActivity.type` as the server writes it
	// (google-genai's converters read it there: python-genai _VoiceActivity_from_mldev,
	// js-genai voiceActivityFromVertex), or `voiceActivityType`, the SDK object's name
	// for it, which a client that re-encodes the SDK's object sends.
	VoiceActivity string
	// ModelAudio: `serverContent.modelTurn` carries inline audio.
	ModelAudio bool
	// InputText and InputFinal: a piece of the user's transcription
	// (`inputTranscription`, final; `interimInputTranscription`, not). HasInput says
	// whether one came (its text may be empty).
	InputText  string
	InputFinal bool
	HasInput   bool
	// OutputText is a piece of `outputTranscription`.
	OutputText         string
	Interrupted        bool
	GenerationComplete bool
	TurnComplete       bool
	Calls              []FunctionCall
	// Cancelled are `toolCallCancellation.ids`.
	Cancelled []string
	// GoAway: the server will close the connection (`goAway`, TimeLeft its timeLeft).
	GoAway   bool
	TimeLeft string
	// NewHandle is `sessionResumptionUpdate.newHandle` when the update is resumable.
	NewHandle string
	// AudioOnly: the message carries nothing but model audio (and usage metadata):
	// what the guard forwards at once, whatever else it holds.
	AudioOnly bool
}

type wireTranscription struct {
	Text     string `json:"text"`
	Finished *bool  `json:"finished"`
}

type wireServer struct {
	SetupComplete json.RawMessage `json:"setupComplete"`
	ServerContent *struct {
		ModelTurn *struct {
			Parts []struct {
				InlineData *struct {
					MimeType string `json:"mimeType"`
				} `json:"inlineData"`
				Text *string `json:"text"`
			} `json:"parts"`
		} `json:"modelTurn"`
		InputTranscription        *wireTranscription `json:"inputTranscription"`
		InterimInputTranscription *wireTranscription `json:"interimInputTranscription"`
		OutputTranscription       *wireTranscription `json:"outputTranscription"`
		Interrupted               bool               `json:"interrupted"`
		GenerationComplete        bool               `json:"generationComplete"`
		TurnComplete              bool               `json:"turnComplete"`
	} `json:"serverContent"`
	ToolCall *struct {
		FunctionCalls []struct {
			ID   string          `json:"id"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"functionCalls"`
	} `json:"toolCall"`
	ToolCallCancellation *struct {
		IDs []string `json:"ids"`
	} `json:"toolCallCancellation"`
	GoAway *struct {
		TimeLeft string `json:"timeLeft"`
	} `json:"goAway"`
	SessionResumptionUpdate *struct {
		NewHandle string `json:"newHandle"`
		Resumable bool   `json:"resumable"`
	} `json:"sessionResumptionUpdate"`
	VoiceActivity *struct {
		Type              string `json:"type"`
		VoiceActivityType string `json:"voiceActivityType"`
	} `json:"voiceActivity"`
}

// audioKeys are the keys of a message that carries model audio and nothing else
// (usage metadata aside): such a message is read without a decode.
var audioKeys = map[string]bool{"serverContent": true, "server_content": true, "modelTurn": true, "model_turn": true,
	"parts": true, "inlineData": true, "inline_data": true, "mimeType": true, "mime_type": true, "data": true,
	"usageMetadata": true, "usage_metadata": true, "promptTokenCount": true, "responseTokenCount": true, "totalTokenCount": true}

// audioOnly reports whether b is a message of model audio alone: every key one of
// audioKeys, inline data among them, an audio MIME type (or none).
func audioOnly(b []byte) bool {
	t := bytes.TrimSpace(b)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' || !bytes.Contains(b, []byte(`"inlineData"`)) {
		return false
	}
	ok := true
	realtime.ScanKeys(b, func(k []byte) bool {
		ok = audioKeys[string(k)]
		return ok
	})
	if i := bytes.Index(b, []byte(`"mimeType"`)); ok && i >= 0 {
		rest := bytes.TrimLeft(b[i+len(`"mimeType"`):], " :")
		ok = bytes.HasPrefix(rest, []byte(`"audio`))
	}
	return ok
}

// ParseServer reads one server message. Fields it does not know are ignored. Model
// audio alone (the bulk of what a server sends) is recognised by a quick test on the
// raw bytes, without a decode. Errors: realtime.ErrNotObject.
func ParseServer(b []byte) (ServerMessage, error) {
	if audioOnly(b) {
		return ServerMessage{ModelAudio: true, AudioOnly: true}, nil
	}
	var w wireServer
	if err := json.Unmarshal(b, &w); err != nil || bytes.HasPrefix(bytes.TrimSpace(b), []byte("null")) {
		return ServerMessage{}, realtime.ErrNotObject
	}
	var m ServerMessage
	m.SetupComplete = w.SetupComplete != nil
	other := m.SetupComplete
	if va := w.VoiceActivity; va != nil {
		m.VoiceActivity = va.Type
		if m.VoiceActivity == "" {
			m.VoiceActivity = va.VoiceActivityType
		}
		other = true
	}
	if sc := w.ServerContent; sc != nil {
		if mt := sc.ModelTurn; mt != nil {
			for _, p := range mt.Parts {
				if p.InlineData != nil && (p.InlineData.MimeType == "" || strings.HasPrefix(p.InlineData.MimeType, "audio")) {
					m.ModelAudio = true
				} else {
					other = true
				}
			}
		}
		if t := sc.InputTranscription; t != nil {
			m.HasInput, m.InputText, m.InputFinal = true, t.Text, true
		} else if t := sc.InterimInputTranscription; t != nil {
			m.HasInput, m.InputText = true, t.Text
		}
		if t := sc.OutputTranscription; t != nil {
			m.OutputText = t.Text
			other = true
		}
		m.Interrupted, m.GenerationComplete, m.TurnComplete = sc.Interrupted, sc.GenerationComplete, sc.TurnComplete
		other = other || m.HasInput || m.Interrupted || m.GenerationComplete || m.TurnComplete
	}
	if tc := w.ToolCall; tc != nil {
		other = true
		for _, fc := range tc.FunctionCalls {
			c := FunctionCall{ID: fc.ID, Name: fc.Name}
			c.Args, c.RawArgs = readArgs(fc.Args)
			m.Calls = append(m.Calls, c)
		}
	}
	if cc := w.ToolCallCancellation; cc != nil {
		other = true
		m.Cancelled = cc.IDs
	}
	if g := w.GoAway; g != nil {
		other = true
		m.GoAway, m.TimeLeft = true, g.TimeLeft
	}
	if u := w.SessionResumptionUpdate; u != nil {
		other = true
		if u.Resumable {
			m.NewHandle = u.NewHandle
		}
	}
	if !other && m.ModelAudio {
		m.AudioOnly = true
	}
	return m, nil
}

// readArgs reads a call's arguments: an object (numbers as float64, as the engine
// takes them), nothing, or the text of anything else.
func readArgs(raw json.RawMessage) (map[string]any, string) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, ""
	}
	var args map[string]any
	if json.Unmarshal(t, &args) == nil && args != nil {
		return args, ""
	}
	return nil, string(t)
}

// The kinds of `voiceActivity`.
const (
	ActivityStart = "ACTIVITY_START"
	ActivityEnd   = "ACTIVITY_END"
)

// VoiceActivity builds the server message saying the user's voice activity started or
// ended (kind ActivityStart, ActivityEnd), as the server writes it:
// `{"voiceActivity": {"type": kind}}`.
func VoiceActivity(kind string) Obj {
	return Obj{"voiceActivity": Obj{"type": kind}}
}

// Setup is what the arbiter reads from the client's `setup`.
type Setup struct {
	Model string
	// Behaviors maps each declared function to its behavior ("BLOCKING" when the
	// declaration says none or UNSPECIFIED, as the API defaults).
	Behaviors map[string]string
	// ToolChoiceNone: `toolConfig.functionCallingConfig.mode` is NONE (Gemini Live
	// may call tools anyway: such a call is rejected).
	ToolChoiceNone bool
	// InputTranscription, OutputTranscription: the setup asks for them
	// (`inputAudioTranscription`, `outputAudioTranscription` an object: {} or a
	// config; null, as protobuf JSON reads it, asks for nothing). Without, the server
	// sends no transcriptions.
	InputTranscription  bool
	OutputTranscription bool
	// TextOnly: `generationConfig.responseModalities` (or, as some raw clients put it,
	// the setup's own `responseModalities`) names TEXT and not AUDIO: the model
	// answers in text parts, without audio.
	TextOnly bool
	// ExplicitVAD: `explicitVadSignal` (Vertex AI, allowlisted): the server also sends
	// `voiceActivityDetectionSignal`.
	ExplicitVAD bool
	// Resumption: the setup has `sessionResumption`; Handle is the handle it resumes
	// ("" for none).
	Resumption bool
	Handle     string
	// Language: `generationConfig.speechConfig.languageCode` (or, as some raw clients
	// put it, the setup's own `speechConfig.languageCode`), the BCP 47 language the
	// conversation is held in; "" when the setup names none.
	Language string
}

// FunctionResponse is one of `toolResponse.functionResponses`.
type FunctionResponse struct {
	ID           string
	Name         string
	Response     Obj
	WillContinue bool
	Scheduling   string
}

// Turn is one of `clientContent.turns`: its role ("" when the turn names none: the
// API takes it as the user's) and the texts of its parts, in order.
type Turn struct {
	Role  string
	Texts []string
}

// clientKeys are the keys of the client messages the arbiter reads (any key of the
// message, at any depth: a false "yes" costs a decode). "text" catches
// `realtimeInput.text` (audio chunks carry no such key).
var clientKeys = map[string]bool{"setup": true, "toolResponse": true, "tool_response": true, "clientContent": true, "client_content": true,
	"text": true}

// ClientKind says what a client message is.
type ClientKind int

// The client messages the arbiter tells apart.
const (
	// ClientOther: anything else (realtimeInput: audio, video, text, activity
	// signals; unknown messages): forwarded as it is.
	ClientOther ClientKind = iota
	ClientSetup
	ClientToolResponse
	// ClientContent: `clientContent` (user turns, history).
	ClientContent
)

// ClientMessage is what one client message says, for the arbiter. Kind is the first
// of setup, toolResponse and clientContent the message holds (the API's client message
// holds one); Responses, Turns and RealtimeText are read whatever the Kind, so a reader
// of everything a message puts into the model's context (the fake provider's checker)
// misses nothing.
type ClientMessage struct {
	Kind      ClientKind
	Setup     Setup
	Responses []FunctionResponse
	// Turns are `clientContent.turns`; TurnComplete its `turnComplete`.
	Turns        []Turn
	TurnComplete bool
	// RealtimeText is `realtimeInput.text` (text the model takes as the user's
	// input), "" when absent.
	RealtimeText string
	// Obj is the message, parsed (nil for ClientOther read by the quick test).
	Obj Obj
}

// firstNonSpace is the index of b's first byte that is not JSON whitespace; -1: none.
func firstNonSpace(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return -1
}

// ParseClient reads one client message. A message that holds none of `setup`,
// `toolResponse`, `clientContent` and a `text` key is ClientOther without being
// parsed (the quick scan of realtime.ScanKeys: audio goes through without a decode;
// Obj is nil). Errors: realtime.ErrNotObject, for a message that might be one of
// those and is not JSON, and for one that does not even begin as a JSON object (its
// first byte past whitespace is not '{': garbage, told apart at no cost).
func ParseClient(b []byte) (ClientMessage, error) {
	read := false
	realtime.ScanKeys(b, func(k []byte) bool {
		read = clientKeys[string(k)]
		return !read
	})
	if !read {
		// Not decoded (audio goes by a key scan), but a message that is no JSON
		// object at all is said to be one: the guard logs it (and forwards it).
		if i := firstNonSpace(b); i < 0 || b[i] != '{' {
			return ClientMessage{}, realtime.ErrNotObject
		}
		return ClientMessage{Kind: ClientOther}, nil
	}
	m, err := realtime.DecodeObject(b)
	if err != nil {
		return ClientMessage{}, err
	}
	out := ClientMessage{Obj: m}
	for _, x := range realtime.ListField(realtime.ObjField(m, "toolResponse"), "functionResponses") {
		fr, _ := x.(Obj)
		if fr == nil {
			continue
		}
		out.Responses = append(out.Responses, FunctionResponse{
			ID: realtime.StrField(fr, "id"), Name: realtime.StrField(fr, "name"), Response: realtime.ObjField(fr, "response"),
			WillContinue: realtime.BoolField(fr, "willContinue"), Scheduling: realtime.StrField(fr, "scheduling"),
		})
	}
	if cc := realtime.ObjField(m, "clientContent"); cc != nil {
		out.TurnComplete = realtime.BoolField(cc, "turnComplete")
		for _, x := range realtime.ListField(cc, "turns") {
			t, _ := x.(Obj)
			if t == nil {
				continue
			}
			turn := Turn{Role: realtime.StrField(t, "role")}
			for _, p := range realtime.ListField(t, "parts") {
				po, _ := p.(Obj)
				if s := realtime.StrField(po, "text"); s != "" {
					turn.Texts = append(turn.Texts, s)
				}
			}
			out.Turns = append(out.Turns, turn)
		}
	}
	out.RealtimeText = realtime.StrField(realtime.ObjField(m, "realtimeInput"), "text")
	switch {
	case realtime.ObjField(m, "setup") != nil:
		out.Kind = ClientSetup
		out.Setup = readSetup(realtime.ObjField(m, "setup"))
	case realtime.ObjField(m, "toolResponse") != nil:
		out.Kind = ClientToolResponse
	case realtime.ObjField(m, "clientContent") != nil:
		out.Kind = ClientContent
	}
	return out, nil
}

func readSetup(s Obj) Setup {
	out := Setup{Model: realtime.StrField(s, "model"), Behaviors: map[string]string{}}
	out.InputTranscription = realtime.ObjField(s, "inputAudioTranscription") != nil
	out.OutputTranscription = realtime.ObjField(s, "outputAudioTranscription") != nil
	mods := realtime.ListField(realtime.ObjField(s, "generationConfig"), "responseModalities")
	if len(mods) == 0 {
		mods = realtime.ListField(s, "responseModalities")
	}
	audio, text := false, false
	for _, x := range mods {
		switch x, _ := x.(string); strings.ToUpper(x) {
		case "AUDIO":
			audio = true
		case "TEXT":
			text = true
		}
	}
	out.TextOnly = text && !audio
	out.Language = realtime.StrField(realtime.ObjField(realtime.ObjField(s, "generationConfig"), "speechConfig"), "languageCode")
	if out.Language == "" {
		out.Language = realtime.StrField(realtime.ObjField(s, "speechConfig"), "languageCode")
	}
	out.ExplicitVAD = realtime.BoolField(s, "explicitVadSignal")
	if r := realtime.ObjField(s, "sessionResumption"); r != nil {
		out.Resumption = true
		out.Handle = realtime.StrField(r, "handle")
	}
	for _, t := range realtime.ListField(s, "tools") {
		to, _ := t.(Obj)
		for _, d := range realtime.ListField(to, "functionDeclarations") {
			do, _ := d.(Obj)
			name := realtime.StrField(do, "name")
			if name == "" {
				continue
			}
			b := strings.ToUpper(realtime.StrField(do, "behavior"))
			if b == "" || b == "UNSPECIFIED" {
				b = "BLOCKING"
			}
			out.Behaviors[name] = b
		}
	}
	fc := realtime.ObjField(realtime.ObjField(s, "toolConfig"), "functionCallingConfig")
	out.ToolChoiceNone = strings.EqualFold(realtime.StrField(fc, "mode"), "NONE")
	return out
}

// SetHandle returns the client message m (a setup) with its resumption handle set to
// handle (removed when empty), encoded.
func SetHandle(m Obj, handle string) []byte {
	s := realtime.ObjField(m, "setup")
	r := realtime.ObjField(s, "sessionResumption")
	if r != nil {
		delete(r, "handle")
		if handle != "" {
			r["handle"] = handle
		}
	}
	return realtime.Marshal(m)
}

// AskInputTranscription returns the setup message m asking for input transcription
// too (`inputAudioTranscription: {}`), encoded.
func AskInputTranscription(m Obj) []byte {
	realtime.ObjField(m, "setup")["inputAudioTranscription"] = Obj{}
	return realtime.Marshal(m)
}

// RewriteHandle returns the server message b with its
// `sessionResumptionUpdate.newHandle` replaced by handle, encoded. Errors:
// realtime.ErrNotObject.
func RewriteHandle(b []byte, handle string) ([]byte, error) {
	m, err := realtime.DecodeObject(b)
	if err != nil {
		return nil, err
	}
	if u := realtime.ObjField(m, "sessionResumptionUpdate"); u != nil {
		u["newHandle"] = handle
	}
	return realtime.Marshal(m), nil
}

// WithoutInput returns the server message b without its user input transcription
// (`inputTranscription`, `interimInputTranscription`), for a client that did not ask
// for it; ok is false when nothing else is left (send nothing).
func WithoutInput(b []byte) (out []byte, ok bool) {
	m, err := realtime.DecodeObject(b)
	if err != nil {
		return b, true
	}
	sc := realtime.ObjField(m, "serverContent")
	for _, k := range []string{"inputTranscription", "interimInputTranscription"} {
		delete(sc, k)
		delete(sc, realtime.Snake(k))
	}
	if sc != nil && len(sc) == 0 {
		delete(m, "serverContent")
	}
	if len(m) == 0 {
		return nil, false
	}
	return realtime.Marshal(m), true
}

// WithoutCalls returns the server message b with the function calls whose ids drop
// says removed from `toolCall.functionCalls` (and `toolCall` removed when none is
// left), encoded; ok is false when nothing is left of the message.
func WithoutCalls(b []byte, drop func(id string) bool) (out []byte, ok bool) {
	m, err := realtime.DecodeObject(b)
	if err != nil {
		return b, true
	}
	tc := realtime.ObjField(m, "toolCall")
	var keep []any
	for _, x := range realtime.ListField(tc, "functionCalls") {
		fc, _ := x.(Obj)
		if fc != nil && drop(realtime.StrField(fc, "id")) {
			continue
		}
		keep = append(keep, x)
	}
	if len(keep) == 0 {
		delete(m, "toolCall")
	} else {
		tc["functionCalls"] = keep
	}
	if len(m) == 0 {
		return nil, false
	}
	return realtime.Marshal(m), true
}

// ToolResponse builds a client message answering calls: `toolResponse` with one
// function response each.
func ToolResponse(rs ...FunctionResponse) []byte {
	list := make([]any, 0, len(rs))
	for _, r := range rs {
		fr := Obj{"id": r.ID, "name": r.Name, "response": r.Response}
		if r.Response == nil {
			fr["response"] = Obj{}
		}
		if r.Scheduling != "" {
			fr["scheduling"] = r.Scheduling
		}
		if r.WillContinue {
			fr["willContinue"] = true
		}
		list = append(list, fr)
	}
	return realtime.Marshal(Obj{"toolResponse": Obj{"functionResponses": list}})
}

// UserTurn builds a client message with one user turn of text, turnComplete true
// (the model answers it).
func UserTurn(text string) []byte {
	return realtime.Marshal(Obj{"clientContent": Obj{
		"turns":        []any{Obj{"role": "user", "parts": []any{Obj{"text": text}}}},
		"turnComplete": true,
	}})
}
