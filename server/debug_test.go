package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// debugFixture is a Server whose sessions record, with acme's session "talk" (a
// booking the user stops: call c1, its job cancelled with a reason) and globex's
// session "theirs", and its debug pages served over HTTP with o.
func debugFixture(t *testing.T, o server.Options) (*httptest.Server, *server.Server) {
	t.Helper()
	policy := &arbiter.Policy{Tools: map[string]*arbiter.Tool{
		"book_slot": {Name: "book_slot", SideEffect: true, Key: []arbiter.KeyArg{{Arg: "slot", As: arbiter.KeyDatetime}}, Describe: "the booking for {slot}"},
	}}
	if err := policy.Validate(); err != nil {
		t.Fatal(err)
	}
	store := memory.New(nil)
	t.Cleanup(func() { store.Close() })
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: store, Clock: arbiter.SystemClock{}, HistorySample: 1}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := server.New(svc, quiet)
	acme := server.WithTenant(context.Background(), "acme")
	steps := []func() error{
		func() error {
			_, err := srv.RegisterCall(acme, &arbiterv1.RegisterCallRequest{SessionId: "talk", CallId: "c1", Tool: "book_slot",
				Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
			return err
		},
		func() error {
			_, err := srv.ReportSpeech(acme, &arbiterv1.ReportSpeechRequest{SessionId: "talk", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START})
			return err
		},
		func() error {
			_, err := srv.ReportTranscript(acme, &arbiterv1.ReportTranscriptRequest{SessionId: "talk", Text: "Stop, don't book it."})
			return err
		},
		func() error {
			_, err := srv.ReportSpeech(acme, &arbiterv1.ReportSpeechRequest{SessionId: "talk", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END})
			return err
		},
		func() error {
			_, err := srv.ReportSpeech(server.WithTenant(context.Background(), "globex"), &arbiterv1.ReportSpeechRequest{SessionId: "theirs",
				Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START})
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if o.Logger == nil {
		o.Logger = quiet
	}
	hs := httptest.NewServer(srv.DebugHandler(o))
	t.Cleanup(hs.Close)
	return hs, srv
}

func get(t *testing.T, url string, set func(*http.Request)) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if set != nil {
		set(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func withBearer(tok string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
}

// TestDebugPage: with tokens, /debug/sessions/{id} is 401 without a known token
// (with a Basic challenge, so a browser asks for it), 200 with the page of the
// token's tenant's session (its call, its decision and the reason, from its history)
// whether the token comes as a Bearer header or as a Basic password, and 404 for an
// unknown session and for another tenant's, exactly as for an unknown one; every
// answer carries the page's security headers.
func TestDebugPage(t *testing.T) {
	toks, err := server.NewTokens(map[string]string{"token-for-acme": "acme", "token-for-globex": "globex"})
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := debugFixture(t, server.Options{Tokens: toks})
	page := hs.URL + "/debug/sessions/talk"

	for name, set := range map[string]func(*http.Request){
		"no token":      nil,
		"unknown token": withBearer("token-for-nobody"),
		"bad basic":     func(r *http.Request) { r.Header.Set("Authorization", "Basic !!!") },
		"other scheme":  func(r *http.Request) { r.Header.Set("Authorization", "Digest x") },
	} {
		resp, body := get(t, page, set)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %s, want 401", name, resp.Status)
		}
		if ch := resp.Header.Values("WWW-Authenticate"); len(ch) == 0 || !strings.HasPrefix(ch[0], "Basic realm=") {
			t.Errorf("%s: challenges %q, want Basic first", name, ch)
		}
		if strings.Contains(body, "c1") || strings.Contains(body, "Stop") {
			t.Errorf("%s: the answer shows the session: %s", name, body)
		}
	}

	for name, set := range map[string]func(*http.Request){
		"bearer":         withBearer("token-for-acme"),
		"basic password": func(r *http.Request) { r.SetBasicAuth("anyone", "token-for-acme") },
		"basic user":     func(r *http.Request) { r.SetBasicAuth("token-for-acme", "") },
	} {
		resp, body := get(t, page, set)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s %s", name, resp.Status, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", name, ct)
		}
		for _, want := range []string{"Session talk", "tenant acme", `data-call="c1"`, `data-kind="decision"`, `data-decision="cancel"`,
			"stop intent in user speech: &#34;Stop, don&#39;t book it.&#34;", "U1", "history complete (recorded)", `data-timeline` /* the script */} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the page lacks %q", name, want)
			}
		}
	}

	for name, url := range map[string]string{
		"unknown session":        hs.URL + "/debug/sessions/nope",
		"another tenant's":       hs.URL + "/debug/sessions/theirs",
		"no session id":          hs.URL + "/debug/sessions/",
		"below the session page": hs.URL + "/debug/sessions/talk/more",
	} {
		resp, body := get(t, url, withBearer("token-for-acme"))
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %s, want 404", name, resp.Status)
		}
		if strings.Contains(body, "globex") {
			t.Errorf("%s: the answer names the other tenant: %s", name, body)
		}
	}
	if resp, body := get(t, hs.URL+"/debug/sessions/theirs", withBearer("token-for-globex")); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Session theirs") {
		t.Errorf("globex's own session: %s", resp.Status)
	}
	if resp, _ := get(t, hs.URL+"/debug/sessions/bad%20id", withBearer("token-for-acme")); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a malformed session id: %s, want 400", resp.Status)
	}

	resp, _ := get(t, page, nil)
	for k, want := range map[string]string{
		"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
}

// TestDebugPageWithoutTokens: a server without tokens (one tenant) shows its sessions
// to anyone who reaches the listener, as its RPCs do; an unknown one is 404.
func TestDebugPageWithoutTokens(t *testing.T) {
	policy := &arbiter.Policy{}
	if err := policy.Validate(); err != nil {
		t.Fatal(err)
	}
	store := memory.New(nil)
	defer store.Close()
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: store, Clock: arbiter.SystemClock{}}
	srv := server.New(svc, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := srv.ReportSpeech(context.Background(), &arbiterv1.ReportSpeechRequest{SessionId: "open", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.DebugHandler(server.Options{}))
	defer hs.Close()
	if resp, body := get(t, hs.URL+"/debug/sessions/open", nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, `data-utt="1"`) {
		t.Errorf("without tokens: %s\n%.500s", resp.Status, body)
	}
	if resp, _ := get(t, hs.URL+"/debug/sessions/nope", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session without tokens: %s, want 404", resp.Status)
	}
}

// TestDebugPageLimits: failed authentications count against the caller's address
// (past the budget: 429 with Retry-After, even for a right token's typo retried in a
// loop), and a known token is limited by the tenant's rate limit like an RPC.
func TestDebugPageLimits(t *testing.T) {
	toks, _ := server.NewTokens(map[string]string{"token-for-acme": "acme"})
	hs, _ := debugFixture(t, server.Options{Tokens: toks, UnauthRPS: 0.001, UnauthBurst: 2,
		Limiter: &server.TenantLimiter{RPS: 0.001, Burst: 2}})
	page := hs.URL + "/debug/sessions/talk"
	var codes []int
	for range 3 {
		resp, _ := get(t, page, withBearer("token-for-acne"))
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
	if codes[0] != 401 || codes[1] != 401 || codes[2] != 429 {
		t.Errorf("failed authentications: %v, want 401 401 429", codes)
	}
	codes = nil
	for range 3 {
		resp, _ := get(t, page, withBearer("token-for-acme"))
		codes = append(codes, resp.StatusCode)
	}
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 429 {
		t.Errorf("a known token past its tenant's rate: %v, want 200 200 429", codes)
	}
}
