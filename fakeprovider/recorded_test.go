package fakeprovider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/voicearbiter/arbiter/fakeprovider"
	"github.com/voicearbiter/arbiter/policyfile"
	"github.com/voicearbiter/arbiter/replay"
)

// referenceAgent sends what a reference replay says the agent sends: each function
// response and note at its reference time (counted from the greeting), a response
// never before its call has arrived. It stands in for a correct agent.
type referenceAgent struct {
	c      *websocket.Conn
	proto  string
	lines  []replay.Line
	mu     sync.Mutex
	called map[string]chan struct{}
	wg     sync.WaitGroup
}

func (a *referenceAgent) call(id string) chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch, ok := a.called[id]
	if !ok {
		ch = make(chan struct{})
		a.called[id] = ch
	}
	return ch
}

// start schedules the sends; t0 is when the greeting arrived.
func (a *referenceAgent) start(t *testing.T, t0 time.Time) {
	for _, l := range a.lines {
		var msg any
		var wait chan struct{}
		switch {
		case l.Out == "response" && (l.Final == nil || *l.Final):
			wait = a.call(l.CallID)
			payload, _ := json.Marshal(l.Payload)
			if a.proto == fakeprovider.ProtoGemini {
				msg = map[string]any{"toolResponse": map[string]any{"functionResponses": []any{map[string]any{"id": l.CallID, "name": "book_slot", "response": l.Payload}}}}
			} else {
				msg = map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "function_call_output", "call_id": l.CallID, "output": string(payload)}}
			}
		case l.Out == "note":
			if a.proto == fakeprovider.ProtoGemini {
				msg = map[string]any{"clientContent": map[string]any{"turns": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": l.Text}}}}, "turnComplete": true}}
			} else {
				msg = map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": l.Text}}}}
			}
		default:
			continue
		}
		b, _ := json.Marshal(msg)
		at := t0.Add(time.Duration(*l.TMs) * time.Millisecond)
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if wait != nil {
				select {
				case <-wait:
				case <-time.After(30 * time.Second):
					t.Errorf("the call %s never arrived", l.CallID)
					return
				}
			}
			time.Sleep(time.Until(at))
			if err := a.c.Write(context.Background(), websocket.MessageText, b); err != nil {
				t.Errorf("send: %v", err)
			}
		}()
	}
}

// TestRecordedSession plays C_on_run2 (15 s, a real session) over Gemini and OpenAI at
// once to agents that send what the reference replay under booking.yaml sends: every
// trace line arrives in order, the socket closes normally at the end, and the checker
// passes on the record (for OpenAI against the replay without the calls' behaviors).
func TestRecordedSession(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a 15 s recorded session")
	}
	t.Parallel()
	traces, err := fakeprovider.LoadTraces([]string{"../testdata/traces/C_on_run2.jsonl"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tr := traces[0]
	policy, err := policyfile.Load("../testdata/tools/booking.yaml")
	if err != nil {
		t.Fatal(err)
	}
	refFor := func(events []replay.TraceEvent) []replay.Line {
		res, err := replay.RunLocal(context.Background(), policy, events, replay.Options{SessionID: "ref"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Lines
	}
	// The agents send what the replay of the trace as each protocol carries it says
	// (OpenAI: no behaviors, the policy's); the checker makes its own reference per
	// session from the record (Replay).
	openaiView := make([]replay.TraceEvent, len(tr.Events))
	copy(openaiView, tr.Events)
	for i := range openaiView {
		openaiView[i].Behavior = ""
	}
	ref := fakeprovider.Reference{Trace: tr}
	lines := map[string][]replay.Line{fakeprovider.ProtoGemini: refFor(tr.Events), fakeprovider.ProtoOpenAI: refFor(openaiView)}
	for _, proto := range []string{fakeprovider.ProtoGemini, fakeprovider.ProtoOpenAI} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			f := startFake(t, tr)
			lines := lines[proto]
			url := f.ws + "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContent"
			if proto == fakeprovider.ProtoOpenAI {
				url = f.ws + "/trace/C_on_run2/v1/realtime?model=gpt-realtime"
			}
			c := dial(t, url, &websocket.DialOptions{Subprotocols: []string{"realtime"}})
			defer c.CloseNow()
			a := &referenceAgent{c: c, proto: proto, lines: lines, called: map[string]chan struct{}{}}
			if proto == fakeprovider.ProtoGemini {
				send(t, c, websocket.MessageText, `{"setup": {"model": "models/gemini-3.8-live", "inputAudioTranscription": {}, "outputAudioTranscription": {},
					"tools": [{"functionDeclarations": [{"name": "book_slot", "behavior": "BLOCKING"}]}]}}`)
			}
			_, ce := readAll(t, c, func(_ websocket.MessageType, m map[string]any) {
				switch {
				case m["setupComplete"] != nil || m["type"] == "session.created":
					if m["type"] == "session.created" {
						send(t, c, websocket.MessageText, `{"type": "session.update", "session": {"type": "realtime", "audio": {"input": {"transcription": {"model": "gpt-4o-transcribe"}}}, "tools": [{"type": "function", "name": "book_slot"}]}}`)
					}
					a.start(t, time.Now())
				case m["toolCall"] != nil:
					for _, fc := range m["toolCall"].(map[string]any)["functionCalls"].([]any) {
						close(a.call(fc.(map[string]any)["id"].(string)))
					}
				case m["type"] == "response.output_item.done":
					if item := m["item"].(map[string]any); item["type"] == "function_call" {
						close(a.call(item["call_id"].(string)))
					}
				}
			})
			a.wg.Wait()
			if ce.Code != websocket.StatusNormalClosure {
				t.Fatalf("closed with %v, want 1000 at the trace's end", ce)
			}
			f.waitDone(t)
			record := f.record(t)
			last, played := 0, map[int]bool{}
			for _, l := range record {
				if l.Kind == fakeprovider.KindServer && l.Line > 0 {
					if l.Line < last {
						t.Fatalf("trace line %d played after line %d", l.Line, last)
					}
					last, played[l.Line] = l.Line, true
				}
			}
			for _, ev := range tr.Events {
				if wire := ev.Event != "session_start" && ev.Event != "end" && !strings.HasPrefix(ev.Event, "ref_"); wire && !played[ev.Line] && proto == fakeprovider.ProtoGemini {
					t.Errorf("trace line %d (%s) sent nothing", ev.Line, ev.Event)
				}
			}
			replayer := func(_ fakeprovider.Trace, events []replay.TraceEvent) ([]replay.Line, error) {
				res, err := replay.RunLocal(context.Background(), policy, events, replay.Options{SessionID: "check"}, nil)
				if err != nil {
					return nil, err
				}
				return res.Lines, nil
			}
			rep := fakeprovider.Check(fakeprovider.CheckInput{Stack: proto, References: []fakeprovider.Reference{ref}, Replay: replayer, Record: record})
			for _, d := range rep.Details {
				t.Log(d)
			}
			t.Log(rep.Summary())
			if !rep.OK() {
				t.Fatalf("the checker fails a record that does what the reference does:\n%s", strings.Join(rep.Mismatches, "\n"))
			}
			if rep.Responses == 0 || rep.Notes == 0 {
				t.Errorf("%s: nothing checked", fmt.Sprint(rep.Summary()))
			}
		})
	}
}
