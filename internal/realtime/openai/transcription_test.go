package openai

import (
	"testing"

	"github.com/voicearbiter/arbiter/internal/realtime"
)

// TestTranscriptionField: present (an explicit choice, null included) and on, in both
// shapes; a beta name on a GA session is not GA's field.
func TestTranscriptionField(t *testing.T) {
	for _, c := range []struct {
		session          string
		beta             bool
		present, on      bool
		hidden, hideSays string
	}{
		{`{"audio":{"input":{"transcription":{"model":"whisper-1"}}}}`, false, true, true, `{"audio":{"input":{"transcription":null}}}`, ""},
		{`{"audio":{"input":{"transcription":null}}}`, false, true, false, "", ""},
		{`{"audio":{"input":{"format":{"type":"audio/pcm"}}}}`, false, false, false, "", ""},
		{`{"tools":[]}`, false, false, false, "", ""},
		{`{"input_audio_transcription":{"model":"whisper-1"}}`, true, true, true, `{"input_audio_transcription":null}`, ""},
		{`{"input_audio_transcription":null}`, true, true, false, "", ""},
		{`{"voice":"alloy"}`, true, false, false, "", ""},
		{`{"input_audio_transcription":{"model":"whisper-1"}}`, false, false, false, "", ""},
	} {
		m, _ := realtime.DecodeObject([]byte(c.session))
		if p, on := TranscriptionField(m, c.beta); p != c.present || on != c.on {
			t.Errorf("%s (beta %v): present %v on %v, want %v %v", c.session, c.beta, p, on, c.present, c.on)
		}
		if changed := HideTranscription(m, c.beta); changed != (c.hidden != "") {
			t.Errorf("%s: HideTranscription changed %v", c.session, changed)
		} else if changed && string(realtime.Marshal(m)) != c.hidden {
			t.Errorf("%s hidden: %s, want %s", c.session, realtime.Marshal(m), c.hidden)
		}
	}
	if p, on := TranscriptionField(nil, false); p || on {
		t.Error("a nil session carries the field")
	}
}

// TestAskTranscription: the field set where it belongs, what is there kept.
func TestAskTranscription(t *testing.T) {
	for _, c := range []struct {
		session, want string
		beta          bool
	}{
		{`{"type":"realtime"}`, `{"audio":{"input":{"transcription":{"model":"gpt-4o-mini-transcribe"}}},"type":"realtime"}`, false},
		{`{"audio":{"output":{"voice":"x"}}}`, `{"audio":{"input":{"transcription":{"model":"gpt-4o-mini-transcribe"}},"output":{"voice":"x"}}}`, false},
		{`{"audio":{"input":{"turn_detection":null}}}`, `{"audio":{"input":{"transcription":{"model":"gpt-4o-mini-transcribe"},"turn_detection":null}}}`, false},
		{`{"voice":"alloy"}`, `{"input_audio_transcription":{"model":"whisper-1"},"voice":"alloy"}`, true},
	} {
		m, _ := realtime.DecodeObject([]byte(c.session))
		AskTranscription(m, c.beta)
		if got := string(realtime.Marshal(m)); got != c.want {
			t.Errorf("%s: %s, want %s", c.session, got, c.want)
		}
	}
	if got := string(SessionUpdateTranscription("ev", false)); got != `{"event_id":"ev","session":{"audio":{"input":{"transcription":{"model":"gpt-4o-mini-transcribe"}}},"type":"realtime"},"type":"session.update"}` {
		t.Errorf("GA update %s", got)
	}
	if got := string(SessionUpdateTranscription("ev", true)); got != `{"event_id":"ev","session":{"input_audio_transcription":{"model":"whisper-1"}},"type":"session.update"}` {
		t.Errorf("beta update %s", got)
	}
}

// TestTranscriptionErrors: an error about the field, about another session
// parameter, and the transcription event types.
func TestTranscriptionErrors(t *testing.T) {
	for msg, want := range map[string][2]bool{
		`{"type":"error","error":{"param":"session.audio.input.transcription.model"}}`: {true, true},
		`{"type":"error","error":{"param":"session.input_audio_transcription.model"}}`: {true, true},
		`{"type":"error","error":{"param":"session.tools"}}`:                           {false, true},
		`{"type":"error","error":{"param":null}}`:                                      {false, false},
	} {
		m, _ := realtime.DecodeObject([]byte(msg))
		if TranscriptionError(m) != want[0] || SessionError(m) != want[1] {
			t.Errorf("%s: transcription %v session %v", msg, TranscriptionError(m), SessionError(m))
		}
	}
	for typ, want := range map[string]bool{TranscriptionCompleted: true, TranscriptionDelta: true, TranscriptionFailed: true,
		"conversation.item.input_audio_transcription.segment": true, "conversation.item.added": false} {
		if IsTranscriptionEvent(typ) != want {
			t.Errorf("%s: %v", typ, !want)
		}
	}
}
