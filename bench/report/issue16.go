package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// KeepMarker starts the part of RESULTS.md that bench/run.sh does not write: report
// copies the old file from this line to its end into the new one.
const KeepMarker = "<!-- kept: written by hand, not by bench/run.sh -->"

// goal is one row of issue 16's goals table. known is false when the run did not
// measure it (then met is meaningless and the row says "not measured").
type goal struct {
	scenario, measured, want string
	met, known               bool
}

// cpuRun is run.sh's cpu-NAME.json: wall seconds and CPU seconds (user + system) of the
// server, the load client and the redis-server processes (0 when none was counted).
type cpuRun struct {
	Wall   float64 `json:"wall_s"`
	Server float64 `json:"server_cpu_s"`
	Client float64 `json:"client_cpu_s"`
	Redis  float64 `json:"redis_cpu_s"`
}

// perRPC returns the server and Redis µs of CPU per RPC of run NAME, whose RPC count is
// calls; ok is false when cpu-NAME.json is missing or calls is 0.
func perRPC(dir, name string, calls int) (server, redis float64, ok bool) {
	var c cpuRun
	if found, err := readJSON(filepath.Join(dir, "cpu-"+name+".json"), &c); err != nil || !found || calls == 0 {
		return 0, 0, false
	}
	return c.Server / float64(calls) * 1e6, c.Redis / float64(calls) * 1e6, true
}

// loadCalls is calls_total of the load driver's FILE (0 when missing).
func loadCalls(dir, file string) int {
	l, err := fromLoad(dir, file)
	if err != nil || l == nil {
		return 0
	}
	return l.CallsTotal
}

// idleResult is run.sh's redis-idle.json: used_memory (bytes) before and after
// Sessions idle sessions were made, and the keys Redis then held.
type idleResult struct {
	Sessions int   `json:"sessions"`
	Before   int64 `json:"used_memory_before"`
	After    int64 `json:"used_memory_after"`
	Keys     int   `json:"keys"`
}

// bytesPerIdleSession reads redis-idle.json; ok is false when it is missing or empty.
func bytesPerIdleSession(dir string) (float64, idleResult, bool) {
	var r idleResult
	if ok, err := readJSON(filepath.Join(dir, "redis-idle.json"), &r); err != nil || !ok || r.Sessions == 0 {
		return 0, r, false
	}
	return float64(r.After-r.Before) / float64(r.Sessions), r, true
}

