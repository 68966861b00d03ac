// Command guard benchmarks the wire guard (arbiter serve --proxy-listen): N
// concurrent Gemini Live sessions stream audio both ways, 16 kHz 16-bit mono up (the
// user) and 24 kHz down (the model), in chunks of 20 to 40 ms (each session's next
// chunk length drawn at random), against an echo provider in this process: first each
// session straight to the provider, then the same through the guard, in one run
// (-phases together: both at once). -relay measures a bare relay in the guard's place
// (relay.go): the floor under its numbers on the same machine. Every
// frame carries its send time; the receiver takes the difference (one clock: the
// same machine). It reports the per-frame latency of each path (p50, p99, max) and
// what the guard adds, and the guard process's CPU (user + system, from /proc) per
// session-second. Not a test: numbers for bench/RESULTS.md.
//
//	go run ./guard -arbiter /tmp/arbiter [-sessions 200] [-duration 10s] [-warmup 3s] [-phases apart|together]
//	go run ./guard -relay tcp|coder|gorilla [-sessions 200]
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/guard"
	"github.com/voicearbiter/arbiter/store/memory"
)

const path = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"

// recorder keeps the latencies of one phase and direction, in µs.
type recorder struct {
	mu sync.Mutex
	us []float64
}

func (r *recorder) add(d time.Duration) {
	r.mu.Lock()
	r.us = append(r.us, float64(d.Microseconds()))
	r.mu.Unlock()
}

func (r *recorder) stats() (n int, p50, p99, max float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.us) == 0 {
		return 0, 0, 0, 0
	}
	s := append([]float64(nil), r.us...)
	sort.Float64s(s)
	at := func(q float64) float64 { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return len(s), at(0.50), at(0.99), s[len(s)-1]
}

// phase is one run's measurements: up (agent to provider) and down.
type phase struct {
	name     string
	up, down recorder
	measure  atomic.Bool
}

// phases maps a session's setup model name to its phase (the provider learns which
// path a connection came by from it).
var phases sync.Map

// framer makes one direction's audio frames, shaped as the provider (down) or the SDK
// (up) sends them, each 20-40 ms long (drawn at random), with its send time in the
// audio's first 8 bytes (little endian ns): the frame is what the guard sees from a
// real peer. The frames are built once per length (silence, base64 in JSON) and a
// frame's send time is written into a copy's first 12 base64 characters (the audio's
// first 9 bytes), so the load generator allocates nothing per frame: its own CPU is
// load on both paths, and the lighter it is the more of what is measured is the
// guard's.
type framer struct {
	tmpl [21][]byte // by length in ms, minus 20
	at   int        // where the audio's base64 starts
	buf  []byte
}

var dataKey = []byte(`"data":"`)

