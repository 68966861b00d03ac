package fakeprovider

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/replay"
)

func ev(line int, event string, mod func(*replay.TraceEvent)) replay.TraceEvent {
	e := replay.TraceEvent{Line: line, Event: event}
	if mod != nil {
		mod(&e)
	}
	return e
}

// wire renders a step's messages as JSON lines, OpenAI event ids left out.
func wire(s step) string {
	var out []string
	for _, m := range s.msgs {
		if o, ok := m.(obj); ok {
			c := snap(o)
			delete(c, "event_id")
			m = c
		}
		b, _ := marshal(m)
		out = append(out, string(b))
	}
	return strings.Join(out, "\n")
}

func TestGeminiSetup(t *testing.T) {
	s, ok := parseGeminiSetup([]byte(`{"setup": {"model": "m", "generation_config": {"response_modalities": ["TEXT"]},
		"input_audio_transcription": {}, "output_audio_transcription": null, "explicit_vad_signal": true,
		"session_resumption": {"handle": "fake-session-3"},
		"tools": [{"function_declarations": [{"name": "a"}, {"name": "b", "behavior": "NON_BLOCKING"}, {"name": "c", "behavior": "UNSPECIFIED"}]}]}}`))
	if !ok {
		t.Fatal("a snake_case setup is a setup")
	}
	want := geminiSetup{Model: "m", InputTranscription: true, TextOnly: true, ExplicitVAD: true, Resumption: true, Handle: "fake-session-3",
		Behaviors: map[string]string{"a": "BLOCKING", "b": "NON_BLOCKING", "c": "BLOCKING"}}
	got, _ := json.Marshal(s)
	w, _ := json.Marshal(want)
	if string(got) != string(w) {
		t.Errorf("setup\n got %s\nwant %s", got, w)
	}
	if _, ok := parseGeminiSetup([]byte(`{"clientContent": {}}`)); ok {
		t.Error("clientContent is not a setup")
	}
}

// TestGeminiFollowsSetup: what the setup asks for decides what is sent: no
// transcriptions unless asked (a warning, once), text parts and no audio for TEXT,
// voiceActivityDetectionSignal with explicitVadSignal, and a warning when the trace's
// behavior is not the declaration's.
func TestGeminiFollowsSetup(t *testing.T) {
	transcript := ev(3, "transcript", func(e *replay.TraceEvent) { e.Text = "stop" })
	model := ev(4, "model_transcript", func(e *replay.TraceEvent) { e.Text = "Okay." })
	call := ev(5, "tool_call", func(e *replay.TraceEvent) { e.CallID, e.Tool, e.Behavior = "fc_1", "book_slot", "NON_BLOCKING" })

	g := newGemini(geminiSetup{Behaviors: map[string]string{"book_slot": "BLOCKING"}}, "h")
	s := g.event(transcript)
	s.merge(g.event(transcript))
	s.merge(g.event(model))
	s.merge(g.event(call))
	if got := wire(s); got != `{"toolCall":{"functionCalls":[{"args":{},"id":"fc_1","name":"book_slot"}]}}` {
		t.Errorf("without transcription the messages are\n%s", got)
	}
	want := []string{"no inputAudioTranscription", "no outputAudioTranscription",
		`trace line 5: fc_1 of "book_slot" was NON_BLOCKING in the recording; the setup declares "book_slot" BLOCKING`}
	if len(s.warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", s.warnings, len(want))
	}
	for i, w := range want {
		if !strings.Contains(s.warnings[i], w) {
			t.Errorf("warning %q, want it to say %q", s.warnings[i], w)
		}
	}

	g = newGemini(geminiSetup{TextOnly: true, ExplicitVAD: true, Resumption: true}, "fake-session-1")
	s = g.greet()
	s.merge(g.event(ev(2, "speech_start", nil)))
	s.merge(g.event(ev(3, "model_audio_start", nil)))
	s.merge(g.event(model))
	s.merge(g.goAway())
	if got, want := wire(s), `{"setupComplete":{}}
{"sessionResumptionUpdate":{"newHandle":"fake-session-1","resumable":true}}
{"voiceActivity":{"type":"ACTIVITY_START"}}
{"voiceActivityDetectionSignal":{"vadSignalType":"VAD_SIGNAL_TYPE_SOS"}}
{"serverContent":{"modelTurn":{"parts":[{"text":"Okay."}]}}}
{"sessionResumptionUpdate":{"newHandle":"fake-session-1","resumable":true}}
{"goAway":{"timeLeft":"0s"}}`; got != want {
		t.Errorf("text-only, explicit VAD, resumption:\n%s\nwant\n%s", got, want)
	}
	if s := g.client([]byte("not json")); len(s.warnings) != 1 || len(s.msgs) != 0 {
		t.Errorf("a message that is not JSON: %+v, want one warning and no reply", s)
	}
}

