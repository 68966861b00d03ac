package guard

import (
	"strings"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/realtime"
)

var slot = map[string]any{"slot": "tomorrow 3pm"}

func geminiHarness(t *testing.T) *harness {
	h := newHarness(t, "gemini", Config{})
	h.agent(gSetup)
	h.deliverAll()
	return h
}

func onlyFinal(t *testing.T, h *harness, id string) sentAnswer {
	t.Helper()
	got := h.finals(id, nil)
	if len(got) != 1 {
		t.Fatalf("%s: %d final responses upstream, want 1: %+v\nlog: %s", id, len(got), got, strings.Join(h.logs, "\n"))
	}
	return got[0]
}

func TestGeminiDuplicateKeptFromAgent(t *testing.T) {
	h := geminiHarness(t)
	h.server(gCall("fc_1", "book_slot", slot))
	h.deliverAll()
	h.server(gCall("fc_2", "book_slot", map[string]any{"slot": "tomorrow at 3pm"}))
	h.deliverAll()
	if got := h.agentCalls(); len(got) != 1 || got[0] != "fc_1" {
		t.Fatalf("the agent runs %v; want fc_1 only (fc_2 repeats its business key)", got)
	}
	// The tool, with the helper, commits by call id; the framework answers with its
	// own text, and the guard sends the arbiter's response in its place.
	if _, err := h.helper(arbiter.Decide{CallID: "fc_1", Prepared: true}); err != nil {
		t.Fatal(err)
	}
	h.agent(gAnswer("fc_1", "book_slot", map[string]any{"output": "on it"}))
	h.deliverAll()
	if n := len(h.finals("fc_1", nil)); n != 0 {
		t.Fatalf("the framework's answer went up before the job completed (%d)", n)
	}
	h.now = h.now.Add(2 * time.Second)
	if d, _ := h.helper(arbiter.Decide{CallID: "fc_1", Prepared: true}); d.Decision.Decision != arbiter.DecisionCommit {
		t.Fatalf("decision %+v", d.Decision)
	}
	if _, err := h.helper(arbiter.Complete{CallID: "fc_1", Outcome: arbiter.Committed, Result: map[string]any{"reference": "R-1"}}); err != nil {
		t.Fatal(err)
	}
	h.watch()
	a1, a2 := onlyFinal(t, h, "fc_1"), onlyFinal(t, h, "fc_2")
	if a1.payload["status"] != "committed" || a2.payload["status"] != "committed" || a2.payload["duplicate_of"] != "fc_1" {
		t.Errorf("fc_1 %v, fc_2 %v", a1.payload, a2.payload)
	}
	if c := h.rule.Counts(); c["injected response: duplicate"] != 1 || c["kept call from agent: duplicate"] != 1 {
		t.Errorf("counts %v", c)
	}
}

func TestGeminiRejectedAnsweredAtOnce(t *testing.T) {
	h := geminiHarness(t)
	h.server(gCall("fc_1", "nope", nil))
	h.deliverAll()
	if len(h.agentCalls()) != 0 {
		t.Fatalf("a rejected call reached the agent: %v", h.agentCalls())
	}
	if a := onlyFinal(t, h, "fc_1"); a.payload["status"] != "rejected" {
		t.Errorf("%v", a.payload)
	}
	// The frame it came in is gone from the agent's side too (nothing else in it).
	for _, f := range h.toAgent {
		if strings.Contains(string(f.Data), "toolCall") {
			t.Errorf("a toolCall frame reached the agent: %s", f.Data)
		}
	}
}

func TestGeminiReadOnlyAnswerIsTheResult(t *testing.T) {
	h := geminiHarness(t)
	h.server(gCall("w1", "get_weather", map[string]any{"city": "Lyon"}))
	h.deliverAll()
	h.agent(gAnswer("w1", "get_weather", map[string]any{"output": "sunny"}))
	h.deliverAll()
	a := onlyFinal(t, h, "w1")
	if a.payload["status"] != "ok" || a.payload["result"].(map[string]any)["output"] != "sunny" {
		t.Errorf("%v", a.payload)
	}
	h.agent(gAnswer("w1", "get_weather", map[string]any{"output": "again"}))
	h.deliverAll()
	onlyFinal(t, h, "w1")
	if c := h.rule.Counts(); c["dropped agent answer: already answered"] != 1 {
		t.Errorf("counts %v", c)
	}
}

