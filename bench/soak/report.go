package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"time"
)

// Verdict thresholds.
const (
	backRatio  = 1.20 // server heap in use after expiry: at most 1.2 × the baseline
	flatRatio  = 1.20 // wave 2 against wave 1: peaks within ±20%, after-expiry at most +20%
	redisRatio = 1.20 // Redis used_memory after expiry: at most 1.2 × its baseline
)

type check struct {
	what, measured string
	ok             bool
}

func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

// peak is the largest value of f while wave w's sessions were alive: from the wave's
// start to the idle TTL after its end. A Go heap in use saws between the live heap and
// the heap goal; its largest sample over the TTL is close to the goal.
func peak(r *Result, w int, f func(Sample) int64) int64 {
	if w < 1 || w > len(r.Waves) {
		return 0
	}
	wv := r.Waves[w-1]
	ttl, _ := time.ParseDuration(r.IdleTTL)
	var m int64
	for _, s := range r.Samples {
		if s.T >= wv.StartT && s.T <= wv.EndT+ttl.Seconds() {
			m = max(m, f(s))
		}
	}
	return m
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return math.Inf(1)
	}
	return float64(a) / float64(b)
}

func within(a, b int64, r float64) bool { x := ratio(a, b); return x <= r && x >= 1/r }

var (
	heapInuse = func(s Sample) int64 { return s.HeapInuse }
	rss       = func(s Sample) int64 { return s.RSS }
	usedMem   = func(s Sample) int64 { return s.UsedMem }
	dbsize    = func(s Sample) int64 { return s.DBSize }
)

