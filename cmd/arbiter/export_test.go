package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/replay"
)

// outcomesOfOutput reads a replay's output lines (stdout) back into its outcomes.
func outcomesOfOutput(t *testing.T, out string) *replay.Outcomes {
	t.Helper()
	res := &replay.Result{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var l replay.Line
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		if l.Out != "summary" {
			res.Lines = append(res.Lines, l)
		}
	}
	return replay.OutcomesOf(res)
}

// TestExportLiveSession is issue 14's check: a real `arbiter serve` (recording every
// session) is driven in real time by `arbiter replay --target` playing a recorded
// trace; `arbiter export` then reads the session back through the API (GetHistory),
// and the exported trace, replayed locally, gives the same dispositions, decisions,
// responses, skips and notes as the live run (times are each replay's own and are not
// compared). `replay --diff` under the same policy finds no difference and says the
// replay reproduces the recorded session; under a policy without "stop" it finds the
// booking cancelled as an amendment ("Actually, ...") instead of a stop.
func TestExportLiveSession(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a 15 s session in real time")
	}
	const tools = "../../testdata/tools/booking.yaml"
	p := startServe(t, "--tools", tools, "--history-sample", "1")
	const session = "live-C_on_run2"
	code, live, errOut := runCLI(t, "replay", "--tools", tools, "--target", p.addr, "--session", session, "../../testdata/traces/C_on_run2.jsonl")
	if code != 0 {
		t.Fatalf("replay --target: exit %d\n%s", code, errOut)
	}
	code, trace, errOut := runCLI(t, "export", "--target", p.addr, session)
	if code != 0 || errOut != "" {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	path := filepath.Join(t.TempDir(), "exported.jsonl")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	code, local, errOut := runCLI(t, "replay", "--tools", tools, path)
	if code != 0 {
		t.Fatalf("replaying the export: exit %d\n%s", code, errOut)
	}
	liveOut, localOut := outcomesOfOutput(t, live), outcomesOfOutput(t, local)
	if d := replay.Diff(liveOut, localOut); len(d) > 0 {
		t.Errorf("the exported session replays otherwise (%s):\nlive:\n%s\nexported, replayed:\n%s\ntrace:\n%s", replay.Count(d), live, local, trace)
	}
	if len(liveOut.Decisions) != 1 {
		t.Errorf("the live run made %d decisions, want the one cancel:\n%s", len(liveOut.Decisions), live)
	}

	code, diff, errOut := runCLI(t, "replay", "--tools", tools, "--diff", path)
	if code != 0 || diff != "" || !strings.Contains(errOut, "reproduces the recorded session") || !strings.Contains(errOut, "no difference") {
		t.Errorf("--diff under the same policy: exit %d\n%s\n%s", code, diff, errOut)
	}
	noStop := filepath.Join(t.TempDir(), "nostop.yaml")
	policy, err := os.ReadFile(tools)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noStop, append(policy, []byte("\nstop_phrases: [halt]\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, diff, errOut = runCLI(t, "replay", "--tools", noStop, "--diff", path)
	if code != 1 || !strings.Contains(diff, `"diff":"decision","about":"fc_1792165045038015411"`) || !strings.Contains(diff, `amended by the user`) {
		t.Errorf("--diff under a policy without stop: exit %d\n%s\n%s", code, diff, errOut)
	}
}
