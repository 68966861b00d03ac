package guard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/realtime"
	"github.com/voicearbiter/arbiter/internal/realtime/openai"
)

// Input transcription on OpenAI Realtime behind the guard (Config.AddTranscription):
// an agent that never turns it on leaves the arbiter deaf to a spoken stop, so the
// guard asks for it, keeps what it asked for from the agent, and never overrides the
// agent's own choice.

// oaHarness is an OpenAI connection of the guard with AddTranscription on (beta: the
// OpenAI-Beta names), the server's session.created seen.
func oaHarness(t *testing.T, beta bool, created string) *harness {
	proto := "openai"
	if beta {
		proto = "openai-beta"
	}
	h := newHarness(t, proto, Config{AddTranscription: true})
	if created != "" {
		h.server(created)
	}
	h.deliverAll()
	return h
}

const (
	gaCreated   = `{"type":"session.created","event_id":"e0","session":{"type":"realtime","id":"sess_1","tool_choice":"auto","audio":{"input":{"transcription":null,"turn_detection":{"type":"server_vad"}}}}}`
	betaCreated = `{"type":"session.created","event_id":"e0","session":{"id":"sess_1","tool_choice":"auto","input_audio_transcription":null}}`
)

// gaUpdated is the server's session.updated with GA input transcription set to tr
// (JSON: null or an object).
func gaUpdated(tr string) string {
	return `{"type":"session.updated","event_id":"e9","session":{"type":"realtime","id":"sess_1","tool_choice":"auto","tools":[{"type":"function","name":"book_slot"}],"audio":{"input":{"transcription":` + tr + `,"turn_detection":{"type":"server_vad"}}}}}`
}

func betaUpdated(tr string) string {
	return `{"type":"session.updated","event_id":"e9","session":{"id":"sess_1","tool_choice":"auto","tools":[{"type":"function","name":"book_slot"}],"input_audio_transcription":` + tr + `}}`
}

// transcriptionEvents are the server's input transcription events for item u1.
var transcriptionEvents = []string{
	`{"type":"conversation.item.input_audio_transcription.delta","event_id":"e20","item_id":"u1","content_index":0,"delta":"Actually, "}`,
	`{"type":"conversation.item.input_audio_transcription.completed","event_id":"e21","item_id":"u1","content_index":0,"transcript":"Actually, stop."}`,
	`{"type":"conversation.item.input_audio_transcription.failed","event_id":"e22","item_id":"u2","content_index":0,"error":{"type":"transcription_error","message":"x"}}`,
}