func TestGeminiAbandonedAnswerDropped(t *testing.T) {
	h := geminiHarness(t)
	h.server(gCall("e1", "end_call", nil))
	h.deliverAll()
	h.server(map[string]any{"voiceActivity": map[string]any{"voiceActivityType": "ACTIVITY_START"}})
	h.server(gContent("interrupted", true))
	h.deliverAll()
	h.agent(gAnswer("e1", "end_call", map[string]any{"output": "bye"}))
	h.deliverAll()
	if n := len(h.finals("e1", nil)); n != 0 {
		t.Fatalf("an abandoned BLOCKING call was answered %d times", n)
	}
	if c := h.rule.Counts(); c["dropped agent answer: dead id: abandoned"] != 1 {
		t.Errorf("counts %v", c)
	}
}

func TestGeminiAgentSilentArbiterAnswers(t *testing.T) {
	h := geminiHarness(t)
	h.server(gCall("w1", "get_weather", nil))
	h.deliverAll()
	// The framework drops the call (the seed: tool choice none on Gemini): at
	// max_pending the arbiter's deadline response goes up.
	h.advance(20 * time.Second)
	h.watch()
	a := onlyFinal(t, h, "w1")
	if a.payload["status"] != "timeout" {
		t.Errorf("%v", a.payload)
	}
	if c := h.rule.Counts(); c["injected response: deadline"] != 1 {
		t.Errorf("counts %v", c)
	}
}

func TestGeminiStoreDownFailsClosed(t *testing.T) {
	h := geminiHarness(t)
	h.server(gCall("fc_1", "book_slot", slot))
	h.fail()
	if len(h.agentCalls()) != 0 {
		t.Fatalf("a call the arbiter could not register reached the agent")
	}
	a := onlyFinal(t, h, "fc_1")
	if a.payload["status"] != "rejected" || a.payload["executed"] != false {
		t.Errorf("%v", a.payload)
	}
	// Registration never answering: the same at RegisterWait.
	h.server(gCall("fc_2", "book_slot", map[string]any{"slot": "Friday 9am"}))
	h.advance(3 * time.Second)
	if a := onlyFinal(t, h, "fc_2"); a.payload["status"] != "rejected" {
		t.Errorf("%v", a.payload)
	}
	if len(h.queue) != 0 {
		t.Errorf("the abandoned registration is still queued: %+v", h.queue)
	}
}

func TestGeminiAudioNeverHeld(t *testing.T) {
	h := geminiHarness(t)
	h.server(gCall("fc_1", "book_slot", slot)) // held until registered
	audio := gContent("modelTurn", map[string]any{"parts": []any{map[string]any{"inlineData": map[string]any{"mimeType": "audio/pcm;rate=24000", "data": "AAAA"}}}})
	h.server(audio)
	h.server(gContent("turnComplete", true)) // held behind the call
	before := len(h.toAgent)
	if before != 1 || !strings.Contains(string(h.toAgent[0].Data), "inlineData") {
		t.Fatalf("the audio did not pass the held call: %d frames", before)
	}
	h.agent(map[string]any{"realtimeInput": map[string]any{"audio": map[string]any{"data": "BBBB", "mimeType": "audio/pcm;rate=16000"}}})
	if len(h.toServer) == 0 || !strings.Contains(string(h.toServer[len(h.toServer)-1].Data), "BBBB") {
		t.Fatal("the agent's audio did not go at once")
	}
	h.deliverAll()
	if len(h.toAgent) != 3 || !strings.Contains(string(h.toAgent[1].Data), "toolCall") || !strings.Contains(string(h.toAgent[2].Data), "turnComplete") {
		t.Fatalf("order after the release: %d frames", len(h.toAgent))
	}
}