// goals computes issue 16's table from the raw results in dir: throughput ratios
// (≥ goal) and p99 ratios (≤ goal) against the echo baselines of the same run, the
// cross-replica wake's p99, server CPU per RegisterCall against echo's with the same
// client (bench/load), and Redis bytes per idle session. A row whose inputs are
// missing is returned with known false.
func goals(dir string) ([]goal, error) {
	echo1, err := fromGhz(dir, "ghz-echo-1.json", "")
	if err != nil {
		return nil, err
	}
	echo2, err := fromGhz(dir, "ghz-echo-2.json", "")
	if err != nil {
		return nil, err
	}
	ghzBase := mean(echo1, echo2)
	ghz := func(file string) (*row, error) {
		r, err := fromGhz(dir, file, "")
		if r != nil {
			r.base = ghzBase
		}
		if ghzBase == nil {
			return nil, err
		}
		return r, err
	}
	regMem, err := ghz("ghz-registercall-memory.json")
	if err != nil {
		return nil, err
	}
	regRedis, err := ghz("ghz-registercall-redis.json")
	if err != nil {
		return nil, err
	}
	files := map[string]*loadResult{}
	for _, f := range []string{"load-echo1.json", "load-register-memory.json", "load-echo.json", "load-lifecycle-memory.json", "load-lifecycle-redis.json", "load-handoff-redis.json"} {
		l, err := fromLoad(dir, f)
		if err != nil {
			return nil, err
		}
		files[f] = l
	}
	var regLoad *row
	if e, r := files["load-echo1.json"], files["load-register-memory.json"]; e != nil && r != nil {
		regLoad = loadRow(r, "RegisterCall", "")
		if regLoad != nil {
			regLoad.base = loadRow(e, "UnaryCall", "")
		}
	}

	var gs []goal
	missing := func(scenario, want string) {
		gs = append(gs, goal{scenario: scenario, want: want, measured: "not measured"})
	}
	rps := func(scenario string, r *row, want float64) {
		w := fmt.Sprintf("≥ %.2f ×", want)
		if r == nil || r.base == nil || r.base.rps == 0 {
			missing(scenario, w)
			return
		}
		q := r.rps / r.base.rps
		gs = append(gs, goal{scenario, fmt.Sprintf("%.2f × (%.0f / %.0f req/s)", q, r.rps, r.base.rps), w, q >= want, true})
	}
	p99 := func(scenario string, r *row, want float64) {
		w := fmt.Sprintf("≤ %.1f ×", want)
		if r == nil || r.base == nil || r.base.p99 == 0 {
			missing(scenario, w)
			return
		}
		q := r.p99 / r.base.p99
		gs = append(gs, goal{scenario, fmt.Sprintf("%.2f × (%.2f / %.2f ms)", q, r.p99, r.base.p99), w, q <= want, true})
	}
	lifecycle := func(scenario string, lc *loadResult, want float64) {
		w := fmt.Sprintf("≥ %.2f ×", want)
		echo := files["load-echo.json"]
		if lc == nil || echo == nil || echo.IterPerS == 0 {
			missing(scenario, w)
			return
		}
		q := lc.IterPerS / echo.IterPerS
		gs = append(gs, goal{scenario, fmt.Sprintf("%.2f × (%.0f lifecycles/s / %.0f echo iterations/s)", q, lc.IterPerS, echo.IterPerS), w, q >= want, true})
	}

	rps("RegisterCall, embedded, ghz: throughput", regMem, 0.90)
	p99("RegisterCall, embedded, ghz: p99", regMem, 1.2)
	rps("RegisterCall, embedded, bench/load client: throughput", regLoad, 0.80)
	p99("RegisterCall, embedded, bench/load client: p99", regLoad, 1.5)
	lifecycle("whole lifecycle, embedded", files["load-lifecycle-memory.json"], 0.80)
	if regRedis != nil && regRedis.base != nil && regRedis.base.rps > 0 && regRedis.base.p99 > 0 {
		q := regRedis.rps / regRedis.base.rps
		gs = append(gs, goal{"RegisterCall, Redis, ghz",
			fmt.Sprintf("%.2f × (%.0f / %.0f req/s), p99 %.2f ×", q, regRedis.rps, regRedis.base.rps, regRedis.p99/regRedis.base.p99),
			"≥ 0.70 ×", q >= 0.70, true})
	} else {
		missing("RegisterCall, Redis, ghz", "≥ 0.70 ×")
	}
	lifecycle("whole lifecycle, Redis", files["load-lifecycle-redis.json"], 0.50)
	if h := files["load-handoff-redis.json"]; h != nil && h.Handoff["after_ack"].Count > 0 {
		a := h.Handoff["after_ack"]
		gs = append(gs, goal{fmt.Sprintf("cross-replica Decide wake, %d sessions in flight, after the deciding RPC answered", h.Concurrency),
			fmt.Sprintf("p99 %.2f ms (p50 %.2f, max %.2f; %d hand-offs)", a.P99Ms, a.P50Ms, a.MaxMs, a.Count), "p99 ≤ 2 ms", a.P99Ms <= 2, true})
	} else {
		missing("cross-replica Decide wake, 50 sessions in flight, after the deciding RPC answered", "p99 ≤ 2 ms")
	}
	const cpuScenario = "server CPU per RegisterCall vs echo's (both driven by bench/load)"
	es, _, ok1 := perRPC(dir, "load-echo1", loadCalls(dir, "load-echo1.json"))
	rs, _, ok2 := perRPC(dir, "register-memory", loadCalls(dir, "load-register-memory.json"))
	if ok1 && ok2 && es > 0 {
		q := rs / es
		gs = append(gs, goal{cpuScenario, fmt.Sprintf("%.0f µs (%.2f × echo's %.0f µs)", rs, q, es), "≤ 1.5 × echo", q <= 1.5, true})
	} else {
		missing(cpuScenario, "≤ 1.5 × echo")
	}
	if per, r, ok := bytesPerIdleSession(dir); ok {
		gs = append(gs, goal{"Redis bytes per idle session",
			fmt.Sprintf("%.0f B (%d sessions, used_memory +%.1f MiB)", per, r.Sessions, float64(r.After-r.Before)/(1<<20)), "≤ 1 KB (1024 B)", per <= 1024, true})
	} else {
		missing("Redis bytes per idle session", "≤ 1 KB (1024 B)")
	}
	return gs, nil
}

