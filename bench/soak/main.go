// Command soak shows whether the arbiter's memory, and Redis's, comes back once sessions
// expire: it runs 10,000 whole calls (each in a session of its own), waits past the idle
// TTL, runs 10,000 more in new sessions, waits again, and samples the server's memory
// (and Redis's) every 2 s throughout. bench/soak.sh starts the processes and runs it
// once per store; -report turns the results into bench/SOAK.md.
//
//	soak -addr A -metrics M -pid P [-redis R] -idle-ttl 30s -o memory.json   # one soak
//	soak -report -o SOAK.md memory.json redis.json                          # the report
//	soak -freeport                                                          # for soak.sh
//
// One call's life, as in bench/load's lifecycle mode but decided at once: RegisterCall
// book_slot (EXECUTE), ReportSpeech USER_ACTIVITY_START and _END, ReportTranscript
// "Stop.", Decide(prepared, wait 0) -> CANCEL, Complete(CANCELLED).
//
// Phases: cold start; warm-up (-warmup sessions, by default as many as a wave, and
// their expiry); baseline (-baseline); wave 1 (-sessions, -c in flight); expiry 1 (the
// idle TTL after the wave's last call, at least -settle more, then until the server has
// run a garbage collection after that moment, at most -max-settle, then -rss-settle);
// wave 2 (new session ids); expiry 2. A checkpoint sample ends each phase; the sampler
// runs every -interval in between. While the soak runs, a background loop sends gRPC
// health checks at -health-rate per second: they touch no session, and they allocate
// enough for the server's garbage collector to run while no call comes (a Go heap
// shrinks only at a collection, and an idle Go process collects only every 2 minutes),
// the way any live server sees some traffic.
//
// Expiry is observed from outside: GetSession on -probe session ids spread over each
// wave (found right after the wave, NOT_FOUND once expired), and, with -redis, DBSIZE.
// Every loop is bounded in count and time (-max-duration for the whole run), and only
// loopback addresses are accepted.
package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// Sample is one look at the server (and Redis).
type Sample struct {
	T     float64 `json:"t_s"` // seconds since the soak started
	Phase string  `json:"phase"`
	Mark  string  `json:"mark,omitempty"` // checkpoint name, on checkpoint samples
	// PostGC: how many samples, each taken right after a garbage collection, this
	// checkpoint is the median of (0: an ordinary sample).
	PostGC int `json:"post_gc,omitempty"`
	// Server process, from /proc/PID/status.
	RSS int64 `json:"rss_bytes"`
	// Server Go runtime, from its /metrics.
	HeapInuse  int64   `json:"heap_inuse_bytes"`
	HeapAlloc  int64   `json:"heap_alloc_bytes"`
	HeapObj    int64   `json:"heap_objects"`
	NextGC     int64   `json:"next_gc_bytes"` // the heap goal: twice the live heap at the last GC, plus stacks and globals
	GCs        int64   `json:"gc_count"`
	LastGC     float64 `json:"last_gc_unix"`
	Goroutines int64   `json:"goroutines"`
	// Calls completed so far (both waves).
	Completed int64 `json:"completed"`
	// Redis, with -redis.
	DBSize      int64  `json:"redis_dbsize"`
	UsedMem     int64  `json:"redis_used_memory"`
	UsedMemRSS  int64  `json:"redis_used_memory_rss"`
	ExpiredKeys int64  `json:"redis_expired_keys"`
	Err         string `json:"err,omitempty"`
}

// Wave is one wave of sessions.
type Wave struct {
	N          int            `json:"sessions"`
	OK         int            `json:"ok"`
	Errors     int            `json:"errors"`
	ErrorCodes map[string]int `json:"error_codes"`
	FirstError string         `json:"first_error,omitempty"`
	Seconds    float64        `json:"seconds"`
	CallsPerS  float64        `json:"calls_per_s"`
	// GetSession on -probe of the wave's ids: found right after the wave, and after
	// the expiry wait.
	FoundAfter  int `json:"probe_found_after_wave"`
	FoundExpiry int `json:"probe_found_after_expiry"`
	Probe       int `json:"probe"`
	ProbeErrors int `json:"probe_errors"`
	// When the wave's first call started and its last call finished, and when the
	// expiry checkpoint was taken (seconds since the soak started).
	StartT     float64 `json:"start_t_s"`
	EndT       float64 `json:"end_t_s"`
	ExpiryT    float64 `json:"expiry_t_s"`
	GCAfterExp bool    `json:"gc_after_expiry"` // the server collected after the last session expired
}

