package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/voicearbiter/arbiter/fakeprovider"
)

// scrape returns the samples of /metrics at addr whose names start with prefix, as
// `name{labels}` -> value text.
func scrape(t *testing.T, addr, prefix string) map[string]string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	out := map[string]string{}
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, prefix) {
			i := strings.LastIndexByte(l, ' ')
			out[l[:i]] = l[i+1:]
		}
	}
	return out
}

// TestServeGuardMetrics: a real `arbiter serve --proxy-listen --metrics-listen`
// process guards a Gemini session through the fake provider: a BLOCKING call cut off
// by barge-in that the agent answers anyway (dropped: dead id), and one it answers
// twice (the second dropped). /metrics, scraped during the session and after it, has
// the guard's series with the values the session makes: one connection open, then
// none and one ended by the provider with 1000, each drop by its reason, and the
// frames written each way, exactly what the provider recorded and the agent read.
func TestServeGuardMetrics(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "bargein.jsonl")
	if err := os.WriteFile(tr, []byte(strings.Join([]string{
		`{"t_ms":0,"event":"session_start"}`,
		`{"t_ms":50,"event":"tool_call","call_id":"fc_w","tool":"get_weather","args":{"city":"Lyon"}}`,
		`{"t_ms":300,"event":"speech_start"}`,
		`{"t_ms":350,"event":"interrupted"}`,
		`{"t_ms":400,"event":"speech_end"}`,
		`{"t_ms":600,"event":"tool_call","call_id":"fc_t","tool":"get_time","args":{}}`,
		`{"t_ms":2000,"event":"end"}`,
	}, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	traces, err := fakeprovider.LoadTraces([]string{tr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	record := &syncBuffer{}
	fp, err := fakeprovider.New(fakeprovider.Options{Traces: traces, Record: record, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(fp)
	defer func() { up.Close(); fp.Close() }()

	bin := filepath.Join(builtArbiter(t), "arbiter")
	r := startReplica(t, bin, "--tools", "../../testdata/tools/booking.yaml", "--metrics-listen", "127.0.0.1:0",
		"--proxy-listen", "127.0.0.1:0", "--proxy-gemini-upstream", strings.Replace(up.URL, "http://", "ws://", 1))
	var metricsAddr, guard string
	for deadline := time.Now().Add(10 * time.Second); metricsAddr == "" || guard == ""; time.Sleep(20 * time.Millisecond) {
		if m := regexp.MustCompile(`msg="metrics serving" addr=(\S+)`).FindStringSubmatch(r.log.String()); m != nil {
			metricsAddr = m[1]
		}
		if m := proxyAddr.FindStringSubmatch(r.log.String()); m != nil {
			guard = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics or wire guard address in the log:\n%s", r.log.String())
		}
	}
	if got := scrape(t, metricsAddr, "arbiter_guard_connections{"); got[`arbiter_guard_connections{proto="gemini"}`] != "0" || got[`arbiter_guard_connections{proto="openai"}`] != "0" {
		t.Errorf("before any connection: %v; want both protocols at 0", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+guard+"/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=k", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"m","tools":[{"functionDeclarations":[{"name":"get_weather"},{"name":"get_time"}]}]}}`)); err != nil {
		t.Fatal(err)
	}
	answer := func(id, name string) {
		msg := fmt.Sprintf(`{"toolResponse":{"functionResponses":[{"id":%q,"name":%q,"response":{"output":"ok"}}]}}`, id, name)
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	read := 0
	var weather bool
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != websocket.StatusNormalClosure {
				t.Fatalf("the session ended with %v, want the provider's 1000", err)
			}
			break
		}
		read++
		var m struct {
			SetupComplete *struct{} `json:"setupComplete"`
			ToolCall      *struct {
				FunctionCalls []struct{ ID string } `json:"functionCalls"`
			} `json:"toolCall"`
			ServerContent *struct {
				Interrupted bool `json:"interrupted"`
			} `json:"serverContent"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("not JSON: %s", b)
		}
		switch {
		case m.SetupComplete != nil:
			if got := scrape(t, metricsAddr, "arbiter_guard_connections{"); got[`arbiter_guard_connections{proto="gemini"}`] != "1" {
				t.Errorf("during the session: %v; want one gemini connection open", got)
			}
		case m.ToolCall != nil && m.ToolCall.FunctionCalls[0].ID == "fc_w":
			weather = true // run, not answered before the barge-in
		case m.ToolCall != nil && m.ToolCall.FunctionCalls[0].ID == "fc_t":
			answer("fc_t", "get_time")
			answer("fc_t", "get_time") // a framework's retry: dropped
		case m.ServerContent != nil && m.ServerContent.Interrupted && weather:
			answer("fc_w", "get_weather") // cut off, answered anyway: dropped
		}
	}
	var upstream int
	for _, l := range strings.Split(strings.TrimSpace(record.String()), "\n") {
		var rl fakeprovider.RecordLine
		if json.Unmarshal([]byte(l), &rl) == nil && rl.Kind == fakeprovider.KindClient {
			upstream++
		}
	}
	want := map[string]string{
		`arbiter_guard_connections{proto="gemini"}`:                                                            "0",
		`arbiter_guard_connections_closed_total{code="1000",end="provider_closed",proto="gemini"}`:             "1",
		`arbiter_guard_actions_total{action="dropped_agent_answer",proto="gemini",reason="dead_id_abandoned"}`: "1",
		`arbiter_guard_actions_total{action="dropped_agent_answer",proto="gemini",reason="already_answered"}`:  "1",
		`arbiter_guard_frames_total{proto="gemini",to="agent"}`:                                                fmt.Sprint(read),
		`arbiter_guard_frames_total{proto="gemini",to="provider"}`:                                             fmt.Sprint(upstream),
	}
	var got map[string]string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		// The connection's end is counted once its last reports are applied.
		got = scrape(t, metricsAddr, "arbiter_guard_")
		if got[`arbiter_guard_connections_closed_total{code="1000",end="provider_closed",proto="gemini"}`] != "" || time.Now().After(deadline) {
			break
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %s", k, got[k], v)
		}
	}
	if upstream != 2 { // the setup and fc_t's one answer
		t.Errorf("the provider got %d messages, want 2 (setup, fc_t's answer):\n%s", upstream, record.String())
	}
	for k := range got {
		if strings.HasPrefix(k, "arbiter_guard_reports_lost_total") || strings.HasPrefix(k, "arbiter_guard_dial_failures_total") ||
			(strings.HasPrefix(k, "arbiter_guard_actions_total") && want[k] == "") {
			t.Errorf("unexpected series %s = %s", k, got[k])
		}
	}
	if b, ok := got[`arbiter_guard_bytes_total{proto="gemini",to="agent"}`]; !ok || b == "0" {
		t.Errorf("bytes to the agent: %q", b)
	}
	if t.Failed() {
		t.Logf("guard series:\n%v", got)
	}
}
