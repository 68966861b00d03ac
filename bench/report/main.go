// Command report turns the raw results bench/run.sh collects in one directory (ghz
// JSON reports, the load driver's JSON, pprof listings, meta.json) into
// bench/RESULTS.md: requests per second and p50/p95/p99 per RPC, each as a ratio to
// the echo server measured in the same run, issue 16's goals, met or not (also printed
// to stdout), Redis Cluster with 1 and 3 masters, a capacity model computed from the
// run, and the store benchmarks. What the old RESULTS.md has from KeepMarker's line on
// (sections written by hand) is copied to the end of the new one.
//
//	go run ./report -dir RAW -o RESULTS.md
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// meta.json, written by run.sh.
type meta struct {
	Command     string   `json:"command"`
	Date        string   `json:"date"`
	Nproc       string   `json:"nproc"`
	CPU         string   `json:"cpu"`
	Memory      string   `json:"memory"`
	Kernel      string   `json:"kernel"`
	GoVersion   string   `json:"go"`
	Ghz         string   `json:"ghz"`
	Redis       string   `json:"redis"`
	Commit      string   `json:"commit"`
	Dirty       string   `json:"dirty"`
	LoadBefore  string   `json:"loadavg_before"`
	LoadAfter   string   `json:"loadavg_after"`
	Concurrency int      `json:"concurrency"`
	Duration    string   `json:"duration"`
	Warmup      string   `json:"warmup"`
	ServerFlags string   `json:"server_flags"`
	Notes       []string `json:"notes"`
}

// ghzReport is the part of ghz's JSON report (-O json) used here; durations in ns.
type ghzReport struct {
	Count               uint64         `json:"count"`
	Total               int64          `json:"total"`
	Average             int64          `json:"average"`
	Rps                 float64        `json:"rps"`
	ErrorDist           map[string]int `json:"errorDistribution"`
	StatusCodeDist      map[string]int `json:"statusCodeDistribution"`
	LatencyDistribution []struct {
		Percentage int   `json:"percentage"`
		Latency    int64 `json:"latency"`
	} `json:"latencyDistribution"`
}

