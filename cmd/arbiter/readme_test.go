package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEReplayOutput: the replay output README.md shows under "Five minutes with
// it" is what the command above it prints, line for line (job ids, times, reasons and
// the note's text), so the walkthrough cannot drift from the engine.
func TestREADMEReplayOutput(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	const cmd = "arbiter replay --tools testdata/tools/booking.yaml testdata/traces/C_on_run2.jsonl\n```\n\n```\n"
	i := strings.Index(readme, cmd)
	if i < 0 {
		t.Fatalf("README.md has no replay of C_on_run2 followed by its output block")
	}
	shown := readme[i+len(cmd):]
	shown = shown[:strings.Index(shown, "```")]
	code, out, errOut := runCLI(t, "replay", "--tools", "../../testdata/tools/booking.yaml", "../../testdata/traces/C_on_run2.jsonl")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if shown != out {
		t.Errorf("README.md shows\n%s\nthe replay prints\n%s", shown, out)
	}
}