// lastUpstream decodes the last frame sent to the server.
func lastUpstream(t *testing.T, h *harness) realtime.Obj {
	t.Helper()
	if len(h.toServer) == 0 {
		t.Fatal("nothing went upstream")
	}
	m, err := realtime.DecodeObject(h.toServer[len(h.toServer)-1].Data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// upstreamTranscription: the last frame upstream's session transcription field.
func upstreamTranscription(t *testing.T, h *harness, beta bool) (present bool, model string) {
	t.Helper()
	s := realtime.ObjField(lastUpstream(t, h), "session")
	var tr realtime.Obj
	if beta {
		_, present = s["input_audio_transcription"]
		tr = realtime.ObjField(s, "input_audio_transcription")
	} else {
		_, present = realtime.ObjField(realtime.ObjField(s, "audio"), "input")["transcription"]
		tr = realtime.ObjField(realtime.ObjField(realtime.ObjField(s, "audio"), "input"), "transcription")
	}
	return present, realtime.StrField(tr, "model")
}

// agentTypes lists the types of the events the agent got, in order.
func agentTypes(h *harness) []string {
	var out []string
	for _, f := range h.toAgent {
		m, _ := realtime.DecodeObject(f.Data)
		typ, _ := m["type"].(string)
		out = append(out, typ)
	}
	return out
}

// transcripts are the user transcripts the rule reported, "text/final" or
// "text/interim".
func transcripts(h *harness) []string {
	var out []string
	for _, ev := range h.reported {
		if tr, ok := ev.(arbiter.Transcript); ok && !tr.Model {
			kind := "final"
			if tr.Interim {
				kind = "interim"
			}
			out = append(out, tr.Text+"/"+kind+"/"+tr.UtteranceID)
		}
	}
	return out
}

// agentSawTranscription reports whether the agent got an input transcription event, or
// a session.updated whose transcription is on.
func agentSawTranscription(t *testing.T, h *harness, beta bool) bool {
	t.Helper()
	for _, f := range h.toAgent {
		m, _ := realtime.DecodeObject(f.Data)
		typ, _ := m["type"].(string)
		if openai.IsTranscriptionEvent(typ) {
			return true
		}
		if typ == openai.SessionUpdated {
			if _, on := openai.TranscriptionField(realtime.ObjField(m, "session"), beta); on {
				return true
			}
		}
	}
	return false
}

// TestOpenAITranscriptionAddedToAgentUpdate: an agent's session.update without input
// transcription (GA and beta shapes) gets the guard's, with the model the protocol
// takes; the rest of the update goes as the agent sent it; the server's echo shows
// the field null, as the agent left it; the transcription events are reported to the
// arbiter and kept from the agent; a later partial update goes untouched (the server
// keeps the field).
func TestOpenAITranscriptionAddedToAgentUpdate(t *testing.T) {
	for _, tc := range []struct {
		name          string
		beta          bool
		created       string
		update, later string
		updated       func(string) string
		model         string
	}{
		{"GA", false, gaCreated,
			`{"type":"session.update","event_id":"ev_a1","session":{"type":"realtime","instructions":"be brief","audio":{"input":{"turn_detection":{"type":"semantic_vad"}}},"tools":[{"type":"function","name":"book_slot"}]}}`,
			`{"type":"session.update","event_id":"ev_a2","session":{"type":"realtime","audio":{"input":{"noise_reduction":{"type":"near_field"}}}}}`,
			gaUpdated, openai.TranscriptionModelGA},
		{"GA without audio", false, gaCreated,
			`{"type":"session.update","session":{"type":"realtime","tools":[{"type":"function","name":"book_slot"}]}}`,
			`{"type":"session.update","session":{"type":"realtime","instructions":"x"}}`,
			gaUpdated, openai.TranscriptionModelGA},
		{"beta", true, betaCreated,
			`{"type":"session.update","event_id":"ev_a1","session":{"instructions":"be brief","tools":[{"type":"function","name":"book_slot"}]}}`,
			`{"type":"session.update","event_id":"ev_a2","session":{"voice":"alloy"}}`,
			betaUpdated, openai.TranscriptionModelBeta},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The agent's update goes before the server's session.created reaches the
			// guard (the agent sends it as it connects).
			h := oaHarness(t, tc.beta, "")
			h.agent(tc.update)
			if present, model := upstreamTranscription(t, h, tc.beta); !present || model != tc.model {
				t.Fatalf("upstream update %s: transcription present %v model %q, want %q", h.toServer[len(h.toServer)-1].Data, present, model, tc.model)
			}
			// The agent's own fields are kept.
			var sent, want map[string]any
			_ = json.Unmarshal([]byte(tc.update), &want)
			_ = json.Unmarshal(h.toServer[len(h.toServer)-1].Data, &sent)
			ws, ss := want["session"].(map[string]any), sent["session"].(map[string]any)
			for k, v := range ws {
				if k == "audio" {
					in := v.(map[string]any)["input"].(map[string]any)
					sin := ss["audio"].(map[string]any)["input"].(map[string]any)
					for k2 := range in {
						if _, ok := sin[k2]; !ok {
							t.Errorf("audio.input.%s of the agent's update is gone", k2)
						}
					}
					continue
				}
				if b1, b2 := realtime.Marshal(v), realtime.Marshal(ss[k]); string(b1) != string(b2) {
					t.Errorf("session.%s: sent %s, the agent said %s", k, b2, b1)
				}
			}
			if want["event_id"] != sent["event_id"] {
				t.Errorf("event_id %v, the agent's %v", sent["event_id"], want["event_id"])
			}
			h.server(tc.created)
			if len(h.toServer) != 1 {
				t.Errorf("the guard sent an update of its own too: %s", h.toServer[len(h.toServer)-1].Data)
			}
			h.server(tc.updated(`{"model":"` + tc.model + `"}`))
			for _, ev := range transcriptionEvents {
				h.server(ev)
			}
			h.deliverAll()
			if agentSawTranscription(t, h, tc.beta) {
				t.Errorf("the agent saw the transcription it never asked for: %v", agentTypes(h))
			}
			if got := agentTypes(h); len(got) != 2 || got[1] != openai.SessionUpdated {
				t.Errorf("the agent got %v, want session.created and its session.updated", got)
			}
			if got := strings.Join(transcripts(h), ", "); got != "Actually, /interim/u1, Actually, stop./final/u1" {
				t.Errorf("reported transcripts %q", got)
			}
			n := len(h.toServer)
			h.agent(tc.later)
			if present, _ := upstreamTranscription(t, h, tc.beta); present || len(h.toServer) != n+1 {
				t.Errorf("a later partial update was changed: %s", h.toServer[len(h.toServer)-1].Data)
			}
			if string(h.toServer[n].Data) != tc.later {
				t.Errorf("the later update went as %s, not as the agent sent it", h.toServer[n].Data)
			}
			h.server(tc.updated(`{"model":"` + tc.model + `"}`))
			h.server(transcriptionEvents[1])
			if agentSawTranscription(t, h, tc.beta) {
				t.Errorf("after the later update the agent saw the guard's transcription")
			}
		})
	}
}