func newFramer(up bool, rate int) *framer {
	f := &framer{}
	for ms := 20; ms <= 40; ms++ {
		data := base64.StdEncoding.EncodeToString(make([]byte, rate*2*ms/1000))
		if up {
			f.tmpl[ms-20] = []byte(`{"realtimeInput":{"audio":{"data":"` + data + `","mimeType":"audio/pcm;rate=16000"}}}`)
		} else {
			f.tmpl[ms-20] = []byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"` + data + `"}}]}}}`)
		}
	}
	f.at = bytes.Index(f.tmpl[0], dataKey) + len(dataKey)
	return f
}

// next returns the next frame (valid until the next call) and the audio's length.
func (f *framer) next(rng *rand.Rand) ([]byte, time.Duration) {
	ms := 20 + rng.IntN(21)
	f.buf = append(f.buf[:0], f.tmpl[ms-20]...)
	var ts [9]byte
	binary.LittleEndian.PutUint64(ts[:], uint64(time.Now().UnixNano()))
	base64.StdEncoding.Encode(f.buf[f.at:f.at+12], ts[:])
	return f.buf, time.Duration(ms) * time.Millisecond
}

// stamp reads a frame's send time from its audio.
func stamp(b []byte) (time.Time, bool) {
	i := bytes.Index(b, dataKey)
	if i < 0 || len(b) < i+len(dataKey)+12 {
		return time.Time{}, false
	}
	var ts [9]byte
	if _, err := base64.StdEncoding.Decode(ts[:], b[i+len(dataKey):i+len(dataKey)+12]); err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, int64(binary.LittleEndian.Uint64(ts[:8]))), true
}

// receive reads c's next message whole and returns its first bytes (head, reused:
// enough for stamp), the rest read and discarded: no allocation per frame.
func receive(c *websocket.Conn, ctx context.Context, head []byte) ([]byte, error) {
	_, r, err := c.Reader(ctx)
	if err != nil {
		return nil, err
	}
	n, err := io.ReadFull(r, head)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return head[:n], nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, err
	}
	return head, nil
}

// provider is the echo provider: it answers the setup, then streams model audio down
// and times what comes up.
func provider(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	c.SetReadLimit(1 << 20)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer c.CloseNow()
	_, setup, err := c.Read(ctx)
	if err != nil {
		return
	}
	var p *phase
	if v, ok := phases.Load(strings.Contains(string(setup), "via-guard")); ok {
		p = v.(*phase)
	}
	if err := c.Write(ctx, websocket.MessageBinary, []byte(`{"setupComplete":{}}`)); err != nil {
		return
	}
	go func() {
		rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
		fr := newFramer(false, 24000)
		for ctx.Err() == nil {
			f, d := fr.next(rng)
			if c.Write(ctx, websocket.MessageBinary, f) != nil {
				cancel()
				return
			}
			time.Sleep(d)
		}
	}()
	head := make([]byte, 128)
	for {
		b, err := receive(c, ctx, head)
		if err != nil {
			return
		}
		if p != nil && p.measure.Load() {
			if t, ok := stamp(b); ok {
				p.up.add(time.Since(t))
			}
		}
	}
}

// session runs one agent session on url until ctx ends.
func session(ctx context.Context, url string, p *phase, errs *atomic.Int64) {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		errs.Add(1)
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	model := "models/direct"
	if p.name != "direct" {
		model = "models/via-guard"
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"`+model+`","generationConfig":{"responseModalities":["AUDIO"]}}}`)); err != nil {
		errs.Add(1)
		return
	}
	go func() {
		rng := rand.New(rand.NewPCG(rand.Uint64(), 2))
		fr := newFramer(true, 16000)
		for ctx.Err() == nil {
			f, d := fr.next(rng)
			if c.Write(ctx, websocket.MessageText, f) != nil {
				return
			}
			time.Sleep(d)
		}
	}()
	head := make([]byte, 128)
	for {
		b, err := receive(c, ctx, head)
		if err != nil {
			return
		}
		if p.measure.Load() {
			if t, ok := stamp(b); ok {
				p.down.add(time.Since(t))
			}
		}
	}
}