// loadStat / loadResult mirror bench/load's output.
type loadStat struct {
	Count  int     `json:"count"`
	Errors int     `json:"errors"`
	RPS    float64 `json:"rps"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

type loadResult struct {
	CallsTotal  int                 `json:"calls_total"`
	Concurrency int                 `json:"concurrency"`
	DurationS   float64             `json:"duration_s"`
	Iterations  int                 `json:"iterations"`
	IterPerS    float64             `json:"iterations_per_s"`
	RPCs        map[string]loadStat `json:"rpcs"`
	Handoff     map[string]loadStat `json:"handoff"`
	ErrorCodes  map[string]int      `json:"error_codes"`
	FirstError  string              `json:"first_error"`
}

// row is one line of a results table.
type row struct {
	scenario, tool     string
	rps, p50, p95, p99 float64 // ms for latencies
	errors             int
	base               *row // echo baseline, nil for the baseline itself
}

func readJSON(path string, v any) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(b, v)
}

func fromGhz(dir, file, scenario string) (*row, error) {
	var g ghzReport
	ok, err := readJSON(filepath.Join(dir, file), &g)
	if err != nil || !ok {
		return nil, err
	}
	r := &row{scenario: scenario, tool: "ghz", rps: g.Rps}
	for _, l := range g.LatencyDistribution {
		ms := float64(l.Latency) / 1e6
		switch l.Percentage {
		case 50:
			r.p50 = ms
		case 95:
			r.p95 = ms
		case 99:
			r.p99 = ms
		}
	}
	for code, n := range g.StatusCodeDist {
		if code != "OK" {
			r.errors += n
		}
	}
	// ghz counts failed requests in rps too: report successful ones only.
	if g.Count > 0 {
		r.rps = g.Rps * float64(int(g.Count)-r.errors) / float64(g.Count)
	}
	return r, nil
}

func fromLoad(dir, file string) (*loadResult, error) {
	var l loadResult
	ok, err := readJSON(filepath.Join(dir, file), &l)
	if err != nil || !ok {
		return nil, err
	}
	return &l, nil
}

func loadRow(l *loadResult, rpc, scenario string) *row {
	s, ok := l.RPCs[rpc]
	if !ok {
		return nil
	}
	return &row{scenario: scenario, tool: "bench/load", rps: s.RPS, p50: s.P50Ms, p95: s.P95Ms, p99: s.P99Ms, errors: s.Errors}
}

// mean of two baselines (echo before and after the arbiter runs).
func mean(a, b *row) *row {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return &row{scenario: "echo baseline (mean of the two runs)", tool: a.tool,
		rps: (a.rps + b.rps) / 2, p50: (a.p50 + b.p50) / 2, p95: (a.p95 + b.p95) / 2, p99: (a.p99 + b.p99) / 2,
		errors: a.errors + b.errors}
}

func ratio(x, base float64) string {
	if base == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", x/base)
}

func table(b *strings.Builder, rows []*row) {
	b.WriteString("| scenario | client | req/s | p50 ms | p95 ms | p99 ms | errors | req/s ÷ echo | p50 ÷ echo | p95 ÷ echo | p99 ÷ echo |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		if r == nil {
			continue
		}
		rr, r50, r95, r99 := "(baseline)", "", "", ""
		if r.base != nil {
			rr, r50, r95, r99 = ratio(r.rps, r.base.rps), ratio(r.p50, r.base.p50), ratio(r.p95, r.base.p95), ratio(r.p99, r.base.p99)
		}
		fmt.Fprintf(b, "| %s | %s | %.0f | %.2f | %.2f | %.2f | %d | %s | %s | %s | %s |\n",
			r.scenario, r.tool, r.rps, r.p50, r.p95, r.p99, r.errors, rr, r50, r95, r99)
	}
}

func main() {
	dir := flag.String("dir", "", "directory with run.sh's raw results")
	out := flag.String("o", "RESULTS.md", "output file")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// stdout receives the goals table run prints (os.Stdout; a test may replace it).
var stdout io.Writer = os.Stdout

// run reads the raw results in dir and writes the report to out, keeping what the old
// file at out has from KeepMarker on; it prints the goals table to stdout.
func run(dir, out string) error {
	var m meta
	if ok, err := readJSON(filepath.Join(dir, "meta.json"), &m); err != nil || !ok {
		return fmt.Errorf("meta.json: %v (found %v)", err, ok)
	}
	must := func(r *row, err error) *row {
		if err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
		return r
	}
	echo1 := must(fromGhz(dir, "ghz-echo-1.json", "echo UnaryCall, before"))
	echo2 := must(fromGhz(dir, "ghz-echo-2.json", "echo UnaryCall, after"))
	echoBase := mean(echo1, echo2)
	if echoBase == nil {
		return errors.New("no echo baseline (ghz-echo-1.json)")
	}
	withBase := func(r *row, base *row) *row {
		if r != nil {
			r.base = base
		}
		return r
	}
	regMem := withBase(must(fromGhz(dir, "ghz-registercall-memory.json", "RegisterCall (new session each)")), echoBase)
	regNW := withBase(must(fromGhz(dir, "ghz-registercall-newwording-memory.json", "RegisterCall, a date wording the server has not seen (new session each)")), echoBase)
	spMem := withBase(must(fromGhz(dir, "ghz-reportspeech-memory.json", "ReportSpeech USER_ACTIVITY_START (new session each)")), echoBase)
	regRedis := withBase(must(fromGhz(dir, "ghz-registercall-redis.json", "RegisterCall (new session each)")), echoBase)
	spRedis := withBase(must(fromGhz(dir, "ghz-reportspeech-redis.json", "ReportSpeech USER_ACTIVITY_START (new session each)")), echoBase)

	var echo1Row, regMemLoad, regRedisLoad *row
	if l, err := fromLoad(dir, "load-echo1.json"); err != nil {
		return err
	} else if l != nil {
		echo1Row = loadRow(l, "UnaryCall", "echo UnaryCall")
	}
	for _, x := range []struct {
		file string
		dst  **row
	}{{"load-register-memory.json", &regMemLoad}, {"load-register-redis.json", &regRedisLoad}} {
		l, err := fromLoad(dir, x.file)
		if err != nil {
			return err
		}
		if l != nil && echo1Row != nil {
			*x.dst = withBase(loadRow(l, "RegisterCall", "RegisterCall (new session each)"), echo1Row)
		}
	}

	loadEcho, err := fromLoad(dir, "load-echo.json")
	if err != nil {
		return err
	}
	lcMem, err := fromLoad(dir, "load-lifecycle-memory.json")
	if err != nil {
		return err
	}
	lcRedis, err := fromLoad(dir, "load-lifecycle-redis.json")
	if err != nil {
		return err
	}
	handoff, err := fromLoad(dir, "load-handoff-redis.json")
	if err != nil {
		return err
	}
	handoffLow, err := fromLoad(dir, "load-handoff-redis-c5.json")
	if err != nil {
		return err
	}

	var b strings.Builder
	b.WriteString("# Load-test results\n\n")
	fmt.Fprintf(&b, "Written by `bench/run.sh` on %s. Reproduce with:\n\n```sh\n%s\n```\n\n", m.Date, m.Command)
	b.WriteString("## Machine\n\n")
	fmt.Fprintf(&b, "- %s cores (`nproc`), %s; %s memory; Linux %s\n", m.Nproc, m.CPU, m.Memory, m.Kernel)
	fmt.Fprintf(&b, "- %s, ghz %s, %s\n", m.GoVersion, m.Ghz, m.Redis)
	fmt.Fprintf(&b, "- arbiter at commit %s%s\n", m.Commit, m.Dirty)
	fmt.Fprintf(&b, "- load average before / after the run: %s / %s\n", m.LoadBefore, m.LoadAfter)
	b.WriteString("- the load generator, the server under test, the echo server and Redis all share these cores, as the issue asks: every number is a same-machine, same-run comparison, not a capacity figure for a dedicated host.\n\n")

	b.WriteString("## Method\n\n")
	fmt.Fprintf(&b, "Every scenario is a closed loop of %d concurrent streams over one HTTP/2 connection (ghz's default, and the load driver's), %s of warmup that is not counted, then %s measured; all targets are on 127.0.0.1. ", m.Concurrency, m.Warmup, m.Duration)
	b.WriteString("ghz (by reflection) drives the single-RPC scenarios; its request templates give every request a new session id and call id (`{{.RequestNumber}}`); RegisterCall books \"tomorrow 3pm\" (a wording the server memoises once parsed) and, in a second run, \"in N minutes\" with a new N each call (never memoised); and the echo requests carry a templated string of the same shape so ghz spends the same on both. ")
	b.WriteString("A whole call's lifecycle chains RPCs, which ghz cannot, so `bench/load` runs it: per session RegisterCall (book_slot), ReportSpeech USER_ACTIVITY_START and _END, ReportTranscript with a stop phrase, Decide(prepared, wait 5s) which answers CANCEL at once, Complete(CANCELLED); its baseline is the same driver sending six echo UnaryCalls per iteration with payloads the size of those six requests. ")
	b.WriteString("RegisterCall alone is also driven by `bench/load` (generated Go stubs: a few times cheaper per request than ghz's dynamic messages, see the CPU table) against that driver's own one-UnaryCall echo baseline, to tell the server's cost from the load generator's on shared cores. ")
	b.WriteString("The echo server (`bench/echo`) is a bare grpc-go server with one unary RPC: no interceptors, no logging, no store. ")
	fmt.Fprintf(&b, "The arbiter runs as built by the script: `arbiter serve %s` (its defaults otherwise: info-level text logging to a file, where an OK RPC's access line, at debug, is not written, the middleware chain, no metrics listener). ", m.ServerFlags)
	b.WriteString("Ratios divide by the echo baseline: the mean of a ghz echo run before and one after the arbiter runs (both listed, to show the drift on a shared machine), or, for the lifecycle, the load driver's own echo run.\n\n")
	for _, n := range m.Notes {
		fmt.Fprintf(&b, "> %s\n\n", n)
	}

	// Goals (issue 16).
	gs, err := goals(dir)
	if err != nil {
		return err
	}
	table16 := goalsTable(gs)
	totalErr := 0
	for _, r := range []*row{echo1, echo2, regMem, regNW, spMem, regRedis, spRedis} {
		if r != nil {
			totalErr += r.errors
		}
	}
	for _, name := range []string{"load-echo1.json", "load-register-memory.json", "load-register-redis.json"} {
		if l, err := fromLoad(dir, name); err == nil && l != nil {
			for _, n := range l.ErrorCodes {
				totalErr += n
			}
		}
	}
	for _, l := range []*loadResult{loadEcho, lcMem, lcRedis, handoff, handoffLow} {
		if l != nil {
			for _, n := range l.ErrorCodes {
				totalErr += n
			}
		}
	}
	runs, err := clusterRuns(dir)
	if err != nil {
		return err
	}
	b.WriteString("## Goals (issue 16)\n\n")
	b.WriteString("Ratios against the echo server in this run, with the same client: ghz's echo baseline is the mean of its two runs; bench/load's RegisterCall is compared with its one-UnaryCall echo, the lifecycle with its six-UnaryCall echo (iterations per second). Server CPU per RegisterCall is compared with bench/load driving both (the lighter client, so the server's share of the 2 cores is larger and its cost the clearer; ghz's numbers are in the CPU table). Redis bytes per idle session: `used_memory` after the idle-sessions step minus before, divided by its sessions (1 KB taken as 1024 B).\n\n")
	b.WriteString(table16)
	fmt.Fprintf(&b, "\nError responses during the run (every scenario above): %d.\n\n", totalErr)
	if per, r, ok := bytesPerIdleSession(dir); ok {
		fmt.Fprintf(&b, "Idle sessions: %d of bench/soak's calls (book_slot, voice activity start and end, \"Stop.\", Decide(prepared) -> CANCEL, Complete(CANCELLED)), each in its own session, through one arbiter on this run's redis-server (bench/load -mode lifecycle -stop-text \"Stop.\" -sessions %d), then idle; Redis `used_memory` %d -> %d B, %.0f B per session; %d keys afterwards. The same measure as store/redisstore's TestHistoryCostPerSession (bench/HISTORY.md), through gRPC instead of arbiter.Service.\n\n",
			r.Sessions, r.Sessions, r.Before, r.After, per, r.Keys)
	}
	whySection(&b, dir, gs, runs)

	summary(&b, dir)

	b.WriteString("## Embedded store\n\n")
	table(&b, []*row{echo1, echo2, echoBase, regMem, regNW, spMem, echo1Row, regMemLoad})
	b.WriteString("\n")
	lifecycleTable(&b, "Whole call lifecycle, embedded store", loadEcho, lcMem)

	if regRedis != nil || lcRedis != nil {
		b.WriteString("## Redis store (one arbiter)\n\n")
		table(&b, []*row{echoBase, regRedis, spRedis, echo1Row, regRedisLoad})
		b.WriteString("\n")
		lifecycleTable(&b, "Whole call lifecycle, Redis", loadEcho, lcRedis)
	}
	if handoff != nil {
		b.WriteString("## Cross-replica Decide (two arbiters on one Redis)\n\n")
		b.WriteString("Each session: RegisterCall and USER_ACTIVITY_START on A, Decide(prepared, wait 10s) parked on B (30 ms before the transcript), USER_ACTIVITY_END and the stop transcript on A; B's Decide must return CANCEL. Measured: when B's Decide returned, after A answered the transcript (0 when B was first) and after the transcript was sent to A.\n\n")
		b.WriteString("| sessions in flight | hand-offs | per s | after A's answer p50 / p95 / p99 / max ms | after sending p50 / p95 / p99 ms | errors |\n|--:|--:|--:|---|---|--:|\n")
		for _, h := range []*loadResult{handoff, handoffLow} {
			if h == nil {
				continue
			}
			a, s := h.Handoff["after_ack"], h.Handoff["after_send"]
			errs := 0
			for _, n := range h.ErrorCodes {
				errs += n
			}
			fmt.Fprintf(&b, "| %d | %d | %.0f | %.2f / %.2f / %.2f / %.2f | %.2f / %.2f / %.2f | %d |\n",
				h.Concurrency, a.Count, h.IterPerS, a.P50Ms, a.P95Ms, a.P99Ms, a.MaxMs, s.P50Ms, s.P95Ms, s.P99Ms, errs)
		}
		b.WriteString("\n")
		errorsLine(&b, handoff)
	}

	clusterSection(&b, runs)
	capacitySection(&b, dir, runs)

	cpuTable(&b, dir)

	// Profiles.
	if sum, err := pprofSummary(filepath.Join(dir, "pprof-server-cum-all.txt")); err == nil {
		b.WriteString("## Where RegisterCall's time goes\n\n")
		b.WriteString("A CPU profile of the server (`bench/profserve`: the same server.NewGRPCServer, service, embedded store and info-level logging as `arbiter serve`, with runtime/pprof on) while ghz sends the RegisterCall scenario above. Share of the server process's CPU samples spent in each part, cumulative (a part includes what it calls; parts nest, so shares do not add up to 100%):\n\n")
		b.WriteString(sum)
		b.WriteString("\n")
	}
	for _, p := range []struct{ file, title string }{
		{"pprof-server-flat.txt", "Server CPU profile under ghz RegisterCall: top functions by own time"},
		{"pprof-bench-flat.txt", "`go test ./server -bench BenchmarkRegisterCall/calls_per_session=1 -cpuprofile`: top functions by own time (client and server in one process over bufconn)"},
	} {
		body, err := os.ReadFile(filepath.Join(dir, p.file))
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n```\n%s```\n\n", p.title, strings.TrimLeft(string(body), "\n"))
	}
	storeBenchSection(&b, dir)
	keep, err := kept(out)
	if err != nil {
		return err
	}
	if keep != "" {
		b.WriteString("\n")
		b.WriteString(keep)
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Goals (issue 16), %s:\n\n%s", m.Date, table16)
	return nil
}

func lifecycleTable(b *strings.Builder, title string, echo, lc *loadResult) {
	if lc == nil {
		return
	}
	fmt.Fprintf(b, "### %s\n\n", title)
	var base *row
	if echo != nil {
		base = loadRow(echo, "UnaryCall", "echo UnaryCall ×6 per iteration")
		fmt.Fprintf(b, "Echo baseline: %.0f iterations/s of six UnaryCalls. Arbiter: %.0f lifecycles/s (%.2f × echo), %d sessions in the measured window. Each RPC's req/s is compared with the echo calls made in the same slot of the iteration (echo iterations/s, twice that for ReportSpeech); latencies with all echo calls.\n\n",
			echo.IterPerS, lc.IterPerS, lc.IterPerS/echo.IterPerS, lc.Iterations)
	}
	rows := []*row{base}
	names := make([]string, 0, len(lc.RPCs))
	for n := range lc.RPCs {
		names = append(names, n)
	}
	order := map[string]int{"RegisterCall": 0, "ReportSpeech": 1, "ReportTranscript": 2, "Decide": 3, "Complete": 4}
	sort.Slice(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
	for _, n := range names {
		r := loadRow(lc, n, n)
		perIter := 1.0
		if n == "ReportSpeech" {
			r.scenario, perIter = "ReportSpeech (START and END)", 2
		}
		if base != nil {
			// The echo driver makes six calls per iteration where the lifecycle makes
			// one of this RPC (two ReportSpeech): compare throughput per iteration slot.
			b := *base
			b.rps = echo.IterPerS * perIter
			r.base = &b
		}
		rows = append(rows, r)
	}
	table(b, rows)
	b.WriteString("\n")
	errorsLine(b, lc)
}

func errorsLine(b *strings.Builder, l *loadResult) {
	if len(l.ErrorCodes) == 0 {
		return
	}
	fmt.Fprintf(b, "Errors: %v; first: `%s`\n\n", l.ErrorCodes, l.FirstError)
}

// components of a RegisterCall, as function-name patterns in `pprof -top -cum`.
var components = []struct{ label, re string }{
	{"gRPC server: one RPC, all of it (HTTP/2 stream, interceptors, handler)", `grpc\.\(\*Server\)\.handleStream$`},
	{"· interceptor chain and handler", `grpc\.\(\*Server\)\.processRPC$`},
	{"· · log lines (slog; the effect lines: an OK RPC's access line is at debug)", `logging\.\(\*reporter\)\.PostCall$|^log/slog\.\(\*Logger\)\.log$`},
	{"· · server.RegisterCall (validation, conversion, Service.Apply)", `server\.\(\*Server\)\.RegisterCall$`},
	{"· · · Service.Apply: load, step, compare-and-set save", `arbiter\.\(\*Service\)\.(Apply|apply)$`},
	{"· · · · Engine.Step (the decision logic)", `arbiter\.\(\*Engine\)\.(Step|stepValid)$`},
	{"· · · · · datetime business key (olebedev/when)", `olebedev/when\.\(\*Parser\)\.Parse$`},
	{"· · · · store Load (decode of the session record)", `memory\.\(\*Store\)\.Load$`},
	{"· · · · store Save (encode of the session record)", `memory\.\(\*Store\)\.Save$`},
	{"· · · · · expired-session sweep, under the store's lock", `memory\.\(\*Store\)\.sweepLocked$`},
	{"HTTP/2 writer goroutine (loopyWriter)", `transport\.\(\*loopyWriter\)\.run$`},
	{"HTTP/2 reader goroutine (http2Server.HandleStreams)", `transport\.\(\*http2Server\)\.HandleStreams$`},
	{"system calls (socket reads and writes, log writes)", `^syscall\.Syscall6?$|^internal/runtime/syscall\.Syscall6$`},
	{"goroutine stack growth (runtime.newstack: a new goroutine per RPC grows its stack again)", `^runtime\.newstack$`},
	{"garbage collector (background mark workers)", `runtime\.gcBgMarkWorker$`},
	{"allocation (mallocgc)", `^runtime\.mallocgc$`},
	{"scheduler (schedule, findRunnable)", `^runtime\.schedule$`},
}

// share is one component's cumulative share of the profile's samples, in percent
// (negative when the profile has no such frame).
type share struct {
	label string
	pct   float64
}

// profileShares reads `go tool pprof -top -cum -nodecount=100000` output: each
// component's cumulative share, in the order of components, and the profile's
// "Duration:" line.
func profileShares(path string) ([]share, string, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	type line struct {
		cum  float64
		name string
	}
	var lines []line
	duration := ""
	for _, l := range strings.Split(string(body), "\n") {
		f := strings.Fields(l)
		if len(f) >= 6 && strings.HasSuffix(f[4], "%") {
			var cum float64
			if _, err := fmt.Sscanf(strings.TrimSuffix(f[4], "%"), "%g", &cum); err == nil {
				lines = append(lines, line{cum, strings.Join(f[5:], " ")})
				continue
			}
		}
		if strings.HasPrefix(strings.TrimSpace(l), "Duration:") {
			duration = strings.TrimSpace(l)
		}
	}
	out := make([]share, len(components))
	for i, c := range components {
		re := regexp.MustCompile(c.re)
		best := -1.0
		for _, l := range lines {
			if re.MatchString(strings.TrimSuffix(l.name, " (inline)")) && l.cum > best {
				best = l.cum
			}
		}
		out[i] = share{c.label, best}
	}
	return out, duration, nil
}

// pprofSummary reads `go tool pprof -top -cum -nodecount=100000` output and lists each
// component's cumulative share.
func pprofSummary(path string) (string, error) {
	shares, duration, err := profileShares(path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if duration != "" {
		fmt.Fprintf(&b, "Profile: %s\n\n", duration)
	}
	b.WriteString("| part | share of server CPU |\n|---|--:|\n")
	for _, sh := range shares {
		if sh.pct < 0 {
			fmt.Fprintf(&b, "| %s | – |\n", sh.label)
			continue
		}
		fmt.Fprintf(&b, "| %s | %.1f%% |\n", sh.label, sh.pct)
	}
	return b.String(), nil
}

// cpuTable lists the CPU the server and the client used in each run (run.sh's
// cpu-NAME.json), per request: on a shared 2-core machine this shows whether the
// server or the load generator is the bottleneck.
func cpuTable(b *strings.Builder, dir string) {
	type cpu = cpuRun
	runs := []struct{ name, label string }{
		{"echo-1", "echo UnaryCall (ghz), before"},
		{"echo-2", "echo UnaryCall (ghz), after"},
		{"registercall-memory", "RegisterCall, embedded (ghz)"},
		{"registercall-newwording-memory", "RegisterCall, new date wording each, embedded (ghz)"},
		{"reportspeech-memory", "ReportSpeech, embedded (ghz)"},
		{"load-echo1", "echo UnaryCall (bench/load)"},
		{"register-memory", "RegisterCall, embedded (bench/load)"},
		{"load-echo", "echo ×6 per iteration (bench/load)"},
		{"lifecycle-memory", "lifecycle, embedded (bench/load)"},
		{"registercall-redis", "RegisterCall, Redis (ghz)"},
		{"reportspeech-redis", "ReportSpeech, Redis (ghz)"},
		{"register-redis", "RegisterCall, Redis (bench/load)"},
		{"lifecycle-redis", "lifecycle, Redis (bench/load)"},
		{"cluster1-register", "RegisterCall, 1-master cluster (bench/load)"},
		{"cluster1-lifecycle", "lifecycle, 1-master cluster (bench/load)"},
		{"cluster3-register", "RegisterCall, 3-master cluster (bench/load)"},
		{"cluster3-lifecycle", "lifecycle, 3-master cluster (bench/load)"},
	}
	var rows []string
	for _, r := range runs {
		var c cpu
		ok, err := readJSON(filepath.Join(dir, "cpu-"+r.name+".json"), &c)
		if err != nil || !ok || c.Wall == 0 {
			continue
		}
		calls := 0
		if strings.HasPrefix(r.name, "load-") || strings.HasPrefix(r.name, "lifecycle-") || strings.HasPrefix(r.name, "register-") || strings.HasPrefix(r.name, "cluster") {
			file := "load-" + r.name + ".json"
			if strings.HasPrefix(r.name, "load-") {
				file = r.name + ".json"
			}
			if l, err := fromLoad(dir, file); err == nil && l != nil {
				calls = l.CallsTotal
			}
		} else {
			var g ghzReport
			if ok, err := readJSON(filepath.Join(dir, "ghz-"+r.name+".json"), &g); err == nil && ok {
				calls = int(g.Count)
			}
		}
		if calls == 0 {
			continue
		}
		redis := ""
		if c.Redis > 0 {
			redis = fmt.Sprintf("%.0f", c.Redis/float64(calls)*1e6)
		}
		rows = append(rows, fmt.Sprintf("| %s | %d | %.2f | %.2f | %.0f | %.0f | %s |", r.label, calls,
			c.Server/c.Wall, c.Client/c.Wall, c.Server/float64(calls)*1e6, c.Client/float64(calls)*1e6, redis))
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("## CPU: server and load generator\n\n")
	b.WriteString("CPU time each process used during a run (user + system, from /proc and /usr/bin/time; the load driver's runs include its warmup), as cores busy and per RPC. The machine has 2 cores for all of them.\n\n")
	b.WriteString("| run | RPCs | server cores | client cores | server µs CPU per RPC | client µs CPU per RPC | Redis µs CPU per RPC |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	b.WriteString("\n")
}

// summary: the CPU arithmetic behind the throughput ratios, from the cpu-*.json files.
func summary(b *strings.Builder, dir string) {
	type cpu struct {
		Wall   float64 `json:"wall_s"`
		Server float64 `json:"server_cpu_s"`
		Client float64 `json:"client_cpu_s"`
	}
	per := func(name string, calls int) (srv, cli float64, ok bool) {
		var c cpu
		if found, err := readJSON(filepath.Join(dir, "cpu-"+name+".json"), &c); err != nil || !found || calls == 0 {
			return 0, 0, false
		}
		return c.Server / float64(calls) * 1e6, c.Client / float64(calls) * 1e6, true
	}
	ghzCount := func(name string) int {
		var g ghzReport
		if ok, err := readJSON(filepath.Join(dir, "ghz-"+name+".json"), &g); err != nil || !ok {
			return 0
		}
		return int(g.Count)
	}
	loadCount := func(file string) int {
		l, err := fromLoad(dir, file)
		if err != nil || l == nil {
			return 0
		}
		return l.CallsTotal
	}
	es, ec, ok1 := per("load-echo1", loadCount("load-echo1.json"))
	rs, rc, ok2 := per("register-memory", loadCount("load-register-memory.json"))
	gs, gc, ok3 := per("echo-1", ghzCount("echo-1"))
	grs, grc, ok4 := per("registercall-memory", ghzCount("registercall-memory"))
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return
	}
	b.WriteString("## Summary\n\n")
	fmt.Fprintf(b, "Client, server and (for Redis) Redis share 2 cores, so throughput follows the CPU each request costs them together. "+
		"With the light client (`bench/load`) an echo UnaryCall cost %.0f µs of server CPU and %.0f µs of client CPU; a RegisterCall cost %.0f µs of server CPU (%.1f× echo) and %.0f µs of client CPU. "+
		"With ghz the client costs more: %.0f µs per echo request and %.0f µs per RegisterCall (its dynamic messages and the Struct args), against %.0f and %.0f µs in the servers. "+
		"At issue 16's goals (0.80 × echo's throughput with bench/load, 0.90 × with ghz) the client and server together could spend at most %.0f µs (bench/load) or %.0f µs (ghz) per RegisterCall; the server alone spends %.0f (bench/load) and %.0f (ghz). "+
		"The server profile below says where that goes.\n\n",
		es, ec, rs, rs/es, rc, gc, grc, gs, grs, (es+ec)/0.80, (gs+gc)/0.90, rs, grs)
}