// goalsTable renders gs as issue 16's table with a "met" column.
func goalsTable(gs []goal) string {
	var b strings.Builder
	b.WriteString("| scenario | measured | goal | met |\n|---|---|---|---|\n")
	for _, g := range gs {
		met := "**no**"
		switch {
		case !g.known:
			met = "not measured"
		case g.met:
			met = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", g.scenario, g.measured, g.want, met)
	}
	return b.String()
}

// kept returns the part of the file at path from KeepMarker's line to its end ("" when
// the file or the marker is missing).
func kept(path string) (string, error) {
	body, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	s := string(body)
	i := strings.Index(s, KeepMarker)
	if i < 0 {
		return "", nil
	}
	return s[i:], nil
}

// cmdstats parses `redis-cli info commandstats` into calls per command.
func cmdstats(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				out[name] = n
			}
		}
	}
	return out, sc.Err()
}

// monitorLine is one line of `redis-cli monitor`: time [db source] "command" ...
var monitorLine = regexp.MustCompile(`^\d+\.\d+ \[\d+ ([^\]]+)\] "([^"]+)"`)

// monitorCounts counts the commands in a `redis-cli monitor` log: those clients sent
// (round trips) and those scripts ran (source "lua"), by command name.
func monitorCounts(path string) (client, script map[string]int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	client, script = map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := monitorLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		cmd := strings.ToLower(m[2])
		if m[1] == "lua" {
			script[cmd]++
		} else {
			client[cmd]++
		}
	}
	return client, script, sc.Err()
}

// clusterRun is one scenario on a cluster of masters: the timed run's throughput and
// CPU, the commands Redis executed (commandstats), and the counting pass's commands.
type clusterRun struct {
	masters             int
	scenario            string
	load                *loadResult
	serverUs, redisUs   float64 // CPU per RPC
	executedPerRPC      float64 // commandstats calls (scripts' commands included) per RPC
	perMasterExec       []float64
	roundTrips          float64 // client commands per RPC, from the counting pass
	perMasterRoundTrips []float64
	clientCmds          map[string]int // the counting pass's client commands by name
	countRPCs           int
}

type clusterMeta struct {
	Masters int   `json:"masters"`
	Ports   []int `json:"ports"`
}

