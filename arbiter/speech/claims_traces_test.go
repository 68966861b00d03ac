package speech

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

var rewriteClaims = flag.Bool("rewrite-claims", false, "rewrite testdata/claims/traces.golden")

const (
	claimTracesDir    = "../../testdata/traces"
	claimTracesGolden = "../../testdata/claims/traces.golden"
)

// claimTraceLine is the part of a trace line (or of a replay's golden output line)
// the claim table needs.
type claimTraceLine struct {
	TMs   int    `json:"t_ms"`
	Event string `json:"event"`
	Text  string `json:"text"`
	Out   string `json:"out"`
}

func readClaimLines(t *testing.T, path string) []claimTraceLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []claimTraceLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var l claimTraceLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// claimTruth is the job's state at a time in the arbiter's replay of a trace: done
// once a commit is out, not_done once a cancel is out, pending before either.
type claimTruth struct{ commits, cancels []int }

func (c claimTruth) at(ms int) string {
	state, when := "pending", -1
	for _, t := range c.commits {
		if t <= ms && t > when {
			state, when = string(ClaimDone), t
		}
	}
	for _, t := range c.cancels {
		if t <= ms && t > when {
			state, when = string(ClaimNotDone), t
		}
	}
	return state
}

// claimTurnRow is one model turn of a trace, read.
type claimTurnRow struct {
	trace   string
	startMs int
	text    string
	joined  bool
	verdict ClaimKind
	truth   string
	outcome string
}

// claimOutcome compares a turn's verdict with the job's state: "no claim",
// "correct", or "would correct" (the arbiter would send a corrective note). While the
// job is pending, saying done is false and saying not done is (still) true.
func claimOutcome(verdict ClaimKind, truth string) string {
	switch {
	case verdict == ClaimNone:
		return "no claim"
	case string(verdict) == truth:
		return "correct"
	case truth == "pending" && verdict == ClaimNotDone:
		return "correct"
	}
	return "would correct"
}

// claimTraceTable reads every trace's model turns (TurnJoiner: a turn ends at
// turn_complete or interrupted; a cut turn joins the next if it starts within 1.5 s)
// and compares each turn's verdict with the replay's truth (the trace's .golden).
func claimTraceTable(t *testing.T) []claimTurnRow {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(claimTracesDir, "*.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no traces in %s: %v", claimTracesDir, err)
	}
	sort.Strings(paths)
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	var rows []claimTurnRow
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".jsonl")
		var truth claimTruth
		sawSummary := false
		for _, g := range readClaimLines(t, strings.TrimSuffix(p, ".jsonl")+".golden") {
			switch g.Out {
			case "commit":
				truth.commits = append(truth.commits, g.TMs)
			case "cancel":
				truth.cancels = append(truth.cancels, g.TMs)
			case "summary":
				sawSummary = true
			}
		}
		if !sawSummary {
			t.Fatalf("%s.golden: no summary line", name)
		}
		var j TurnJoiner
		var turns []ModelTurn
		last := 0
		for _, e := range readClaimLines(t, p) {
			last = e.TMs
			switch e.Event {
			case "model_transcript":
				turns = append(turns, j.Piece(ms(e.TMs), e.Text)...)
			case "interrupted":
				turns = append(turns, j.End(ms(e.TMs), true)...)
			case "turn_complete":
				turns = append(turns, j.End(ms(e.TMs), false)...)
			default:
				turns = append(turns, j.Expire(ms(e.TMs))...)
			}
		}
		turns = append(turns, j.Flush(ms(last))...)
		for _, turn := range turns {
			start := int(turn.Start.Sub(t0) / time.Millisecond)
			v := Verdict(ReadClaims(turn.Text))
			tr := truth.at(start)
			rows = append(rows, claimTurnRow{name, start, turn.Text, turn.Joined, v, tr, claimOutcome(v, tr)})
		}
	}
	return rows
}