func TestGeminiNoteWaitsForIdle(t *testing.T) {
	h := geminiHarness(t)
	h.server(gCall("fc_1", "book_slot", slot))
	h.deliverAll()
	h.server(gContent("outputTranscription", map[string]any{"text": "Booking that now."}))
	// A stop while the model speaks: the job is cancelled; its note waits for the
	// model's turn to end.
	h.server(map[string]any{"voiceActivity": map[string]any{"voiceActivityType": "ACTIVITY_START"}})
	h.server(gContent("inputTranscription", map[string]any{"text": "Actually, stop."}))
	h.server(map[string]any{"voiceActivity": map[string]any{"voiceActivityType": "ACTIVITY_END"}})
	h.deliverAll()
	if _, err := h.helper(arbiter.Decide{CallID: "fc_1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.helper(arbiter.Complete{CallID: "fc_1", Outcome: arbiter.Cancelled}); err != nil {
		t.Fatal(err)
	}
	h.watch()
	h.advance(2 * time.Second) // the agent does not answer: the arbiter's response goes after AnswerWait
	notes := func() int {
		n := 0
		for _, f := range h.toServer {
			if strings.Contains(string(f.Data), "clientContent") {
				n++
			}
		}
		return n
	}
	a := onlyFinal(t, h, "fc_1")
	if a.payload["status"] != "cancelled" {
		t.Errorf("%v", a.payload)
	}
	sn, _ := a.payload["status_note"].(string)
	if notes() != 0 && sn == "" {
		t.Fatalf("a user turn went while the model spoke")
	}
	h.server(gContent("turnComplete", true))
	if got := notes(); sn == "" && got != 1 {
		t.Errorf("the note after the turn: %d user turns (rider %q)", got, sn)
	}
}

func TestOpenAIDuplicateHiddenAndAnswerRewritten(t *testing.T) {
	h := newHarness(t, "openai", Config{})
	h.deliverAll()
	call := func(resp, item, id, args string) {
		h.server(`{"type":"response.created","response":{"id":"` + resp + `","status":"in_progress","output":[]}}`)
		h.server(`{"type":"response.output_item.added","response_id":"` + resp + `","item":{"id":"` + item + `","type":"function_call","call_id":"` + id + `","name":"book_slot","arguments":""}}`)
		h.server(`{"type":"conversation.item.added","previous_item_id":null,"item":{"id":"` + item + `","type":"function_call","call_id":"` + id + `","name":"book_slot"}}`)
		h.server(`{"type":"response.function_call_arguments.done","item_id":"` + item + `","call_id":"` + id + `","name":"book_slot","arguments":"` + args + `"}`)
		h.server(`{"type":"response.done","response":{"id":"` + resp + `","status":"completed","output":[{"id":"` + item + `","type":"function_call","call_id":"` + id + `"}]}}`)
		h.deliverAll()
	}
	call("r1", "i1", "call_1", `{\"slot\":\"tomorrow 3pm\"}`)
	call("r2", "i2", "call_2", `{\"slot\":\"tomorrow at 3pm\"}`)
	for _, f := range h.toAgent {
		if strings.Contains(string(f.Data), "call_2") || strings.Contains(string(f.Data), `"i2"`) {
			t.Fatalf("the duplicate reached the agent: %s", f.Data)
		}
	}
	if !strings.Contains(string(h.toAgent[len(h.toAgent)-1].Data), `"output":[]`) {
		t.Errorf("response.done of the duplicate still lists it: %s", h.toAgent[len(h.toAgent)-1].Data)
	}
	if _, err := h.helper(arbiter.Decide{CallID: "call_1", Prepared: true}); err != nil {
		t.Fatal(err)
	}
	h.now = h.now.Add(2 * time.Second)
	h.helper(arbiter.Decide{CallID: "call_1", Prepared: true})
	if _, err := h.helper(arbiter.Complete{CallID: "call_1", Outcome: arbiter.Committed, Result: map[string]any{"reference": "R-1"}}); err != nil {
		t.Fatal(err)
	}
	h.watch()
	// The duplicate's answer is the guard's own item; the agent's own output for
	// call_1 comes right after, rewritten, its item id kept.
	h.agent(`{"type":"conversation.item.create","item":{"id":"item_a1","type":"function_call_output","call_id":"call_1","output":"Booked!"}}`)
	h.agent(`{"type":"response.create"}`)
	h.deliverAll()
	a1, a2 := onlyFinal(t, h, "call_1"), onlyFinal(t, h, "call_2")
	if a1.payload["status"] != "committed" || a2.payload["duplicate_of"] != "call_1" {
		t.Errorf("call_1 %v call_2 %v", a1.payload, a2.payload)
	}
	last := string(h.toServer[len(h.toServer)-1].Data)
	if !strings.Contains(last, "response.create") {
		t.Errorf("the agent's response.create did not follow its answer: %s", last)
	}
	var rewritten string
	for _, f := range h.toServer {
		if strings.Contains(string(f.Data), "item_a1") {
			rewritten = string(f.Data)
		}
	}
	if !strings.Contains(rewritten, "committed") {
		t.Errorf("the agent's item was not rewritten: %s", rewritten)
	}
	// The plugin "updates" its output: delete + create. The model keeps one answer.
	h.agent(`{"type":"conversation.item.delete","item_id":"item_a1"}`)
	h.agent(`{"type":"conversation.item.create","item":{"id":"item_a2","type":"function_call_output","call_id":"call_1","output":"Booked again"}}`)
	onlyFinal(t, h, "call_1")
	var echoes int
	for _, f := range h.toAgent {
		m, _ := realtime.DecodeObject(f.Data)
		if m["item_id"] == "item_a1" && m["type"] == "conversation.item.deleted" {
			echoes++
		}
		if it := realtime.ObjField(m, "item"); it != nil && it["id"] == "item_a2" {
			echoes++
		}
	}
	if echoes < 2 {
		t.Errorf("the agent's delete and re-create were not echoed (%d)", echoes)
	}
	for _, f := range h.toServer {
		if strings.Contains(string(f.Data), "conversation.item.delete") {
			t.Errorf("the answer's delete reached the server: %s", f.Data)
		}
	}
}

// TestOpenAICancelIsBargeInOnlyForSpeech: a cancelled OpenAI response cuts its BLOCKING
// calls off only when it was barge-in (openai.BargeIn: the server's turn_detected, or
// the client's cancel after the user began to speak during it); a client cancel with no
// speech, or one naming no reason, ends the turn and the call stays live. The guard
// reported every cancelled response as interrupted, so an agent's own cancel (a UI
// stop, a new instruction) killed a BLOCKING call the adapters, the checker and the
// fake provider's reference all keep live.
func TestOpenAICancelIsBargeInOnlyForSpeech(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		speech, dead bool
	}{
		{"turn_detected", "turn_detected", false, true},
		{"client cancel after speech", "client_cancelled", true, true},
		{"client cancel, no speech", "client_cancelled", false, false},
		{"cancel naming no reason", "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, "openai", Config{})
			h.deliverAll()
			h.server(`{"type":"response.created","response":{"id":"r1","status":"in_progress","output":[]}}`)
			h.server(`{"type":"response.output_item.added","response_id":"r1","item":{"id":"i1","type":"function_call","call_id":"call_1","name":"end_call","arguments":""}}`)
			h.server(`{"type":"response.function_call_arguments.done","item_id":"i1","call_id":"call_1","name":"end_call","arguments":"{}"}`)
			h.deliverAll()
			if tc.speech {
				h.server(`{"type":"input_audio_buffer.speech_started","audio_start_ms":100,"item_id":"u1"}`)
			}
			h.agent(`{"type":"response.cancel"}`)
			details := `{"type":"cancelled","reason":"` + tc.reason + `"}`
			if tc.reason == "" {
				details = "null"
			}
			h.server(`{"type":"response.done","response":{"id":"r1","status":"cancelled","status_details":` + details + `,"output":[{"id":"i1","type":"function_call","call_id":"call_1"}]}}`)
			h.deliverAll()
			c := h.sess.Call("call_1")
			if c == nil {
				t.Fatal("call_1 was not registered")
			}
			if dead := c.Outcome != nil && c.Outcome.Dead; dead != tc.dead {
				t.Errorf("call_1 dead %v (outcome %+v), want %v", dead, c.Outcome, tc.dead)
			}
		})
	}
}