// Result is one soak.
type Result struct {
	Store       string            `json:"store"`
	Addr        string            `json:"addr"`
	Sessions    int               `json:"sessions"`
	Concurrency int               `json:"concurrency"`
	IdleTTL     string            `json:"idle_ttl"`
	Interval    string            `json:"interval"`
	HealthRate  float64           `json:"health_rate"`
	HealthOK    int64             `json:"health_ok"`
	HealthErr   int64             `json:"health_errors"`
	Started     string            `json:"started"`
	Seconds     float64           `json:"seconds"`
	Warmup      *Wave             `json:"warmup,omitempty"`
	Waves       []Wave            `json:"waves"`
	Checkpoints map[string]Sample `json:"checkpoints"`
	Samples     []Sample          `json:"samples"`
}

// Checkpoint names, in order.
var checkpointNames = []string{"cold start", "baseline", "after wave 1", "after expiry 1", "after wave 2", "after expiry 2"}

func main() {
	var (
		addr       = flag.String("addr", "", "arbiter gRPC address (loopback only)")
		metrics    = flag.String("metrics", "", "arbiter metrics address host:port (loopback only)")
		pid        = flag.Int("pid", 0, "arbiter process id (for VmRSS)")
		redisAddr  = flag.String("redis", "", "Redis host:port the arbiter uses (loopback only; empty: embedded store)")
		store      = flag.String("store", "", "label of the store (default memory, or redis with -redis)")
		sessions   = flag.Int("sessions", 10000, "sessions per wave")
		warmup     = flag.Int("warmup", -1, "sessions of the warm-up before the baseline (0: none; -1: as many as -sessions)")
		conc       = flag.Int("c", 50, "calls in flight")
		ttl        = flag.Duration("idle-ttl", 30*time.Second, "the arbiter's --idle-ttl")
		baseline   = flag.Duration("baseline", 6*time.Second, "sampling before the first wave (after the warm-up's expiry)")
		settle     = flag.Duration("settle", 6*time.Second, "least wait past the idle TTL after a wave")
		maxSettle  = flag.Duration("max-settle", 40*time.Second, "most wait past the idle TTL for a GC to run")
		rssSettle  = flag.Duration("rss-settle", 10*time.Second, "wait after that GC, for RSS to follow the heap")
		interval   = flag.Duration("interval", 2*time.Second, "sampling interval")
		healthRate = flag.Float64("health-rate", 200, "background gRPC health checks per second (0: none)")
		probe      = flag.Int("probe", 200, "session ids per wave probed with GetSession")
		waveMax    = flag.Duration("wave-timeout", 3*time.Minute, "bound on one wave")
		maxDur     = flag.Duration("max-duration", 8*time.Minute, "bound on the whole soak")
		runID      = flag.String("run", fmt.Sprintf("%x", time.Now().UnixNano()&0xffffffff), "prefix of session ids")
		out        = flag.String("o", "", "write the JSON result (or, with -report, the Markdown) here (default stdout)")
		report     = flag.Bool("report", false, "write SOAK.md from result files given as arguments")
		command    = flag.String("command", "bench/soak.sh", "report: the command that reproduces it")
		redisVer   = flag.String("redis-version", "", "report: redis-server --version")
		commit     = flag.String("commit", "", "report: the arbiter's commit (and dirty state)")
		free       = flag.Bool("freeport", false, "print a free TCP port on 127.0.0.1 and exit")
	)
	flag.Parse()
	var err error
	switch {
	case *free:
		err = freePort()
	case *report:
		err = writeReport(flag.Args(), *out, *command, *redisVer, *commit)
	default:
		if *store == "" {
			*store = "memory"
			if *redisAddr != "" {
				*store = "redis"
			}
		}
		if *warmup < 0 {
			*warmup = *sessions
		}
		cfg := config{
			addr: *addr, metrics: *metrics, pid: *pid, redis: *redisAddr, store: *store, sessions: *sessions,
			conc: *conc, warmup: *warmup, ttl: *ttl, baseline: *baseline, settle: *settle, maxSettle: *maxSettle, rssSettle: *rssSettle,
			interval: *interval, healthRate: *healthRate, probe: *probe, waveMax: *waveMax, maxDur: *maxDur,
			runID: *runID,
		}
		var res *Result
		if res, err = soak(cfg); err == nil {
			err = writeJSON(res, *out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func freePort() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Println(l.Addr().(*net.TCPAddr).Port)
	return nil
}

func writeJSON(v any, out string) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

// loopback refuses any target that is not on this machine.
func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s: only loopback targets (127.0.0.0/8, ::1, localhost)", addr)
}

type config struct {
	addr, metrics, redis, store, runID string
	pid, sessions, conc, probe, warmup int
	ttl, baseline, settle, maxSettle   time.Duration
	rssSettle                          time.Duration
	interval, waveMax, maxDur          time.Duration
	healthRate                         float64
}

// soaker holds one soak's state.
type soaker struct {
	cfg     config
	start   time.Time
	client  arbiterv1.ArbiterServiceClient
	http    *http.Client
	redis   *redisConn
	done    atomic.Int64 // calls completed
	mu      sync.Mutex
	phase   string
	samples []Sample
}

func soak(cfg config) (*Result, error) {
	for _, a := range []string{cfg.addr, cfg.metrics} {
		if err := loopback(a); err != nil {
			return nil, err
		}
	}
	if cfg.pid <= 0 {
		return nil, errors.New("-pid is required")
	}
	if cfg.sessions < 1 || cfg.conc < 1 || cfg.interval <= 0 || cfg.probe < 0 || cfg.warmup < 0 {
		return nil, errors.New("-sessions, -c and -interval must be positive, -probe and -warmup not negative")
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.maxDur)
	defer cancel()

	conn, err := grpc.NewClient(cfg.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	s := &soaker{
		cfg: cfg, start: time.Now(), client: arbiterv1.NewArbiterServiceClient(conn),
		http: &http.Client{Timeout: 5 * time.Second}, phase: "baseline",
	}
	if cfg.redis != "" {
		if err := loopback(cfg.redis); err != nil {
			return nil, err
		}
		if s.redis, err = dialRedis(cfg.redis); err != nil {
			return nil, err
		}
		defer s.redis.Close()
	}
	// The server must answer before anything is measured.
	hc := healthpb.NewHealthClient(conn)
	if err := waitServing(ctx, hc); err != nil {
		return nil, err
	}

	res := &Result{
		Store: cfg.store, Addr: cfg.addr, Sessions: cfg.sessions, Concurrency: cfg.conc,
		IdleTTL: cfg.ttl.String(), Interval: cfg.interval.String(), HealthRate: cfg.healthRate,
		Started: s.start.UTC().Format("2006-01-02 15:04:05 UTC"), Checkpoints: map[string]Sample{},
	}

	// Background: the sampler and the health checks, until the soak ends.
	bg, stopBG := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.sampler(bg) }()
	var hok, herr atomic.Int64
	go func() { defer wg.Done(); healthLoop(bg, hc, cfg.healthRate, &hok, &herr) }()
	defer func() { stopBG(); wg.Wait() }()

	res.Checkpoints["cold start"] = s.checkpoint(ctx, "cold start", true)
	// Warm-up: a wave's worth of sessions, then their expiry, so that the baseline is
	// the idle server as it is after such a wave with no session alive: connection
	// pools and buffers grown, lazy initialisation done, and the memory store's session
	// map at the size it grows to (a Go map keeps its buckets when entries go).
	if cfg.warmup > 0 {
		s.setPhase("warm-up")
		wv := s.wave(ctx, 0, cfg.warmup)
		wv.EndT = s.since()
		s.setPhase("warm-up expiry")
		wv.GCAfterExp = s.waitExpiry(ctx, wv.EndT)
		wv.Probe, wv.FoundExpiry, wv.ProbeErrors = s.probe(ctx, 0, cfg.warmup)
		res.Warmup = &wv
	}
	s.setPhase("baseline")
	sleep(ctx, cfg.baseline)
	res.Checkpoints["baseline"] = s.checkpoint(ctx, "baseline", true)
	for w := 1; w <= 2 && ctx.Err() == nil; w++ {
		s.setPhase(fmt.Sprintf("wave %d", w))
		wv := s.wave(ctx, w, cfg.sessions)
		wv.EndT = s.since()
		res.Checkpoints[fmt.Sprintf("after wave %d", w)] = s.checkpoint(ctx, fmt.Sprintf("after wave %d", w), false)
		s.setPhase(fmt.Sprintf("expiry %d", w))
		var found int
		wv.Probe, found, wv.ProbeErrors = s.probe(ctx, w, cfg.sessions)
		wv.FoundAfter = found
		wv.GCAfterExp = s.waitExpiry(ctx, wv.EndT)
		var perr int
		_, found, perr = s.probe(ctx, w, cfg.sessions)
		wv.FoundExpiry = found
		wv.ProbeErrors += perr
		wv.ExpiryT = s.since()
		res.Checkpoints[fmt.Sprintf("after expiry %d", w)] = s.checkpoint(ctx, fmt.Sprintf("after expiry %d", w), true)
		res.Waves = append(res.Waves, wv)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("the soak ran past -max-duration %v", cfg.maxDur)
	}
	stopBG()
	wg.Wait()
	res.HealthOK, res.HealthErr = hok.Load(), herr.Load()
	res.Seconds = s.since()
	s.mu.Lock()
	res.Samples = s.samples
	s.mu.Unlock()
	// A post-GC checkpoint is the median of samples taken over a few seconds, so it can
	// land before samples the sampler took meanwhile.
	slices.SortStableFunc(res.Samples, func(a, b Sample) int { return cmp.Compare(a.T, b.T) })
	return res, nil
}

func waitServing(ctx context.Context, hc healthpb.HealthClient) error {
	var last error
	for range 100 {
		c, cancel := context.WithTimeout(ctx, time.Second)
		r, err := hc.Check(c, &healthpb.HealthCheckRequest{Service: arbiterv1.ArbiterService_ServiceDesc.ServiceName})
		cancel()
		if err == nil && r.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		last = err
		sleep(ctx, 100*time.Millisecond)
	}
	return fmt.Errorf("the arbiter did not report SERVING within 10 s: %v", last)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (s *soaker) since() float64 { return time.Since(s.start).Seconds() }

func (s *soaker) setPhase(p string) {
	s.mu.Lock()
	s.phase = p
	s.mu.Unlock()
}

// waitExpiry waits until every session of a wave that ended at endT (seconds since
// the start) has expired: the idle TTL plus the memory store's 1 s janitor period, at
// least -settle more, and then until the server has run a garbage collection after
// that moment (and, with -redis, no key is left), at most -max-settle in all, and then
// -rss-settle for the freed pages to go back to the kernel. It reports whether that
// collection was seen.
func (s *soaker) waitExpiry(ctx context.Context, endT float64) bool {
	expired := s.start.Add(time.Duration(endT * float64(time.Second))).Add(s.cfg.ttl + time.Second)
	sleep(ctx, time.Until(expired.Add(s.cfg.settle)))
	limit := expired.Add(s.cfg.maxSettle)
	for ctx.Err() == nil && time.Now().Before(limit) {
		sm := s.sample()
		if sm.Err == "" && sm.LastGC > float64(expired.UnixNano())/1e9 && (s.redis == nil || sm.DBSize == 0) {
			// The collector freed the sessions' memory; the runtime's scavenger returns
			// the pages to the kernel over the next seconds.
			sleep(ctx, s.cfg.rssSettle)
			return true
		}
		sleep(ctx, min(s.cfg.interval/2, time.Until(limit)))
	}
	return false
}

// checkpoint takes a sample, marks it and records it. With afterGC it samples right
// after each of the server's next 5 garbage collections (polling /metrics every 50 ms
// until the collection count moves, then 100 ms for the sweep; at most 15 s each) and
// keeps the sample with the median heap in use: the memory the collector left, not
// the garbage since the last collection, and not one collection's luck.
func (s *soaker) checkpoint(ctx context.Context, name string, afterGC bool) Sample {
	var sm Sample
	if afterGC {
		var got []Sample
		for range postGCSamples {
			if x, ok := s.afterNextGC(ctx); ok {
				got = append(got, x)
			}
		}
		if len(got) > 0 {
			slices.SortFunc(got, func(a, b Sample) int { return cmp.Compare(a.HeapInuse, b.HeapInuse) })
			sm = got[len(got)/2]
			sm.PostGC = len(got)
		}
	}
	if sm.PostGC == 0 {
		sm = s.sample()
	}
	sm.Mark = name
	s.mu.Lock()
	s.samples = append(s.samples, sm)
	s.mu.Unlock()
	return sm
}

const postGCSamples = 5

// afterNextGC waits for the server's next garbage collection to end and samples it
// 100 ms later.
func (s *soaker) afterNextGC(ctx context.Context) (Sample, bool) {
	m0, err := s.scrape()
	if err != nil {
		return Sample{}, false
	}
	for range 300 {
		if ctx.Err() != nil {
			return Sample{}, false
		}
		sleep(ctx, 50*time.Millisecond)
		m, err := s.scrape()
		if err != nil {
			return Sample{}, false
		}
		if m["go_gc_duration_seconds_count"] > m0["go_gc_duration_seconds_count"] {
			sleep(ctx, 100*time.Millisecond)
			sm := s.sample()
			return sm, sm.Err == ""
		}
	}
	return Sample{}, false
}

func (s *soaker) sampler(ctx context.Context) {
	t := time.NewTicker(s.cfg.interval)
	defer t.Stop()
	max := int(s.cfg.maxDur/s.cfg.interval) + 1
	for range max {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sm := s.sample()
		s.mu.Lock()
		s.samples = append(s.samples, sm)
		s.mu.Unlock()
	}
}

// sample reads the server's memory (and Redis's). Errors are kept in the sample.
func (s *soaker) sample() Sample {
	s.mu.Lock()
	sm := Sample{T: s.since(), Phase: s.phase, Completed: s.done.Load()}
	s.mu.Unlock()
	var errs []string
	if rss, err := vmRSS(s.cfg.pid); err != nil {
		errs = append(errs, err.Error())
	} else {
		sm.RSS = rss
	}
	if m, err := s.scrape(); err != nil {
		errs = append(errs, err.Error())
	} else {
		sm.HeapInuse = int64(m["go_memstats_heap_inuse_bytes"])
		sm.HeapAlloc = int64(m["go_memstats_heap_alloc_bytes"])
		sm.HeapObj = int64(m["go_memstats_heap_objects"])
		sm.NextGC = int64(m["go_memstats_next_gc_bytes"])
		sm.GCs = int64(m["go_gc_duration_seconds_count"])
		sm.LastGC = m["go_memstats_last_gc_time_seconds"]
		sm.Goroutines = int64(m["go_goroutines"])
	}
	if s.redis != nil {
		if err := s.redis.sample(&sm); err != nil {
			errs = append(errs, err.Error())
		}
	}
	sm.Err = strings.Join(errs, "; ")
	return sm
}

func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

var scraped = map[string]bool{
	"go_memstats_heap_inuse_bytes": true, "go_memstats_heap_alloc_bytes": true, "go_memstats_heap_objects": true,
	"go_memstats_next_gc_bytes": true, "go_gc_duration_seconds_count": true, "go_memstats_last_gc_time_seconds": true,
	"go_goroutines": true,
}

// scrape reads the metrics the soak follows from the server's /metrics.
func (s *soaker) scrape() (map[string]float64, error) {
	resp, err := s.http.Get("http://" + s.cfg.metrics + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: %s", resp.Status)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && scraped[f[0]] {
			if v, err := strconv.ParseFloat(f[1], 64); err == nil {
				m[f[0]] = v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(m) != len(scraped) {
		return m, fmt.Errorf("metrics: found %d of %d Go runtime metrics", len(m), len(scraped))
	}
	return m, nil
}

// healthLoop sends health checks at rate per second (4 senders), until ctx ends.
func healthLoop(ctx context.Context, hc healthpb.HealthClient, rate float64, ok, bad *atomic.Int64) {
	if rate <= 0 {
		return
	}
	const senders = 4
	every := time.Duration(float64(senders) * float64(time.Second) / rate)
	var wg sync.WaitGroup
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				c, cancel := context.WithTimeout(ctx, 2*time.Second)
				_, err := hc.Check(c, &healthpb.HealthCheckRequest{})
				cancel()
				if err == nil {
					ok.Add(1)
				} else if ctx.Err() == nil {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
}

func (s *soaker) sid(wave, i int) string {
	return fmt.Sprintf("soak-%s-%s-w%d-%05d", s.cfg.runID, s.cfg.store, wave, i)
}

// wave runs n calls, -c at a time, each in a new session.
func (s *soaker) wave(ctx context.Context, w, n int) Wave {
	wv := Wave{N: n, ErrorCodes: map[string]int{}, StartT: s.since()}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.waveMax)
	defer cancel()
	var (
		next atomic.Int64
		mu   sync.Mutex
		wg   sync.WaitGroup
	)
	t0 := time.Now()
	for range s.cfg.conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				err := call(ctx, s.client, s.sid(w, i))
				mu.Lock()
				if err == nil {
					wv.OK++
					s.done.Add(1)
				} else {
					wv.Errors++
					wv.ErrorCodes[status.Code(err).String()]++
					if wv.FirstError == "" {
						wv.FirstError = err.Error()
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wv.Seconds = time.Since(t0).Seconds()
	wv.CallsPerS = float64(wv.OK) / wv.Seconds
	return wv
}

var (
	slot     = mustStruct(map[string]any{"slot": "tomorrow 3pm"})
	stopText = "Stop."
)

func mustStruct(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return s
}

// call is one call's whole life in session sid.
func call(ctx context.Context, c arbiterv1.ArbiterServiceClient, sid string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: sid, CallId: "fc_1", Tool: "book_slot", Args: slot})
	if err != nil {
		return fmt.Errorf("RegisterCall: %w", err)
	}
	if r.GetDisposition() != arbiterv1.Disposition_DISPOSITION_EXECUTE {
		return fmt.Errorf("RegisterCall: disposition %v, want EXECUTE", r.GetDisposition())
	}
	job := r.GetJobId()
	for _, ev := range []arbiterv1.SpeechEvent{arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END} {
		if _, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: sid, Event: ev}); err != nil {
			return fmt.Errorf("ReportSpeech %v: %w", ev, err)
		}
	}
	if _, err := c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: sid, Text: stopText}); err != nil {
		return fmt.Errorf("ReportTranscript: %w", err)
	}
	d, err := c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: sid, JobId: job, Prepared: true, Wait: durationpb.New(0)})
	if err != nil {
		return fmt.Errorf("Decide: %w", err)
	}
	if d.GetDecision() != arbiterv1.Decision_DECISION_CANCEL {
		return fmt.Errorf("Decide: %v, want CANCEL", d.GetDecision())
	}
	if _, err := c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: sid, JobId: job, Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED}); err != nil {
		return fmt.Errorf("Complete: %w", err)
	}
	return nil
}