func formatClaimTable(rows []claimTurnRow) string {
	var b strings.Builder
	b.WriteString("# Claim reader on the recorded model transcripts (go test ./arbiter/speech -run ClaimTraces -rewrite-claims).\n")
	b.WriteString("# One line per model turn: trace, t_ms of the turn start, the turn's text (joined with a\n")
	b.WriteString("# turn cut by interrupted when the next started within 1.5 s), verdict, the job's state in\n")
	b.WriteString("# the arbiter's replay at that time (testdata/traces/*.golden), outcome.\n")
	withClaim, wrong, right := 0, 0, 0
	for _, r := range rows {
		v := string(r.verdict)
		if v == "" {
			v = "none"
		}
		text := fmt.Sprintf("%q", r.text)
		if r.joined {
			text += " (joined)"
		}
		fmt.Fprintf(&b, "%s\t%d\t%s\t%s\t%s\t%s\n", r.trace, r.startMs, text, v, r.truth, r.outcome)
		if r.verdict != ClaimNone {
			withClaim++
		}
		switch r.outcome {
		case "would correct":
			wrong++
		case "correct":
			right++
		}
	}
	fmt.Fprintf(&b, "# summary: turns=%d with_claim=%d correct=%d contradictions=%d (the arbiter would correct each)\n", len(rows), withClaim, right, wrong)
	return b.String()
}

// TestClaimTraces is the measured table of issue 7: what the model claimed in each
// recorded session and whether the arbiter, which cancelled every job in the replay,
// would have corrected it. In the *_off_* traces the guard was off when they were
// recorded and the booking really happened, so "already made" was true then; in the
// replay nothing is booked, so it contradicts the arbiter's state.
func TestClaimTraces(t *testing.T) {
	rows := claimTraceTable(t)
	got := formatClaimTable(rows)
	t.Log("\n" + got)
	if *rewriteClaims {
		if err := os.MkdirAll(filepath.Dir(claimTracesGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(claimTracesGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(claimTracesGolden)
	if err != nil {
		t.Fatalf("%v (run with -rewrite-claims to create it)", err)
	}
	if got != string(want) {
		t.Errorf("table differs from %s (run with -rewrite-claims if intended):\n got:\n%s\nwant:\n%s", claimTracesGolden, got, want)
	}

	// Checks that do not depend on the golden file.
	byTrace := map[string][]claimTurnRow{}
	for _, r := range rows {
		byTrace[r.trace] = append(byTrace[r.trace], r)
		if r.truth != string(ClaimNotDone) {
			t.Errorf("%s at %d ms: truth %q, want not_done (the arbiter cancelled every job)", r.trace, r.startMs, r.truth)
		}
	}
	if len(byTrace) != 12 {
		t.Errorf("%d traces with model turns, want 12", len(byTrace))
	}
	c3 := byTrace["C_on_run3"]
	if len(c3) != 1 || !c3[0].joined || c3[0].text != "I have not booked that slot for you." || c3[0].verdict != ClaimNotDone {
		t.Errorf("C_on_run3: %+v, want one joined turn read as not_done", c3)
	}
	for name, rs := range byTrace {
		for _, r := range rs {
			wantWrong := r.verdict == ClaimDone
			if (r.outcome == "would correct") != wantWrong {
				t.Errorf("%s: verdict %q, outcome %q", name, r.verdict, r.outcome)
			}
			if strings.HasPrefix(name, "A_on") || strings.HasPrefix(name, "C_on") {
				if r.outcome != "correct" {
					t.Errorf("%s (guard on, note sent): %q read as %q", name, r.text, r.verdict)
				}
			}
		}
	}
}

// Without the join, C_on_run3's second half would be read alone as done: a false
// contradiction, and the arbiter would "correct" a statement that was right.
func TestClaimTracesUnjoined(t *testing.T) {
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	j := TurnJoiner{Window: time.Nanosecond}
	var turns []ModelTurn
	for _, e := range readClaimLines(t, filepath.Join(claimTracesDir, "C_on_run3.jsonl")) {
		at := t0.Add(time.Duration(e.TMs) * time.Millisecond)
		switch e.Event {
		case "model_transcript":
			turns = append(turns, j.Piece(at, e.Text)...)
		case "interrupted":
			turns = append(turns, j.End(at, true)...)
		case "turn_complete":
			turns = append(turns, j.End(at, false)...)
		}
	}
	turns = append(turns, j.Flush(t0)...)
	var got []ClaimKind
	for _, x := range turns {
		got = append(got, Verdict(ReadClaims(x.Text)))
	}
	if len(got) != 2 || got[0] != ClaimNone || got[1] != ClaimDone {
		t.Errorf("unjoined verdicts %q, want [none done]", got)
	}
}
