package guard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/guard"
	"github.com/voicearbiter/arbiter/store/memory"
)

// recorder is a guard.Metrics that writes down what it is told.
type recorder struct {
	mu      sync.Mutex
	opened  []string
	closed  []string // "how code"
	counted map[string]int
	lost    map[string]int
	dials   map[string]int
	sent    [2]int // frames, by guard.Side
	bytes   [2]int
}

func newRecorder() *recorder {
	return &recorder{counted: map[string]int{}, lost: map[string]int{}, dials: map[string]int{}}
}

func (r *recorder) Opened(proto string) guard.ConnMetrics {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opened = append(r.opened, proto)
	return r
}
func (r *recorder) DialFailed(proto, class string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dials[proto+" "+class]++
}
func (r *recorder) Sent(to guard.Side, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent[to]++
	r.bytes[to] += n
}
func (r *recorder) Counted(what, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counted[what+": "+why]++
}
func (r *recorder) ReportLost(event, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost[event+" "+why]++
}
func (r *recorder) Closed(how, code string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = append(r.closed, how+" "+code)
}

// TestProxyMetricsCountWhatTheRuleDid: a BLOCKING call cut off by barge-in, answered by
// the agent afterwards (what Pipecat and LiveKit do on their own): the drop of the
// dead id's answer reaches Options.Metrics as the rule counted it, each frame written
// is counted on its side (exactly the messages the provider recorded and the agent
// read), and the connection's end is the provider's close, 1000.
func TestProxyMetricsCountWhatTheRuleDid(t *testing.T) {
	tr := writeTrace(t, "bargein",
		`{"t_ms":0,"event":"session_start"}`,
		`{"t_ms":50,"event":"tool_call","call_id":"fc_w","tool":"get_weather","args":{"city":"Lyon"}}`,
		`{"t_ms":300,"event":"speech_start"}`,
		`{"t_ms":350,"event":"interrupted"}`,
		`{"t_ms":1500,"event":"end"}`)
	rec := newRecorder()
	s := startStackOptions(t, tr, policy(t), func(o *guard.Options) { o.Metrics = rec })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, s.guardURL+"/trace/bargein/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"models/gemini-live","tools":[{"functionDeclarations":[{"name":"get_weather"}]}]}}`)); err != nil {
		t.Fatal(err)
	}
	read, wrote := 0, 1
	var called string
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != websocket.StatusNormalClosure {
				t.Fatalf("the session ended with %v (want the provider's 1000 passed through)", err)
			}
			break
		}
		read++
		var m struct {
			ToolCall *struct {
				FunctionCalls []struct{ ID string } `json:"functionCalls"`
			} `json:"toolCall"`
			ServerContent *struct {
				Interrupted bool `json:"interrupted"`
			} `json:"serverContent"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("the agent got a frame that is not JSON: %s", b)
		}
		if m.ToolCall != nil {
			called = m.ToolCall.FunctionCalls[0].ID
		}
		if m.ServerContent != nil && m.ServerContent.Interrupted && called != "" {
			// The framework answers the call it was running, cut off or not.
			msg := fmt.Sprintf(`{"toolResponse":{"functionResponses":[{"id":%q,"name":"get_weather","response":{"output":"sunny"}}]}}`, called)
			if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
				t.Fatal(err)
			}
			wrote++
		}
	}
	if called != "fc_w" || wrote != 2 {
		t.Fatalf("the agent was given %q and answered %d times; the trace did not run as meant", called, wrote-1)
	}
	waitClosed(t, s)
	if rs := geminiAnswers(s.clientMessages(t))["fc_w"]; len(rs) != 0 {
		t.Fatalf("the abandoned call was answered upstream: %v", rs)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := rec.counted["dropped agent answer: dead id: abandoned"]; got != 1 {
		t.Errorf("the metrics saw %d drops of the dead id's answer, want 1 (all counted: %v)", got, rec.counted)
	}
	// Every count the closing log line lists is one the metrics saw.
	closing := ""
	for _, l := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(l, "wire guard connection closed") {
			closing = l
		}
	}
	for k, n := range rec.counted {
		if !strings.Contains(closing, fmt.Sprintf("%q=%d", k, n)) {
			t.Errorf("the metrics counted %q %d times; the closing log line says otherwise: %s", k, n, closing)
		}
	}
	if strings.Join(rec.opened, ",") != "gemini" || strings.Join(rec.closed, ",") != "provider_closed 1000" {
		t.Errorf("opened %v, closed %v; want one gemini connection, ended by the provider with 1000", rec.opened, rec.closed)
	}
	if up := len(s.clientMessages(t)); rec.sent[guard.Server] != up {
		t.Errorf("frames counted to the provider: %d; the provider recorded %d messages", rec.sent[guard.Server], up)
	}
	if rec.sent[guard.Agent] != read {
		t.Errorf("frames counted to the agent: %d; the agent read %d", rec.sent[guard.Agent], read)
	}
	if rec.bytes[guard.Agent] == 0 || rec.bytes[guard.Server] == 0 {
		t.Errorf("bytes counted: %v", rec.bytes)
	}
	if len(rec.lost) != 0 || len(rec.dials) != 0 {
		t.Errorf("lost reports %v, failed dials %v; want none", rec.lost, rec.dials)
	}
}

// TestProxyMetricsDialFailures: an upstream that refuses the handshake (a wrong API
// key), one whose certificate is not trusted and one that cannot be reached are
// counted by class.
func TestProxyMetricsDialFailures(t *testing.T) {
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "API key not valid", http.StatusForbidden)
	}))
	defer refuse.Close()
	untrusted := httptest.NewTLSServer(http.NotFoundHandler())
	defer untrusted.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close() // nothing listens there now
	rec := newRecorder()
	store := memory.New(nil)
	defer store.Close()
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy(t)}, Store: store, Clock: arbiter.SystemClock{}, Calls: store}
	ws := func(s string) *url.URL {
		u, _ := url.Parse(strings.Replace(strings.Replace(s, "https://", "wss://", 1), "http://", "ws://", 1))
		return u
	}
	logs := &syncBuffer{}
	p, err := guard.New(guard.Options{Service: svc, Gemini: ws(refuse.URL), OpenAI: ws(goneURL), Vertex: ws(untrusted.URL), Metrics: rec,
		Log: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	gs := httptest.NewServer(p)
	defer func() { p.Close(); gs.Close() }()
	base := strings.Replace(gs.URL, "http://", "ws://", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for path, status := range map[string]int{
		"/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent": http.StatusForbidden,
		"/v1/realtime": http.StatusBadGateway,
		"/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent": http.StatusBadGateway,
	} {
		_, resp, err := websocket.Dial(ctx, base+path, nil)
		if err == nil || resp == nil || resp.StatusCode != status {
			t.Errorf("%s: %v %v; want the handshake refused with %d", path, resp, err, status)
		}
	}
	// The log says which failed: a refusal (an HTTP answer) or no answer at all.
	out := logs.String()
	if strings.Count(out, `msg="upstream refused the connection"`) != 1 || strings.Count(out, `msg="upstream not reached"`) != 2 {
		t.Errorf("the dial failures' log lines:\n%s", out)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := map[string]int{"gemini " + guard.DialRefusedClient: 1, "openai " + guard.DialNetwork: 1, "gemini " + guard.DialTLS: 1}
	if fmt.Sprint(rec.dials) != fmt.Sprint(want) || len(rec.opened) != 0 {
		t.Errorf("failed dials %v (opened %v); want %v", rec.dials, rec.opened, want)
	}
}

// storeDown plays one Gemini session (a get_weather call, then the end at endMs)
// through a guard whose store refuses every report (Unavailable) and which retries
// one for retry, and returns once the provider closed it: the stack, the metrics the
// guard counted, and how many times a report was tried.
func storeDown(t *testing.T, endMs int, retry time.Duration) (*stack, *recorder, *atomic.Int64) {
	t.Helper()
	tr := writeTrace(t, "down",
		`{"t_ms":0,"event":"session_start"}`,
		`{"t_ms":50,"event":"tool_call","call_id":"fc_w","tool":"get_weather","args":{"city":"Lyon"}}`,
		fmt.Sprintf(`{"t_ms":%d,"event":"end"}`, endMs))
	rec := newRecorder()
	attempts := new(atomic.Int64)
	s := startStackOptions(t, tr, policy(t), func(o *guard.Options) {
		o.Metrics = rec
		o.ReportRetry = retry
		o.Rule.RegisterWait = 300 * time.Millisecond
		o.Apply = func(context.Context, arbiter.SessionKey, arbiter.Event, bool) (arbiter.Output, *arbiter.Session, error) {
			attempts.Add(1)
			return arbiter.Output{}, nil, arbiter.Errorf(arbiter.Unavailable, "store down")
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, s.guardURL+"/trace/down/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"m","tools":[{"functionDeclarations":[{"name":"get_weather"}]}]}}`)); err != nil {
		t.Fatal(err)
	}
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			return s, rec, attempts
		}
	}
}