// The session's language is the agent's setup's (generationConfig.speechConfig
// .languageCode): "mañana 3 de la tarde" repeats "mañana a las 3pm" only when read as
// Spanish, so without it the repeat runs (testdata/wire/language_es behind the guard:
// the no-integration run executed c3).
func TestGeminiSetupLanguageIsTheSessions(t *testing.T) {
	h := newHarness(t, "gemini", Config{})
	setup := map[string]any{}
	for k, v := range gSetup["setup"].(map[string]any) {
		setup[k] = v
	}
	setup["generationConfig"] = map[string]any{"speechConfig": map[string]any{"languageCode": "es-ES"}}
	h.agent(map[string]any{"setup": setup})
	h.deliverAll()
	h.server(gCall("c2", "book_slot", map[string]any{"slot": "mañana a las 3pm"}))
	h.deliverAll()
	h.server(gCall("c3", "book_slot", map[string]any{"slot": "mañana 3 de la tarde"}))
	h.deliverAll()
	if got := h.agentCalls(); len(got) != 1 || got[0] != "c2" {
		t.Fatalf("the agent runs %v; want c2 only (c3 repeats its business key, read in Spanish)", got)
	}
	if h.sess.Language != "es-ES" {
		t.Errorf("session language %q, want es-ES", h.sess.Language)
	}
}

