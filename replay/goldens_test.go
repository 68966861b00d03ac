package replay_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/policyfile"
	"github.com/voicearbiter/arbiter/replay"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/*/NAME.golden instead of comparing with them")

// TestGoldens replays every trace in testdata/scenarios, testdata/traces and
// testdata/workflows end to end, through the gRPC API of an in-process server on the
// memory store, and compares the output byte for byte with testdata/*/NAME.golden
// (`go test ./replay -run TestGoldens -rewrite` updates them: read the diff). The
// engine's own goldens for the same sessions are arbiter/testdata.
func TestGoldens(t *testing.T) {
	for _, dir := range []string{"scenarios", "traces", "workflows"} {
		paths, err := filepath.Glob(filepath.Join("..", "testdata", dir, "*.jsonl"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no traces in testdata/%s: %v", dir, err)
		}
		for _, path := range paths {
			name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
			t.Run(dir+"/"+name, func(t *testing.T) {
				got := replayGolden(t, dir, path)
				golden := strings.TrimSuffix(path, ".jsonl") + ".golden"
				if *rewrite {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -rewrite to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("output differs from %s\n--- got\n%s--- want\n%s", golden, got, want)
				}
			})
		}
	}
}

// replayGolden replays the trace at path, of testdata/dir, under its policy: the one
// its session_start names (relative to the trace), else its folder's.
func replayGolden(t *testing.T, dir, path string) []byte {
	t.Helper()
	events, err := replay.ReadTraceFile(path, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	policyPath := map[string]string{
		"scenarios": "../testdata/scenarios/policy.yaml",
		"traces":    "../testdata/tools/booking.yaml",
		"workflows": "../testdata/workflows/tools.yaml",
	}[dir]
	if len(events) > 0 && events[0].Policy != "" {
		policyPath = filepath.Join(filepath.Dir(path), events[0].Policy)
	}
	policy, err := policyfile.Load(policyPath)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sid := "golden-" + strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if _, err := replay.RunLocal(context.Background(), policy, events, replay.Options{SessionID: sid}, &out); err != nil {
		t.Fatalf("replay: %v\n%s", err, out.String())
	}
	return out.Bytes()
}