// cpu returns a process's user + system CPU time from /proc/PID/stat.
func cpu(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// runBoth runs sessions straight to the provider and as many through the guard and
// returns their phases and the guard process's CPU over the guarded phase's measured
// window. together: both at the same time (one machine, the same load on both: the
// machine then carries twice the sessions the guard does); apart: the direct sessions
// first, then the guarded ones alone (the machine carries the sessions the guard does,
// as deployed), each with its own warm-up.
func runBoth(direct, guarded string, sessions int, warmup, dur time.Duration, guardPID int, heap func(), together bool) (*phase, *phase, time.Duration, int64) {
	pd, pg := &phase{name: "direct"}, &phase{name: "through the guard"}
	phases.Store(false, pd)
	phases.Store(true, pg)
	var errs atomic.Int64
	var used time.Duration
	run := func(which []*phase) {
		ctx, cancel := context.WithTimeout(context.Background(), warmup+dur)
		defer cancel()
		var wg sync.WaitGroup
		for i := 0; i < sessions; i++ {
			for _, p := range which {
				url := direct
				if p == pg {
					url = guarded
				}
				wg.Add(1)
				go func() { defer wg.Done(); session(ctx, url, p, &errs) }()
			}
			time.Sleep(2 * time.Millisecond) // a ramp, not a thundering herd
		}
		time.Sleep(warmup - time.Duration(sessions)*2*time.Millisecond)
		c0 := cpu(guardPID)
		for _, p := range which {
			p.measure.Store(true)
		}
		time.Sleep(dur)
		for _, p := range which {
			p.measure.Store(false)
		}
		if slices.Contains(which, pg) {
			used = cpu(guardPID) - c0
			if heap != nil {
				heap()
			}
		}
		cancel()
		wg.Wait()
	}
	if together {
		run([]*phase{pd, pg})
	} else {
		run([]*phase{pd})
		run([]*phase{pg})
	}
	return pd, pg, used, errs.Load()
}

var proxyAddr = regexp.MustCompile(`proxy_addr=([^ ]+)`)

// startGuard starts arbiter serve --proxy-listen in front of up (or, inproc, a
// guard.Proxy in this process on the embedded store) and returns its address, the
// process whose CPU is its, and how to stop it.
func startGuard(bin, up string, inproc bool, cpus, relay string) (addr string, pid int, stop func()) {
	if inproc {
		u, _ := url.Parse(up)
		st := memory.New(nil)
		p := &arbiter.Policy{}
		_ = p.Validate()
		svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: p}, Store: st, Clock: arbiter.SystemClock{}, Calls: st}
		g, err := guard.New(guard.Options{Service: svc, Gemini: u, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			panic(err)
		}
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		go func() { _ = http.Serve(lis, g) }()
		return lis.Addr().String(), os.Getpid(), func() { g.Close(); _ = st.Close() }
	}
	// GUARD_SERVE_LOG keeps the serve's log (stderr) in that file; GUARD_ENV_X=V sets X=V
	// for the serve alone (e.g. GUARD_ENV_GODEBUG=gctrace=1, GUARD_ENV_GOGC=400).
	keep := os.Getenv("GUARD_SERVE_LOG")
	var logf *os.File
	var err error
	if keep != "" {
		logf, err = os.Create(keep)
	} else {
		logf, err = os.CreateTemp("", "guard-bench-serve-*.log")
	}
	if err != nil {
		panic(err)
	}
	// As deployed: the metrics on (the guard counts each frame it writes).
	args := []string{bin, "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--proxy-listen", "127.0.0.1:0", "--proxy-gemini-upstream", up}
	if relay != "" {
		self, err := os.Executable()
		if err != nil {
			panic(err)
		}
		args = []string{self, "-serve-relay", relay, "-relay-up", up}
	}
	if cpus != "" {
		args = append([]string{"taskset", "-c", cpus}, args...) // taskset execs the serve: same PID
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = logf
	cmd.Env = os.Environ()
	for _, kv := range os.Environ() {
		if rest, ok := strings.CutPrefix(kv, "GUARD_ENV_"); ok {
			cmd.Env = append(cmd.Env, rest)
		}
	}
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if keep == "" {
			_ = os.Remove(logf.Name())
		}
	}
	for i := 0; i < 200 && addr == ""; i++ {
		time.Sleep(25 * time.Millisecond)
		b, _ := os.ReadFile(logf.Name())
		if m := proxyAddr.FindSubmatch(b); m != nil {
			addr = string(m[1])
		}
	}
	if addr == "" {
		stop()
		panic("the guard did not start")
	}
	return addr, cmd.Process.Pid, stop
}