// clusterRuns reads the cluster scenarios run.sh wrote (cluster1.json, cluster3.json
// and their files); a cluster that did not run is left out.
func clusterRuns(dir string) ([]clusterRun, error) {
	var runs []clusterRun
	for _, n := range []int{1, 3} {
		var cm clusterMeta
		ok, err := readJSON(filepath.Join(dir, fmt.Sprintf("cluster%d.json", n)), &cm)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		for _, sc := range []string{"register", "lifecycle"} {
			name := fmt.Sprintf("cluster%d-%s", n, sc)
			l, err := fromLoad(dir, "load-"+name+".json")
			if err != nil || l == nil {
				return nil, fmt.Errorf("%s: %v (found %v)", name, err, l != nil)
			}
			r := clusterRun{masters: n, scenario: sc, load: l, clientCmds: map[string]int{}}
			r.serverUs, r.redisUs, _ = perRPC(dir, name, l.CallsTotal)
			var exec int64
			for _, p := range cm.Ports {
				before, err1 := cmdstats(filepath.Join(dir, fmt.Sprintf("cmdstats-%s-%d.before.txt", name, p)))
				after, err2 := cmdstats(filepath.Join(dir, fmt.Sprintf("cmdstats-%s-%d.after.txt", name, p)))
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("%s commandstats: %v %v", name, err1, err2)
				}
				var m int64
				for c, v := range after {
					if c == "info" { // run.sh's own INFO calls
						continue
					}
					m += v - before[c]
				}
				exec += m
				r.perMasterExec = append(r.perMasterExec, float64(m)/float64(l.CallsTotal))
			}
			r.executedPerRPC = float64(exec) / float64(l.CallsTotal)
			cl, err := fromLoad(dir, "load-"+name+"-count.json")
			if err != nil || cl == nil || cl.CallsTotal == 0 {
				return nil, fmt.Errorf("%s counting pass: %v", name, err)
			}
			r.countRPCs = cl.CallsTotal
			var total int
			for _, p := range cm.Ports {
				client, _, err := monitorCounts(filepath.Join(dir, fmt.Sprintf("monitor-%s-%d.txt", name, p)))
				if err != nil {
					return nil, err
				}
				m := 0
				for c, v := range client {
					r.clientCmds[c] += v
					m += v
				}
				total += m
				r.perMasterRoundTrips = append(r.perMasterRoundTrips, float64(m)/float64(cl.CallsTotal))
			}
			r.roundTrips = float64(total) / float64(cl.CallsTotal)
			runs = append(runs, r)
		}
	}
	return runs, nil
}

func joinFloats(xs []float64, format string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(s, " / ")
}

// clusterSection writes "Redis Cluster: 1 vs 3 masters".
func clusterSection(b *strings.Builder, runs []clusterRun) {
	if len(runs) == 0 {
		return
	}
	b.WriteString("## Redis Cluster: 1 vs 3 masters\n\n")
	b.WriteString("One arbiter (`--redis-url` with the cluster's seeds) on a local Redis Cluster without replicas or persistence: one master holding all 16384 slots, then three masters (`redis-cli --cluster create --cluster-replicas 0`); bench/load's register and lifecycle scenarios as above. Everything shares the same 2 cores, so throughput cannot scale with masters here: read the per-RPC costs, which are what a deployment on real hosts multiplies. Redis CPU is the sum over the redis-server processes (/proc/PID/stat, user + system). Commands executed are `INFO commandstats` deltas (the commands the store's scripts run included, run.sh's INFO excluded) per RPC the load driver made (warmup included). Round trips are counted in a separate pass (a fixed number of iterations, so that `redis-cli monitor` does not slow the timed run): every command a client sent, the arbiter's reads, script calls, subscriptions and the cluster client's slot refreshes, not the commands a script ran.\n\n")
	b.WriteString("| masters | scenario | RPC/s | lifecycles/s | p99 ms (slowest RPC) | server µs CPU per RPC | Redis µs CPU per RPC | Redis commands executed per RPC (per master) | round trips per RPC (per master) | client commands in the counting pass |\n|--:|---|--:|--:|--:|--:|--:|---|---|---|\n")
	for _, r := range runs {
		var rps, p99 float64
		for _, s := range r.load.RPCs {
			rps += s.RPS
			p99 = math.Max(p99, s.P99Ms)
		}
		iters := "–"
		if r.scenario == "lifecycle" {
			iters = fmt.Sprintf("%.0f", r.load.IterPerS)
		}
		fmt.Fprintf(b, "| %d | %s | %.0f | %s | %.2f | %.0f | %.0f | %.2f (%s) | %.3f (%s) | %s in %d RPCs |\n",
			r.masters, r.scenario, rps, iters, p99, r.serverUs, r.redisUs, r.executedPerRPC, joinFloats(r.perMasterExec, "%.2f"),
			r.roundTrips, joinFloats(r.perMasterRoundTrips, "%.3f"), cmdList(r.clientCmds), r.countRPCs)
	}
	b.WriteString("\n")
	if one, three := find(runs, 1, "lifecycle"), find(runs, 3, "lifecycle"); one != nil && three != nil && one.redisUs > 0 {
		fmt.Fprintf(b, "Lifecycle, 3 masters against 1: throughput %.2f ×, Redis CPU per RPC %.2f × (%.0f against %.0f µs, summed over the masters), round trips per RPC %.3f against %.3f. The keys spread over the masters by slot, so on hosts with a core per master the Redis side scales with the masters as long as each master's share (the per-master columns) stays even.\n\n",
			three.load.IterPerS/one.load.IterPerS, three.redisUs/one.redisUs, three.redisUs, one.redisUs, three.roundTrips, one.roundTrips)
	}
}

