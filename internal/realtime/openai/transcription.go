package openai

import (
	"strings"

	"github.com/voicearbiter/arbiter/internal/realtime"
)

// Input audio transcription: how a Realtime session turns it on, and the events it
// brings. A conversation session transcribes the user's audio only when its session
// says so (GA `session.audio.input.transcription`, beta `session.input_audio_transcription`,
// an object naming a model); the default is off (null), and null turns it off again.
// A session.update changes only the fields it carries: one that omits the field keeps
// the session's current value (API reference, "session.update": "Only the fields that
// are present are updated").

// The transcription models the wire guard asks for when it turns input transcription
// on itself. GA: gpt-4o-mini-transcribe, one of the models the GA reference lists for
// `audio.input.transcription.model` (whisper-1, gpt-4o-transcribe,
// gpt-4o-mini-transcribe), the cheaper of the two GPT-4o ones and the default of
// LiveKit's OpenAI plugin. Beta: whisper-1, the one model every version of the beta
// `input_audio_transcription` accepted (its first reference: "whisper-1 is the only
// currently supported model").
const (
	TranscriptionModelGA   = "gpt-4o-mini-transcribe"
	TranscriptionModelBeta = "whisper-1"
)

// TranscriptionEventPrefix starts the type of every server event about the input
// audio transcription of a user item: .delta, .completed, .failed (and GA's .segment).
const TranscriptionEventPrefix = "conversation.item.input_audio_transcription."

// TranscriptionFailed is the server event of a transcription that failed.
const TranscriptionFailed = TranscriptionEventPrefix + "failed"

// IsTranscriptionEvent reports whether a server event type is one about input audio
// transcription (TranscriptionEventPrefix).
func IsTranscriptionEvent(typ string) bool { return strings.HasPrefix(typ, TranscriptionEventPrefix) }

// TranscriptionField reports whether a session object (session.update's, or the
// server's in session.created/.updated) carries the input transcription field at all
// (present, set or null: an explicit choice) and whether it turns transcription on
// (present and not null). GA reads `audio.input.transcription`, beta (`OpenAI-Beta:
// realtime=v1`) `input_audio_transcription`. A nil session carries nothing.
func TranscriptionField(session Obj, beta bool) (present, on bool) {
	holder := session
	key := "input_audio_transcription"
	if !beta {
		holder = realtime.ObjField(realtime.ObjField(session, "audio"), "input")
		key = "transcription"
	}
	if holder == nil {
		return false, false
	}
	v, ok := holder[key]
	return ok, ok && v != nil
}

// AskTranscription sets the input transcription field of the session object session
// (mutated in place; GA: `audio.input.transcription`, objects made where missing;
// beta: `input_audio_transcription`) to the model TranscriptionModelGA or
// TranscriptionModelBeta. A nil session is left alone.
func AskTranscription(session Obj, beta bool) {
	if session == nil {
		return
	}
	if beta {
		session["input_audio_transcription"] = Obj{"model": TranscriptionModelBeta}
		return
	}
	audio := realtime.ObjField(session, "audio")
	if audio == nil {
		audio = Obj{}
		session["audio"] = audio
	}
	input := realtime.ObjField(audio, "input")
	if input == nil {
		input = Obj{}
		audio["input"] = input
	}
	input["transcription"] = Obj{"model": TranscriptionModelGA}
}

// HideTranscription sets the input transcription field of the session object session
// to null where it is present (mutated in place): the session as a client that never
// turned transcription on believes it is. Returns whether it changed anything.
func HideTranscription(session Obj, beta bool) bool {
	if present, on := TranscriptionField(session, beta); !present || !on {
		return false
	}
	if beta {
		session["input_audio_transcription"] = nil
	} else {
		realtime.ObjField(realtime.ObjField(session, "audio"), "input")["transcription"] = nil
	}
	return true
}

// SessionUpdateTranscription builds a session.update that changes only the input
// transcription (on, AskTranscription's model), the event's eventID. GA carries the
// session's `type: "realtime"`, which every GA session.update needs.
func SessionUpdateTranscription(eventID string, beta bool) []byte {
	s := Obj{}
	if !beta {
		s["type"] = "realtime"
	}
	AskTranscription(s, beta)
	return realtime.Marshal(Obj{"type": SessionUpdate, "event_id": eventID, "session": s})
}

// SessionType is a session object's `type` ("realtime", "transcription"; "" when
// absent, as in beta).
func SessionType(session Obj) string { return realtime.StrField(session, "type") }

// errorParam is an error event's `error.param` ("" when none).
func errorParam(m Obj) string { return realtime.StrField(realtime.ObjField(m, "error"), "param") }

// TranscriptionError reports whether an error event is about the input transcription
// field (its `error.param` names it: GA `session.audio.input.transcription...`, beta
// `session.input_audio_transcription...`).
func TranscriptionError(m Obj) bool {
	p := errorParam(m)
	return strings.Contains(p, "audio.input.transcription") || strings.Contains(p, "input_audio_transcription")
}

// SessionError reports whether an error event is about a session parameter (its
// `error.param` starts with "session.", as a refused session.update's does).
func SessionError(m Obj) bool { return strings.HasPrefix(errorParam(m), "session.") }