func main() {
	bin := flag.String("arbiter", "", "the arbiter binary (its serve runs the guard)")
	memprofile := flag.String("memprofile", "", "write a heap profile of this process (with -inproc the guard's too) at the end of the measured time")
	profile := flag.String("cpuprofile", "", "write a CPU profile of this process (the load and the echo provider; with -inproc the guard too) to this file")
	inproc := flag.Bool("inproc", false, "run the guard in this process (for its profile) instead of arbiter serve")
	guardCPUs := flag.String("guard-cpus", "", "run the guard's serve on these CPUs only (taskset -c LIST), e.g. 1 with this process under taskset -c 0: the guard on a core of its own, as in a deployment, away from the load it is measured with")
	relay := flag.String("relay", "", "measure a bare relay in the guard's place, a floor for its numbers: tcp (bytes copied, no WebSocket), coder (whole messages with coder/websocket, the guard's library), gorilla (the same with gorilla/websocket)")
	apart := flag.String("phases", "apart", "apart: the direct sessions first, then the guarded ones alone (the machine carries the sessions the guard does, as deployed); together: both at the same time (the same moment's load on both, twice the sessions on the machine)")
	serve := flag.String("serve-relay", "", "(internal) serve this relay in front of -relay-up, print proxy_addr=ADDR on stderr")
	relayUp := flag.String("relay-up", "", "(internal) the relay's upstream (ws://HOST:PORT)")
	sessions := flag.Int("sessions", 200, "concurrent sessions")
	dur := flag.Duration("duration", 10*time.Second, "measured time per phase")
	warmup := flag.Duration("warmup", 3*time.Second, "unmeasured time before it")
	flag.Parse()
	if *serve != "" {
		serveRelay(*serve, *relayUp)
		return
	}
	if *apart != "together" && *apart != "apart" {
		fmt.Fprintf(os.Stderr, "-phases: %q is not together or apart\n", *apart)
		os.Exit(2)
	}
	if *relay != "" {
		if _, ok := relays[*relay]; !ok {
			fmt.Fprintf(os.Stderr, "-relay: %q is not tcp, coder or gorilla\n", *relay)
			os.Exit(2)
		}
		*bin = "(none)"
	}
	if *bin == "" && !*inproc {
		fmt.Fprintln(os.Stderr, "usage: guard -arbiter BIN [-sessions N] [-duration D] [-warmup D] [-inproc] [-cpuprofile FILE]")
		os.Exit(2)
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			panic(err)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = http.Serve(lis, http.HandlerFunc(provider)) }()
	up := "ws://" + lis.Addr().String()
	guard, pid, stop := startGuard(*bin, up, *inproc, *guardCPUs, *relay)
	defer stop()
	var heap func()
	if *memprofile != "" {
		heap = func() {
			f, err := os.Create(*memprofile)
			if err != nil {
				panic(err)
			}
			runtime.GC()
			_ = pprof.WriteHeapProfile(f)
			_ = f.Close()
		}
	}
	direct, proxied, used, errs := runBoth(up+path, "ws://"+guard+path, *sessions, *warmup, *dur, pid, heap, *apart == "together")
	out := map[string]any{"sessions": *sessions, "duration_s": dur.Seconds(), "dial_errors": errs,
		"guard_cpu_s": used.Seconds(), "cpu_per_session_second": used.Seconds() / (float64(*sessions) * dur.Seconds())}
	what, when := "the guard", "at the same time"
	if *relay != "" {
		what = "a bare " + *relay + " relay"
	}
	if *apart == "apart" {
		when = "one after the other"
	}
	fmt.Printf("%d sessions through %s and %d straight to the provider %s, %v measured (after %v), audio 16 kHz up and 24 kHz down in 20-40 ms chunks\n\n", *sessions, what, *sessions, when, *dur, *warmup)
	fmt.Println("| path | direction | frames | p50 | p99 | max |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, p := range []*phase{direct, proxied} {
		for _, d := range []struct {
			name string
			r    *recorder
		}{{"up (16 kHz)", &p.up}, {"down (24 kHz)", &p.down}} {
			n, p50, p99, mx := d.r.stats()
			fmt.Printf("| %s | %s | %d | %.0f µs | %.0f µs | %.1f ms |\n", p.name, d.name, n, p50, p99, mx/1000)
			out[p.name+" "+d.name] = map[string]float64{"frames": float64(n), "p50_us": p50, "p99_us": p99, "max_us": mx}
		}
	}
	fmt.Println()
	for _, d := range []struct {
		name       string
		base, prox *recorder
	}{{"up", &direct.up, &proxied.up}, {"down", &direct.down, &proxied.down}} {
		_, b50, b99, bmx := d.base.stats()
		_, p50, p99, pmx := d.prox.stats()
		fmt.Printf("added by %s, %s: p50 %+.0f µs, p99 %+.0f µs, max %+.1f ms\n", what, d.name, p50-b50, p99-b99, (pmx-bmx)/1000)
		out["added "+d.name] = map[string]float64{"p50_us": p50 - b50, "p99_us": p99 - b99, "max_us": pmx - bmx}
	}
	per10 := used.Seconds() / dur.Seconds() / float64(*sessions) * 10 * 100
	fmt.Printf("%s's CPU: %.2f s over %v for %d sessions: %.4f s per session-second, %.2f %% of a core per 10 sessions\n",
		what, used.Seconds(), *dur, *sessions, used.Seconds()/(float64(*sessions)*dur.Seconds()), per10)
	fmt.Printf("dial errors: %d\n", errs)
	out["pct_core_per_10_sessions"] = per10
	b, _ := json.Marshal(out)
	fmt.Fprintln(os.Stderr, string(b))
}
