package fakeprovider

import (
	"github.com/voicearbiter/arbiter/internal/realtime"
	geminiwire "github.com/voicearbiter/arbiter/internal/realtime/gemini"
	"github.com/voicearbiter/arbiter/replay"
)

// geminiSetup is what the fake reads from a client's `setup` message (package
// internal/realtime/gemini reads it: the model, the declared functions' behaviors, the
// transcriptions asked for, text-only output, explicit VAD signals, resumption).
type geminiSetup = geminiwire.Setup

// parseGeminiSetup reads a client message as `setup`; ok is false when it is not one.
func parseGeminiSetup(msg []byte) (geminiSetup, bool) {
	m, err := geminiwire.ParseClient(msg)
	if err != nil || m.Kind != geminiwire.ClientSetup {
		return geminiSetup{}, false
	}
	return m.Setup, true
}

// gemini translates a trace into Gemini Live BidiGenerateContent server messages
// (docs/fake-provider.md has the table).
type gemini struct {
	setup geminiSetup
	// handle is the session's resumption handle (sessionResumptionUpdate.newHandle).
	handle string
	warned map[string]bool
}

func newGemini(setup geminiSetup, handle string) *gemini {
	return &gemini{setup: setup, handle: handle, warned: map[string]bool{}}
}

func (g *gemini) greet() step {
	var s step
	s.send(obj{"setupComplete": obj{}})
	if g.setup.Resumption {
		s.send(g.resumptionUpdate())
	}
	return s
}

func (g *gemini) resumptionUpdate() obj {
	return obj{"sessionResumptionUpdate": obj{"newHandle": g.handle, "resumable": true}}
}

func (g *gemini) goAway() step {
	var s step
	if g.setup.Resumption {
		s.send(g.resumptionUpdate())
	}
	s.send(obj{"goAway": obj{"timeLeft": "0s"}})
	return s
}

func serverContent(c obj) obj { return obj{"serverContent": c} }

func (g *gemini) event(ev replay.TraceEvent) step {
	var s step
	switch ev.Event {
	case "speech_start", "speech_end":
		va, vad := geminiwire.ActivityStart, "VAD_SIGNAL_TYPE_SOS"
		if ev.Event == "speech_end" {
			va, vad = geminiwire.ActivityEnd, "VAD_SIGNAL_TYPE_EOS"
		}
		// voiceActivity.type, as the server writes it (geminiwire.VoiceActivity says
		// where that comes from).
		s.send(geminiwire.VoiceActivity(va))
		if g.setup.ExplicitVAD {
			s.send(obj{"voiceActivityDetectionSignal": obj{"vadSignalType": vad}})
		}
	case "transcript":
		if !g.setup.InputTranscription {
			s.warnOnce(g.warned, "input", "the setup has no inputAudioTranscription: the trace's user transcripts are not sent (the real server would not send them either)")
			break
		}
		if isFinal(ev) {
			s.send(serverContent(obj{"inputTranscription": obj{"text": ev.Text}}))
		} else {
			s.send(serverContent(obj{"interimInputTranscription": obj{"text": ev.Text}}))
		}
	case "interrupted":
		s.send(serverContent(obj{"interrupted": true}))
	case "tool_call":
		g.checkBehavior(&s, ev)
		args := ev.Args
		if args == nil {
			args = map[string]any{}
		}
		s.send(obj{"toolCall": obj{"functionCalls": []any{obj{"id": ev.CallID, "name": ev.Tool, "args": args}}}})
	case "tool_call_cancellation":
		s.send(obj{"toolCallCancellation": obj{"ids": ev.CallIDs}})
	case "model_audio_start":
		if !g.setup.TextOnly {
			s.send(serverContent(obj{"modelTurn": obj{"parts": []any{obj{"inlineData": obj{"mimeType": "audio/pcm;rate=24000", "data": silence20ms}}}}}))
		}
	case "model_transcript":
		switch {
		case g.setup.TextOnly:
			s.send(serverContent(obj{"modelTurn": obj{"parts": []any{obj{"text": ev.Text}}}}))
		case g.setup.OutputTranscription:
			s.send(serverContent(obj{"outputTranscription": obj{"text": ev.Text}}))
		default:
			s.warnOnce(g.warned, "output", "the setup has no outputAudioTranscription: the trace's model transcripts are not sent (the real server would not send them either)")
		}
	case "generation_complete":
		s.send(serverContent(obj{"generationComplete": true}))
	case "turn_complete":
		s.send(obj{"serverContent": obj{"turnComplete": true},
			"usageMetadata": obj{"promptTokenCount": 0, "responseTokenCount": 0, "totalTokenCount": 0}})
	}
	return s
}

// checkBehavior warns when the trace's call had a behavior other than the one the
// client declared for the function: in Gemini the behavior belongs to the declaration,
// and the reference replay used the trace's.
func (g *gemini) checkBehavior(s *step, ev replay.TraceEvent) {
	declared, ok := g.setup.Behaviors[ev.Tool]
	if !ok {
		s.warnOnce(g.warned, "undeclared:"+ev.Tool, "trace line %d: %s calls %q, which the setup does not declare", ev.Line, ev.CallID, ev.Tool)
		return
	}
	if ev.Behavior != "" && ev.Behavior != declared {
		s.warnOnce(g.warned, "behavior:"+ev.Tool, "trace line %d: %s of %q was %s in the recording; the setup declares %q %s (a reference replay of the trace assumes %s)",
			ev.Line, ev.CallID, ev.Tool, ev.Behavior, ev.Tool, declared, ev.Behavior)
	}
}

// client handles a client message. Gemini answers none of them (toolResponse,
// clientContent and realtimeInput have no reply); a second setup or a message that is
// not JSON is a warning, never an error.
func (g *gemini) client(msg []byte) step {
	var s step
	m, err := geminiwire.ParseClient(msg)
	if err == nil && m.Obj == nil {
		_, err = realtime.DecodeObject(msg) // read by the quick scan: JSON still?
	}
	switch {
	case err != nil:
		s.warn("a client message is not a JSON object")
	case m.Kind == geminiwire.ClientSetup:
		s.warn("a second setup message (the real server accepts one per connection)")
	}
	return s
}