// OpenAI: the language is the one the agent's session.update gives its input
// transcription (GA audio.input.transcription.language).
func TestOpenAISessionUpdateLanguageIsTheSessions(t *testing.T) {
	h := newHarness(t, "openai", Config{})
	h.deliverAll()
	h.agent(`{"type":"session.update","session":{"type":"realtime","audio":{"input":{"transcription":{"model":"gpt-4o-transcribe","language":"es"}}}}}`)
	h.deliverAll()
	if h.sess.Language != "es" {
		t.Errorf("session language %q, want es", h.sess.Language)
	}
}

// A read-only result that comes after the call was answered at its deadline is not
// sent (the call has its one answer), but it is the job's result: the arbiter's note
// tells the model it came (testdata/workflows/readonly_deadline_late_result behind the
// guard: the note was never sent).
func TestGeminiLateReadOnlyResultMakesItsNote(t *testing.T) {
	h := geminiHarness(t)
	h.server(gCall("w1", "get_weather", map[string]any{"city": "Lyon"}))
	h.deliverAll()
	h.advance(20 * time.Second)
	h.watch()
	if a := onlyFinal(t, h, "w1"); a.payload["status"] != "timeout" {
		t.Fatalf("%v", a.payload)
	}
	h.agent(gAnswer("w1", "get_weather", map[string]any{"forecast": "light rain"}))
	h.deliverAll()
	h.watch()
	h.server(gContent("turnComplete", true))
	h.deliverAll()
	onlyFinal(t, h, "w1")
	notes := 0
	for _, f := range h.toServer {
		if strings.Contains(string(f.Data), "clientContent") && strings.Contains(string(f.Data), "light rain") {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("%d notes with the late result, want 1\nlog: %s", notes, strings.Join(h.logs, "\n"))
	}
}

// A call id the server issues again (testdata/scenarios/same_call_id_twice) is one
// call: its second item is the guard's, never the agent's, so the tool does not run it
// twice (OpenAI Realtime behind the guard committed job-1 twice).
func TestOpenAIRepeatedCallIDHidden(t *testing.T) {
	h := newHarness(t, "openai", Config{})
	h.deliverAll()
	call := func(resp, item string) {
		h.server(`{"type":"response.created","response":{"id":"` + resp + `","status":"in_progress","output":[]}}`)
		h.server(`{"type":"response.output_item.added","response_id":"` + resp + `","item":{"id":"` + item + `","type":"function_call","call_id":"call_1","name":"book_slot","arguments":""}}`)
		h.server(`{"type":"conversation.item.added","previous_item_id":null,"item":{"id":"` + item + `","type":"function_call","call_id":"call_1","name":"book_slot"}}`)
		h.server(`{"type":"response.function_call_arguments.done","item_id":"` + item + `","call_id":"call_1","name":"book_slot","arguments":"{\"slot\":\"tomorrow 3pm\"}"}`)
		h.server(`{"type":"response.output_item.done","response_id":"` + resp + `","item":{"id":"` + item + `","type":"function_call","status":"completed","call_id":"call_1","name":"book_slot","arguments":"{\"slot\":\"tomorrow 3pm\"}"}}`)
		h.server(`{"type":"response.done","response":{"id":"` + resp + `","status":"completed","output":[{"id":"` + item + `","type":"function_call","call_id":"call_1"}]}}`)
		h.deliverAll()
	}
	call("r1", "i1")
	call("r2", "i2")
	for _, f := range h.toAgent {
		if strings.Contains(string(f.Data), `"i2"`) {
			t.Errorf("the repeated call's item reached the agent: %s", f.Data)
		}
	}
}

// LiveKit agents-js's Google plugin, under toolBehavior NON_BLOCKING, answers a call at
// once with an empty willContinue response, then cancels the tool when it interrupts
// its own speech for the model's next generation (it emits input_speech_started before
// every generation the model starts), and sends no final response
// (testdata/workflows/readonly_progress, narrowed for guard-livekit-google: the trace
// ends before max_pending). The interim goes up, it answers nothing: the id stays live
// and gets the arbiter's deadline response at max_pending, once.
func TestGeminiInterimOnlyIsAnsweredAtDeadline(t *testing.T) {
	h := geminiHarness(t)
	h.server(gCall("w1", "get_weather", map[string]any{"city": "Lisbon"}))
	h.deliverAll()
	h.agent(map[string]any{"toolResponse": map[string]any{"functionResponses": []any{
		map[string]any{"id": "w1", "name": "get_weather", "response": map[string]any{}, "willContinue": true}}}})
	h.deliverAll()
	interims := 0
	for _, a := range h.answers {
		if a.call == "w1" && a.willCont {
			interims++
		}
	}
	if interims != 1 {
		t.Fatalf("%d interim responses upstream, want the agent's 1\nlog: %s", interims, strings.Join(h.logs, "\n"))
	}
	answeredAtMaxPending(t, h, "w1")
}

// answeredAtMaxPending: id (max_pending 20 s, the harness's policy) has no final
// answer upstream 19 s on, and exactly one, the timeout error, at 20 s.
func answeredAtMaxPending(t *testing.T, h *harness, id string) {
	t.Helper()
	h.advance(19 * time.Second)
	h.watch()
	if n := len(h.finals(id, nil)); n != 0 {
		t.Fatalf("%s answered %d times before its max_pending (an interim is not an answer)", id, n)
	}
	h.advance(time.Second)
	h.watch()
	if a := onlyFinal(t, h, id); a.payload["status"] != "timeout" {
		t.Errorf("%v", a.payload)
	}
}

// LiveKit agents-js's OpenAI plugin sends a tool's output only once the response that
// carried the call is done; while the response stays open (the fake provider keeps it
// open until the trace's generation end: testdata/wire/several_tools' e1,
// testdata/scenarios/unknown_tool_*, narrowed for guard-livekit-openai) the agent
// answers nothing. The guard answers the id at max_pending all the same: its output
// item at once, the response.create that makes the model speak of it once the open
// response is done (the server refuses a second one).
func TestOpenAIOpenResponseAnsweredAtDeadline(t *testing.T) {
	h := newHarness(t, "openai", Config{})
	h.deliverAll()
	h.server(`{"type":"response.created","response":{"id":"r1","status":"in_progress","output":[]}}`)
	h.server(`{"type":"response.output_item.added","response_id":"r1","item":{"id":"i1","type":"function_call","call_id":"c1","name":"get_deal","arguments":""}}`)
	h.server(`{"type":"response.function_call_arguments.done","item_id":"i1","call_id":"c1","name":"get_deal","arguments":"{\"id\":7}"}`)
	h.server(`{"type":"response.output_item.done","response_id":"r1","item":{"id":"i1","type":"function_call","call_id":"c1","name":"get_deal","arguments":"{\"id\":7}","status":"completed"}}`)
	h.deliverAll()
	answeredAtMaxPending(t, h, "c1")
	creates := func() int {
		n := 0
		for _, f := range h.toServer {
			if strings.Contains(string(f.Data), `"response.create"`) {
				n++
			}
		}
		return n
	}
	if n := creates(); n != 0 {
		t.Fatalf("response.create sent while the response is open (%d)", n)
	}
	h.server(`{"type":"response.done","response":{"id":"r1","status":"completed","output":[{"id":"i1","type":"function_call","call_id":"c1"}]}}`)
	h.deliverAll()
	if n := creates(); n != 1 {
		t.Errorf("%d response.create after the response was done, want 1", n)
	}
	onlyFinal(t, h, "c1")
}

// Agent frames the guard cannot read are said (a log line) and forwarded as they are:
// bytes that are no JSON object (told from audio by the first byte, no decode) and a
// toolResponse that answers nothing (before, the first went by silently and the
// second was swallowed).
func TestGeminiBadAgentFramesLoggedAndForwarded(t *testing.T) {
	h := geminiHarness(t)
	before := len(h.toServer)
	for _, b := range []string{"not json", `{"toolResponse":{"functionResponses":null}}`, `{"toolResponse":{}}`} {
		h.agent(b)
	}
	if got := len(h.toServer) - before; got != 3 {
		t.Errorf("%d of 3 frames forwarded", got)
	}
	bad := 0
	for _, l := range h.logs {
		if strings.HasPrefix(l, "frame not understood") {
			bad++
		}
	}
	if bad != 3 {
		t.Errorf("%d log lines for 3 bad frames:\n%s", bad, strings.Join(h.logs, "\n"))
	}
}

// An OpenAI function call is the rule's whatever event first names it: a real server
// sends response.output_item.added first, but the guard must not let a call past its
// rules because of message order. For each order (the item's added event late or
// missing, only its arguments.done, only output_item.done, only response.done) the
// call is registered once, given to the agent only once registered, answered once
// upstream, and a duplicate of it (by business key) never reaches the agent; before,
// a call whose output_item.added had not come went to the agent unregistered, and its
// answer was dropped as for an unknown id (no answer upstream: the model waited).
func TestOpenAICallKnownWhateverItsOrder(t *testing.T) {
	type ev = func(resp, item, id, args string) string
	added := func(resp, item, id, _ string) string {
		return `{"type":"response.output_item.added","response_id":"` + resp + `","item":{"id":"` + item + `","type":"function_call","status":"in_progress","call_id":"` + id + `","name":"book_slot","arguments":""}}`
	}
	convAdded := func(_, item, id, _ string) string {
		return `{"type":"conversation.item.added","previous_item_id":null,"item":{"id":"` + item + `","type":"function_call","status":"in_progress","call_id":"` + id + `","name":"book_slot","arguments":""}}`
	}
	delta := func(resp, item, id, _ string) string {
		return `{"type":"response.function_call_arguments.delta","response_id":"` + resp + `","item_id":"` + item + `","call_id":"` + id + `","delta":"{"}`
	}
	argsDone := func(resp, item, id, args string) string { // no name: as the API reference has it
		return `{"type":"response.function_call_arguments.done","response_id":"` + resp + `","item_id":"` + item + `","call_id":"` + id + `","arguments":"` + args + `"}`
	}
	itemDone := func(resp, item, id, args string) string {
		return `{"type":"response.output_item.done","response_id":"` + resp + `","item":{"id":"` + item + `","type":"function_call","status":"completed","call_id":"` + id + `","name":"book_slot","arguments":"` + args + `"}}`
	}
	convDone := func(_, item, id, args string) string {
		return `{"type":"conversation.item.done","item":{"id":"` + item + `","type":"function_call","status":"completed","call_id":"` + id + `","name":"book_slot","arguments":"` + args + `"}}`
	}
	for _, tc := range []struct {
		name   string
		events []ev
	}{
		{"as a real server", []ev{added, convAdded, delta, argsDone, itemDone, convDone}},
		{"arguments first", []ev{argsDone, itemDone}},
		{"arguments delta first", []ev{delta, argsDone, itemDone}},
		{"added after the arguments", []ev{argsDone, added, convAdded, itemDone}},
		{"conversation item first", []ev{convAdded, added, argsDone, itemDone}},
		{"output_item.done only", []ev{itemDone}},
		{"conversation.item.done only", []ev{convDone}},
		{"response.done only", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, "openai", Config{})
			h.deliverAll()
			call := func(resp, item, id, args string) {
				h.server(`{"type":"response.created","response":{"id":"` + resp + `","status":"in_progress","output":[]}}`)
				for _, e := range tc.events {
					h.server(e(resp, item, id, args))
				}
				h.server(`{"type":"response.done","response":{"id":"` + resp + `","status":"completed","output":[{"id":"` + item + `","type":"function_call","status":"completed","call_id":"` + id + `","name":"book_slot","arguments":"` + args + `"}]}}`)
				h.deliverAll()
			}
			call("r1", "i1", "call_1", `{\"slot\":\"tomorrow 3pm\"}`)
			call("r2", "i2", "call_2", `{\"slot\":\"tomorrow at 3pm\"}`)
			registered := map[string]int{}
			for _, e := range h.reported {
				if rc, ok := e.(arbiter.RegisterCall); ok {
					registered[rc.CallID]++
					if rc.Tool != "book_slot" || rc.Args["slot"] == nil {
						t.Errorf("%s registered as %q with %v", rc.CallID, rc.Tool, rc.Args)
					}
				}
			}
			if registered["call_1"] != 1 || registered["call_2"] != 1 {
				t.Fatalf("RegisterCall per call id: %v, want one each\nlog: %s", registered, strings.Join(h.logs, "\n"))
			}
			if c := h.sess.Call("call_2"); c == nil || c.Disposition != arbiter.Duplicate {
				t.Fatalf("call_2: %+v, want a duplicate", c)
			}
			var sawCall1 bool
			for _, f := range h.toAgent {
				s := string(f.Data)
				if strings.Contains(s, "call_2") || strings.Contains(s, `"i2"`) {
					t.Errorf("the duplicate reached the agent: %s", s)
				}
				sawCall1 = sawCall1 || strings.Contains(s, "call_1")
			}
			if !sawCall1 {
				t.Errorf("the agent was never given call_1")
			}
			h.agent(`{"type":"conversation.item.create","item":{"id":"item_a1","type":"function_call_output","call_id":"call_1","output":"Booked!"}}`)
			h.agent(`{"type":"response.create"}`)
			h.deliverAll()
			h.watch()
			if a := onlyFinal(t, h, "call_1"); a.payload["status"] == nil {
				t.Errorf("call_1's answer went as the agent sent it, not the arbiter's: %v", a.payload)
			}
			if a := onlyFinal(t, h, "call_2"); a.payload["duplicate_of"] != "call_1" {
				t.Errorf("call_2's answer %v", a.payload)
			}
			h.advance(25 * time.Second)
			h.deliverAll()
			onlyFinal(t, h, "call_1")
			onlyFinal(t, h, "call_2")
			if len(h.rule.toAgent) > 0 || len(h.rule.toServer) > 0 {
				t.Errorf("frames still held: %d to the agent, %d to the server", len(h.rule.toAgent), len(h.rule.toServer))
			}
		})
	}
}

