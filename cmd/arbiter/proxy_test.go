package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/voicearbiter/arbiter/fakeprovider"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// TestServeProxyFlagsValidated: the wire guard's flags are checked before anything
// starts; a bad one is a usage error (exit 2).
func TestServeProxyFlagsValidated(t *testing.T) {
	for _, args := range [][]string{
		{"--proxy-listen", "127.0.0.1:0", "--proxy-gemini-upstream", "https://x"},
		{"--proxy-listen", "127.0.0.1:0", "--proxy-openai-upstream", "wss://x?key=1"},
		{"--proxy-listen", "127.0.0.1:0", "--proxy-gemini-upstream", "", "--proxy-openai-upstream", ""},
		{"--proxy-listen", "127.0.0.1:0", "--proxy-answer-wait", "0s"},
	} {
		var stdout, stderr syncBuffer
		if code := run(t.Context(), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, stderr.String())
		}
	}
}

// TestServeProxyUpstreamChecked: an upstream URL the dial would refuse, or one whose
// port the NetworkPolicy of the chart could not carry, stops serve at the start (exit
// 2, the flag and why named, a password never printed); they started, and every agent
// got 502 ("malformed ws or wss URL" for user info, "invalid port"), a fragment was
// dropped silently.
func TestServeProxyUpstreamChecked(t *testing.T) {
	for _, c := range []struct{ v, why string }{
		{"ws://u:s3cret@127.0.0.1:9101", "user info"},
		{"ws://127.0.0.1:99999", "port 99999 is not 1-65535"},
		{"ws://127.0.0.1:0", "port 0 is not 1-65535"},
		{"ws://127.0.0.1:9101/x#frag", "fragment"},
		{"ws://127.0.0.1:9101/x?", "query"},
		{"ws://:9101", "a ws:// or wss:// base URL with a host"},
	} {
		code, out, started := serveRefused(t, "--proxy-listen", "127.0.0.1:0", "--proxy-gemini-upstream", c.v)
		if started || code != 2 || !strings.Contains(out, "--proxy-gemini-upstream") || !strings.Contains(out, c.why) || strings.Contains(out, "s3cret") {
			t.Errorf("--proxy-gemini-upstream %s: started %v, exit %d, stderr %q; want 2 naming the flag and %q, no password", c.v, started, code, out, c.why)
		}
	}
	// What the dial takes still starts: a path prefix, an IPv6 host, a port.
	for _, v := range []string{"wss://example.test/prefix/v1", "ws://[::1]:9101", "ws://127.0.0.1:65535"} {
		if code, errOut, started := serveRefused(t, "--proxy-listen", "127.0.0.1:0", "--proxy-gemini-upstream", v); !started {
			t.Errorf("--proxy-gemini-upstream %s refused: exit %d, %s", v, code, errOut)
		}
	}
}

// TestServeProxyDurationFlagsBothForms: a guard duration out of its range gets the
// same usage error naming the flag whether its value follows a space or "=" (before,
// "--proxy-answer-wait -1s" got kong's "expected duration value but got \"-1s\" (short
// flag)": a hyphen-led value read as a flag), with the guard on or off.
func TestServeProxyDurationFlagsBothForms(t *testing.T) {
	for _, flag := range []string{"--proxy-answer-wait", "--proxy-register-wait", "--proxy-write-timeout", "--proxy-dial-timeout"} {
		for _, v := range []string{"-1s", "0s"} {
			want := flag + "=" + v + ": must be positive"
			for _, listen := range [][]string{{"--proxy-listen", "127.0.0.1:0"}, nil} {
				for _, form := range [][]string{{flag, v}, {flag + "=" + v}} {
					args := append(append([]string{}, listen...), form...)
					code, errOut, started := serveRefused(t, args...)
					if started || code != 2 || !strings.Contains(errOut, want) {
						t.Errorf("%v: started %v, exit %d, stderr %q; want exit 2 and %q, nothing started", args, started, code, errOut, want)
					}
				}
			}
		}
	}
}

// serveRefused runs serve (on --listen 127.0.0.1:0) with args and returns its exit
// code and stderr; started is set when it started instead of refusing (its gRPC
// listener was ready: it is stopped then, and its exit code is the drain's).
func serveRefused(t *testing.T, args ...string) (code int, stderr string, started bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ready := make(chan string, 1)
	var stdout, errOut syncBuffer
	env := &runEnv{ctx: ctx, stdout: &stdout, stderr: &errOut, ready: ready}
	done := make(chan int, 1)
	go func() { done <- env.run(append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)) }()
	select {
	case code = <-done:
	case <-ready:
		started = true
		cancel()
		code = <-done
	}
	return code, errOut.String(), started
}