// TestOpenAITranscriptionAgentChoiceStands: the agent that sets input transcription
// itself, on or null, first or after the guard added it, is left alone: its updates go
// as sent, nothing is added later, and what it asked for reaches it.
func TestOpenAITranscriptionAgentChoiceStands(t *testing.T) {
	const (
		on   = `{"type":"session.update","session":{"type":"realtime","audio":{"input":{"transcription":{"model":"gpt-4o-transcribe","language":"fr"}}},"tools":[{"type":"function","name":"book_slot"}]}}`
		off  = `{"type":"session.update","session":{"type":"realtime","audio":{"input":{"transcription":null}},"tools":[{"type":"function","name":"book_slot"}]}}`
		bare = `{"type":"session.update","session":{"type":"realtime","tools":[{"type":"function","name":"book_slot"}]}}`
	)
	for _, tc := range []struct {
		name    string
		updates []string
		// echo: the server's transcription after the last update; seen: the agent
		// gets the transcription events; warn: the deafness is logged.
		echo string
		warn bool
		// audioFirst: the agent streams audio before its first update (the guard
		// sends its own update then).
		audioFirst bool
	}{
		{"explicit on", []string{on, bare}, `{"model":"gpt-4o-transcribe","language":"fr"}`, false, false},
		{"explicit null", []string{off, bare}, `null`, true, false},
		{"on after the guard added it", []string{bare, on}, `{"model":"gpt-4o-transcribe","language":"fr"}`, false, false},
		{"null after the guard added it", []string{bare, off, bare}, `null`, true, false},
		{"on after the guard's own update", []string{on, bare}, `{"model":"gpt-4o-transcribe","language":"fr"}`, false, true},
		{"null after the guard's own update", []string{off, bare}, `null`, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := oaHarness(t, false, "")
			own := 0
			if tc.audioFirst {
				h.server(gaCreated)
				h.agent(audioAppend)
				own = 2 // the guard's update and the audio
			}
			for i, u := range tc.updates {
				h.agent(u)
				if i == 0 && !tc.audioFirst {
					h.server(gaCreated)
				}
				if i == 0 && u == bare {
					continue // the guard's addition: TestOpenAITranscriptionAddedToAgentUpdate
				}
				if got := string(h.toServer[len(h.toServer)-1].Data); got != u {
					t.Errorf("update %d went as %s, the agent sent %s", i, got, u)
				}
			}
			if len(h.toServer) != len(tc.updates)+own {
				t.Errorf("%d frames upstream for %d updates", len(h.toServer), len(tc.updates))
			}
			if own > 0 {
				h.server(gaUpdated(`{"model":"gpt-4o-mini-transcribe"}`)) // the guard's own: not forwarded
			}
			for range tc.updates[1:] {
				h.server(gaUpdated(tc.echo)) // the answers to all but the last update
			}
			h.server(gaUpdated(tc.echo))
			h.server(transcriptionEvents[1])
			h.deliverAll()
			last := h.toAgent[len(h.toAgent)-1]
			if got := agentTypes(h); got[len(got)-2] != openai.SessionUpdated || got[len(got)-1] != openai.TranscriptionCompleted {
				t.Errorf("the agent got %v; want its session.updated and the transcription it asked for", got)
			} else if string(last.Data) != transcriptionEvents[1] {
				t.Errorf("the transcription reached the agent as %s", last.Data)
			}
			if got := string(h.toAgent[len(h.toAgent)-2].Data); got != gaUpdated(tc.echo) {
				t.Errorf("the agent's session.updated was changed: %s", got)
			}
			warned := strings.Contains(strings.Join(h.logs, "\n"), "turned input transcription off")
			if warned != tc.warn {
				t.Errorf("deafness logged %v, want %v: %v", warned, tc.warn, h.logs)
			}
		})
	}
}