func find(runs []clusterRun, masters int, scenario string) *clusterRun {
	for i := range runs {
		if runs[i].masters == masters && runs[i].scenario == scenario {
			return &runs[i]
		}
	}
	return nil
}

// Capacity model assumptions, stated in the section.
const (
	rpcPerSessionPerS = 1.0     // a voice session's RPCs per second while active
	coreUtilisation   = 0.5     // the share of a core (arbiter or Redis) planned for
	shardMemoryBudget = 8 << 30 // used_memory planned per Redis shard, bytes
	sessions1M        = 1_000_000
)

// capacitySection writes the capacity model from the run's numbers: server and Redis
// µs of CPU per RPC (the whole lifecycle on Redis; Redis's from the 1-master cluster,
// else the single Redis) and bytes per idle session.
func capacitySection(b *strings.Builder, dir string, runs []clusterRun) {
	serverUs, _, okS := perRPC(dir, "lifecycle-redis", loadCalls(dir, "load-lifecycle-redis.json"))
	srcServer := "the whole lifecycle on Redis (one arbiter, bench/load)"
	redisUs, srcRedis := 0.0, ""
	if r := find(runs, 1, "lifecycle"); r != nil && r.redisUs > 0 {
		redisUs, srcRedis = r.redisUs, "the whole lifecycle on the 1-master cluster"
	} else if _, ru, ok := perRPC(dir, "lifecycle-redis", loadCalls(dir, "load-lifecycle-redis.json")); ok && ru > 0 {
		redisUs, srcRedis = ru, "the whole lifecycle on the single Redis"
	}
	perSession, _, okB := bytesPerIdleSession(dir)
	if !okS || redisUs == 0 || !okB || serverUs == 0 {
		b.WriteString("## Capacity model\n\nNot computed: this run lacks the Redis lifecycle's CPU, Redis's CPU or the bytes per idle session.\n\n")
		return
	}
	b.WriteString("## Capacity model\n\n")
	b.WriteString("Computed from this run's numbers (not a measurement on dedicated hosts: on the shared 2 cores a process's CPU per RPC includes some contention, so these err on the low side).\n\n")
	fmt.Fprintf(b, "Inputs: server CPU per RPC %.0f µs (%s; RegisterCall, speech, transcript, Decide, Complete averaged); Redis CPU per RPC %.0f µs (%s); Redis memory per idle session %.0f B (bench/soak's ended call, `used_memory` delta).\n\n", serverUs, srcServer, redisUs, srcRedis, perSession)
	fmt.Fprintf(b, "Assumptions: an active voice session makes about %.0f RPC per second (its turns' speech events, transcripts, calls and their Decide/Complete), and all 1M sessions are active at once (the worst case; idle ones cost memory only); cores are planned at %.0f %% busy; a Redis shard holds %.0f GiB of data (`used_memory`, before replication; a replica doubles the memory, not the shard count).\n\n", rpcPerSessionPerS, coreUtilisation*100, float64(shardMemoryBudget)/(1<<30))
	arbRPS := 1e6 / serverUs
	redisRPS := 1e6 / redisUs
	shardSessionsMem := float64(shardMemoryBudget) / perSession
	b.WriteString("| quantity | arithmetic | value |\n|---|---|--:|\n")
	fmt.Fprintf(b, "| RPC/s per arbiter core (all of it) | 1e6 / %.0f µs | %.0f |\n", serverUs, arbRPS)
	fmt.Fprintf(b, "| active sessions per arbiter core, at %.0f %% | %.0f × %.2f / %.0f RPC/s | %.0f |\n", coreUtilisation*100, arbRPS, coreUtilisation, rpcPerSessionPerS, arbRPS*coreUtilisation/rpcPerSessionPerS)
	fmt.Fprintf(b, "| RPC/s per Redis shard (one core) | 1e6 / %.0f µs | %.0f |\n", redisUs, redisRPS)
	fmt.Fprintf(b, "| active sessions per Redis shard by CPU, at %.0f %% | %.0f × %.2f / %.0f | %.0f |\n", coreUtilisation*100, redisRPS, coreUtilisation, rpcPerSessionPerS, redisRPS*coreUtilisation/rpcPerSessionPerS)
	fmt.Fprintf(b, "| sessions per Redis shard by memory | %.0f GiB / %.0f B | %.0f |\n", float64(shardMemoryBudget)/(1<<30), perSession, shardSessionsMem)
	mem := sessions1M * perSession
	rate := sessions1M * rpcPerSessionPerS
	arbCores := math.Ceil(rate * serverUs / 1e6 / coreUtilisation)
	shardsCPU := math.Ceil(rate * redisUs / 1e6 / coreUtilisation)
	shardsMem := math.Ceil(mem / float64(shardMemoryBudget))
	fmt.Fprintf(b, "| 1M sessions: Redis memory before replication | 1e6 × %.0f B | %.2f GiB |\n", perSession, mem/(1<<30))
	fmt.Fprintf(b, "| 1M sessions: RPC rate | 1e6 × %.0f RPC/s | %.0f RPC/s |\n", rpcPerSessionPerS, rate)
	fmt.Fprintf(b, "| 1M sessions: arbiter cores | %.0f × %.0f µs / 1e6 / %.2f | %.0f |\n", rate, serverUs, coreUtilisation, arbCores)
	fmt.Fprintf(b, "| 1M sessions: Redis shards by CPU | %.0f × %.0f µs / 1e6 / %.2f | %.0f |\n", rate, redisUs, coreUtilisation, shardsCPU)
	fmt.Fprintf(b, "| 1M sessions: Redis shards by memory | %.2f GiB / %.0f GiB | %.0f |\n", mem/(1<<30), float64(shardMemoryBudget)/(1<<30), shardsMem)
	fmt.Fprintf(b, "| 1M sessions: Redis shards (masters) | max of the two | %.0f |\n", math.Max(shardsCPU, shardsMem))
	b.WriteString("\n")
	limit := "CPU"
	if shardsMem > shardsCPU {
		limit = "memory"
	}
	fmt.Fprintf(b, "So Redis shards are bound by %s at this RPC rate; a deployment with fewer RPCs per session per second needs proportionally fewer arbiter cores and CPU-bound shards, and the memory figure holds for sessions that stay idle until their --idle-ttl.\n\n", limit)
}