// TestServeProxyCertErrorsAreUsageErrors: a guard certificate file that cannot be used
// (--proxy-ca-file with no PEM certificate, --proxy-tls-cert or --proxy-tls-key
// holding something else, a key that is not the certificate's, a file missing) is a
// usage error, exit 2, naming its flag, before anything listens; before, all but a
// missing file exited 1 after the gRPC listener had started. A good set starts.
func TestServeProxyCertErrorsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeKeyPair(t, dir, "a")
	otherCert, otherKey := writeKeyPair(t, dir, "b")
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	guard := []string{"--proxy-listen", "127.0.0.1:0"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--proxy-ca-file", junk}, []string{"--proxy-ca-file " + junk + ": holds no PEM certificate"}},
		{[]string{"--proxy-ca-file", otherKey}, []string{"--proxy-ca-file"}}, // a key is no CA
		{[]string{"--proxy-ca-file", filepath.Join(dir, "missing.pem")}, []string{"--proxy-ca-file"}},
		{[]string{"--proxy-tls-cert", junk, "--proxy-tls-key", key}, []string{"--proxy-tls-cert " + junk + ": holds no PEM certificate"}},
		{[]string{"--proxy-tls-cert", key, "--proxy-tls-key", key}, []string{"--proxy-tls-cert"}}, // a key where the certificate goes
		{[]string{"--proxy-tls-cert", cert, "--proxy-tls-key", junk}, []string{"--proxy-tls-key " + junk + ": holds no PEM private key"}},
		{[]string{"--proxy-tls-cert", cert, "--proxy-tls-key", cert}, []string{"--proxy-tls-key"}},
		{[]string{"--proxy-tls-cert", cert, "--proxy-tls-key", otherKey}, []string{"--proxy-tls-cert", "--proxy-tls-key", "does not match"}},
		{[]string{"--proxy-tls-cert", cert, "--proxy-tls-key", filepath.Join(dir, "missing.key")}, []string{"--proxy-tls-key"}},
	} {
		code, errOut, started := serveRefused(t, append(guard, tc.args...)...)
		ok := !started && code == 2
		for _, w := range tc.want {
			ok = ok && strings.Contains(errOut, w)
		}
		if !ok {
			t.Errorf("%v: started %v, exit %d, stderr %q; want exit 2 naming %q, nothing started", tc.args, started, code, errOut, tc.want)
		}
		if strings.Contains(errOut, "PRIVATE KEY") {
			t.Errorf("%v: the error shows the file's content:\n%s", tc.args, errOut)
		}
	}
	if code, errOut, started := serveRefused(t, append(guard, "--proxy-ca-file", otherCert, "--proxy-tls-cert", cert, "--proxy-tls-key", key)...); !started || code != 0 {
		t.Errorf("a good CA, certificate and key: started %v, exit %d\n%s", started, code, errOut)
	}
}

