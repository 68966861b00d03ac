package guard_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/guard"
)

// TestProxyOpenAIStopHeardWithoutAgentTranscription: an OpenAI agent that never turns
// on input transcription (its session.update declares its tools, nothing else) books
// behind the guard, and the user says "Actually, stop." while the commit waits out its
// grace. The guard asks the server for the transcription, the arbiter reads the stop,
// the job is cancelled and the provider gets one answer, "cancelled"; the agent sees
// no transcription, nor a session that has it. Before, the guard asked for nothing on
// OpenAI: the fake provider (as the real server) sent no words, the hold ran out its
// transcript_timeout and, under a policy that commits then, the booking committed.
func TestProxyOpenAIStopHeardWithoutAgentTranscription(t *testing.T) {
	tr := writeTrace(t, "stop",
		`{"t_ms":0,"event":"session_start"}`,
		`{"t_ms":50,"event":"tool_call","call_id":"call_b","tool":"book_slot","args":{"slot":"tomorrow 3pm"}}`,
		`{"t_ms":100,"event":"turn_complete"}`,
		`{"t_ms":200,"event":"speech_start"}`,
		`{"t_ms":400,"event":"transcript","text":"Actually, stop.","final":true}`,
		`{"t_ms":500,"event":"speech_end"}`,
		`{"t_ms":2500,"event":"end"}`)
	pol := policy(t)
	// The commit waits 800 ms for speech; words that never come hold it 800 ms, then
	// it commits (the deafness the guard closes would commit the booking).
	pol.Defaults.Grace, pol.Defaults.TranscriptTimeout, pol.Defaults.OnTranscriptTimeout = 800*time.Millisecond, 800*time.Millisecond, arbiter.Commit
	if err := pol.Validate(); err != nil {
		t.Fatal(err)
	}
	s := startStackWith(t, tr, guard.Config{AnswerWait: 500 * time.Millisecond, AddTranscription: true}, pol)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, s.guardURL+"/trace/stop/v1/realtime?model=gpt-realtime", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	update := `{"type":"session.update","session":{"type":"realtime","tools":[{"type":"function","name":"book_slot","parameters":{"type":"object"}}]}}`
	if err := ws.Write(ctx, websocket.MessageText, []byte(update)); err != nil {
		t.Fatal(err)
	}
	var (
		wg        sync.WaitGroup
		decisions = map[string]arbiter.Decision{}
		mu        sync.Mutex
		seen      []string
	)
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != websocket.StatusNormalClosure {
				t.Fatalf("the session ended with %v", err)
			}
			break
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("not JSON: %s", b)
		}
		typ, _ := m["type"].(string)
		seen = append(seen, typ)
		if strings.HasPrefix(typ, "conversation.item.input_audio_transcription.") {
			t.Errorf("the agent got a transcription it never asked for: %s", b)
		}
		if typ == "session.updated" {
			sess, _ := m["session"].(map[string]any)
			audio, _ := sess["audio"].(map[string]any)
			in, _ := audio["input"].(map[string]any)
			if in["transcription"] != nil {
				t.Errorf("the agent's session.updated shows a transcription it never set: %s", b)
			}
		}
		if typ != "response.function_call_arguments.done" {
			continue
		}
		id, _ := m["call_id"].(string)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The tool, with the helper: Decide by call id, then report what it did.
			bg := context.Background()
			key, err := s.svc.FindCall(bg, "", id)
			if err != nil {
				t.Errorf("FindCall(%s): %v", id, err)
				return
			}
			d, err := s.svc.DecideBy(bg, key, arbiter.Decide{CallID: id, Prepared: true}, 5*time.Second, nil)
			if err != nil {
				t.Errorf("Decide(%s): %v", id, err)
				return
			}
			mu.Lock()
			decisions[id] = d.Decision
			mu.Unlock()
			outcome, result := arbiter.Cancelled, map[string]any(nil)
			if d.Decision == arbiter.DecisionCommit {
				outcome, result = arbiter.Committed, map[string]any{"reference": "R-1"}
			}
			if _, _, err := s.svc.Apply(bg, key, arbiter.Complete{CallID: id, Outcome: outcome, Result: result}, false); err != nil {
				t.Errorf("Complete(%s): %v", id, err)
			}
			out, _ := json.Marshal(map[string]any{"type": "conversation.item.create", "item": map[string]any{
				"type": "function_call_output", "call_id": id, "output": "Booked!"}})
			_ = ws.Write(ctx, websocket.MessageText, out)
			_ = ws.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create"}`))
		}()
	}
	wg.Wait()
	if d := decisions["call_b"]; d != arbiter.DecisionCancel {
		t.Errorf("the booking's decision was %q, want CANCEL (the user said stop); the agent got %v", d, seen)
	}
	var outputs []map[string]any
	var asked bool
	for _, m := range s.clientMessages(t) {
		switch m["type"] {
		case "session.update":
			sess, _ := m["session"].(map[string]any)
			audio, _ := sess["audio"].(map[string]any)
			in, _ := audio["input"].(map[string]any)
			tr, _ := in["transcription"].(map[string]any)
			asked = asked || tr["model"] != nil
		case "conversation.item.create":
			it, _ := m["item"].(map[string]any)
			if it["type"] == "function_call_output" && it["call_id"] == "call_b" {
				var p map[string]any
				_ = json.Unmarshal([]byte(it["output"].(string)), &p)
				outputs = append(outputs, p)
			}
		}
	}
	if !asked {
		t.Error("no session.update asked the provider for input transcription")
	}
	if len(outputs) != 1 || outputs[0]["status"] != "cancelled" {
		t.Errorf("call_b reached the provider as %v; want one answer, status cancelled", outputs)
	}
	waitClosed(t, s)
}
