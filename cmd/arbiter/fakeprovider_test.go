package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// cliTrace: a booking, then "Actually, stop." while its prepare is held by the
// user's speech; under booking.yaml the replay cancels the job at 600 ms, answers
// fc_1 cancelled and hands out one note.
const cliTrace = `{"t_ms": 0, "event": "session_start", "prepare_ms": 100}
{"t_ms": 100, "event": "speech_start"}
{"t_ms": 200, "event": "transcript", "text": "Book me the 3pm slot tomorrow."}
{"t_ms": 200, "event": "speech_end"}
{"t_ms": 250, "event": "tool_call", "call_id": "fc_1", "tool": "book_slot", "args": {"slot": "tomorrow 3pm"}, "behavior": "NON_BLOCKING"}
{"t_ms": 400, "event": "speech_start"}
{"t_ms": 600, "event": "transcript", "text": "Actually, stop."}
{"t_ms": 600, "event": "speech_end"}
{"t_ms": 900, "event": "end"}
`

// playGemini connects to a fake provider at addr as @google/genai does and, when
// the stop's transcript arrives, sends the reference's response for fc_1 answers
// times and the note.
func playGemini(t *testing.T, addr string, answers int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+addr+"//ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=k", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	write := func(s string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"setup": {"model": "models/gemini-3.8-live", "inputAudioTranscription": {}, "tools": [{"functionDeclarations": [{"name": "book_slot", "behavior": "NON_BLOCKING"}]}]}}`)
	for {
		_, b, err := c.Read(ctx)
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			if ce.Code != websocket.StatusNormalClosure {
				t.Fatalf("closed with %v", ce)
			}
			return
		} else if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ServerContent struct {
				InputTranscription struct{ Text string } `json:"inputTranscription"`
			} `json:"serverContent"`
		}
		_ = json.Unmarshal(b, &m)
		if m.ServerContent.InputTranscription.Text == "Actually, stop." {
			for i := 0; i < answers; i++ {
				write(`{"toolResponse": {"functionResponses": [{"id": "fc_1", "name": "book_slot", "response": {"status": "cancelled", "executed": false}}]}}`)
			}
			write(`{"clientContent": {"turns": [{"role": "user", "parts": [{"text": "System note: the booking for tomorrow 3pm was cancelled before it was committed. Nothing is scheduled."}]}], "turnComplete": true}}`)
		}
	}
}

// serveFakeProvider runs `arbiter fake-provider --exit-when-done args...` in this
// process, plays the session with play, and fails unless it exits 0.
func serveFakeProvider(t *testing.T, play func(addr string), args ...string) string {
	t.Helper()
	ready := make(chan string, 1)
	done := make(chan int, 1)
	stderr := &syncBuffer{}
	env := &runEnv{ctx: context.Background(), stdout: &syncBuffer{}, stderr: stderr, ready: ready}
	go func() { done <- env.run(append([]string{"fake-provider", "--exit-when-done"}, args...)) }()
	select {
	case addr := <-ready:
		play(addr)
	case code := <-done:
		t.Fatalf("fake-provider exited early with %d\n%s", code, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("fake-provider did not start")
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("fake-provider exited with %d\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("fake-provider did not exit when its trace was done")
	}
	return stderr.String()
}

// TestCLIFakeProvider: `arbiter fake-provider` prints its address in its serving line,
// plays the trace to a Gemini client, writes the record and exits when done; `check`
// passes that record (with --reference and with --tools alike) and prints the summary
// line; a record that answers a live id twice exits 1.
func TestCLIFakeProvider(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "cli.jsonl")
	os.WriteFile(trace, []byte(cliTrace), 0o644)
	code, ref, errOut := runCLI(t, "replay", "--tools", "../../testdata/tools/booking.yaml", trace)
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s", code, errOut)
	}
	refPath := filepath.Join(dir, "cli.ref.jsonl")
	os.WriteFile(refPath, []byte(ref), 0o644)
	backend := filepath.Join(dir, "backend.jsonl")
	os.WriteFile(backend, []byte(`{"out":"execute","job_id":"job-1","call_id":"fc_1"}`+"\n"+`{"out":"abort_prepare","job_id":"job-1"}`+"\n"), 0o644)

	good := filepath.Join(dir, "good.jsonl")
	log := serveFakeProvider(t, func(addr string) { playGemini(t, addr, 1) }, "--trace", trace, "--record", good)
	if !regexp.MustCompile(`msg="arbiter fake-provider serving" addr=127\.0\.0\.1:\d+ `).MatchString(log) {
		t.Errorf("no serving line with the address:\n%s", log)
	}
	want := "cli-test: sessions 1, responses 1, dead ids answered 0, notes 1, commits 0, max decision offset "
	var summaries []string
	for _, how := range [][]string{{"--reference", refPath}, {"--tools", "../../testdata/tools/booking.yaml"}} {
		args := append([]string{"fake-provider", "check", "--record", good, "--backend-log", backend, "--stack", "cli-test"}, how...)
		code, out, errOut := runCLI(t, append(args, trace)...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		last := lines[len(lines)-1]
		if code != 0 || !strings.HasPrefix(last, want) {
			t.Fatalf("check %v: exit %d, last line %q; want 0 and %q...\n%s%s", how, code, last, want, out, errOut)
		}
		summaries = append(summaries, last)
	}
	if summaries[0] != summaries[1] {
		t.Errorf("--reference and --tools disagree: %q vs %q", summaries[0], summaries[1])
	}

	bad := filepath.Join(dir, "bad.jsonl")
	serveFakeProvider(t, func(addr string) { playGemini(t, addr, 2) }, "--trace", trace, "--record", bad)
	code, out, _ := runCLI(t, "fake-provider", "check", "--record", bad, "--reference", refPath, "--stack", "cli-test", trace)
	if code != 1 || !strings.Contains(out, "MISMATCH: session 1 (cli, gemini): fc_1 answered 2 times") || !strings.Contains(out, "cli-test: sessions 1, responses 1,") {
		t.Errorf("a live id answered twice: exit %d\n%s", code, out)
	}
}

func TestCLIFakeProviderErrors(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	os.WriteFile(trace, []byte(cliTrace), 0o644)
	rec := filepath.Join(dir, "rec.jsonl")
	os.WriteFile(rec, nil, 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fake-provider"}, 2, "--trace"},
		{[]string{"fake-provider", "--trace", filepath.Join(dir, "none*.jsonl")}, 1, "no such trace file, directory or pattern"},
		{[]string{"fake-provider", "--trace", trace, "--tls-cert", trace}, 2, "--tls-cert and --tls-key go together"},
		{[]string{"fake-provider", "--trace", trace, "--tls-cert", trace, "--tls-key", trace}, 2, "--tls-key " + trace + ": tls: "},
		{[]string{"fake-provider", "--trace", trace, "--tls-cert", trace, "--tls-key", trace, "--tls-self-signed", "localhost"}, 2, "pick one"},
		{[]string{"fake-provider", "check", "--record", rec, trace}, 2, "--reference FILE or --tools FILE"},
		{[]string{"fake-provider", "check", "--record", rec, "--reference", rec, "--tools", rec, trace}, 2, "pick one"},
		{[]string{"fake-provider", "check", "--record", rec, "--reference", trace, trace}, 1, "not a replay output line"},
	}
	for _, tc := range cases {
		code, out, errOut := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut+out, tc.want) {
			t.Errorf("%v: exit %d, output %q; want exit %d mentioning %q", tc.args, code, errOut+out, tc.code, tc.want)
		}
	}
	// An empty record checks nothing: the trace never played is a mismatch.
	ref := filepath.Join(dir, "ref.jsonl")
	os.WriteFile(ref, []byte(`{"out":"summary","commits":0}`+"\n"), 0o644)
	code, out, _ := runCLI(t, "fake-provider", "check", "--record", rec, "--reference", ref, trace)
	if code != 1 || !strings.Contains(out, "MISMATCH: t: no session in the record played it") {
		t.Errorf("an empty record: exit %d\n%s", code, out)
	}
}
