package fakeprovider_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/voicearbiter/arbiter/fakeprovider"
	"github.com/voicearbiter/arbiter/replay"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/*.golden")

// synthetic is a short session with every wire event: an interim and a final
// transcript, a BLOCKING call dropped by barge-in and withdrawn, its re-issue, and a
// model turn with audio and transcript. Events start 300 ms in and the end comes
// 750 ms after the last, so the test clients' messages never race a trace event.
const synthetic = `{"t_ms": 0, "event": "session_start"}
{"t_ms": 300, "event": "speech_start"}
{"t_ms": 350, "event": "transcript", "text": "Book me", "final": false}
{"t_ms": 400, "event": "transcript", "text": "Book me 3pm tomorrow."}
{"t_ms": 400, "event": "speech_end"}
{"t_ms": 450, "event": "tool_call", "call_id": "fc_1", "tool": "book_slot", "args": {"slot": "tomorrow 3pm"}, "behavior": "BLOCKING"}
{"t_ms": 500, "event": "speech_start"}
{"t_ms": 500, "event": "interrupted"}
{"t_ms": 500, "event": "turn_complete"}
{"t_ms": 550, "event": "tool_call_cancellation", "call_ids": ["fc_1"]}
{"t_ms": 600, "event": "tool_call", "call_id": "fc_2", "tool": "book_slot", "args": {"slot": "tomorrow at 3pm"}, "behavior": "BLOCKING"}
{"t_ms": 650, "event": "model_audio_start"}
{"t_ms": 650, "event": "model_transcript", "text": "Booked."}
{"t_ms": 700, "event": "generation_complete"}
{"t_ms": 750, "event": "turn_complete"}
{"t_ms": 1500, "event": "end"}
`

func parseTrace(t *testing.T, name, text string) fakeprovider.Trace {
	t.Helper()
	events, err := replay.ParseTrace(strings.NewReader(text), name, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return fakeprovider.Trace{Name: name, Path: name + ".jsonl", Events: events}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b.Bytes()...)
}

// fake is a fake provider on an httptest server.
type fake struct {
	srv  *fakeprovider.Server
	base string // http://127.0.0.1:PORT
	ws   string // ws://127.0.0.1:PORT
	rec  *syncBuffer
}

func startFake(t *testing.T, traces ...fakeprovider.Trace) *fake {
	t.Helper()
	rec := &syncBuffer{}
	srv, err := fakeprovider.New(fakeprovider.Options{Traces: traces, Record: rec, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("record: %v", err)
		}
		hs.Close()
	})
	return &fake{srv: srv, base: hs.URL, ws: "ws" + strings.TrimPrefix(hs.URL, "http"), rec: rec}
}

// record parses what the server recorded so far.
func (f *fake) record(t *testing.T) []fakeprovider.RecordLine {
	t.Helper()
	lines, err := fakeprovider.ReadRecord(bytes.NewReader(f.rec.Bytes()), "record")
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// waitDone waits for every session to end (the record is complete then).
func (f *fake) waitDone(t *testing.T) {
	t.Helper()
	select {
	case <-f.srv.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("the fake provider never finished its traces")
	}
}

// dial opens a WebSocket; the test fails when it cannot.
func dial(t *testing.T, url string, opts *websocket.DialOptions) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", url, err, resp)
	}
	c.SetReadLimit(16 << 20)
	return c
}

func send(t *testing.T, c *websocket.Conn, typ websocket.MessageType, msg string) {
	t.Helper()
	if !json.Valid([]byte(msg)) {
		t.Fatalf("test message is not JSON: %s", msg)
	}
	if err := c.Write(context.Background(), typ, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// readAll reads messages until the server closes, calling on for each (it may send);
// it returns the messages and the close error.
func readAll(t *testing.T, c *websocket.Conn, on func(typ websocket.MessageType, m map[string]any)) ([]map[string]any, websocket.CloseError) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out []map[string]any
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("read: %v", err)
			}
			return out, ce
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("a server message is not a JSON object: %s", b)
		}
		out = append(out, m)
		if on != nil {
			on(typ, m)
		}
	}
}

// transcript renders a record for a golden file: the server's lines in order (its
// messages with the trace line they play, or "reply"), then the client's messages in
// order (when they arrive between trace events depends on the machine). OpenAI event
// ids are left out: they count every event, replies included (eventIDs checks them).
func transcript(lines []fakeprovider.RecordLine) string {
	var b, client strings.Builder
	for _, l := range lines {
		switch l.Kind {
		case fakeprovider.KindServer, fakeprovider.KindClient:
			var m map[string]any
			_ = json.Unmarshal(l.Msg, &m)
			delete(m, "event_id")
			var msg bytes.Buffer
			e := json.NewEncoder(&msg)
			e.SetEscapeHTML(false)
			_ = e.Encode(m)
			if l.Kind == fakeprovider.KindClient {
				fmt.Fprintf(&client, "client: %s", msg.String())
				continue
			}
			where := "reply"
			if l.Event != "" {
				where = fmt.Sprintf("L%d %s", l.Line, l.Event)
			}
			fmt.Fprintf(&b, "%s: %s", where, msg.String())
		case fakeprovider.KindClose:
			fmt.Fprintf(&b, "close: code %d by %s end=%v %q\n", l.Code, l.By, l.End, l.Reason)
		case fakeprovider.KindOpen:
			fmt.Fprintf(&b, "open: %s %s %s\n", l.Proto, l.Variant, l.Model)
		case fakeprovider.KindWarning:
			fmt.Fprintf(&b, "warning: %s\n", l.Text)
		}
	}
	return b.String() + client.String()
}

// golden compares got with testdata/NAME.golden (-rewrite writes it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./fakeprovider -rewrite writes it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden (go test ./fakeprovider -rewrite, then read the diff):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// TestGeminiSynthetic plays the synthetic trace to a Gemini client that connects the
// way @google/genai does (a double slash after the base URL, ?key=), sends its setup,
// answers the live call and sends a note: the server messages arrive in binary
// frames, in order, with the shapes of the golden; the client's messages are
// recorded with their times; the socket closes normally at the end.
func TestGeminiSynthetic(t *testing.T) {
	t.Parallel()
	f := startFake(t, parseTrace(t, "synthetic", synthetic))
	h := http.Header{}
	h.Set("x-goog-api-key", "ignored")
	c := dial(t, f.ws+"//ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=ignored", &websocket.DialOptions{HTTPHeader: h})
	defer c.CloseNow()
	send(t, c, websocket.MessageText, `{"setup": {"model": "models/gemini-3.8-live", "generationConfig": {"responseModalities": ["AUDIO"]},
		"inputAudioTranscription": {}, "outputAudioTranscription": {},
		"tools": [{"functionDeclarations": [{"name": "book_slot", "behavior": "BLOCKING"}]}]}}`)
	msgs, ce := readAll(t, c, func(typ websocket.MessageType, m map[string]any) {
		if typ != websocket.MessageBinary {
			t.Errorf("a %v frame; the real server sends binary ones", typ)
		}
		if _, ok := m["setupComplete"]; ok {
			send(t, c, websocket.MessageText, `{"realtimeInput": {"audio": {"data": "`+strings.Repeat("AAAA", 200)+`", "mimeType": "audio/pcm;rate=16000"}}}`)
		}
		if tc, ok := m["toolCall"].(map[string]any); ok {
			fc := tc["functionCalls"].([]any)[0].(map[string]any)
			if fc["id"] == "fc_2" {
				send(t, c, websocket.MessageText, `{"toolResponse": {"functionResponses": [{"id": "fc_2", "name": "book_slot", "response": {"status": "committed"}, "scheduling": "WHEN_IDLE"}]}}`)
				send(t, c, websocket.MessageText, `{"clientContent": {"turns": [{"role": "user", "parts": [{"text": "System note: booked."}]}], "turnComplete": true}}`)
			}
		}
	})
	if ce.Code != websocket.StatusNormalClosure || ce.Reason != "end of trace" {
		t.Fatalf("closed with %v, want 1000 (end of trace)", ce)
	}
	if _, ok := msgs[0]["setupComplete"]; !ok {
		t.Fatalf("first message %v, want setupComplete", msgs[0])
	}
	audio := msgs[11]["serverContent"].(map[string]any)["modelTurn"].(map[string]any)["parts"].([]any)[0].(map[string]any)["inlineData"].(map[string]any)
	pcm, err := base64.StdEncoding.DecodeString(audio["data"].(string))
	if err != nil || len(pcm) != 960 || !bytes.Equal(pcm, make([]byte, 960)) {
		t.Errorf("model audio: %d bytes (%v), want 20 ms of silence (960 zero bytes)", len(pcm), err)
	}
	f.waitDone(t)
	golden(t, "wire_gemini", transcript(f.record(t)))
}

// openaiClient plays the synthetic session as an OpenAI agent: session.update with
// transcription and the tool at once; once the re-issued call's response is done, the
// function output for fc_2, a user note, and a response.create.
func openaiClient(t *testing.T, url string, opts *websocket.DialOptions, beta bool) []map[string]any {
	c := dial(t, url, opts)
	defer c.CloseNow()
	if c.Subprotocol() != "realtime" {
		t.Errorf("subprotocol %q, want realtime (ws fails a handshake that selects none)", c.Subprotocol())
	}
	update := `{"type": "session.update", "session": {"type": "realtime", "audio": {"input": {"transcription": {"model": "gpt-4o-transcribe"}}}, "tools": [{"type": "function", "name": "book_slot"}]}}`
	if beta {
		update = `{"type": "session.update", "session": {"input_audio_transcription": {"model": "whisper-1"}, "tools": [{"type": "function", "name": "book_slot"}]}}`
	}
	sawCall := false
	msgs, ce := readAll(t, c, func(typ websocket.MessageType, m map[string]any) {
		if typ != websocket.MessageText {
			t.Errorf("a %v frame; OpenAI sends text", typ)
		}
		switch m["type"] {
		case "session.created":
			send(t, c, websocket.MessageText, update)
		case "response.output_item.done":
			if m["item"].(map[string]any)["call_id"] == "fc_2" {
				sawCall = true
			}
		case "response.done":
			if sawCall {
				sawCall = false
				send(t, c, websocket.MessageText, `{"type": "conversation.item.create", "item": {"id": "item_agent_1", "type": "function_call_output", "call_id": "fc_2", "output": "{\"status\":\"committed\"}"}}`)
				send(t, c, websocket.MessageText, `{"type": "conversation.item.create", "item": {"id": "item_agent_2", "type": "message", "role": "user", "content": [{"type": "input_text", "text": "System note: booked."}]}}`)
				send(t, c, websocket.MessageText, `{"type": "response.create", "event_id": "evt_agent_3", "response": {"metadata": {"client_event_id": "evt_agent_3"}}}`)
				send(t, c, websocket.MessageText, `{"type": "input_audio_buffer.append", "audio": "`+strings.Repeat("AAAA", 200)+`"}`)
			}
		}
	})
	if ce.Code != websocket.StatusNormalClosure || ce.Reason != "end of trace" {
		t.Fatalf("closed with %v, want 1000 (end of trace)", ce)
	}
	return msgs
}

// eventIDs checks every OpenAI server event has a unique event_id.
func eventIDs(t *testing.T, msgs []map[string]any) {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range msgs {
		id, _ := m["event_id"].(string)
		if id == "" || seen[id] {
			t.Fatalf("event %v: event_id %q missing or repeated", m["type"], id)
		}
		seen[id] = true
	}
}

// TestOpenAISynthetic plays the synthetic trace to GA and beta clients the way the
// SDKs connect (subprotocols realtime and openai-insecure-api-key.KEY; beta with the
// OpenAI-Beta header): session.created first, session.updated after session.update,
// every trace line as the golden's events, the agent's items echoed, and a normal
// close at the end.
func TestOpenAISynthetic(t *testing.T) {
	t.Parallel()
	for _, beta := range []bool{false, true} {
		name := "ga"
		if beta {
			name = "beta"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := startFake(t, parseTrace(t, "synthetic", synthetic))
			h := http.Header{}
			h.Set("Authorization", "Bearer ignored")
			if beta {
				h.Set("OpenAI-Beta", "realtime=v1")
			}
			opts := &websocket.DialOptions{HTTPHeader: h, Subprotocols: []string{"realtime", "openai-insecure-api-key.ignored"}}
			msgs := openaiClient(t, f.ws+"/v1/realtime?model=gpt-realtime", opts, beta)
			if msgs[0]["type"] != "session.created" {
				t.Fatalf("first event %v, want session.created", msgs[0]["type"])
			}
			eventIDs(t, msgs)
			f.waitDone(t)
			golden(t, "wire_openai_"+name, transcript(f.record(t)))
		})
	}
}