// TestOpenAIEdges: interrupted with no response open sends nothing; response.cancel
// cancels the open response; response.create while one is open is ignored; a
// withdrawn id this connection never sent is a warning; retrieve returns the item;
// transcripts need transcription configured.
func TestOpenAIEdges(t *testing.T) {
	o := newOpenAI(false, "m", &ids{session: 1})
	if s := o.event(ev(2, "interrupted", nil)); len(s.msgs) != 0 {
		t.Errorf("interrupted with no response: %s", wire(s))
	}
	s := o.event(ev(3, "transcript", func(e *replay.TraceEvent) { e.Text = "hi" }))
	if len(s.msgs) != 0 || len(s.warnings) != 1 || !strings.Contains(s.warnings[0], "no input audio transcription") {
		t.Errorf("a transcript without transcription: %s %q", wire(s), s.warnings)
	}
	o.event(ev(4, "model_transcript", func(e *replay.TraceEvent) { e.Text = "Sure" }))
	if s := o.client([]byte(`{"type": "response.create"}`)); len(s.msgs) != 0 {
		t.Errorf("response.create during a response: %s", wire(s))
	}
	s = o.client([]byte(`{"type": "response.cancel"}`))
	if got := wire(s); !strings.Contains(got, `"status":"cancelled","status_details":{"reason":"client_cancelled","type":"cancelled"}`) ||
		!strings.Contains(got, `"type":"response.output_item.done"`) || !strings.Contains(got, `"status":"incomplete"`) {
		t.Errorf("response.cancel:\n%s", got)
	}
	if s := o.event(ev(5, "tool_call_cancellation", func(e *replay.TraceEvent) { e.CallIDs = []string{"fc_x"} })); len(s.msgs) != 0 || len(s.warnings) != 1 {
		t.Errorf("withdrawing an id never sent: %s %q", wire(s), s.warnings)
	}
	s = o.client([]byte(`{"type": "conversation.item.retrieve", "item_id": "item_001"}`))
	if got := wire(s); !strings.HasPrefix(got, `{"item":{"content":[{"transcript":"Sure","type":"output_audio"}],"id":"item_001"`) {
		t.Errorf("retrieve: %s", got)
	}
	if s := o.client([]byte(`{"type": "session.closeish"}`)); len(s.msgs) != 0 || len(s.warnings) != 1 {
		t.Errorf("an unknown client event: %s %q, want a warning only", wire(s), s.warnings)
	}
	if s := o.client([]byte(`nope`)); !strings.Contains(wire(s), `"code":"invalid_json"`) {
		t.Errorf("not JSON: %s, want an invalid_request_error", wire(s))
	}
}

// completedItems are the item ids of a step's input_audio_transcription.completed
// events, in order.
func completedItems(s step) []string {
	var out []string
	for _, m := range s.msgs {
		if o, ok := m.(obj); ok && o["type"] == "conversation.item.input_audio_transcription.completed" {
			out = append(out, o["item_id"].(string))
		}
	}
	return out
}

// TestOpenAILateTranscript: a transcript goes to the utterance it transcribes, as a
// real server names the item: the one the trace names, else the oldest utterance that
// ended without a final transcript (one that arrives after the next speech_start is
// the older utterance's), else the open one, else the latest within 5 s of its end,
// else a turn of its own; never the new utterance's item by default.
func TestOpenAILateTranscript(t *testing.T) {
	speech := func(line int, kind string, tms int64, utt string) replay.TraceEvent {
		return ev(line, kind, func(e *replay.TraceEvent) { e.TMs, e.Utterance = tms, utt })
	}
	text := func(line int, tms int64, text, utt string) replay.TraceEvent {
		return ev(line, "transcript", func(e *replay.TraceEvent) { e.TMs, e.Text, e.Utterance = tms, text, utt })
	}
	newSession := func() *openai {
		o := newOpenAI(false, "m", &ids{session: 1})
		o.client([]byte(`{"type": "session.update", "session": {"audio": {"input": {"transcription": {"model": "t"}}}}}`))
		return o
	}
	play := func(o *openai, events ...replay.TraceEvent) []string {
		var s step
		for _, e := range events {
			s.merge(o.event(e))
		}
		return completedItems(s)
	}
	cases := []struct {
		name   string
		events []replay.TraceEvent
		want   []string
	}{
		{"late, after the next speech_start: the older utterance's", []replay.TraceEvent{
			speech(1, "speech_start", 100, ""), speech(2, "speech_end", 900, ""),
			speech(3, "speech_start", 1200, ""), text(4, 1500, "Book it.", ""), text(5, 2500, "Actually, stop.", ""), speech(6, "speech_end", 2600, "")},
			[]string{"item_001", "item_002"}},
		{"the trace names the utterance", []replay.TraceEvent{
			speech(1, "speech_start", 100, "u1"), speech(2, "speech_end", 900, "u1"),
			speech(3, "speech_start", 1200, "u2"), speech(4, "speech_end", 1800, "u2"),
			text(5, 2000, "Second.", "u2"), text(6, 2100, "First.", "u1")},
			[]string{"item_002", "item_001"}},
		{"pieces of one utterance, the last within 5 s of its end", []replay.TraceEvent{
			speech(1, "speech_start", 100, ""), speech(2, "speech_end", 900, ""),
			text(3, 1000, "No,", ""), text(4, 1400, " no.", "")},
			[]string{"item_001", "item_001"}},
		{"a transcript with no voice activity more than 5 s later is a turn of its own", []replay.TraceEvent{
			speech(1, "speech_start", 100, ""), speech(2, "speech_end", 900, ""), text(3, 1000, "Hello.", ""),
			text(4, 7000, "Anyone there?", "")},
			[]string{"item_001", "item_002"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := play(newSession(), tc.events...)
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("transcripts went to %q, want %q", got, tc.want)
			}
		})
	}
}