func checks(r *Result) []check {
	cp := r.Checkpoints
	base := cp["baseline"]
	var cs []check
	errs, n := 0, 0
	for _, w := range r.Waves {
		errs += w.Errors + w.ProbeErrors
		n += w.N
	}
	cs = append(cs, check{"every call ran its whole life, no error responses (calls, probes, background health checks)",
		fmt.Sprintf("%d calls, %d errors, %d probe errors, %d of %d health checks failed", n, errs-sumProbeErr(r), sumProbeErr(r), r.HealthErr, r.HealthOK+r.HealthErr),
		errs == 0 && r.HealthErr == 0 && len(r.Waves) == 2})
	for i, w := range r.Waves {
		k := i + 1
		cs = append(cs, check{fmt.Sprintf("wave %d's sessions exist after it and are gone after the idle TTL (GetSession on %d of them)", k, w.Probe),
			fmt.Sprintf("found %d, then %d", w.FoundAfter, w.FoundExpiry), w.FoundAfter == w.Probe && w.FoundExpiry == 0})
	}
	for i := range r.Waves {
		k := i + 1
		after := cp[fmt.Sprintf("after expiry %d", k)]
		notes := []string{}
		if !r.Waves[i].GCAfterExp {
			notes = append(notes, "**no GC ran after the last session expired**")
		}
		if base.PostGC == 0 || after.PostGC == 0 {
			notes = append(notes, "**a checkpoint was not taken right after a GC**")
		}
		note := ""
		if len(notes) > 0 {
			note = "; " + strings.Join(notes, ", ")
		}
		cs = append(cs, check{fmt.Sprintf("server heap in use after expiry %d at most %.1f × the baseline (both after GCs)", k, backRatio),
			fmt.Sprintf("%s MiB (baseline %s, wave %d's peak %s) = %.2f × baseline%s",
				mib(after.HeapInuse), mib(base.HeapInuse), k, mib(peak(r, k, heapInuse)), ratio(after.HeapInuse, base.HeapInuse), note),
			ratio(after.HeapInuse, base.HeapInuse) <= backRatio && len(notes) == 0})
	}
	if len(r.Waves) == 2 {
		e1, e2 := cp["after expiry 1"], cp["after expiry 2"]
		for _, m := range []struct {
			name string
			f    func(Sample) int64
		}{{"server heap in use", heapInuse}, {"server RSS", rss}} {
			p1, p2 := peak(r, 1, m.f), peak(r, 2, m.f)
			cs = append(cs, check{fmt.Sprintf("%s: wave 2's peak within ±%.0f%% of wave 1's", m.name, (flatRatio-1)*100),
				fmt.Sprintf("%s / %s MiB = %.2f", mib(p2), mib(p1), ratio(p2, p1)), within(p2, p1, flatRatio)})
			a1, a2 := m.f(e1), m.f(e2)
			cs = append(cs, check{fmt.Sprintf("%s: after expiry 2 at most %.0f%% above after expiry 1 (no growth from wave to wave)", m.name, (flatRatio-1)*100),
				fmt.Sprintf("%s / %s MiB = %.2f", mib(a2), mib(a1), ratio(a2, a1)), ratio(a2, a1) <= flatRatio})
		}
	}
	if r.Store == "redis" {
		for i := range r.Waves {
			k := i + 1
			after := cp[fmt.Sprintf("after expiry %d", k)]
			cs = append(cs, check{fmt.Sprintf("Redis after expiry %d: DBSIZE 0 (peak %d keys)", k, peak(r, k, dbsize)),
				fmt.Sprintf("%d keys, %d expired by TTL so far", after.DBSize, after.ExpiredKeys), after.DBSize == 0})
			cs = append(cs, check{fmt.Sprintf("Redis used_memory after expiry %d at most %.1f × its baseline", k, redisRatio),
				fmt.Sprintf("%s MiB (baseline %s, wave peak %s) = %.2f × baseline", mib(after.UsedMem), mib(base.UsedMem), mib(peak(r, k, usedMem)), ratio(after.UsedMem, base.UsedMem)),
				ratio(after.UsedMem, base.UsedMem) <= redisRatio})
		}
		if len(r.Waves) == 2 {
			p1, p2 := peak(r, 1, usedMem), peak(r, 2, usedMem)
			cs = append(cs, check{fmt.Sprintf("Redis used_memory: wave 2's peak within ±%.0f%% of wave 1's", (flatRatio-1)*100),
				fmt.Sprintf("%s / %s MiB = %.2f", mib(p2), mib(p1), ratio(p2, p1)), within(p2, p1, flatRatio)})
		}
	}
	return cs
}

// summary is one line of numbers per store for the verdict.
func summary(r *Result) string {
	cp := r.Checkpoints
	b, e1, e2 := cp["baseline"], cp["after expiry 1"], cp["after expiry 2"]
	c := cp["cold start"]
	s := fmt.Sprintf("%s: server heap in use %s MiB at cold start, %s at baseline, %s / %s at the peaks of the two waves, %s / %s after they expired; RSS %s, %s, %s / %s, %s / %s MiB",
		storeTitle(r.Store), mib(c.HeapInuse), mib(b.HeapInuse), mib(peak(r, 1, heapInuse)), mib(peak(r, 2, heapInuse)), mib(e1.HeapInuse), mib(e2.HeapInuse),
		mib(c.RSS), mib(b.RSS), mib(peak(r, 1, rss)), mib(peak(r, 2, rss)), mib(e1.RSS), mib(e2.RSS))
	if r.Store == "redis" {
		s += fmt.Sprintf("; Redis %d keys and %s MiB used at baseline, %d / %d keys and %s / %s MiB at the peaks, %d / %d keys and %s / %s MiB after expiry",
			b.DBSize, mib(b.UsedMem), peak(r, 1, dbsize), peak(r, 2, dbsize), mib(peak(r, 1, usedMem)), mib(peak(r, 2, usedMem)),
			e1.DBSize, e2.DBSize, mib(e1.UsedMem), mib(e2.UsedMem))
	}
	return s + "."
}

func sumProbeErr(r *Result) int {
	n := 0
	for _, w := range r.Waves {
		n += w.ProbeErrors
	}
	return n
}

