package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is the raw results of one trial run of bench/run.sh (BENCH_DURATION=3s
// BENCH_WARMUP=1s), trimmed as testdata/run/README.md says.
const fixture = "testdata/run"

// copyFixture copies the fixture into a temporary directory a test may change.
func copyFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(fixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(fixture, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGoalsFromTrialRun checks issue 16's rows, in order, with the values and verdicts
// of the trial run the fixture holds.
func TestGoalsFromTrialRun(t *testing.T) {
	gs, err := goals(fixture)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		scenario, measured, goal string
		met                      bool
	}{
		{"RegisterCall, embedded, ghz: throughput", "0.57 × (6040 / 10649 req/s)", "≥ 0.90 ×", false},
		{"RegisterCall, embedded, ghz: p99", "1.44 × (19.24 / 13.37 ms)", "≤ 1.2 ×", false},
		{"RegisterCall, embedded, bench/load client: throughput", "0.69 × (12589 / 18251 req/s)", "≥ 0.80 ×", false},
		{"RegisterCall, embedded, bench/load client: p99", "1.41 × (13.13 / 9.34 ms)", "≤ 1.5 ×", true},
		{"whole lifecycle, embedded", "0.40 × (1376 lifecycles/s / 3417 echo iterations/s)", "≥ 0.80 ×", false},
		{"RegisterCall, Redis, ghz", "0.34 × (3595 / 10649 req/s), p99 2.81 ×", "≥ 0.70 ×", false},
		{"whole lifecycle, Redis", "0.22 × (739 lifecycles/s / 3417 echo iterations/s)", "≥ 0.50 ×", false},
		{"cross-replica Decide wake, 50 sessions in flight, after the deciding RPC answered", "p99 21.66 ms (p50 1.76, max 60.83; 1704 hand-offs)", "p99 ≤ 2 ms", false},
		{"server CPU per RegisterCall vs echo's (both driven by bench/load)", "53 µs (2.01 × echo's 26 µs)", "≤ 1.5 × echo", false},
		{"Redis bytes per idle session", "1474 B (10000 sessions, used_memory +14.1 MiB)", "≤ 1 KB (1024 B)", false},
	}
	if len(gs) != len(want) {
		t.Fatalf("%d rows, want %d:\n%s", len(gs), len(want), goalsTable(gs))
	}
	for i, w := range want {
		g := gs[i]
		if g.scenario != w.scenario || g.measured != w.measured || g.want != w.goal || g.met != w.met || !g.known {
			t.Errorf("row %d = %+v\nwant %+v", i, g, w)
		}
	}
	table := goalsTable(gs)
	if !strings.HasPrefix(table, "| scenario | measured | goal | met |\n") {
		t.Errorf("table header: %q", strings.SplitN(table, "\n", 2)[0])
	}
	if got := strings.Count(table, "| **no** |"); got != 9 {
		t.Errorf("%d rows marked **no**, want 9:\n%s", got, table)
	}
	if got := strings.Count(table, "| yes |"); got != 1 {
		t.Errorf("%d rows marked yes, want 1:\n%s", got, table)
	}
}

// TestGoalsMetLogic changes the fixture around each goal's bound: the verdict follows
// the bound (≥ for throughput, ≤ for latency, CPU and bytes), and a missing input
// makes the row "not measured" rather than met or not.
func TestGoalsMetLogic(t *testing.T) {
	row := func(t *testing.T, dir, prefix string) goal {
		t.Helper()
		gs, err := goals(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range gs {
			if strings.HasPrefix(g.scenario, prefix) {
				return g
			}
		}
		t.Fatalf("no row %q", prefix)
		return goal{}
	}
	for _, c := range []struct {
		perSession int64
		met        bool
	}{{1024, true}, {1025, false}, {600, true}} {
		dir := copyFixture(t)
		writeJSON(t, filepath.Join(dir, "redis-idle.json"), idleResult{Sessions: 1000, Before: 5000, After: 5000 + 1000*c.perSession, Keys: 1000})
		if g := row(t, dir, "Redis bytes"); g.met != c.met || !g.known {
			t.Errorf("%d B per session: %+v, want met %v", c.perSession, g, c.met)
		}
	}

	// Lifecycle throughput: 0.80 × echo's iterations/s is met, just under it is not.
	for _, c := range []struct {
		iterPerS float64
		met      bool
	}{{0.80 * 3417, true}, {0.79 * 3417, false}} {
		dir := copyFixture(t)
		var echo loadResult
		if _, err := readJSON(filepath.Join(dir, "load-echo.json"), &echo); err != nil {
			t.Fatal(err)
		}
		var lc map[string]any
		if _, err := readJSON(filepath.Join(dir, "load-lifecycle-memory.json"), &lc); err != nil {
			t.Fatal(err)
		}
		lc["iterations_per_s"] = c.iterPerS * echo.IterPerS / 3417
		writeJSON(t, filepath.Join(dir, "load-lifecycle-memory.json"), lc)
		if g := row(t, dir, "whole lifecycle, embedded"); g.met != c.met {
			t.Errorf("%.0f lifecycles/s: %+v, want met %v", c.iterPerS, g, c.met)
		}
	}

	// The wake: a p99 of 2 ms is met.
	dir := copyFixture(t)
	var h map[string]any
	if _, err := readJSON(filepath.Join(dir, "load-handoff-redis.json"), &h); err != nil {
		t.Fatal(err)
	}
	h["handoff"].(map[string]any)["after_ack"].(map[string]any)["p99_ms"] = 2.0
	writeJSON(t, filepath.Join(dir, "load-handoff-redis.json"), h)
	if g := row(t, dir, "cross-replica"); !g.met {
		t.Errorf("p99 2 ms: %+v, want met", g)
	}

	// Missing inputs.
	dir = copyFixture(t)
	for _, f := range []string{"load-handoff-redis.json", "redis-idle.json", "cpu-register-memory.json", "ghz-registercall-redis.json"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	gs, err := goals(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 10 {
		t.Fatalf("%d rows with inputs missing, want 10", len(gs))
	}
	for _, prefix := range []string{"cross-replica", "Redis bytes", "server CPU", "RegisterCall, Redis"} {
		if g := row(t, dir, prefix); g.known || g.met {
			t.Errorf("%s without its input: %+v, want not measured", prefix, g)
		}
	}
	if !strings.Contains(goalsTable(gs), "| not measured |") {
		t.Errorf("table without a 'not measured' verdict:\n%s", goalsTable(gs))
	}
}

// TestClusterCounts checks round trips (client commands in the monitor logs, not those
// a script ran) and commands executed (commandstats deltas) per RPC.
func TestClusterCounts(t *testing.T) {
	runs, err := clusterRuns(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 {
		t.Fatalf("%d cluster runs, want 4", len(runs))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	reg, lc := find(runs, 1, "register"), find(runs, 1, "lifecycle")
	// The fixture's monitor logs are cut to 40 commands: register's hold 16 client
	// commands and 24 a script ran; lifecycle's 40 client commands.
	if !near(reg.roundTrips, 16.0/2000) || reg.clientCmds["hset"] != 0 {
		t.Errorf("register round trips %v (%v), want %v and no script commands", reg.roundTrips, reg.clientCmds, 16.0/2000)
	}
	if !near(lc.roundTrips, 40.0/1800) {
		t.Errorf("lifecycle round trips %v, want %v", lc.roundTrips, 40.0/1800)
	}
	// A new session's RegisterCall: HMGET, EVALSHA, and the script's HMGET, HSET,
	// PEXPIRE and SPUBLISH.
	if math.Abs(reg.executedPerRPC-6) > 0.01 {
		t.Errorf("register: %v commands executed per RPC, want 6", reg.executedPerRPC)
	}
	three := find(runs, 3, "register")
	if three == nil || len(three.perMasterExec) != 3 || len(three.perMasterRoundTrips) != 3 {
		t.Fatalf("3 masters: %+v", three)
	}
	var sum float64
	for _, x := range three.perMasterExec {
		sum += x
	}
	if !near(sum, three.executedPerRPC) {
		t.Errorf("per-master commands %v do not add up to %v", three.perMasterExec, three.executedPerRPC)
	}
}

// TestReportKeepsHandWrittenPart runs the report twice over an output that has a
// hand-written part below the marker: that part survives once, the generated part
// above it is replaced, and the goals table is printed.
func TestReportKeepsHandWrittenPart(t *testing.T) {
	out := filepath.Join(t.TempDir(), "RESULTS.md")
	hand := KeepMarker + "\n\n## Written by hand\n\nmeasured on a quiet day\n"
	if err := os.WriteFile(out, []byte("# Load-test results\n\nan old generated table\n\n"+hand), 0o644); err != nil {
		t.Fatal(err)
	}
	var printed bytes.Buffer
	stdout = &printed
	t.Cleanup(func() { stdout = os.Stdout })
	for i := 0; i < 2; i++ {
		if err := run(fixture, out); err != nil {
			t.Fatal(err)
		}
	}
	body, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := string(body)
	if strings.Contains(s, "an old generated table") {
		t.Error("the old generated part is still there")
	}
	if n := strings.Count(s, "measured on a quiet day"); n != 1 || !strings.HasSuffix(s, hand) {
		t.Errorf("hand-written part %d times, or not at the end:\n%s", n, s[max(0, len(s)-300):])
	}
	for _, section := range []string{"## Goals (issue 16)", "### Why the goals marked **no** are not met", "## Redis Cluster: 1 vs 3 masters", "## Capacity model", "## Store path: go test -bench (this run)"} {
		if strings.Count(s, section) != 1 {
			t.Errorf("section %q %d times", section, strings.Count(s, section))
		}
	}
	if strings.Contains(s, "Goals (issue 5)") {
		t.Error("the issue-5 table is still written")
	}
	if n := strings.Count(printed.String(), "| Redis bytes per idle session |"); n != 2 {
		t.Errorf("goals table printed %d times for 2 runs:\n%s", n, printed.String())
	}
}

// TestCapacityArithmetic checks the capacity model against the fixture's inputs:
// server 148 µs per RPC (Redis lifecycle), Redis 34 µs (1-master cluster lifecycle),
// 1474 B per idle session.
func TestCapacityArithmetic(t *testing.T) {
	runs, err := clusterRuns(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	capacitySection(&b, fixture, runs)
	s := b.String()
	for _, want := range []string{
		"| RPC/s per arbiter core (all of it) | 1e6 / 148 µs | 6760 |",
		"| RPC/s per Redis shard (one core) | 1e6 / 34 µs | 29018 |",
		"| 1M sessions: Redis memory before replication | 1e6 × 1474 B | 1.37 GiB |",
		"| 1M sessions: arbiter cores | 1000000 × 148 µs / 1e6 / 0.50 | 296 |",
		"| 1M sessions: Redis shards by CPU | 1000000 × 34 µs / 1e6 / 0.50 | 69 |",
		"| 1M sessions: Redis shards (masters) | max of the two | 69 |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("capacity model lacks %q:\n%s", want, s)
		}
	}
}
