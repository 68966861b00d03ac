package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
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

// inProcess is `arbiter serve` run in this process by startServe.
type inProcess struct {
	addr   string
	conn   *grpc.ClientConn
	stderr *syncBuffer
	cancel context.CancelFunc
	done   chan int
}

// startServe runs `arbiter serve --listen 127.0.0.1:0 args...` in this process and
// dials it; the test fails if it does not start within 10 s. The connection is closed
// and the server cancelled when the test ends.
func startServe(t testing.TB, args ...string) *inProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	p := &inProcess{stderr: &syncBuffer{}, cancel: cancel, done: make(chan int, 1)}
	env := &runEnv{ctx: ctx, stdout: &syncBuffer{}, stderr: p.stderr, ready: ready}
	go func() { p.done <- env.run(append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)) }()
	t.Cleanup(cancel)
	select {
	case p.addr = <-ready:
	case code := <-p.done:
		t.Fatalf("serve exited early with %d\n%s", code, p.stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}
	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	p.conn = conn
	return p
}

// drain cancels the server (SIGTERM's path) and fails the test unless it exits 0
// within timeout.
func (p *inProcess) drain(t testing.TB, timeout time.Duration) {
	t.Helper()
	p.cancel()
	select {
	case code := <-p.done:
		if code != 0 {
			t.Fatalf("serve exited with %d\n%s", code, p.stderr.String())
		}
	case <-time.After(timeout):
		t.Fatal("serve did not drain")
	}
}