func machine() []string {
	cpu := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		fmt.Sscanf(strings.SplitN(string(b), "\n", 2)[0], "MemTotal: %d kB", &kb)
		mem = fmt.Sprintf("%.0f GiB memory", float64(kb)/(1<<20))
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return []string{
		fmt.Sprintf("%d cores, %s; %s; Linux %s", runtime.NumCPU(), cpu, mem, strings.TrimSpace(string(kernel))),
		fmt.Sprintf("%s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH),
	}
}

// spark draws values as a line of block characters, from 0 to the largest value.
func spark(vs []int64) string {
	const bars = "▁▂▃▄▅▆▇█"
	rs := []rune(bars)
	var hi int64
	for _, v := range vs {
		hi = max(hi, v)
	}
	var b strings.Builder
	for _, v := range vs {
		i := 0
		if hi > 0 {
			i = int(float64(v) / float64(hi) * float64(len(rs)-1))
		}
		b.WriteRune(rs[max(0, min(i, len(rs)-1))])
	}
	return b.String()
}

func writeReport(files []string, out, command, redisVer, commit string) error {
	if len(files) == 0 {
		return fmt.Errorf("-report needs result files")
	}
	var rs []*Result
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		r := &Result{}
		if err := json.Unmarshal(b, r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		rs = append(rs, r)
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	r0 := rs[0]
	p("# Soak: memory after sessions expire\n\n")
	p("Written by `bench/soak.sh` on %s (issue 5: \"A soak run (bounded, a few minutes) with 10,000 sessions shows flat memory on the server and in Redis after sessions expire\"). Reproduce with:\n\n", runDate(r0.Started))
	p("```sh\n%s\n```\n\n", command)
	p("## Machine\n\n")
	for _, l := range machine() {
		p("- %s\n", l)
	}
	if redisVer != "" {
		p("- %s, its own instance on 127.0.0.1 (`--save \"\" --appendonly no`)\n", redisVer)
	}
	if commit != "" {
		p("- arbiter at %s\n", commit)
	}
	p("- the driver, the arbiter and Redis share these cores; all traffic is on 127.0.0.1.\n\n")

	p("## Method\n\n")
	warm := 0
	if r0.Warmup != nil {
		warm = r0.Warmup.N
	}
	p("For each store a fresh `arbiter serve --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --idle-ttl %s --tools testdata/tools/booking.yaml` "+
		"(the Redis one with `--redis-url` to a redis-server of its own, empty at the start, `--save \"\" --appendonly no`). `bench/soak` then runs, "+
		"with %d calls in flight, each call in a new session and each a whole life — RegisterCall book_slot with a slot (EXECUTE), "+
		"ReportSpeech USER_ACTIVITY_START and _END, ReportTranscript \"Stop.\", Decide(prepared, wait 0) → CANCEL, Complete(CANCELLED), "+
		"after which the session is idle and holds its finished call, job and business-key dedupe entry until its idle TTL runs out:\n\n",
		r0.IdleTTL, r0.Concurrency)
	p("1. **cold start**: a sample of the server as started;\n")
	p("2. **warm-up**: %d sessions (a wave's worth), then their expiry (as in 4), so that the baseline is the idle server as it is "+
		"after such a wave with no session alive — the runtime overhead: connection pools and buffers grown, lazy initialisation "+
		"done, and the embedded store's session map at the size a wave grows it to (a Go map keeps its buckets when its entries "+
		"are deleted; see the note under the embedded store). The cold start is reported beside it;\n", warm)
	p("3. **baseline**: the idle server for a few seconds;\n")
	p("4. **wave 1**: %d sessions; **expiry 1**: waits the idle TTL after the wave's last call plus the memory store's 1 s janitor "+
		"period, at least 6 s more, and then until the server has run a garbage collection after that moment (and Redis has no key "+
		"left), at most 40 s more, then 10 s for the runtime to hand the freed pages back to the kernel;\n", r0.Sessions)
	p("5. **wave 2** and **expiry 2**: the same with %d new session ids.\n\n", r0.Sessions)
	p("A checkpoint sample ends each phase; in between a sample is taken every %s: the server's RSS (`VmRSS` in `/proc/PID/status`), "+
		"its Go heap from `/metrics` (`go_memstats_heap_inuse_bytes`, `heap_alloc`, `next_gc` — the heap goal, about twice the heap "+
		"that was live at the last collection —, the collection count, goroutines), and for Redis `DBSIZE` and `INFO` "+
		"(`used_memory`, `used_memory_rss`, `expired_keys`). The cold-start, baseline and after-expiry checkpoints sample the "+
		"server 100 ms after each of its next 5 garbage collections (polling `/metrics` every 50 ms) and keep the sample with the "+
		"median heap in use, so that it is what the collector left, not the garbage of the last seconds; the after-wave "+
		"checkpoints are taken at once. A Go heap shrinks "+
		"only when the collector runs, and an idle Go process collects only every 2 minutes, so throughout the soak the driver also "+
		"sends %.0f gRPC health checks a second: they touch no session and allocate enough for the collector to run while no call "+
		"comes, as a server in service sees some traffic. Expiry is also observed through the API: GetSession on 200 of each wave's "+
		"session ids, spread over the wave, right after the wave (all found) and after the expiry wait (NOT_FOUND). The memory store "+
		"exports no session count; the probe and the heap stand for it.\n\n", r0.Interval, r0.HealthRate)
	p("Thresholds: the server's heap in use after each expiry at most %.1f × the baseline (which includes the runtime overhead, "+
		"from the warm-up); wave 2's peak heap in use and RSS within ±%.0f%% of wave 1's (a peak is the largest sample "+
		"while the wave's sessions are alive, from its first call to the idle TTL after its last: a heap in use saws between the "+
		"live heap and the goal, and its top over that time is close to the goal), and after expiry 2 at most %.0f%% above "+
		"after expiry 1 (no growth from one wave to the next); Redis back to 0 keys, `used_memory` at most %.1f × its baseline, and "+
		"wave 2's peak within ±%.0f%% of wave 1's. RSS is not required to fall back to its baseline: the Go runtime returns freed "+
		"pages to the kernel gradually (its background scavenger) and keeps what the heap may grow to again; the check is that it "+
		"does not grow from wave to wave. The heap goal is shown but not judged: when the server idles it is set by the heap live at "+
		"one collection, requests in flight included, and moves by about 2 MiB from one collection to the next.\n\n", backRatio, (flatRatio-1)*100, (flatRatio-1)*100, redisRatio, (flatRatio-1)*100)

	p("## Verdict\n\n")
	allOK := true
	for _, r := range rs {
		for _, c := range checks(r) {
			allOK = allOK && c.ok
		}
	}
	if allOK {
		p("**Flat: every check below holds.**\n\n")
	} else {
		p("**Not every check holds**; see the rows marked **no**.\n\n")
	}
	for _, r := range rs {
		p("- %s\n", summary(r))
	}
	p("\n")
	for _, r := range rs {
		p("### %s\n\n| check | measured | met |\n|---|---|---|\n", storeTitle(r.Store))
		for _, c := range checks(r) {
			ok := "yes"
			if !c.ok {
				ok = "**no**"
			}
			p("| %s | %s | %s |\n", c.what, c.measured, ok)
		}
		p("\n")
	}

	for _, r := range rs {
		p("## %s\n\n", storeTitle(r.Store))
		p("%.0f s in all; %d background health checks (%d failed).\n\n", r.Seconds, r.HealthOK+r.HealthErr, r.HealthErr)
		p("| wave | sessions | ok | errors | seconds | calls/s | found after wave | found after expiry | GC after expiry |\n|---|--:|--:|--:|--:|--:|--:|--:|---|\n")
		rows := r.Waves
		names := []string{}
		if r.Warmup != nil {
			rows = append([]Wave{*r.Warmup}, rows...)
			names = append(names, "warm-up")
		}
		for i := range r.Waves {
			names = append(names, fmt.Sprint(i+1))
		}
		for i, w := range rows {
			gc := "yes"
			if !w.GCAfterExp {
				gc = "no"
			}
			after := fmt.Sprintf("%d / %d", w.FoundAfter, w.Probe)
			if names[i] == "warm-up" {
				after = "(not probed)"
			}
			p("| %s | %d | %d | %d | %.1f | %.0f | %s | %d / %d | %s |\n", names[i], w.N, w.OK, w.Errors, w.Seconds, w.CallsPerS, after, w.FoundExpiry, w.Probe, gc)
			if w.FirstError != "" {
				p("\nFirst error of wave %s: `%s` (codes %v)\n\n", names[i], w.FirstError, w.ErrorCodes)
			}
		}
		p("\nCheckpoints (MiB):\n\n")
		head := "| checkpoint | t s | calls done | RSS | heap in use | heap alloc | heap goal | heap objects | GCs | goroutines |"
		sep := "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
		if r.Store == "redis" {
			head += " Redis keys | used_memory | used_memory_rss | expired_keys |"
			sep += "--:|--:|--:|--:|"
		}
		p("%s\n%s\n", head, sep)
		for _, name := range checkpointNames {
			s, ok := r.Checkpoints[name]
			if !ok {
				continue
			}
			if s.PostGC > 0 {
				name += fmt.Sprintf(" (median of %d after GCs)", s.PostGC)
			}
			p("| %s | %.0f | %d | %s | %s | %s | %s | %d | %d | %d |", name, s.T, s.Completed, mib(s.RSS), mib(s.HeapInuse), mib(s.HeapAlloc), mib(s.NextGC), s.HeapObj, s.GCs, s.Goroutines)
			if r.Store == "redis" {
				p(" %d | %s | %s | %d |", s.DBSize, mib(s.UsedMem), mib(s.UsedMemRSS), s.ExpiredKeys)
			}
			p("\n")
		}
		p("\nPeaks during the waves (MiB): heap in use %s and %s, RSS %s and %s", mib(peak(r, 1, heapInuse)), mib(peak(r, 2, heapInuse)), mib(peak(r, 1, rss)), mib(peak(r, 2, rss)))
		if r.Store == "redis" {
			p(", Redis used_memory %s and %s", mib(peak(r, 1, usedMem)), mib(peak(r, 2, usedMem)))
		}
		p(".\n\n")
		if r.Store == "memory" {
			c, b, e1, e2 := r.Checkpoints["cold start"], r.Checkpoints["baseline"], r.Checkpoints["after expiry 1"], r.Checkpoints["after expiry 2"]
			p("The runtime overhead, against the cold start: the baseline's heap in use is %+.1f MiB and its live bytes (`heap_alloc` "+
				"right after a GC) %+.1f MiB above the cold start's, and after the two expiries %+.1f / %+.1f MiB in use and %+.1f / %+.1f "+
				"MiB live. Part of it is the embedded store's session map: a Go map does not give back the buckets it grew to when its "+
				"entries are deleted; measured apart from the arbiter, a map of 10,000 such keys (session ids of this soak's shape) keeps about 0.8 MiB once emptied, and "+
				"reuses it when it fills again. That is bounded by the most sessions alive at once, not by how many have come and gone, "+
				"which is why the baseline follows a warm-up of a whole wave.\n\n",
				float64(b.HeapInuse-c.HeapInuse)/(1<<20), float64(b.HeapAlloc-c.HeapAlloc)/(1<<20),
				float64(e1.HeapInuse-c.HeapInuse)/(1<<20), float64(e2.HeapInuse-c.HeapInuse)/(1<<20),
				float64(e1.HeapAlloc-c.HeapAlloc)/(1<<20), float64(e2.HeapAlloc-c.HeapAlloc)/(1<<20))
		}

		// Time series: one character per sample, scaled to each series' maximum.
		p("Time series, one character per sample (every %s and at each checkpoint, %d samples; each line scaled from 0 to its own maximum; "+
			"phase: w warm-up and its expiry, b baseline, W wave, . expiry wait, | checkpoint):\n\n```\n", r.Interval, len(r.Samples))
		col := func(f func(Sample) int64) []int64 {
			vs := make([]int64, len(r.Samples))
			for i, s := range r.Samples {
				vs[i] = f(s)
			}
			return vs
		}
		phases := make([]rune, len(r.Samples))
		for i, s := range r.Samples {
			switch {
			case s.Mark != "":
				phases[i] = '|'
			case strings.HasPrefix(s.Phase, "warm-up"):
				phases[i] = 'w'
			case strings.HasPrefix(s.Phase, "wave"):
				phases[i] = 'W'
			case strings.HasPrefix(s.Phase, "expiry"):
				phases[i] = '.'
			default:
				phases[i] = 'b'
			}
		}
		maxOf := func(vs []int64) string {
			var m int64
			for _, v := range vs {
				m = max(m, v)
			}
			return mib(m)
		}
		series := []struct {
			name string
			f    func(Sample) int64
		}{{"RSS", rss}, {"heap in use", heapInuse}, {"heap goal", func(s Sample) int64 { return s.NextGC }}}
		if r.Store == "redis" {
			series = append(series, struct {
				name string
				f    func(Sample) int64
			}{"Redis used_memory", usedMem})
		}
		p("%-34s %s\n", "phase", string(phases))
		for _, s := range series {
			vs := col(s.f)
			p("%-34s %s\n", fmt.Sprintf("%s (max %s MiB)", s.name, maxOf(vs)), spark(vs))
		}
		if r.Store == "redis" {
			vs := col(dbsize)
			var m int64
			for _, v := range vs {
				m = max(m, v)
			}
			p("%-34s %s\n", fmt.Sprintf("Redis keys (max %d)", m), spark(vs))
		}
		p("```\n\n")
		// And a table at a coarser stride.
		stride := max(1, len(r.Samples)/25)
		p("<details><summary>Samples (every %d of them, the checkpoints, and the last)</summary>\n\n", stride)
		th := "| t s | phase | calls done | RSS | heap in use | heap goal | GCs |"
		ts := "|--:|---|--:|--:|--:|--:|--:|"
		if r.Store == "redis" {
			th += " Redis keys | used_memory |"
			ts += "--:|--:|"
		}
		p("%s\n%s\n", th, ts)
		for i, s := range r.Samples {
			if i%stride != 0 && s.Mark == "" && i != len(r.Samples)-1 {
				continue
			}
			ph := s.Phase
			if s.Mark != "" {
				ph = "**" + s.Mark + "**"
			}
			p("| %.0f | %s | %d | %s | %s | %s | %d |", s.T, ph, s.Completed, mib(s.RSS), mib(s.HeapInuse), mib(s.NextGC), s.GCs)
			if r.Store == "redis" {
				p(" %d | %s |", s.DBSize, mib(s.UsedMem))
			}
			p("\n")
		}
		p("\n</details>\n\n")
	}
	if out == "" {
		_, err := os.Stdout.WriteString(b.String())
		return err
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

// runDate is when the soak started, to the minute.
func runDate(started string) string {
	t, err := time.Parse("2006-01-02 15:04:05 UTC", started)
	if err != nil {
		return started
	}
	return t.Format("2006-01-02 15:04 UTC")
}

func storeTitle(s string) string {
	switch s {
	case "memory":
		return "Embedded store"
	case "redis":
		return "Redis store"
	}
	return s
}
