package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/policyfile"
	"github.com/voicearbiter/arbiter/replay"
)

type expectation struct {
	Commits       int      `json:"commits"`
	DoubleCommits int      `json:"double_commits"`
	Unanswered    []string `json:"unanswered"`
}

// TestFixtures replays every recorded session in testdata/traces under the booking
// policy and checks what the fixtures' expect.json and ref_decision lines demand: no
// commit (the user said stop in every run), no double commit, every call id answered
// or skipped, each decision within 100 ms of the reference guard's, and one status
// note per cancelled job.
func TestFixtures(t *testing.T) {
	policy, err := policyfile.Load("../testdata/tools/booking.yaml")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../testdata/expect.json")
	if err != nil {
		t.Fatal(err)
	}
	var expect map[string]expectation
	if err := json.Unmarshal(raw, &expect); err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob("../testdata/traces/*.jsonl")
	if len(paths) < 12 {
		t.Fatalf("found %d traces, want the 12 recorded sessions", len(paths))
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		want, ok := expect[name]
		if !ok {
			continue // traces of our own are checked by their own tests
		}
		t.Run(name, func(t *testing.T) {
			events, err := replay.ReadTraceFile(path, os.Stderr)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			res, err := replay.RunLocal(context.Background(), policy, events, replay.Options{SessionID: "s-" + name}, &out)
			if err != nil {
				t.Fatalf("replay: %v\n%s", err, out.String())
			}
			s := res.Summary
			if s.Commits != want.Commits || s.DoubleCommits != want.DoubleCommits || len(s.Unanswered) != len(want.Unanswered) {
				t.Errorf("summary %+v, want commits %d double %d unanswered %v\n%s", s, want.Commits, want.DoubleCommits, want.Unanswered, out.String())
			}
			if s.Answered+s.Skipped != s.Calls {
				t.Errorf("answered %d + skipped %d != calls %d", s.Answered, s.Skipped, s.Calls)
			}
			refs := 0
			for _, ev := range events {
				if ev.Event == "ref_decision" {
					refs++
				}
			}
			matched := 0
			for _, d := range res.Decisions {
				if d.RefTMs < 0 {
					continue
				}
				matched++
				if d.Decision != d.RefDecision {
					t.Errorf("job %s: decision %s, reference %s", d.JobID, d.Decision, d.RefDecision)
				}
				if delta := d.TMs - d.RefTMs; delta > 100 || delta < -100 {
					t.Errorf("job %s: decided at %d ms, reference at %d ms (%+d ms, limit 100)", d.JobID, d.TMs, d.RefTMs, delta)
				}
			}
			if matched != refs {
				t.Errorf("%d ref_decision lines, %d matched a decision of ours", refs, matched)
			}
			// One status note per cancel; besides, a correction for each turn in which
			// the model claimed the booking was made (only the guard-off recordings,
			// where it really was made when recorded: here nothing is).
			status, corrections := 0, 0
			for _, l := range res.Lines {
				switch {
				case l.Out != "note":
				case strings.HasPrefix(l.Text, "System note: correction:"):
					corrections++
				default:
					status++
				}
			}
			if status != s.Cancels {
				t.Errorf("%d status notes for %d cancels, want one each", status, s.Cancels)
			}
			wantCorrections := 0
			if strings.Contains(name, "_off_") && name != "C_off_run3" {
				wantCorrections = 1 // "already made": false in the replay
			}
			if corrections != wantCorrections {
				t.Errorf("%d corrective notes, want %d", corrections, wantCorrections)
			}
		})
	}
}