// TestCLIServeAnswersHealth starts `arbiter serve` (embedded store, a free port),
// checks the health service, then drains on cancel (SIGTERM's path).
func TestCLIServeAnswersHealth(t *testing.T) {
	p := startServe(t, "--tools", "../../testdata/tools/booking.yaml")
	hr, err := healthpb.NewHealthClient(p.conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: "arbiter.v1.ArbiterService"})
	if err != nil || hr.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v %v", hr, err)
	}
	p.drain(t, 15*time.Second)
	if !strings.Contains(p.stderr.String(), "draining") {
		t.Fatalf("no drain in the log:\n%s", p.stderr.String())
	}
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr syncBuffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestCLIReplayFixtures(t *testing.T) {
	traces, _ := filepath.Glob("../../testdata/traces/*.jsonl")
	code, out, errOut := runCLI(t, append([]string{"replay", "--tools", "../../testdata/tools/booking.yaml"}, traces...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if n := strings.Count(out, `"out":"summary"`); n != len(traces) {
		t.Fatalf("%d summary lines for %d traces", n, len(traces))
	}
	if strings.Contains(out, `"out":"commit"`) {
		t.Fatalf("a fixture committed although the user said stop:\n%s", out)
	}
	if !strings.Contains(errOut, "C_on_run2") || !strings.Contains(errOut, "ok") {
		t.Fatalf("no summary table on stderr:\n%s", errOut)
	}
}

// TestCLIReplayWorkflows replays the workflow traces (confirm-then-act runs,
// deadlines, unknown outcomes, reconnects): every one ends with every call answered,
// and the new output lines show up.
func TestCLIReplayWorkflows(t *testing.T) {
	traces, _ := filepath.Glob("../../testdata/workflows/*.jsonl")
	if len(traces) == 0 {
		t.Fatal("no workflow traces")
	}
	code, out, errOut := runCLI(t, append([]string{"replay", "--tools", "../../testdata/workflows/tools.yaml"}, traces...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if n := strings.Count(out, `"unanswered":[]`); n != len(traces) {
		t.Fatalf("%d traces of %d ended with every call answered\n%s", n, len(traces), out)
	}
	for _, want := range []string{`"out":"run"`, `"disposition":"run"`, `"reason":"connection_closed"`, `"out":"resolved"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s line in the output", want)
		}
	}
}

// TestCLIReplayFailsOnUnansweredCall: a read-only call whose result never comes ends
// the trace unanswered, and the replay exits non-zero.
func TestCLIReplayFailsOnUnansweredCall(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "stuck.jsonl")
	os.WriteFile(trace, []byte(`{"t_ms": 0, "event": "session_start", "backend": {"get_weather": {"result_ms": null}}}
{"t_ms": 10, "event": "tool_call", "call_id": "w1", "tool": "get_weather", "args": {}}
{"t_ms": 20, "event": "end"}
`), 0o644)
	code, out, errOut := runCLI(t, "replay", trace)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, `"unanswered":["w1"]`) || !strings.Contains(errOut, "FAIL") {
		t.Fatalf("output does not report w1 unanswered:\n%s\n%s", out, errOut)
	}
}

func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("tools:\n  - name: book_slot\n    key:\n      - arg: slot\n        as: date\n"), 0o644)
	malformed := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(malformed, []byte("{\"t_ms\": 0, \"event\": \"session_start\"}\n{oops\n"), 0o644)
	badBackend := filepath.Join(dir, "backend.jsonl")
	os.WriteFile(badBackend, []byte("{\"t_ms\": 0, \"event\": \"session_start\", \"backend\": {\"book_slot\": {\"commit\": \"maybe\"}}}\n"), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"replay", "--tools", bad, malformed}, 1, "bad.yaml:5"},
		{[]string{"replay", malformed}, 1, "bad.jsonl:2"},
		{[]string{"replay", badBackend}, 1, "backend.book_slot.commit"},
		{[]string{"replay", "--prepare-ms=-5", malformed}, 2, "--prepare-ms"},
		{[]string{"replay", "--prepare-ms", "-5", malformed}, 2, "--prepare-ms: -5 is outside"},
		{[]string{"replay", "--prepare-ms=99999999999", malformed}, 2, "--prepare-ms"},
		{[]string{"serve", "--tools", bad}, 1, "bad.yaml:5"},
		{[]string{"bogus"}, 2, "unexpected argument"},
		{[]string{"serve", "--log-level", "loud"}, 2, "log-level"},
	}
	for _, tc := range cases {
		code, _, errOut := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	if code, out, _ := runCLI(t, "--help"); code != 0 || !strings.Contains(out, "serve") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

// TestCLIServeOps: serve with a tokens file, a metrics port and a session limit: an
// RPC without a token is UNAUTHENTICATED, health stays open, a token's tenant gets
// through until the session limit, /metrics answers, and so does the session's
// timeline page beside it, with the token only.
func TestCLIServeOps(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.yaml")
	os.WriteFile(tokens, []byte("\"token-for-acme-0001\": acme\n"), 0o600)
	p := startServe(t, "--metrics-listen", "127.0.0.1:0", "--auth-tokens-file", tokens, "--max-sessions", "1")
	conn, stderr := p.conn, p.stderr
	c := arbiterv1.NewArbiterServiceClient(conn)
	if _, err := c.GetSession(context.Background(), &arbiterv1.GetSessionRequest{SessionId: "s"}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("no token: %v, want Unauthenticated", err)
	}
	if hr, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil || hr.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health without a token: %v %v", hr, err)
	}
	authed := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer token-for-acme-0001")
	if _, err := c.ReportSpeech(authed, &arbiterv1.ReportSpeechRequest{SessionId: "s1", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START}); err != nil {
		t.Fatalf("with a token: %v", err)
	}
	if _, err := c.ReportSpeech(authed, &arbiterv1.ReportSpeechRequest{SessionId: "s2", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a second session past --max-sessions 1: %v, want ResourceExhausted", err)
	}
	m := regexp.MustCompile(`msg="metrics serving" addr=(\S+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no metrics address in the log:\n%s", stderr.String())
	}
	resp, err := http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `grpc_server_handled_total{grpc_code="Unauthenticated",grpc_method="GetSession"`) {
		t.Fatalf("metrics lack the unauthenticated GetSession:\n%.2000s", body)
	}
	page := "http://" + m[1] + "/debug/sessions/s1"
	if resp, err := http.Get(page); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the timeline page without a token: %v %v, want 401", resp, err)
	}
	req, _ := http.NewRequest("GET", page, nil)
	req.SetBasicAuth("me", "token-for-acme-0001")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Session s1") || !strings.Contains(string(body), `data-utt="1"`) {
		t.Fatalf("the timeline page with the token: %s\n%.1000s", resp.Status, body)
	}
	p.drain(t, 15*time.Second)
}

// TestCLIServeNoDebugPages: --no-debug-pages serves metrics only.
func TestCLIServeNoDebugPages(t *testing.T) {
	p := startServe(t, "--metrics-listen", "127.0.0.1:0", "--no-debug-pages")
	m := regexp.MustCompile(`msg="metrics serving" addr=(\S+)`).FindStringSubmatch(p.stderr.String())
	if m == nil || strings.Contains(p.stderr.String(), "debug_pages") {
		t.Fatalf("metrics serving line:\n%s", p.stderr.String())
	}
	c := arbiterv1.NewArbiterServiceClient(p.conn)
	if _, err := c.ReportSpeech(context.Background(), &arbiterv1.ReportSpeechRequest{SessionId: "s1", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + m[1] + "/debug/sessions/s1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the timeline page with --no-debug-pages: %s, want 404", resp.Status)
	}
	p.drain(t, 15*time.Second)
}

// TestCLIReplayHTML: replay --html draws the replayed session into one file with its
// call ids, its decision and the decision's reason; --html takes one trace, in
// process.
func TestCLIReplayHTML(t *testing.T) {
	out := filepath.Join(t.TempDir(), "C_on_run2.html")
	code, stdout, errOut := runCLI(t, "replay", "--tools", "../../testdata/tools/booking.yaml", "--html", out, "../../testdata/traces/C_on_run2.jsonl")
	if code != 0 || !strings.Contains(stdout, `"out":"decision"`) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Replay of C_on_run2", `data-call="fc_1792165045038015411"`, `data-call="fc_7334104368860656461"`,
		`data-decision="cancel"`, "stop intent in user speech: &#34;Actually, stop. Don&#39;t book it.&#34;", "skip"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, args := range [][]string{
		{"replay", "--html", out, "../../testdata/traces/C_on_run1.jsonl", "../../testdata/traces/C_on_run2.jsonl"},
		{"replay", "--html", out, "--target", "127.0.0.1:1", "../../testdata/traces/C_on_run2.jsonl"},
		{"replay", "--html", out, "--diff", "--tools", "../../testdata/tools/booking.yaml", "../../testdata/traces/C_on_run2.jsonl"},
	} {
		if code, _, errOut := runCLI(t, args...); code != 2 || !strings.Contains(errOut, "--html") {
			t.Errorf("%v: exit %d, want 2 saying --html\n%s", args[1:], code, errOut)
		}
	}
}

// TestServeFlagErrorsNameTheFlag: a flag out of its range is refused before anything
// starts with the flag and the value given, as a usage error (exit 2); an empty --tools
// (ARBITER_TOOLS= in a container) is no policy, a directory is refused naming --tools;
// a --listen address in use names --listen.
func TestServeFlagErrorsNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--max-wait=-5s"}, 2, "--max-wait=-5s: must be positive"},
		{[]string{"--max-wait", "-5s"}, 2, "--max-wait=-5s: must be positive"}, // a hyphen-led value after a space is a value
		{[]string{"--rate-limit", "-1"}, 2, "--rate-limit=-1: must be 0 or more"},
		{[]string{"--max-calls-per-session", "-3"}, 2, "--max-calls-per-session=-3: must be at least 1"},
		{[]string{"--max-wait", "--rpc-timeout=1s"}, 2, "--max-wait: expected duration value"}, // a flag after it is still a flag
		{[]string{"--rate-limit=-1"}, 2, "--rate-limit=-1: must be 0 or more"},
		{[]string{"--history-sample=2"}, 2, "--history-sample=2: must be within 0..1"},
		{[]string{"--keepalive-time=10ms"}, 2, "--keepalive-time=10ms: must be at least 1s"},
		{[]string{"--max-header-size=10"}, 2, "--max-header-size=10: must be at least 1024"},
		{[]string{"--tools=", "--rpc-timeout=0s"}, 2, "--rpc-timeout=0s: must be positive"}, // the empty --tools passed
		{[]string{"--tools", t.TempDir()}, 2, "--tools: "},
	} {
		code, _, errOut := runCLI(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	code, _, errOut := runCLI(t, "serve", "--listen", busy.Addr().String())
	if code != 1 || !strings.Contains(errOut, "--listen: listen tcp "+busy.Addr().String()) {
		t.Errorf("--listen in use: exit %d, stderr %q", code, errOut)
	}
}
