package fakeprovider_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
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

// reconnect is a session on two connections: the trace's second connection line
// closes the first after a goAway.
const reconnect = `{"t_ms": 0, "event": "session_start"}
{"t_ms": 0, "event": "connection", "id": "conn-1"}
{"t_ms": 300, "event": "tool_call", "call_id": "fc_a", "tool": "book_slot", "args": {}}
{"t_ms": 400, "event": "connection", "id": "conn-2"}
{"t_ms": 600, "event": "tool_call", "call_id": "fc_b", "tool": "book_slot", "args": {}}
{"t_ms": 700, "event": "end"}
`

// geminiSetup is a setup message resuming handle ("": none).
func geminiSetupMsg(handle string) string {
	h := ""
	if handle != "" {
		h = `"handle": "` + handle + `"`
	}
	return `{"setup": {"model": "models/m", "sessionResumption": {` + h + `}, "tools": [{"functionDeclarations": [{"name": "book_slot"}]}]}}`
}

// TestGeminiReconnect: at the trace's second connection line the server sends a
// resumption update and goAway and closes; a connection resuming the handle plays the
// rest at the session's times; the record has one session over two connections.
func TestGeminiReconnect(t *testing.T) {
	t.Parallel()
	f := startFake(t, parseTrace(t, "reconnect", reconnect))
	url := f.ws + "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
	c := dial(t, url, nil)
	send(t, c, websocket.MessageText, geminiSetupMsg(""))
	msgs, ce := readAll(t, c, nil)
	c.CloseNow()
	if ce.Code != websocket.StatusNormalClosure || !strings.Contains(ce.Reason, "conn-2") {
		t.Fatalf("first connection closed with %v, want 1000 naming conn-2", ce)
	}
	if got := msgs[len(msgs)-1]["goAway"]; got == nil {
		t.Fatalf("last message %v, want goAway", msgs[len(msgs)-1])
	}
	handle := msgs[1]["sessionResumptionUpdate"].(map[string]any)["newHandle"].(string)

	c = dial(t, url, nil)
	defer c.CloseNow()
	send(t, c, websocket.MessageText, geminiSetupMsg(handle))
	msgs, ce = readAll(t, c, nil)
	if ce.Code != websocket.StatusNormalClosure || ce.Reason != "end of trace" || len(msgs) != 3 || msgs[2]["toolCall"] == nil {
		t.Fatalf("second connection: %v then %v; want setupComplete, a resumption update, fc_b, end of trace", msgs, ce)
	}
	f.waitDone(t)
	got := transcript(f.record(t))
	for _, want := range []string{
		`close: code 1000 by server end=false "reconnect: trace connection conn-2"`,
		`L4 connection: {"goAway":{"timeLeft":"0s"}}`,
		`L5 tool_call: {"toolCall":{"functionCalls":[{"args":{},"id":"fc_b","name":"book_slot"}]}}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("record lacks %q:\n%s", want, got)
		}
	}
	for _, l := range f.record(t) {
		if l.Session != 1 || l.Kind == fakeprovider.KindServer && l.Line == 5 && (l.TMs != 600 || l.Conn != 2) {
			t.Errorf("record line %+v: want session 1, fc_b at t_ms 600 on conn 2", l)
		}
	}
}

// TestAssignment: connections take the traces in order, /trace/NAME/ picks one (and
// takes it out of the queue), a client that leaves before the end is followed by the
// next connection from where it left, and once every trace is played a connection
// gets an idle session.
func TestAssignment(t *testing.T) {
	t.Parallel()
	short := func(call string) string {
		return `{"t_ms": 0, "event": "session_start"}
{"t_ms": 200, "event": "tool_call", "call_id": "` + call + `", "tool": "book_slot", "args": {}}
{"t_ms": 300, "event": "end"}
`
	}
	f := startFake(t, parseTrace(t, "one", short("fc_one")), parseTrace(t, "two", short("fc_two")), parseTrace(t, "three", short("fc_three")))
	oai := f.ws + "/v1/realtime?model=m"
	// A client declares its tools (else each call would wait for them: holder).
	declare := func(c *websocket.Conn) func(websocket.MessageType, map[string]any) {
		return func(_ websocket.MessageType, m map[string]any) {
			if m["type"] == "session.created" {
				send(t, c, websocket.MessageText, `{"type": "session.update", "session": {"tools": [{"type": "function", "name": "book_slot"}]}}`)
			}
		}
	}
	callOf := func(msgs []map[string]any) string {
		for _, m := range msgs {
			if m["type"] == "response.function_call_arguments.done" {
				return m["call_id"].(string)
			}
		}
		return ""
	}

	// /trace/three/ takes "three" out of the queue.
	c := dial(t, f.ws+"/trace/three/v1/realtime?model=m", nil)
	if msgs, _ := readAll(t, c, declare(c)); callOf(msgs) != "fc_three" {
		t.Errorf("/trace/three/ played %q", callOf(msgs))
	}
	c.CloseNow()

	// "one" next; its client leaves at once, so the next connection plays "one".
	c = dial(t, oai, nil)
	if _, _, err := c.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close(websocket.StatusNormalClosure, "bye")
	for i, want := range []string{"fc_one", "fc_two"} {
		c = dial(t, oai, nil)
		if msgs, _ := readAll(t, c, declare(c)); callOf(msgs) != want {
			t.Errorf("connection %d played %q, want %q", i+3, callOf(msgs), want)
		}
		c.CloseNow()
	}
	f.waitDone(t)

	// After every trace: an idle session (the greeting, then nothing) until the client
	// closes; it is not recorded.
	c = dial(t, oai, nil)
	_, b, err := c.Read(context.Background())
	if err != nil || !strings.Contains(string(b), `"type":"session.created"`) {
		t.Errorf("a connection after every trace: %s %v, want session.created", b, err)
	}
	send(t, c, websocket.MessageText, `{"type": "session.update", "session": {}}`)
	c.Close(websocket.StatusNormalClosure, "")
	resp, err := http.Get(f.base + "/trace/nine/v1/realtime")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown trace name: %d, want 404", resp.StatusCode)
	}
	sessions := map[string][]int{}
	for _, l := range f.record(t) {
		if l.Kind == fakeprovider.KindOpen {
			sessions[l.Trace] = append(sessions[l.Trace], l.Session)
		}
	}
	if fmt.Sprint(sessions) != "map[one:[2 2] three:[1] two:[3]]" {
		t.Errorf("sessions by trace (open lines): %v, want three first, one on two connections, then two", sessions)
	}
}

// TestSelfSignedTLS: the certificate SelfSignedTLS writes lets a client connect to
// the fake provider over wss:// (the openai SDK's OpenAIRealtimeWS never uses ws://).
func TestSelfSignedTLS(t *testing.T) {
	t.Parallel()
	certPath := filepath.Join(t.TempDir(), "cert.pem")
	conf, err := fakeprovider.SelfSignedTLS(certPath)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fakeprovider.New(fakeprovider.Options{Traces: []fakeprovider.Trace{parseTrace(t, "s", `{"t_ms": 10, "event": "end"}`)},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv)
	hs.TLS = conf
	hs.StartTLS()
	defer hs.Close()
	defer srv.Close()
	pem, _ := os.ReadFile(certPath)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("the written certificate is not PEM")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	c := dial(t, "wss"+strings.TrimPrefix(hs.URL, "https")+"/v1/realtime?model=m", &websocket.DialOptions{HTTPClient: client})
	defer c.CloseNow()
	msgs, ce := readAll(t, c, nil)
	if len(msgs) != 1 || msgs[0]["type"] != "session.created" || ce.Code != websocket.StatusNormalClosure {
		t.Fatalf("over TLS: %v, %v", msgs, ce)
	}
}

// TestRefusedTrace: a trace its protocol cannot carry (raw_args over Gemini) is
// refused after the setup: a `refused` record line with the reason, close 1008 with
// it, and a later connection naming the trace gets the same answer under the same
// session; over OpenAI the same trace plays.
func TestRefusedTrace(t *testing.T) {
	tr := parseTrace(t, "raw", `{"t_ms": 0, "event": "session_start"}
{"t_ms": 50, "event": "tool_call", "call_id": "c1", "tool": "book_slot", "raw_args": "{slot: 3pm", "args": {}}
{"t_ms": 100, "event": "end"}
`)
	f := startFake(t, tr)
	url := f.ws + "/trace/raw/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
	for i := 0; i < 2; i++ {
		c := dial(t, url, nil)
		send(t, c, websocket.MessageText, `{"setup": {"model": "m"}}`)
		_, ce := readAll(t, c, nil)
		if ce.Code != websocket.StatusPolicyViolation || !strings.HasPrefix(ce.Reason, fakeprovider.RefusedPrefix+"line 2: Gemini Live carries") {
			t.Fatalf("connection %d closed with %v, want 1008 and the refusal", i+1, ce)
		}
	}
	var refused []fakeprovider.RecordLine
	for _, l := range f.record(t) {
		if l.Kind == fakeprovider.KindRefused {
			refused = append(refused, l)
		}
	}
	if len(refused) != 2 || refused[0].Session != 1 || refused[1].Session != 1 || !strings.Contains(refused[0].Text, "raw_args") {
		t.Errorf("refused lines %+v, want two of session 1 with the reason", refused)
	}

	f = startFake(t, tr)
	c := dial(t, f.ws+"/trace/raw/v1/realtime?model=m", &websocket.DialOptions{Subprotocols: []string{"realtime"}})
	msgs, ce := readAll(t, c, func(_ websocket.MessageType, m map[string]any) {
		if m["type"] == "session.created" {
			send(t, c, websocket.MessageText, `{"type": "session.update", "session": {"tools": [{"type": "function", "name": "book_slot"}]}}`)
		}
	})
	if ce.Code != websocket.StatusNormalClosure || !strings.Contains(fmt.Sprint(msgs), "{slot: 3pm") {
		t.Errorf("OpenAI: closed %v after %v; want the unreadable arguments sent and the trace played", ce, msgs)
	}
}

// TestOpenAICallWaitsForDeclaredTools: a function call due while the session declares no
// tools waits for the client's session.update that declares them (a real server calls
// only declared functions; LiveKit's OpenAI plugin under load sent its tools after a
// trace's call was due, and never took the call), the session clock paused meanwhile
// (the record's times never go back) and a warning line says how long.
func TestOpenAICallWaitsForDeclaredTools(t *testing.T) {
	tr := parseTrace(t, "early", `{"t_ms": 0, "event": "session_start"}
{"t_ms": 20, "event": "tool_call", "call_id": "c1", "tool": "book_slot", "args": {"slot": "3pm"}}
{"t_ms": 200, "event": "end"}
`)
	f := startFake(t, tr)
	c := dial(t, f.ws+"/trace/early/v1/realtime?model=m", &websocket.DialOptions{Subprotocols: []string{"realtime"}})
	defer c.CloseNow()
	msgs, ce := readAll(t, c, func(_ websocket.MessageType, m map[string]any) {
		if m["type"] == "session.created" {
			time.Sleep(300 * time.Millisecond) // a client slow to declare its tools: the call is due meanwhile
			send(t, c, websocket.MessageText, `{"type": "session.update", "session": {"type": "realtime", "tools": [{"type": "function", "name": "book_slot"}]}}`)
		}
	})
	if ce.Code != websocket.StatusNormalClosure {
		t.Fatalf("closed with %v, want 1000", ce)
	}
	var order []string
	for _, m := range msgs {
		if typ, _ := m["type"].(string); typ == "session.updated" || typ == "response.output_item.done" {
			order = append(order, typ)
		}
	}
	if strings.Join(order, " ") != "session.updated response.output_item.done" {
		t.Errorf("server events %v: the call must come after the session declared its tools", order)
	}
	held, last := false, int64(-1)
	for _, l := range f.record(t) {
		if l.Kind == fakeprovider.KindWarning && strings.HasPrefix(l.Text, "trace line 2 held ") && strings.Contains(l.Text, "declares no tools") {
			held = true
		}
		if l.TMs < last {
			t.Errorf("record time goes back: %d after %d (%s)", l.TMs, last, l.Kind)
		}
		last = l.TMs
	}
	if !held {
		// The update was read in the same instant the call fell due and went first (a
		// loaded machine): nothing was held, and the order above still holds.
		t.Logf("no 'trace line 2 held' warning: the session.update came before the call was held")
	}
}