func TestParseTraceErrors(t *testing.T) {
	cases := map[string]string{
		"not json":          "{\"t_ms\": 0, \"event\": \"session_start\"}\nnot json\n",
		"no t_ms":           "{\"t_ms\": 0, \"event\": \"session_start\"}\n{\"event\": \"speech_start\"}\n",
		"decreasing t_ms":   "{\"t_ms\": 5, \"event\": \"speech_start\"}\n{\"t_ms\": 4, \"event\": \"speech_end\"}\n",
		"no event":          "{\"t_ms\": 0, \"event\": \"session_start\"}\n{\"t_ms\": 1}\n",
		"tool_call no tool": "{\"t_ms\": 0, \"event\": \"session_start\"}\n{\"t_ms\": 1, \"event\": \"tool_call\", \"call_id\": \"a\"}\n",
		"connection no id":  "{\"t_ms\": 0, \"event\": \"session_start\"}\n{\"t_ms\": 1, \"event\": \"connection\"}\n",
		// issue 25: what follows end was replayed as nothing, silently, exit 0.
		"event after end":   "{\"t_ms\": 0, \"event\": \"end\"}\n{\"t_ms\": 1, \"event\": \"transcript\", \"text\": \"stop\"}\n",
		"unknown after end": "{\"t_ms\": 0, \"event\": \"end\"}\n{\"t_ms\": 1, \"event\": \"mystery\"}\n",
		"end twice":         "{\"t_ms\": 0, \"event\": \"end\"}\n{\"t_ms\": 1, \"event\": \"end\"}\n",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := replay.ParseTrace(strings.NewReader(in), "x.jsonl", &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), "x.jsonl:2:") {
				t.Fatalf("error %v, want one naming x.jsonl:2", err)
			}
		})
	}
}

// TestParseTraceRefAfterEnd: an exported trace's own outcomes (ref_ lines) may follow
// end; they are never played.
func TestParseTraceRefAfterEnd(t *testing.T) {
	in := "{\"t_ms\": 0, \"event\": \"end\"}\n{\"t_ms\": 1, \"event\": \"ref_note\", \"text\": \"x\"}\n"
	if evs, err := replay.ParseTrace(strings.NewReader(in), "x.jsonl", &bytes.Buffer{}); err != nil || len(evs) != 2 {
		t.Fatalf("ParseTrace = %d events, %v; want both lines", len(evs), err)
	}
}

func TestParseTraceSkipsUnknownWithWarning(t *testing.T) {
	var warn bytes.Buffer
	evs, err := replay.ParseTrace(strings.NewReader("{\"t_ms\": 0, \"event\": \"mystery\", \"x\": 1}\n{\"t_ms\": 1, \"event\": \"ref_decision\", \"call_id\": \"a\"}\n"), "x.jsonl", &warn)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Event != "ref_decision" {
		t.Fatalf("events %+v, want only the ref_decision line", evs)
	}
	if !strings.Contains(warn.String(), "x.jsonl:1: warning: unknown event \"mystery\"") {
		t.Fatalf("warning %q", warn.String())
	}
}

// TestBackendErrors: a session_start backend the replay cannot play is an error naming
// the field, never ignored.
func TestBackendErrors(t *testing.T) {
	policy, err := policyfile.Load("../testdata/workflows/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		`{"book_slot": {"commit": "maybe"}}`:                                                 "backend.book_slot.commit",
		`{"book_slot": {"commit": "ok", "resolves_to": "committed"}}`:                        "backend.book_slot: resolves_after_ms and resolves_to apply only",
		`{"book_slot": {"commit": "unknown", "resolves_to": "committed"}}`:                   "go together",
		`{"book_slot": {"commit": "unknown", "resolves_after_ms": 5, "resolves_to": "yes"}}`: "backend.book_slot.resolves_to",
		`{"get_weather": {"result_ms": "soon"}}`:                                             "backend.get_weather.result_ms",
		`{"get_weather": {"result_ms": -1}}`:                                                 "backend.get_weather.result_ms",
		`{"book_slot": {"prepare_ms": -1}}`:                                                  "backend.book_slot.prepare_ms",
	}
	for backend, want := range cases {
		in := `{"t_ms": 0, "event": "session_start", "backend": ` + backend + "}\n"
		events, err := replay.ParseTrace(strings.NewReader(in), "x.jsonl", &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = replay.RunLocal(context.Background(), policy, events, replay.Options{SessionID: "s"}, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("backend %s: error %v, want one mentioning %q", backend, err, want)
		}
	}
}