// benchLine is one `go test -bench` result line: name, iterations, then value-unit
// pairs.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// storeBenchSection writes the store benchmarks run.sh ran (gobench-store.txt): every
// result line with ns/op and its own metrics (B/record, roundtrips/op).
func storeBenchSection(b *strings.Builder, dir string) {
	body, err := os.ReadFile(filepath.Join(dir, "gobench-store.txt"))
	if err != nil {
		return
	}
	var rows []string
	pkg := ""
	for _, line := range strings.Split(string(body), "\n") {
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimPrefix(p, "github.com/voicearbiter/arbiter/")
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := strings.Fields(m[3])
		var ns, other []string
		for i := 0; i+1 < len(f); i += 2 {
			v, unit := f[i], f[i+1]
			if unit == "ns/op" {
				x, _ := strconv.ParseFloat(v, 64)
				ns = append(ns, fmt.Sprintf("%.1f", x/1e3))
				continue
			}
			other = append(other, v+" "+unit)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s |", pkg, strings.TrimPrefix(m[1], "Benchmark"), m[2], strings.Join(ns, ""), strings.Join(other, ", ")))
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("## Store path: go test -bench (this run)\n\n")
	b.WriteString("The store benchmarks, run once each by bench/run.sh (`go test -run '^$' -bench 'BenchmarkEncode|BenchmarkDecode|BenchmarkTransition|BenchmarkHotPath' -benchtime 160x -count 1 ./store/sessioncodec ./store/memory ./store/redisstore`; the Redis ones start their own redis-server). Times from one short run on shared cores are rough; the counts are exact: bytes of a session record (B/record) and Redis round trips per operation (roundtrips/op, counted by a go-redis hook; RegisterCall makes a new session every 16 calls, which it creates without a read).\n\n")
	b.WriteString("| package | benchmark | iterations | µs/op | counts |\n|---|---|--:|--:|---|\n")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	b.WriteString("\n")
}

// recordBytes is the B/record of the first `go test -bench` line in gobench-store.txt
// whose name has prefix (0 when none).
func recordBytes(dir, prefix string) float64 {
	body, err := os.ReadFile(filepath.Join(dir, "gobench-store.txt"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(body), "\n") {
		m := benchLine.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(m[1], prefix) {
			continue
		}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			if f[i+1] == "B/record" {
				x, _ := strconv.ParseFloat(f[i], 64)
				return x
			}
		}
	}
	return 0
}

// whySection explains the goals gs does not meet with this run's profile and counts:
// the server profile's largest parts (pprof-server-cum-all.txt), Redis CPU and round
// trips per RPC, the hand-off with few sessions in flight, and what an idle session's
// bytes are made of. It writes nothing when every goal is met.
func whySection(b *strings.Builder, dir string, gs []goal, runs []clusterRun) {
	unmet := map[string]bool{}
	anyUnmet := false
	for _, g := range gs {
		if g.known && !g.met {
			anyUnmet = true
			switch {
			case strings.Contains(g.scenario, "Redis bytes"):
				unmet["bytes"] = true
			case strings.Contains(g.scenario, "wake"):
				unmet["wake"] = true
			case strings.Contains(g.scenario, "Redis"):
				unmet["redis"] = true
			default:
				unmet["server"] = true
			}
		}
	}
	if !anyUnmet {
		return
	}
	b.WriteString("### Why the goals marked **no** are not met\n\n")
	if unmet["server"] {
		if shares, duration, err := profileShares(filepath.Join(dir, "pprof-server-cum-all.txt")); err == nil {
			var parts []share
			for i, sh := range shares {
				if i >= 2 && sh.pct >= 0 { // the first two are the whole RPC and its chain
					parts = append(parts, sh)
				}
			}
			sort.SliceStable(parts, func(i, j int) bool { return parts[i].pct > parts[j].pct })
			if len(parts) > 6 {
				parts = parts[:6]
			}
			var s []string
			for _, p := range parts {
				s = append(s, fmt.Sprintf("%s %.1f %%", strings.TrimLeft(p.label, "· "), p.pct))
			}
			es, _, ok1 := perRPC(dir, "load-echo1", loadCalls(dir, "load-echo1.json"))
			rs, _, ok2 := perRPC(dir, "register-memory", loadCalls(dir, "load-register-memory.json"))
			if ok1 && ok2 {
				fmt.Fprintf(b, "- Embedded store (throughput, p99, CPU): the server spends %.0f µs of CPU per RegisterCall where a bare gRPC server spends %.0f; client and server share the 2 cores, so every extra µs is throughput lost. ", rs, es)
			} else {
				b.WriteString("- Embedded store: ")
			}
			fmt.Fprintf(b, "The server profile under ghz RegisterCall (%s; \"Where RegisterCall's time goes\" below) has its largest parts in: %s (cumulative shares; parts nest).\n", duration, strings.Join(s, "; "))
		}
	}
	if unmet["redis"] {
		_, ru, ok := perRPC(dir, "lifecycle-redis", loadCalls(dir, "load-lifecycle-redis.json"))
		rsRedis, _, ok2 := perRPC(dir, "lifecycle-redis", loadCalls(dir, "load-lifecycle-redis.json"))
		rsMem, _, ok3 := perRPC(dir, "lifecycle-memory", loadCalls(dir, "load-lifecycle-memory.json"))
		if ok && ok2 && ok3 {
			fmt.Fprintf(b, "- Redis: a lifecycle RPC costs the server %.0f µs of CPU on Redis against %.0f µs on the embedded store, and Redis %.0f µs more, all on the same 2 cores as the client", rsRedis, rsMem, ru)
			if r := find(runs, 1, "lifecycle"); r != nil {
				fmt.Fprintf(b, "; it makes %.2f round trips per RPC (%s in %d RPCs, Redis Cluster section)", r.roundTrips, cmdList(r.clientCmds), r.countRPCs)
			}
			if r := find(runs, 1, "register"); r != nil {
				fmt.Fprintf(b, "; a RegisterCall in a new session makes %.2f", r.roundTrips)
			}
			b.WriteString(".\n")
		}
	}
	if unmet["wake"] {
		if h, err := fromLoad(dir, "load-handoff-redis-c5.json"); err == nil && h != nil && h.Handoff["after_ack"].Count > 0 {
			a := h.Handoff["after_ack"]
			fmt.Fprintf(b, "- Cross-replica wake: with %d sessions in flight the same hand-off takes p50 %.2f / p99 %.2f / max %.2f ms after A answered, ", h.Concurrency, a.P50Ms, a.P99Ms, a.MaxMs)
			if a.P99Ms <= 2 {
				b.WriteString("within the goal, so the tail at 50 comes with the load (two replicas, Redis and the client on 2 cores) rather than from the hand-off itself")
			} else {
				b.WriteString("over the goal too, so the tail is not only this run's own load: other jobs on the machine, or the hand-off path itself (the woken replica's pub/sub reader and the small read that confirms its answer, version and content, before it is given)")
			}
			b.WriteString("; the server profile above is of one replica under RegisterCall and does not show the woken replica.\n")
		}
	}
	if unmet["bytes"] {
		if per, _, ok := bytesPerIdleSession(dir); ok {
			if rec := recordBytes(dir, "BenchmarkEncode/idle"); rec > 0 {
				fmt.Fprintf(b, "- Redis bytes per idle session: the session's record is %.0f B (store/sessioncodec BenchmarkEncode/idle, B/record, a session of the same shape) of the %.0f B Redis holds per session; the other %.0f B are the key, the hash's other fields, the expiry entry and the allocator's size class for the value.\n", rec, per, per-rec)
			}
		}
	}
	b.WriteString("\n")
}

// cmdList renders command counts, largest first: "evalsha 1500, hmget 600".
func cmdList(m map[string]int) string {
	names := make([]string, 0, len(m))
	for c := range m {
		names = append(names, c)
	}
	sort.Slice(names, func(i, j int) bool {
		if m[names[i]] != m[names[j]] {
			return m[names[i]] > m[names[j]]
		}
		return names[i] < names[j]
	})
	s := make([]string, len(names))
	for i, c := range names {
		s[i] = fmt.Sprintf("%s %d", c, m[c])
	}
	return strings.Join(s, ", ")
}