// writeKeyPair writes a self-signed certificate for 127.0.0.1 and its key (PEM) to
// dir/name.pem and dir/name.key.
func writeKeyPair(t *testing.T, dir, name string) (certPath, keyPath string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

// TestServeProxyUpstreamSecretsNotLogged: a password or a key in an upstream URL is
// never printed in the usage error that refuses it (before, it echoed the URL whole;
// --redis-url was already masked). Neither can reach the "wire guard serving" line:
// both are refused (TestServeProxyUpstreamChecked).
func TestServeProxyUpstreamSecretsNotLogged(t *testing.T) {
	var stdout, stderr syncBuffer
	if code := run(t.Context(), []string{"serve", "--listen", "127.0.0.1:0", "--proxy-listen", "127.0.0.1:0",
		"--proxy-openai-upstream", "wss://user:hunter2pw@127.0.0.1:1/p?key=sk-secret"}, &stdout, &stderr); code != 2 {
		t.Errorf("an upstream with a query: exit %d, want 2\n%s", code, stderr.String())
	}
	if out := stderr.String(); strings.Contains(out, "hunter2pw") || strings.Contains(out, "sk-secret") || !strings.Contains(out, "--proxy-openai-upstream") {
		t.Errorf("the usage error shows a secret, or does not name the flag:\n%s", out)
	}
}

// TestServeProxyFlagsWithoutListenWarned: the guard's flags given while the guard is
// off (no --proxy-listen) are named in a warning, and serve runs (they may be set for
// every replica where only some serve the guard).
func TestServeProxyFlagsWithoutListenWarned(t *testing.T) {
	p := startServe(t, "--proxy-vertex-upstream", "wss://x.example", "--proxy-record")
	if out := p.stderr.String(); !strings.Contains(out, "wire guard flags without --proxy-listen") || !strings.Contains(out, "--proxy-vertex-upstream --proxy-record") {
		t.Errorf("no warning naming the flags:\n%s", out)
	}
}

var proxyAddr = regexp.MustCompile(`wire guard serving.* proxy_addr=([^ ]+)`)

// guardAddr waits for serve's "wire guard serving" line.
func guardAddr(t *testing.T, p *inProcess) string {
	t.Helper()
	for i := 0; i < 100; i++ {
		if m := proxyAddr.FindStringSubmatch(p.stderr.String()); m != nil {
			return m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no wire guard address in the log:\n%s", p.stderr.String())
	return ""
}

// TestProxyRestartIsAReconnect: serve's wire guard in front of the fake provider; a
// Gemini agent asks for session resumption and gets a handle that names its arbiter
// session. serve stops (SIGTERM's path): the agent gets goAway and a close, as from a
// provider going away. It reconnects with its handle to the next serve (the same
// state file): the guard goes on with the same session, whose call from the first
// connection is dead on the new one (connection_closed), never answered there.
func TestProxyRestartIsAReconnect(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "resume.jsonl")
	if err := os.WriteFile(tr, []byte(strings.Join([]string{
		`{"t_ms":0,"event":"session_start"}`,
		`{"t_ms":50,"event":"tool_call","call_id":"fc_1","tool":"book_slot","args":{"slot":"tomorrow 3pm"},"behavior":"NON_BLOCKING"}`,
		`{"t_ms":60000,"event":"end"}`,
	}, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	traces, err := fakeprovider.LoadTraces([]string{tr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := fakeprovider.New(fakeprovider.Options{Traces: traces, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(fp)
	defer func() { up.Close(); fp.Close() }()
	upstream := strings.Replace(up.URL, "http://", "ws://", 1)
	state := filepath.Join(dir, "state.db")
	args := []string{"--tools", "../../testdata/tools/booking.yaml", "--state-file", state, "--proxy-listen", "127.0.0.1:0", "--proxy-gemini-upstream", upstream}
	path := "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=k"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	first := startServe(t, args...)
	if resp, err := http.Get("http://" + guardAddr(t, first) + "/not/a/provider"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("a path that is no provider's: %v %v", resp, err)
	}
	ws, _, err := websocket.Dial(ctx, "ws://"+guardAddr(t, first)+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	setup := func(handle string) []byte {
		r := map[string]any{}
		if handle != "" {
			r["handle"] = handle
		}
		b, _ := json.Marshal(map[string]any{"setup": map[string]any{"model": "m", "sessionResumption": r,
			"tools": []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "book_slot", "behavior": "NON_BLOCKING"}}}}}})
		return b
	}
	if err := ws.Write(ctx, websocket.MessageText, setup("")); err != nil {
		t.Fatal(err)
	}
	var handle string
	var sawCall, sawGoAway bool
	for !sawCall || handle == "" {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("before the call: %v", err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		if u, ok := m["sessionResumptionUpdate"].(map[string]any); ok {
			handle, _ = u["newHandle"].(string)
		}
		if _, ok := m["toolCall"]; ok {
			sawCall = true
		}
	}
	if !strings.HasPrefix(handle, "arb~") || !strings.HasSuffix(handle, "~fake-session-1") {
		t.Fatalf("the handle %q does not carry the session", handle)
	}
	session := strings.Split(handle, "~")[1]
	closed := make(chan error, 1)
	go func() { // the agent reads on while serve stops: the close handshake needs it
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				closed <- err
				return
			}
			if strings.Contains(string(b), "goAway") {
				sawGoAway = true
			}
		}
	}()
	first.drain(t, 15*time.Second)
	if err := <-closed; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("closed with %v, want 1001 (going away)", err)
	}
	if !sawGoAway {
		t.Error("no goAway before the close")
	}
	// The drain's time counts from "draining", the guard's close handshakes with it:
	// its line said took=0s while the guard's part had taken seconds.
	m := regexp.MustCompile(`msg=drained took=(\S+) wire_guard=(\S+)`).FindStringSubmatch(drainedLine(first.stderr.String()))
	if m == nil {
		t.Fatalf("the drained line does not give the wire guard's part: %s", drainedLine(first.stderr.String()))
	}
	if took, err1 := time.ParseDuration(m[1]); err1 != nil {
		t.Errorf("drained took=%s: %v", m[1], err1)
	} else if g, err2 := time.ParseDuration(m[2]); err2 != nil || took < g {
		t.Errorf("drained took=%s, less than the wire guard's part %s (%v)", m[1], m[2], err2)
	}

	second := startServe(t, args...)
	ws2, _, err := websocket.Dial(ctx, "ws://"+guardAddr(t, second)+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws2.CloseNow()
	if err := ws2.Write(ctx, websocket.MessageText, setup(handle)); err != nil {
		t.Fatal(err)
	}
	if _, b, err := ws2.Read(ctx); err != nil || !strings.Contains(string(b), "setupComplete") {
		t.Fatalf("resumed connection: %s %v", b, err)
	}
	c := arbiterv1.NewArbiterServiceClient(second.conn)
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: session})
		if err == nil && s.GetConnectionId() != "" && len(s.GetJobs()) == 1 && len(s.GetPendingCalls()) == 0 {
			break // the call of the first connection is dead here; its job goes on
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resumed session: %v %v", s, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h, err := c.GetHistory(ctx, &arbiterv1.GetHistoryRequest{SessionId: session})
	if err != nil {
		t.Fatal(err)
	}
	var connects int
	var skip string
	for _, e := range h.GetEntries() {
		if e.GetConnect() != nil {
			connects++
		}
		if sk := e.GetSkip(); sk != nil && sk.GetCallId() == "fc_1" {
			skip = sk.GetReason()
		}
	}
	if connects != 2 || skip != "connection_closed" {
		t.Errorf("history: %d connects, fc_1 skipped %q; want 2 and connection_closed", connects, skip)
	}
	go func() { // the agent keeps reading
		for {
			if _, _, err := ws2.Read(ctx); err != nil {
				return
			}
		}
	}()
	second.drain(t, 15*time.Second)
}

// TestProxiedSessionExportsAndReplays: a session through the guard with
// --proxy-record, its tool using the helper's RPCs by call id: GetHistory has it
// whole, `arbiter export` writes it as a trace, `arbiter replay` plays it, the
// decisions as they were.
func TestProxiedSessionExportsAndReplays(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "rec.jsonl")
	if err := os.WriteFile(tr, []byte(strings.Join([]string{
		`{"t_ms":0,"event":"session_start"}`,
		`{"t_ms":100,"event":"speech_start"}`,
		`{"t_ms":400,"event":"transcript","text":"Book tomorrow 3pm, and what's the weather?"}`,
		`{"t_ms":400,"event":"speech_end"}`,
		`{"t_ms":500,"event":"tool_call","call_id":"fc_b","tool":"book_slot","args":{"slot":"tomorrow 3pm"},"behavior":"NON_BLOCKING"}`,
		`{"t_ms":550,"event":"tool_call","call_id":"fc_w","tool":"get_weather","args":{"city":"Lyon"},"behavior":"NON_BLOCKING"}`,
		`{"t_ms":4000,"event":"end"}`,
	}, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	traces, err := fakeprovider.LoadTraces([]string{tr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := fakeprovider.New(fakeprovider.Options{Traces: traces, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(fp)
	defer func() { up.Close(); fp.Close() }()
	p := startServe(t, "--tools", "../../testdata/tools/booking.yaml", "--proxy-listen", "127.0.0.1:0", "--proxy-record",
		"--proxy-gemini-upstream", strings.Replace(up.URL, "http://", "ws://", 1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The agent names its session (arbiter_session), to find it again.
	ws, _, err := websocket.Dial(ctx, "ws://"+guardAddr(t, p)+"/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?arbiter_session=rec-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	_ = ws.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"m","inputAudioTranscription":{},"tools":[{"functionDeclarations":[{"name":"book_slot","behavior":"NON_BLOCKING"},{"name":"get_weather","behavior":"NON_BLOCKING"}]}]}}`))
	c := arbiterv1.NewArbiterServiceClient(p.conn)
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			break // the trace's end
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		tc, _ := m["toolCall"].(map[string]any)
		fcs, _ := tc["functionCalls"].([]any)
		for _, x := range fcs {
			fc := x.(map[string]any)
			id, name := fc["id"].(string), fc["name"].(string)
			go func() {
				answer := `{"temp_c":19}`
				if name == "book_slot" { // the helper's RPCs, by call id alone
					if _, err := c.Decide(ctx, &arbiterv1.DecideRequest{CallId: id, Prepared: true}); err != nil {
						t.Errorf("Decide: %v", err)
					}
					d, err := c.Decide(ctx, &arbiterv1.DecideRequest{CallId: id, Prepared: true, Wait: durationpb.New(5 * time.Second)})
					if err != nil || d.GetDecision() != arbiterv1.Decision_DECISION_COMMIT {
						t.Errorf("Decide: %v %v", d, err)
						return
					}
					res, _ := structpb.NewStruct(map[string]any{"reference": "R-1"})
					if _, err := c.Complete(ctx, &arbiterv1.CompleteRequest{CallId: id, Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED, Result: res}); err != nil {
						t.Errorf("Complete: %v", err)
					}
					answer = `{"output":"done"}`
				}
				_ = ws.Write(ctx, websocket.MessageText, []byte(`{"toolResponse":{"functionResponses":[{"id":"`+id+`","name":"`+name+`","response":`+answer+`}]}}`))
			}()
		}
	}
	h, err := c.GetHistory(ctx, &arbiterv1.GetHistoryRequest{SessionId: "rec-1"})
	if err != nil || !h.GetRecord() || !h.GetComplete() {
		t.Fatalf("history: record %v complete %v, %v", h.GetRecord(), h.GetComplete(), err)
	}
	code, out, errOut := runCLI(t, "export", "--target", p.addr, "rec-1")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	exported := filepath.Join(dir, "exported.jsonl")
	if err := os.WriteFile(exported, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, replayed, errOut := runCLI(t, "replay", "--tools", "../../testdata/tools/booking.yaml", exported)
	if code != 0 {
		t.Fatalf("replay of the exported session: exit %d\n%s\n%s\ntrace:\n%s", code, replayed, errOut, out)
	}
	if !strings.Contains(replayed, `"decision":"commit"`) || !strings.Contains(replayed, `"call_id":"fc_w"`) {
		t.Errorf("the replay does not decide as the session did:\n%s", replayed)
	}
}

// TestServeTLSFlagErrorsAreUsageErrors: the gRPC listener's TLS flags as the guard's:
// flags that do not go together, or a file that is not what its flag needs, are a
// usage error (exit 2) naming the flag, before anything listens; before, all exited 1
// (the combinations too, which configuration.md gives exit 2), a bad file named by
// server.TLSConfig's "tls: load A and B" alone. A good set starts.
func TestServeTLSFlagErrorsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeKeyPair(t, dir, "a")
	_, otherKey := writeKeyPair(t, dir, "b")
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--tls-cert", cert}, []string{"--tls-cert and --tls-key go together"}},
		{[]string{"--tls-client-ca", cert}, []string{"--tls-client-ca needs --tls-cert and --tls-key"}},
		{[]string{"--tls-cert", junk, "--tls-key", key}, []string{"--tls-cert " + junk + ": holds no PEM certificate"}},
		{[]string{"--tls-cert", cert, "--tls-key", cert}, []string{"--tls-key " + cert + ": holds no PEM private key"}},
		{[]string{"--tls-cert", cert, "--tls-key", otherKey}, []string{"--tls-cert", "--tls-key", "does not match"}},
		{[]string{"--tls-cert", cert, "--tls-key", key, "--tls-client-ca", key}, []string{"--tls-client-ca " + key + ": holds no PEM certificate"}},
	} {
		code, errOut, started := serveRefused(t, tc.args...)
		ok := !started && code == 2
		for _, w := range tc.want {
			ok = ok && strings.Contains(errOut, w)
		}
		if !ok {
			t.Errorf("%v: started %v, exit %d, stderr %q; want exit 2 naming %q, nothing started", tc.args, started, code, errOut, tc.want)
		}
	}
	if code, errOut, started := serveRefused(t, "--tls-cert", cert, "--tls-key", key, "--tls-client-ca", cert); !started || code != 0 {
		t.Errorf("a good certificate, key and client CA: started %v, exit %d\n%s", started, code, errOut)
	}
}

// TestServeProxyDialTimeout: --proxy-dial-timeout bounds the guard's wait for a model
// server that takes the TCP connection and never answers the upgrade: the agent's
// handshake gets 502 then (the fixed 15 s bound outlasted the agent's own 10 s here).
func TestServeProxyDialTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	p := startServe(t, "--proxy-listen", "127.0.0.1:0", "--proxy-gemini-upstream", "ws://"+l.Addr().String(), "--proxy-dial-timeout", "300ms")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, "ws://"+guardAddr(t, p)+"/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=k", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusBadGateway {
		t.Errorf("the handshake: %v %v; want 502 once the dial timeout passed", resp, err)
	}
	if !strings.Contains(p.stderr.String(), "class=timeout") {
		t.Errorf("no dial timeout logged:\n%s", p.stderr.String())
	}
}