// TestProxyMetricsStoreDown: with the arbiter's store down for good, the guard's
// reports are lost (counted unavailable, by event kind, once each), and a call it
// could not register is answered "not executed" by the guard itself (counted as an
// injected response, failed closed).
func TestProxyMetricsStoreDown(t *testing.T) {
	s, rec, _ := storeDown(t, 1500, 100*time.Millisecond)
	waitClosed(t, s)
	if rs := geminiAnswers(s.clientMessages(t))["fc_w"]; len(rs) != 1 || rs[0]["executed"] != false {
		t.Fatalf("fc_w reached the provider as %v; want the guard's one not-executed response", rs)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.counted["injected response: failed closed"] != 1 {
		t.Errorf("counted %v; want one injected response, failed closed", rec.counted)
	}
	// Each report is lost once, with its kind: the connect, the setup's configure, the
	// call's registration, the close at the end.
	want := map[string]int{}
	for _, e := range []string{"connect", "configure", "call", "close"} {
		want[e+" "+guard.ReportUnavailable] = 1
	}
	if fmt.Sprint(rec.lost) != fmt.Sprint(want) {
		t.Errorf("lost reports %v; want %v", rec.lost, want)
	}
}

// TestProxyReportsGivenUpAtTheEnd: with the store down and a long ReportRetry, the
// reports still queued when a connection ends are given up once the end's grace is
// over (each counted lost once, "unavailable"), and no attempt is made after that.
// Before, each went on being retried for ReportRetry, one after the other, minutes
// after the "given up" log line.
func TestProxyReportsGivenUpAtTheEnd(t *testing.T) {
	_, rec, attempts := storeDown(t, 800, 10*time.Minute)
	lost := func() int {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		n := 0
		for _, v := range rec.lost {
			n += v
		}
		return n
	}
	// The call's registration is never tried: it failed closed at RegisterWait while
	// the connect held the queue (answered upstream, not executed), and is dropped.
	for end := time.Now().Add(15 * time.Second); lost() < 3 && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	rec.mu.Lock()
	got := fmt.Sprint(rec.lost)
	failed := rec.counted["injected response: failed closed"]
	rec.mu.Unlock()
	if failed != 1 {
		t.Errorf("injected failed-closed responses: %d, want 1", failed)
	}
	want := map[string]int{}
	for _, e := range []string{"connect", "configure", "close"} {
		want[e+" "+guard.ReportUnavailable] = 1
	}
	if got != fmt.Sprint(want) {
		t.Fatalf("lost reports %v; want %v (each given up once at the end)", got, want)
	}
	n := attempts.Load()
	time.Sleep(300 * time.Millisecond)
	if m := attempts.Load(); m != n {
		t.Errorf("%d more attempts to apply after every report was given up", m-n)
	}
}

// TestProxyRefusalKeepsItsHeaders: an upstream's refusal reaches the agent's handshake
// with its end-to-end headers (a 429's Retry-After, a 401's WWW-Authenticate, the
// provider's request id), not only its status and body: an SDK backs off by
// Retry-After, and support asks for the request id. Hop-by-hop headers are not passed.
func TestProxyRefusalKeepsItsHeaders(t *testing.T) {
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Retry-After", "20")
		h.Set("X-Request-Id", "req_123")
		h.Set("Www-Authenticate", `Bearer realm="OpenAI API"`)
		h.Set("Content-Type", "application/json")
		h.Set("Keep-Alive", "timeout=5")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`))
	}))
	defer refuse.Close()
	store := memory.New(nil)
	defer store.Close()
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy(t)}, Store: store, Clock: arbiter.SystemClock{}, Calls: store}
	up, _ := url.Parse(strings.Replace(refuse.URL, "http://", "ws://", 1))
	p, err := guard.New(guard.Options{Service: svc, OpenAI: up, Log: slog.New(slog.NewTextHandler(&syncBuffer{}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	gs := httptest.NewServer(p)
	defer func() { p.Close(); gs.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, strings.Replace(gs.URL, "http://", "ws://", 1)+"/v1/realtime?model=m", nil)
	if err == nil || resp == nil {
		t.Fatalf("the handshake: %v %v; want it refused", resp, err)
	}
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("status %d, want 429", resp.StatusCode)
	}
	for k, want := range map[string]string{"Retry-After": "20", "X-Request-Id": "req_123", "Www-Authenticate": `Bearer realm="OpenAI API"`,
		"Content-Type": "application/json", "Keep-Alive": ""} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("header %s: %q, want %q", k, got, want)
		}
	}
}