// A BLOCKING call that only response.done names, in a response cut off by barge-in, is
// abandoned as the same call whose arguments came before it: registered before the
// interruption is reported, so the arbiter marks it dead, and the agent's answer for
// it is dropped (nothing upstream). Before, the call was never registered: the agent's
// answer was dropped as for an unknown id, and the arbiter never knew of the call.
func TestOpenAICallOnlyInCutOffResponseIsAbandoned(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before []string
	}{
		{"arguments before", []string{
			`{"type":"response.output_item.added","response_id":"r1","item":{"id":"i1","type":"function_call","status":"in_progress","call_id":"call_1","name":"end_call","arguments":""}}`,
			`{"type":"response.function_call_arguments.done","response_id":"r1","item_id":"i1","call_id":"call_1","arguments":"{}"}`,
		}},
		{"response.done only", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, "openai", Config{})
			h.deliverAll()
			h.server(`{"type":"response.created","response":{"id":"r1","status":"in_progress","output":[]}}`)
			for _, e := range tc.before {
				h.server(e)
			}
			h.server(`{"type":"input_audio_buffer.speech_started","audio_start_ms":100,"item_id":"u1"}`)
			h.server(`{"type":"response.done","response":{"id":"r1","status":"cancelled","status_details":{"type":"cancelled","reason":"turn_detected"},"output":[{"id":"i1","type":"function_call","status":"incomplete","call_id":"call_1","name":"end_call","arguments":"{}"}]}}`)
			h.deliverAll()
			c := h.sess.Call("call_1")
			if c == nil || c.Outcome == nil || !c.Outcome.Dead {
				t.Fatalf("call_1: %+v, want registered and dead (abandoned)", c)
			}
			h.agent(`{"type":"conversation.item.create","item":{"id":"item_a1","type":"function_call_output","call_id":"call_1","output":"bye"}}`)
			h.deliverAll()
			h.advance(25 * time.Second)
			h.deliverAll()
			if got := h.finals("call_1", nil); len(got) != 0 {
				t.Errorf("the abandoned call was answered: %+v", got)
			}
			if n := h.rule.Counts()["dropped agent answer: dead id: abandoned"]; n != 1 {
				t.Errorf("the agent's answer was not dropped as a dead id's: %v", h.rule.Counts())
			}
		})
	}
}

