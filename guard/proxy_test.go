package guard_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/fakeprovider"
	"github.com/voicearbiter/arbiter/guard"
	"github.com/voicearbiter/arbiter/store/memory"
)

// The guard on real sockets: the fake provider as its upstream over TLS, a scripted
// raw WebSocket agent, the arbiter on the embedded store. What reached "the provider"
// (the fake's record) is judged.

// syncBuffer is a buffer safe for the goroutines writing logs and records.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type stack struct {
	svc      *arbiter.Service
	proxy    *guard.Proxy
	guardURL string
	record   *syncBuffer
	logs     *syncBuffer
}

func writeTrace(t *testing.T, name string, lines ...string) string {
	dir := t.TempDir()
	p := filepath.Join(dir, name+".jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func policy(t *testing.T) *arbiter.Policy {
	p := &arbiter.Policy{
		Defaults: arbiter.Timings{Grace: 100 * time.Millisecond, MaxPending: 5 * time.Second},
		Tools: map[string]*arbiter.Tool{
			"book_slot": {Name: "book_slot", SideEffect: true, Behavior: arbiter.NonBlocking,
				Key: []arbiter.KeyArg{{Arg: "slot", As: arbiter.KeyDatetime}}, Describe: "the booking for {slot}"},
		},
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

func startStack(t *testing.T, tracePath string) *stack {
	t.Helper()
	return startStackWith(t, tracePath, guard.Config{AnswerWait: 500 * time.Millisecond}, policy(t))
}

// startStackWith is startStack with the guard's rule configuration and the policy.
func startStackWith(t *testing.T, tracePath string, cfg guard.Config, pol *arbiter.Policy) *stack {
	t.Helper()
	return startStackOptions(t, tracePath, pol, func(o *guard.Options) { o.Rule = cfg })
}

// startStackOptions is startStack under the policy pol, set setting the guard's
// options (after startStack's).
func startStackOptions(t *testing.T, tracePath string, pol *arbiter.Policy, set func(*guard.Options)) *stack {
	t.Helper()
	traces, err := fakeprovider.LoadTraces([]string{tracePath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := &stack{record: &syncBuffer{}, logs: &syncBuffer{}}
	fp, err := fakeprovider.New(fakeprovider.Options{Traces: traces, Record: st.record, Log: slog.New(slog.NewTextHandler(st.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewTLSServer(fp)
	t.Cleanup(func() { up.Close(); fp.Close() })
	pool := x509.NewCertPool()
	pool.AddCert(up.Certificate())
	u, _ := url.Parse(strings.Replace(up.URL, "https://", "wss://", 1))
	store := memory.New(nil)
	t.Cleanup(func() { store.Close() })
	st.svc = &arbiter.Service{Engine: &arbiter.Engine{Policy: pol}, Store: store, Clock: arbiter.SystemClock{}, Calls: store}
	o := guard.Options{Service: st.svc, Gemini: u, OpenAI: u,
		TLS: up.Client().Transport.(*http.Transport).TLSClientConfig, Log: slog.New(slog.NewTextHandler(st.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Rule: guard.Config{AnswerWait: 500 * time.Millisecond}}
	if set != nil {
		set(&o)
	}
	st.proxy, err = guard.New(o)
	if err != nil {
		t.Fatal(err)
	}
	gs := httptest.NewServer(st.proxy)
	t.Cleanup(func() { st.proxy.Close(); gs.Close() })
	st.guardURL = strings.Replace(gs.URL, "http://", "ws://", 1)
	_ = pool
	return st
}

// clientMessages returns the client messages the fake recorded, decoded.
func (s *stack) clientMessages(t *testing.T) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.record.String()), "\n") {
		var l fakeprovider.RecordLine
		if json.Unmarshal([]byte(line), &l) != nil || l.Kind != fakeprovider.KindClient {
			continue
		}
		var m map[string]any
		if json.Unmarshal(l.Msg, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// geminiAnswers returns each call id's final function responses as the provider got
// them.
func geminiAnswers(msgs []map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, m := range msgs {
		tr, _ := m["toolResponse"].(map[string]any)
		frs, _ := tr["functionResponses"].([]any)
		for _, x := range frs {
			fr := x.(map[string]any)
			resp, _ := fr["response"].(map[string]any)
			out[fr["id"].(string)] = append(out[fr["id"].(string)], resp)
		}
	}
	return out
}

func TestProxyGeminiEndToEnd(t *testing.T) {
	tr := writeTrace(t, "dup",
		`{"t_ms":0,"event":"session_start"}`,
		`{"t_ms":50,"event":"tool_call","call_id":"fc_a","tool":"book_slot","args":{"slot":"tomorrow 3pm"},"behavior":"NON_BLOCKING"}`,
		`{"t_ms":100,"event":"tool_call","call_id":"fc_b","tool":"book_slot","args":{"slot":"tomorrow at 3pm"},"behavior":"NON_BLOCKING"}`,
		`{"t_ms":150,"event":"tool_call","call_id":"fc_w","tool":"get_weather","args":{"city":"Lyon"}}`,
		`{"t_ms":200,"event":"model_audio_start"}`,
		`{"t_ms":250,"event":"turn_complete"}`,
		`{"t_ms":1800,"event":"end"}`)
	s := startStack(t, tr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The agent's key rides in the query, as @google/genai sends it: passed through,
	// never logged.
	ws, _, err := websocket.Dial(ctx, s.guardURL+"/trace/dup/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=SECRET-KEY-123", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	setup := `{"setup":{"model":"models/gemini-live","tools":[{"functionDeclarations":[{"name":"book_slot","behavior":"NON_BLOCKING"},{"name":"get_weather"}]}]}}`
	if err := ws.Write(ctx, websocket.MessageText, []byte(setup)); err != nil {
		t.Fatal(err)
	}
	var given []string
	var wg sync.WaitGroup
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != websocket.StatusNormalClosure {
				t.Fatalf("the session ended with %v (want the provider's 1000 passed through)", err)
			}
			break
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("the agent got a frame that is not JSON: %s", b)
		}
		if _, ok := m["setupComplete"]; ok {
			// Audio goes up at once, whatever is held.
			_ = ws.Write(ctx, websocket.MessageText, []byte(`{"realtimeInput":{"audio":{"data":"AAAA","mimeType":"audio/pcm;rate=16000"}}}`))
		}
		tc, _ := m["toolCall"].(map[string]any)
		calls, _ := tc["functionCalls"].([]any)
		for _, x := range calls {
			fc := x.(map[string]any)
			id, name := fc["id"].(string), fc["name"].(string)
			given = append(given, id)
			wg.Add(1)
			go func() {
				defer wg.Done()
				answer := map[string]any{"output": "sunny"}
				if name == "book_slot" {
					answer = map[string]any{"output": "CANCELLED"} // what a framework says on its own
					runHelper(t, s.svc, id)
				}
				msg, _ := json.Marshal(map[string]any{"toolResponse": map[string]any{"functionResponses": []any{map[string]any{"id": id, "name": name, "response": answer}}}})
				_ = ws.Write(ctx, websocket.MessageText, msg)
				_ = ws.Write(ctx, websocket.MessageText, msg) // twice: dropped
			}()
		}
	}
	wg.Wait()
	if strings.Join(given, ",") != "fc_a,fc_w" {
		t.Errorf("the agent was given %v; want fc_a and fc_w (fc_b duplicates fc_a)", given)
	}
	got := geminiAnswers(s.clientMessages(t))
	want := map[string]string{"fc_a": "committed", "fc_b": "committed", "fc_w": "ok"}
	for id, status := range want {
		rs := got[id]
		if len(rs) != 1 || rs[0]["status"] != status {
			t.Errorf("%s reached the provider as %v; want one response, status %s", id, rs, status)
		}
	}
	if got["fc_b"][0]["duplicate_of"] != "fc_a" {
		t.Errorf("fc_b: %v", got["fc_b"])
	}
	if r, _ := got["fc_a"][0]["result"].(map[string]any); r["reference"] != "R-1" {
		t.Errorf("fc_a carries the tool's result, not the framework's text: %v", got["fc_a"])
	}
	var audio bool
	for _, m := range s.clientMessages(t) {
		if _, ok := m["realtimeInput"]; ok {
			audio = true
		}
	}
	if !audio {
		t.Error("the agent's audio never reached the provider")
	}
	waitClosed(t, s)
	if logs := s.logs.String(); strings.Contains(logs, "SECRET-KEY-123") {
		t.Errorf("the API key is in the logs:\n%s", logs)
	} else if !strings.Contains(logs, "dropped agent answer") || !strings.Contains(logs, "wire guard connection closed") {
		t.Errorf("the logs say nothing of the drops:\n%s", logs)
	}
}

// runHelper is what a tool with the helper does, by call id alone (the session found
// by the guard's index): prepare, Decide until COMMIT, commit, Complete.
func runHelper(t *testing.T, svc *arbiter.Service, callID string) {
	ctx := context.Background()
	key, err := svc.FindCall(ctx, "", callID)
	if err != nil {
		t.Errorf("FindCall(%s): %v", callID, err)
		return
	}
	d, err := svc.DecideBy(ctx, key, arbiter.Decide{CallID: callID, Prepared: true}, 5*time.Second, nil)
	if err != nil || d.Decision != arbiter.DecisionCommit {
		t.Errorf("Decide(%s): %+v %v", callID, d, err)
		return
	}
	if _, _, err := svc.Apply(ctx, key, arbiter.Complete{CallID: callID, Outcome: arbiter.Committed, Result: map[string]any{"reference": "R-1"}}, false); err != nil {
		t.Errorf("Complete(%s): %v", callID, err)
	}
}

func waitClosed(t *testing.T, s *stack) {
	deadline := time.Now().Add(10 * time.Second)
	for s.proxy.Open() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

// TestProxyAnswersAnEmptyCloseWithNormal: an agent that closes its own connection
// without a status code (LiveKit's Google plugin restarting its session) gets 1000
// back, not an empty close its WebSocket library reports as 1005 (which that plugin
// takes for a fatal error).
func TestProxyAnswersAnEmptyCloseWithNormal(t *testing.T) {
	tr := writeTrace(t, "idle", `{"t_ms":0,"event":"session_start"}`, `{"t_ms":30000,"event":"end"}`)
	s := startStack(t, tr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, s.guardURL+"/trace/idle/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"m"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ws.Read(ctx); err != nil { // setupComplete
		t.Fatal(err)
	}
	err = ws.Close(websocket.StatusNoStatusRcvd, "")
	if code := websocket.CloseStatus(err); code != websocket.StatusNormalClosure {
		t.Errorf("the guard answered an empty close with %v (%v), want 1000", code, err)
	}
}

// TestProxyPlainRequestDialsNothing: a request on a provider path that is not a
// WebSocket upgrade (a health check, a scanner, curl) gets 426 and opens nothing
// upstream: before, the guard dialed the provider with the caller's credentials first
// and only then failed the agent's handshake.
func TestProxyPlainRequestDialsNothing(t *testing.T) {
	s := startStack(t, writeTrace(t, "plain", `{"t_ms":0,"event":"session_start"}`, `{"t_ms":100,"event":"end"}`))
	u := strings.Replace(s.guardURL, "ws://", "http://", 1)
	for _, path := range []string{"/trace/plain/v1/realtime?model=m", "/trace/plain/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=k"} {
		req, _ := http.NewRequest(http.MethodGet, u+path, nil)
		req.Header.Set("Authorization", "Bearer sk-test")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusUpgradeRequired {
			t.Errorf("GET %s without an upgrade: %d, want 426", path, resp.StatusCode)
		}
		// An upgrade the WebSocket handshake refuses (a version other than 13, no
		// valid key) is refused before the dial too: it was dialed first.
		for _, c := range []struct {
			version, key string
			status       int
		}{{"8", "dGhlIHNhbXBsZSBub25jZQ==", http.StatusUpgradeRequired}, {"13", "", http.StatusBadRequest}, {"13", "short", http.StatusBadRequest}} {
			req, _ := http.NewRequest(http.MethodGet, u+path, nil)
			req.Header.Set("Authorization", "Bearer sk-test")
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "websocket")
			req.Header.Set("Sec-WebSocket-Version", c.version)
			req.Header.Set("Sec-WebSocket-Key", c.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Errorf("GET %s, version %q, key %q: %d, want %d", path, c.version, c.key, resp.StatusCode, c.status)
			}
		}
	}
	if rec := s.record.String(); rec != "" {
		t.Errorf("the provider saw a connection:\n%s", rec)
	}
}

// TestProxyOffUpstreamNamed: a provider path whose upstream is off (its flag empty) is
// refused with the flag named, not as "not a provider path".
func TestProxyOffUpstreamNamed(t *testing.T) {
	s := startStackOptions(t, writeTrace(t, "off", `{"t_ms":0,"event":"session_start"}`, `{"t_ms":100,"event":"end"}`), policy(t),
		func(o *guard.Options) { o.OpenAI = nil })
	resp, err := http.Get(strings.Replace(s.guardURL, "ws://", "http://", 1) + "/trace/off/v1/realtime?model=m")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "--proxy-openai-upstream") {
		t.Errorf("an OpenAI path with its upstream off: %d %s", resp.StatusCode, body)
	}
}