// probe asks GetSession for -probe of wave w's session ids (of sessions), spread evenly: how many
// exist. NOT_FOUND is an answer; any other error counts in errs.
func (s *soaker) probe(ctx context.Context, w, sessions int) (n, found, errs int) {
	n = min(s.cfg.probe, sessions)
	for k := range n {
		i := k * sessions / n
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := s.client.GetSession(c, &arbiterv1.GetSessionRequest{SessionId: s.sid(w, i)})
		cancel()
		switch status.Code(err) {
		case codes.OK:
			found++
		case codes.NotFound:
		default:
			errs++
		}
	}
	return n, found, errs
}

// redisConn is the little of RESP the soak needs: DBSIZE and INFO.
type redisConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialRedis(addr string) (*redisConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &redisConn{c: c, r: bufio.NewReader(c)}, nil
}

func (r *redisConn) Close() error { return r.c.Close() }

// do sends an inline command and returns an integer or bulk-string reply as text.
func (r *redisConn) do(cmd string) (string, error) {
	r.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.c.Write([]byte(cmd + "\r\n")); err != nil {
		return "", err
	}
	line, err := r.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("redis: empty reply")
	}
	switch line[0] {
	case ':', '+':
		return line[1:], nil
	case '-':
		return "", fmt.Errorf("redis %s: %s", cmd, line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 || n > 1<<20 {
			return "", fmt.Errorf("redis %s: bulk length %q", cmd, line[1:])
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r.r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("redis %s: reply %q", cmd, line)
}

func (r *redisConn) sample(sm *Sample) error {
	v, err := r.do("DBSIZE")
	if err != nil {
		return err
	}
	if sm.DBSize, err = strconv.ParseInt(v, 10, 64); err != nil {
		return err
	}
	info, err := r.do("INFO")
	if err != nil {
		return err
	}
	for _, l := range strings.Split(info, "\r\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "used_memory":
			sm.UsedMem = n
		case "used_memory_rss":
			sm.UsedMemRSS = n
		case "expired_keys":
			sm.ExpiredKeys = n
		}
	}
	return nil
}