// The agent's own history (a function_call item and its output it creates on a new
// connection) is no server call, though the server's echo of the item names a call:
// not registered, the echo and the output go as they are.
func TestOpenAIAgentHistoryIsNoServerCall(t *testing.T) {
	h := newHarness(t, "openai", Config{})
	h.deliverAll()
	h.agent(`{"type":"conversation.item.create","item":{"id":"h1","type":"function_call","call_id":"call_old","name":"book_slot","arguments":"{\"slot\":\"Friday 9am\"}"}}`)
	h.server(`{"type":"conversation.item.added","previous_item_id":null,"item":{"id":"h1","type":"function_call","status":"completed","call_id":"call_old","name":"book_slot","arguments":"{\"slot\":\"Friday 9am\"}"}}`)
	h.agent(`{"type":"conversation.item.create","item":{"id":"h2","type":"function_call_output","call_id":"call_old","output":"Booked"}}`)
	h.deliverAll()
	for _, e := range h.reported {
		if rc, ok := e.(arbiter.RegisterCall); ok {
			t.Errorf("the agent's history was registered as a server call: %+v", rc)
		}
	}
	if len(h.toAgent) != 1 || !strings.Contains(string(h.toAgent[0].Data), "call_old") {
		t.Errorf("the echo of the agent's item did not go to it as it came: %d frames", len(h.toAgent))
	}
	if last := string(h.toServer[len(h.toServer)-1].Data); !strings.Contains(last, `"output":"Booked"`) {
		t.Errorf("the history's output did not go upstream as it is: %s", last)
	}
}
