package gemini

import (
	"errors"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/internal/realtime"
)

func TestParseServer(t *testing.T) {
	for _, c := range []struct {
		name, msg string
		check     func(ServerMessage) bool
	}{
		{"audio only", `{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAAA"}}]}}}`,
			func(m ServerMessage) bool { return m.AudioOnly && m.ModelAudio }},
		{"audio with turnComplete is not audio only", `{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"data":"AAAA"}}]},"turnComplete":true}}`,
			func(m ServerMessage) bool { return !m.AudioOnly && m.ModelAudio && m.TurnComplete }},
		{"calls", `{"toolCall":{"functionCalls":[{"id":"a","name":"f","args":{"x":1}},{"id":"b","name":"g","args":"oops"},{"id":"c","name":"h"}]}}`,
			func(m ServerMessage) bool {
				return len(m.Calls) == 3 && m.Calls[0].Args["x"] == 1.0 && m.Calls[1].RawArgs == `"oops"` && m.Calls[2].Args == nil && m.Calls[2].RawArgs == ""
			}},
		{"transcriptions", `{"serverContent":{"interimInputTranscription":{"text":"sto"}}}`,
			func(m ServerMessage) bool { return m.HasInput && !m.InputFinal && m.InputText == "sto" }},
		{"final", `{"serverContent":{"inputTranscription":{"text":"Stop."},"outputTranscription":{"text":"ok"}}}`,
			func(m ServerMessage) bool { return m.InputFinal && m.InputText == "Stop." && m.OutputText == "ok" }},
		{"control", `{"voiceActivity":{"voiceActivityType":"ACTIVITY_START"},"toolCallCancellation":{"ids":["a"]},"goAway":{"timeLeft":"1s"},"sessionResumptionUpdate":{"newHandle":"h","resumable":true}}`,
			func(m ServerMessage) bool {
				return m.VoiceActivity == "ACTIVITY_START" && len(m.Cancelled) == 1 && m.GoAway && m.TimeLeft == "1s" && m.NewHandle == "h"
			}},
		{"unresumable update names no handle", `{"sessionResumptionUpdate":{"newHandle":"h","resumable":false}}`,
			func(m ServerMessage) bool { return m.NewHandle == "" && !m.AudioOnly }},
	} {
		m, err := ParseServer([]byte(c.msg))
		if err != nil || !c.check(m) {
			t.Errorf("%s: %+v %v", c.name, m, err)
		}
	}
	for _, bad := range []string{"", "null", "[1]", `"x"`, "{"} {
		if _, err := ParseServer([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseClient(t *testing.T) {
	m, err := ParseClient([]byte(`{"realtimeInput":{"audio":{"data":"AAAA","mimeType":"audio/pcm"}}}`))
	if err != nil || m.Kind != ClientOther || m.Obj != nil {
		t.Errorf("audio: %+v %v", m, err)
	}
	m, err = ParseClient([]byte(`{"setup":{"model":"m","tools":[{"function_declarations":[{"name":"a","behavior":"NON_BLOCKING"},{"name":"b"}]}],"toolConfig":{"functionCallingConfig":{"mode":"NONE"}},"session_resumption":{"handle":"h"},"inputAudioTranscription":{}}}`))
	if err != nil || m.Kind != ClientSetup || m.Setup.Behaviors["a"] != "NON_BLOCKING" || m.Setup.Behaviors["b"] != "BLOCKING" ||
		!m.Setup.ToolChoiceNone || m.Setup.Handle != "h" || !m.Setup.InputTranscription || m.Setup.OutputTranscription {
		t.Errorf("setup: %+v %v", m.Setup, err)
	}
	m, err = ParseClient([]byte(`{"tool_response":{"function_responses":[{"id":"a","name":"f","response":{"x":1},"will_continue":true,"scheduling":"SILENT"}]}}`))
	if err != nil || m.Kind != ClientToolResponse || len(m.Responses) != 1 || !m.Responses[0].WillContinue || m.Responses[0].Scheduling != "SILENT" {
		t.Errorf("snake_case tool response: %+v %v", m, err)
	}
	if _, err := ParseClient([]byte(`{"toolResponse": oops`)); err == nil {
		t.Error("a broken tool response parsed")
	}
	// Garbage is told from audio by its first byte, without a decode.
	for _, b := range []string{"hello", "\x00\x01\xff", "[]", "", "  \n"} {
		if _, err := ParseClient([]byte(b)); !errors.Is(err, realtime.ErrNotObject) {
			t.Errorf("%q: %v, want ErrNotObject", b, err)
		}
	}
	if m, err := ParseClient([]byte(" \n{\"realtimeInput\":{}}")); err != nil || m.Kind != ClientOther {
		t.Errorf("an object after whitespace: %+v %v", m, err)
	}
}

func TestEdits(t *testing.T) {
	b, ok := WithoutCalls([]byte(`{"toolCall":{"functionCalls":[{"id":"a","name":"f"},{"id":"b","name":"g"}]}}`), func(id string) bool { return id == "a" })
	if !ok || strings.Contains(string(b), `"a"`) || !strings.Contains(string(b), `"b"`) {
		t.Errorf("%s", b)
	}
	if _, ok := WithoutCalls([]byte(`{"toolCall":{"functionCalls":[{"id":"a"}]}}`), func(string) bool { return true }); ok {
		t.Error("an empty message kept")
	}
	if _, ok := WithoutInput([]byte(`{"serverContent":{"inputTranscription":{"text":"x"}}}`)); ok {
		t.Error("a transcription-only message kept")
	}
	b, ok = WithoutInput([]byte(`{"serverContent":{"inputTranscription":{"text":"x"},"turnComplete":true}}`))
	if !ok || strings.Contains(string(b), "inputTranscription") || !strings.Contains(string(b), "turnComplete") {
		t.Errorf("%s", b)
	}
	b, _ = RewriteHandle([]byte(`{"sessionResumptionUpdate":{"newHandle":"real","resumable":true}}`), "arb~s~real")
	if !strings.Contains(string(b), `"arb~s~real"`) {
		t.Errorf("%s", b)
	}
	if got := string(ToolResponse(FunctionResponse{ID: "a", Name: "f", Response: Obj{"status": "ok"}, Scheduling: "WHEN_IDLE"})); got != `{"toolResponse":{"functionResponses":[{"id":"a","name":"f","response":{"status":"ok"},"scheduling":"WHEN_IDLE"}]}}` {
		t.Errorf("%s", got)
	}
	if got := string(UserTurn("System note: <x> & y")); got != `{"clientContent":{"turnComplete":true,"turns":[{"parts":[{"text":"System note: <x> & y"}],"role":"user"}]}}` {
		t.Errorf("%s", got)
	}
}

func TestAudioOnlyQuickTest(t *testing.T) {
	for msg, want := range map[string]bool{
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAAA"}}]}}}`:                            true,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm","data":"AAAA"}}]}},"usageMetadata":{"totalTokenCount":3}}`: true,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"image/png","data":"AAAA"}}]}}}`:                                       false,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"data":"AAAA"}},{"text":"hi"}]}}}`:                                                false,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"data":"AAAA"}}]},"turnComplete":true}}`:                                          false,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"data":"A\"turnComplete\":"}}]}}}`:                                                true, // inside a string: not a key
		`{"toolCall":{"functionCalls":[]},"x":{"inlineData":{}}}`:                                                                                 false,
	} {
		m, err := ParseServer([]byte(msg))
		if err != nil || m.AudioOnly != want {
			t.Errorf("%s: audio only %v (%v), want %v", msg, m.AudioOnly, err, want)
		}
	}
}

// TestVoiceActivityAsTheWireNamesIt: the server writes the kind as voiceActivity.type
// (google-genai's converters read it there); a client re-encoding the SDK's object
// writes voiceActivityType. Both are voice activity, and VoiceActivity builds the
// server's spelling. The guard read voiceActivityType alone and so missed every voice
// activity the fake provider (and, by google-genai's reading, the real server) sends.
func TestVoiceActivityAsTheWireNamesIt(t *testing.T) {
	for msg, want := range map[string]string{
		`{"voiceActivity":{"type":"ACTIVITY_START"}}`:            ActivityStart,
		`{"voiceActivity":{"voiceActivityType":"ACTIVITY_END"}}`: ActivityEnd,
		`{"voiceActivity":{}}`:                                   "",
	} {
		m, err := ParseServer([]byte(msg))
		if err != nil || m.VoiceActivity != want {
			t.Errorf("%s: %q (%v), want %q", msg, m.VoiceActivity, err, want)
		}
	}
	b := realtime.Marshal(VoiceActivity(ActivityEnd))
	if m, _ := ParseServer(b); m.VoiceActivity != ActivityEnd || string(b) != `{"voiceActivity":{"type":"ACTIVITY_END"}}` {
		t.Errorf("built %s, read %q", b, m.VoiceActivity)
	}
}

// TestSetupReadsWhatTheServerActsOn: a transcription config of null asks for nothing
// (protobuf JSON reads null as absent; the guard took it as asked and so never asked
// the server for the input transcription it needs), response modalities (TEXT alone:
// text parts, no audio), explicitVadSignal.
func TestSetupReadsWhatTheServerActsOn(t *testing.T) {
	m, err := ParseClient([]byte(`{"setup": {"model": "m", "generation_config": {"response_modalities": ["TEXT"]},
		"input_audio_transcription": {}, "output_audio_transcription": null, "explicit_vad_signal": true}}`))
	if err != nil || m.Kind != ClientSetup {
		t.Fatalf("%+v %v", m, err)
	}
	if s := m.Setup; !s.InputTranscription || s.OutputTranscription || !s.TextOnly || !s.ExplicitVAD {
		t.Errorf("setup %+v", s)
	}
	for msg, textOnly := range map[string]bool{
		`{"setup":{"generationConfig":{"responseModalities":["TEXT","AUDIO"]}}}`: false,
		`{"setup":{"generationConfig":{"responseModalities":["AUDIO"]}}}`:        false,
		`{"setup":{"responseModalities":["text"]}}`:                              true,
		`{"setup":{}}`: false,
	} {
		if m, _ := ParseClient([]byte(msg)); m.Setup.TextOnly != textOnly {
			t.Errorf("%s: text only %v", msg, m.Setup.TextOnly)
		}
	}
}

// TestClientTexts: what a client message puts into the model's context besides function
// responses: clientContent turns (role, text parts) and realtimeInput.text.
func TestClientTexts(t *testing.T) {
	m, err := ParseClient([]byte(`{"client_content":{"turns":[{"role":"user","parts":[{"text":"a"},{"inline_data":{}},{"text":"b"}]},{"parts":[{"text":"c"}]},{"role":"model","parts":[{"text":"d"}]}],"turn_complete":true}}`))
	if err != nil || m.Kind != ClientContent || !m.TurnComplete || len(m.Turns) != 3 ||
		strings.Join(m.Turns[0].Texts, "|") != "a|b" || m.Turns[1].Role != "" || m.Turns[2].Role != "model" {
		t.Errorf("turns %+v %v", m, err)
	}
	m, err = ParseClient([]byte(`{"realtimeInput":{"text":"System note: x"}}`))
	if err != nil || m.Kind != ClientOther || m.RealtimeText != "System note: x" {
		t.Errorf("realtime text %+v %v", m, err)
	}
	m, _ = ParseClient(UserTurn("hi"))
	if len(m.Turns) != 1 || m.Turns[0].Role != "user" || m.Turns[0].Texts[0] != "hi" {
		t.Errorf("UserTurn reads back as %+v", m.Turns)
	}
}