const audioAppend = `{"type":"input_audio_buffer.append","audio":"AAAA"}`

// TestOpenAITranscriptionNoSessionUpdate: an agent that begins its conversation
// without any session.update (its audio first, before or after session.created) gets
// the guard's own just before its first event, once session.created showed no
// transcription (only the transcription field, and GA's session type); its
// session.updated never reaches the agent, whose later update goes untouched and
// whose echo shows the field null. An agent that has sent nothing yet gets nothing.
func TestOpenAITranscriptionNoSessionUpdate(t *testing.T) {
	for _, tc := range []struct {
		name         string
		beta         bool
		created      string
		updated      func(string) string
		want         string
		audioCreated bool // the audio reaches the guard before session.created
	}{
		{"GA", false, gaCreated, gaUpdated, `{"event_id":"event_arb_1","session":{"audio":{"input":{"transcription":{"model":"gpt-4o-mini-transcribe"}}},"type":"realtime"},"type":"session.update"}`, false},
		{"beta", true, betaCreated, betaUpdated, `{"event_id":"event_arb_1","session":{"input_audio_transcription":{"model":"whisper-1"}},"type":"session.update"}`, false},
		{"GA, audio before session.created", false, gaCreated, gaUpdated, `{"event_id":"event_arb_1","session":{"audio":{"input":{"transcription":{"model":"gpt-4o-mini-transcribe"}}},"type":"realtime"},"type":"session.update"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h *harness
			if tc.audioCreated {
				h = oaHarness(t, tc.beta, "")
				h.agent(audioAppend)
				if len(h.toServer) != 1 {
					t.Fatalf("the guard asked before session.created said what the session has: %s", h.toServer[0].Data)
				}
				h.server(tc.created)
				h.toServer = append(h.toServer[1:], h.toServer[0]) // the order the test reads: update, audio
			} else {
				h = oaHarness(t, tc.beta, tc.created)
				if len(h.toServer) != 0 {
					t.Fatalf("the guard asked before the agent began: %s", h.toServer[0].Data)
				}
				h.agent(audioAppend)
			}
			if len(h.toServer) != 2 || string(h.toServer[1].Data) != audioAppend {
				t.Fatalf("%d frames upstream, want the guard's session.update and the audio", len(h.toServer))
			}
			var got any
			_ = json.Unmarshal(h.toServer[0].Data, &got)
			if b := realtime.Marshal(got); string(b) != tc.want {
				t.Errorf("the guard's update %s, want %s", b, tc.want)
			}
			if got := agentTypes(h); len(got) != 1 || got[0] != openai.SessionCreated {
				t.Errorf("the agent got %v, want session.created alone", got)
			}
			model := `{"model":"` + openai.TranscriptionModelGA + `"}`
			if tc.beta {
				model = `{"model":"` + openai.TranscriptionModelBeta + `"}`
			}
			h.server(tc.updated(model)) // the answer to the guard's update
			if got := agentTypes(h); len(got) != 1 {
				t.Errorf("the guard's session.updated reached the agent: %v", got)
			}
			// The agent declares its tools later (partial): untouched, its echo shown
			// with the field null.
			up := `{"type":"session.update","session":{"tools":[{"type":"function","name":"book_slot"}]}}`
			h.agent(up)
			if got := string(h.toServer[len(h.toServer)-1].Data); got != up || len(h.toServer) != 3 {
				t.Errorf("the agent's update went as %s (%d upstream)", got, len(h.toServer))
			}
			h.server(tc.updated(model))
			h.server(transcriptionEvents[1])
			h.deliverAll()
			if got := agentTypes(h); len(got) != 2 || got[1] != openai.SessionUpdated {
				t.Errorf("the agent got %v, want session.created and its own session.updated", got)
			}
			if agentSawTranscription(t, h, tc.beta) {
				t.Errorf("the agent saw the guard's transcription")
			}
			if got := transcripts(h); len(got) != 1 {
				t.Errorf("reported %v", got)
			}
		})
	}
}

// TestOpenAITranscriptionOff: without AddTranscription the guard changes nothing (the
// agent's update as sent, no update of its own, transcription events forwarded).
func TestOpenAITranscriptionOff(t *testing.T) {
	h := newHarness(t, "openai", Config{})
	h.server(gaCreated)
	up := `{"type":"session.update","session":{"type":"realtime","tools":[{"type":"function","name":"book_slot"}]}}`
	h.agent(up)
	if len(h.toServer) != 1 || string(h.toServer[0].Data) != up {
		t.Fatalf("upstream %d frames, first %s", len(h.toServer), h.toServer[0].Data)
	}
	h.server(transcriptionEvents[1])
	if got := agentTypes(h); got[len(got)-1] != openai.TranscriptionCompleted {
		t.Errorf("the agent got %v", got)
	}
}

// TestOpenAITranscriptionRefused: the server refusing the guard's own update (its
// error names the guard's event) keeps the error from the agent, lets the agent's next
// session.updated through, and the guard asks no more; an error about the field on an
// update the guard amended stops the guard asking too.
func TestOpenAITranscriptionRefused(t *testing.T) {
	h := oaHarness(t, false, gaCreated)
	h.agent(audioAppend)
	h.server(`{"type":"error","event_id":"e5","error":{"type":"invalid_request_error","code":"invalid_value","message":"bad model","param":"session.audio.input.transcription.model","event_id":"event_arb_1"}}`)
	up := `{"type":"session.update","session":{"type":"realtime","tools":[{"type":"function","name":"book_slot"}]}}`
	h.agent(up)
	if got := string(h.toServer[len(h.toServer)-1].Data); got != up {
		t.Errorf("after a refusal the guard still amends: %s", got)
	}
	h.server(gaUpdated("null"))
	if got := agentTypes(h); len(got) != 2 || got[1] != openai.SessionUpdated {
		t.Errorf("the agent got %v, want session.created and its session.updated", got)
	}
	if len(h.toServer) != 3 {
		t.Errorf("the guard asked again: %s", h.toServer[len(h.toServer)-1].Data)
	}
}

// TestOpenAITranscriptionLostIsAskedAgain: a session.updated that shows the guard's
// transcription gone (a server that reset it with a later update of the agent's) has
// the guard ask again; the agent sees neither that update nor its answer.
func TestOpenAITranscriptionLostIsAskedAgain(t *testing.T) {
	h := oaHarness(t, false, "")
	h.agent(`{"type":"session.update","session":{"type":"realtime"}}`)
	h.server(gaCreated)
	h.server(gaUpdated(`{"model":"gpt-4o-mini-transcribe"}`))
	h.agent(`{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null}}}}`)
	h.server(gaUpdated("null"))
	if p, model := upstreamTranscription(t, h, false); !p || model != openai.TranscriptionModelGA {
		t.Fatalf("not asked again: %s", h.toServer[len(h.toServer)-1].Data)
	}
	h.server(gaUpdated(`{"model":"gpt-4o-mini-transcribe"}`))
	if got := agentTypes(h); len(got) != 3 {
		t.Errorf("the agent got %v, want session.created and its two session.updated", got)
	}
}
