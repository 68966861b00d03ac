// Command chaos runs many booking sessions against real arbiter processes while it
// kills and freezes them and their store, and counts what must never happen:
//
//	double commits         a session's booking committed twice
//	commits after a stop   committed although the user's stop began before the commit
//	                       came due (before prepare finished + the 1.5 s grace window)
//	ids never answered     a registered call id with neither a function response nor a
//	                       skip when the session ended
//	ids answered twice     a call id with two different final responses
//
// Modes (-mode):
//
//	redis     three replicas on one redis-server with AOF and appendfsync always; faults:
//	          SIGKILL a replica (then restart it), SIGSTOP Redis (then SIGCONT), SIGKILL
//	          Redis (then restart it on its AOF). Every count must be 0.
//	embedded  one replica with --state-file (the durable embedded store); faults: SIGKILL
//	          it (then restart it on the same file). Every count must be 0.
//	failover  three replicas on a Redis primary with one replica (both AOF, appendfsync
//	          always) under one Sentinel; the replicas run with serve's default
//	          --redis-replica-acks 1. Fault: the lagging failover: SIGSTOP the Redis
//	          replica, write 16 MB of ballast (more than the sockets buffer, so the
//	          replica really lags), let the primary take writes for 1-3 s, SIGKILL the
//	          primary, SIGCONT
//	          the replica and let Sentinel promote it, then restart the old primary as
//	          the new one's replica. Every count must be 0, lost sessions too: an answer
//	          the promoted replica lacks must never have been given (or, if it was, be
//	          reported as a lost session, which fails the run as well).
//	volatile  three replicas on a redis-server with no persistence, run with
//	          --allow-volatile-store: a Redis restart loses every session. Counted, not
//	          judged: docs/stores.md's "What each store configuration can lose" says this
//	          configuration can lose data, and serve refuses it by default. Lost sessions
//	          must be reported (DATA_LOSS, Connect LOST), never started again silently.
//
// Each session is one agent that behaves as the API asks (DecideRequest, issue 26): it
// stamps every event when it observes it and delivers events in order through an
// outbox, retrying with their `age` while the arbiter or its store is down; it asks
// Decide only once what it observed is delivered, and a delivery that fails or takes
// longer than 100 ms aborts the Decide it has waiting (it asks again once the outbox
// is empty), and it says so on every Decide (events_delivered: its late commits are
// not withheld, so the chaos judges the arbiter as the client cores meet it); a COMMIT it is
// answered is final, and it acts on it; it names its epoch, and on DATA_LOSS (its session was lost) it
// answers its calls in flight "unknown" itself and connects again in a new epoch. Its
// script, on its own clock: the user asks for a booking (voice activity, transcript),
// the model calls book_slot, a fake backend prepares it (0.5-2.5 s); in half the
// sessions the user then says "Stop, don't book it." at a random moment around the
// grace window's end; in a third the model re-issues the call with other wording; the
// session closes at 15 s.
//
// With -backdate D the agent reports each event's age up to D larger than the truth
// (a client bug, or a replica whose clock runs behind): events land placed before
// what the arbiter has already answered. A COMMIT handed out must stand (issue 26):
// the run also counts jobs the arbiter answered COMMIT and then reported cancelled
// (a cancelled_job_ids entry or a "cancelled" function response), and that count must
// be 0 too.
//
//	chaos -arbiter BIN -mode redis -sessions 300 -c 100
//
// It binds only loopback addresses, starts its own redis-server (from PATH) in a temp
// directory, and every loop is bounded in count and time (-max-duration). The summary
// is one line; the exit code is 1 when a judged count is not 0.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.arbiter, "arbiter", "", "the arbiter binary (required)")
	flag.StringVar(&cfg.mode, "mode", "redis", "redis, failover, embedded or volatile")
	flag.StringVar(&cfg.tools, "tools", "testdata/tools/booking.yaml", "tool policy (book_slot two-phase, keyed by slot)")
	flag.IntVar(&cfg.sessions, "sessions", 100, "sessions to run")
	flag.IntVar(&cfg.concurrency, "c", 50, "sessions in flight at once")
	flag.DurationVar(&cfg.faultEvery, "fault-every", 3*time.Second, "mean time between faults")
	flag.DurationVar(&cfg.maxDuration, "max-duration", 10*time.Minute, "hard bound on the whole run")
	flag.Uint64Var(&cfg.seed, "seed", 0, "random seed (0: from the clock)")
	flag.DurationVar(&cfg.backdate, "backdate", 0, "report each event's age up to this much larger than the truth (0: the true age)")
	flag.IntVar(&cfg.replicaAcks, "replica-acks", 1, "failover mode: the replicas' --redis-replica-acks (0 shows what the failover loses without it)")
	flag.StringVar(&cfg.only, "faults", "", "comma-separated fault kinds to draw from (default: every kind of the mode): kill-replica, stop-redis, kill-redis, restart-redis, lagging-failover")
	flag.Parse()
	if cfg.arbiter == "" {
		fmt.Fprintln(os.Stderr, "chaos: -arbiter BIN is required")
		os.Exit(2)
	}
	if cfg.seed == 0 {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	res, err := run(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		os.Exit(2)
	}
	fmt.Println(res.line(cfg))
	if cfg.mode != "volatile" && (res.judged() > 0 || cfg.mode == "failover" && res.lostSessions > 0) {
		os.Exit(1)
	}
}

type config struct {
	arbiter, mode, tools  string
	sessions, concurrency int
	faultEvery            time.Duration
	maxDuration           time.Duration
	seed                  uint64
	only                  string
	backdate              time.Duration
	replicaAcks           int
}

// result is what the run counted. Safe for concurrent use through add.
type result struct {
	mu                                                    sync.Mutex
	commitThenCancel                                      int
	sessions, calls, doubleCommits, commitsAfterStop      int
	neverAnswered, answeredTwice, lostSessions, notCalled int
	commits, cancels, stops, unfinished                   int
	faults                                                map[string]int
	rpcErrors                                             map[string]int
	examples                                              []string
}

func (r *result) add(f func(r *result)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r)
}

func (r *result) judged() int {
	return r.doubleCommits + r.commitsAfterStop + r.neverAnswered + r.answeredTwice + r.unfinished + r.commitThenCancel
}

func (r *result) line(cfg config) string {
	mode := cfg.mode
	if cfg.backdate > 0 {
		mode += fmt.Sprintf(" (ages up to %v too large)", cfg.backdate)
	}
	return fmt.Sprintf("chaos %s: sessions %d, call ids %d, double commits %d, commits after a stop %d, COMMITs then cancelled %d, ids never answered %d, ids answered twice %d, lost sessions %d, unfinished sessions %d (commits %d, cancels %d, stops said %d, calls never registered %d; faults %s; rpc errors %s; seed %d)%s",
		mode, r.sessions, r.calls, r.doubleCommits, r.commitsAfterStop, r.commitThenCancel, r.neverAnswered, r.answeredTwice, r.lostSessions, r.unfinished,
		r.commits, r.cancels, r.stops, r.notCalled, counts(r.faults), counts(r.rpcErrors), cfg.seed, examples(r.examples))
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var out []string
	for _, k := range ks {
		out = append(out, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(out, ", ")
}

func examples(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	if len(xs) > 5 {
		xs = xs[:5]
	}
	return "\n  " + strings.Join(xs, "\n  ")
}

func run(cfg config) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.maxDuration)
	defer cancel()
	dir, err := os.MkdirTemp("", "arbiter-chaos-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rng := rand.New(rand.NewPCG(cfg.seed, cfg.seed^0x9e3779b97f4a7c15))
	cl, err := startCluster(ctx, cfg, dir)
	if err != nil {
		return nil, err
	}
	defer cl.stop()

	conn, err := dialAll(cl.addrs())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	client := arbiterv1.NewArbiterServiceClient(conn)

	res := &result{faults: map[string]int{}, rpcErrors: map[string]int{}}
	faultCtx, stopFaults := context.WithCancel(ctx)
	faultsDone := make(chan struct{})
	go func() { cl.faults(faultCtx, cfg, rand.New(rand.NewPCG(rng.Uint64(), 1)), res); close(faultsDone) }()

	sem := make(chan struct{}, cfg.concurrency)
	var wg sync.WaitGroup
	for i := 0; i < cfg.sessions; i++ {
		sem <- struct{}{}
		wg.Add(1)
		s := newSession(client, fmt.Sprintf("chaos-%d-%d", cfg.seed%100000, i), rand.New(rand.NewPCG(rng.Uint64(), uint64(i))), res)
		s.backdate = cfg.backdate
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s.run(ctx)
		}()
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond): // spread the starts
		}
	}
	wg.Wait()
	stopFaults()
	<-faultsDone
	if ctx.Err() != nil {
		return res, fmt.Errorf("the run did not finish within -max-duration %v", cfg.maxDuration)
	}
	return res, nil
}

// ---- processes ------------------------------------------------------------------------

// proc is one child process, restartable with the same arguments (so the same port).
type proc struct {
	name string
	bin  string
	args []string
	log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %v", p.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(done) }()
	p.cmd, p.done = cmd, done
	return nil
}

// signal sends sig; with SIGKILL it waits for the process to be gone.
func (p *proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	if sig == syscall.SIGKILL || sig == syscall.SIGTERM {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	}
}

// cluster is the arbiter replicas and their Redis (none in embedded mode).
type cluster struct {
	redis     *proc
	redisAddr string
	// failover mode: the two Redis servers (either may be the primary) and the
	// Sentinel that watches them.
	redisPair    [2]*proc
	redisPorts   [2]int
	sentinel     *proc
	sentinelAddr string
	dir          string
	replicas     []*proc
	addrList     []string
}

func (c *cluster) addrs() []string { return c.addrList }

func (c *cluster) stop() {
	for _, r := range c.replicas {
		r.signal(syscall.SIGCONT)
		r.signal(syscall.SIGKILL)
	}
	if c.redis != nil {
		c.redis.signal(syscall.SIGCONT)
		c.redis.signal(syscall.SIGKILL)
	}
	for _, p := range append(c.redisPair[:], c.sentinel) {
		if p != nil {
			p.signal(syscall.SIGCONT)
			p.signal(syscall.SIGKILL)
		}
	}
}

func startCluster(ctx context.Context, cfg config, dir string) (*cluster, error) {
	c := &cluster{}
	n := 3
	var storeArgs []string
	switch cfg.mode {
	case "redis", "volatile":
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		c.redisAddr = "127.0.0.1:" + strconv.Itoa(port)
		args := []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir, "--save", ""}
		if cfg.mode == "redis" {
			args = append(args, "--appendonly", "yes", "--appendfsync", "always")
		} else {
			args = append(args, "--appendonly", "no")
		}
		c.redis = &proc{name: "redis-server", bin: "redis-server", args: args, log: filepath.Join(dir, "redis.log")}
		if err := c.redis.start(); err != nil {
			return nil, err
		}
		if err := waitTCP(ctx, c.redisAddr, "PING\r\n", "+PONG"); err != nil {
			return nil, fmt.Errorf("redis-server: %v", err)
		}
		storeArgs = []string{"--redis-url", "redis://" + c.redisAddr}
		if cfg.mode == "volatile" {
			storeArgs = append(storeArgs, "--allow-volatile-store")
		}
	case "failover":
		var err error
		if storeArgs, err = c.startFailover(ctx, dir); err != nil {
			return nil, err
		}
		storeArgs = append(storeArgs, "--redis-replica-acks", strconv.Itoa(cfg.replicaAcks))
	case "embedded":
		n = 1
		storeArgs = []string{"--state-file", filepath.Join(dir, "state.db")}
	default:
		return nil, fmt.Errorf("-mode %q: want redis, failover, embedded or volatile", cfg.mode)
	}
	for i := 0; i < n; i++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		args := append([]string{"serve", "--listen", addr, "--tools", cfg.tools, "--health-interval", "200ms", "--log-level", "warn"}, storeArgs...)
		p := &proc{name: fmt.Sprintf("replica %d", i+1), bin: cfg.arbiter, args: args, log: filepath.Join(dir, fmt.Sprintf("replica-%d.log", i+1))}
		if err := p.start(); err != nil {
			return nil, err
		}
		if err := waitTCP(ctx, addr, "", ""); err != nil {
			return nil, fmt.Errorf("%s: %v (log %s)", p.name, err, p.log)
		}
		c.replicas = append(c.replicas, p)
		c.addrList = append(c.addrList, addr)
	}
	return c, nil
}

// faults injects one fault after another until ctx ends, each followed by recovery.
func (c *cluster) faults(ctx context.Context, cfg config, rng *rand.Rand, res *result) {
	pause := func(lo, hi time.Duration) bool {
		d := lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	if len(faultKinds(cfg)) == 0 {
		return
	}
	for pause(cfg.faultEvery/2, cfg.faultEvery*3/2) {
		kinds := faultKinds(cfg)
		kind := kinds[rng.IntN(len(kinds))]
		res.add(func(r *result) { r.faults[kind]++ })
		switch kind {
		case "kill replica":
			p := c.replicas[rng.IntN(len(c.replicas))]
			p.signal(syscall.SIGKILL)
			pause(300*time.Millisecond, 1500*time.Millisecond)
			if err := p.start(); err != nil {
				res.add(func(r *result) { r.examples = append(r.examples, "restart: "+err.Error()) })
			}
		case "stop redis":
			c.redis.signal(syscall.SIGSTOP)
			pause(500*time.Millisecond, 3*time.Second)
			c.redis.signal(syscall.SIGCONT)
		case "lagging failover":
			if err := c.laggingFailover(ctx, rng); err != nil && ctx.Err() == nil { // not the run ending mid-failover
				res.add(func(r *result) { r.examples = append(r.examples, "failover: "+err.Error()) })
			}
		case "kill redis", "restart redis (volatile)":
			c.redis.signal(syscall.SIGKILL)
			pause(300*time.Millisecond, 1500*time.Millisecond)
			if err := c.redis.start(); err != nil {
				res.add(func(r *result) { r.examples = append(r.examples, "redis restart: "+err.Error()) })
			}
		}
	}
}

// faultKinds are the faults a run draws from: every kind its mode allows, or those of
// -faults.
func faultKinds(cfg config) []string {
	kinds := []string{"kill replica"}
	switch cfg.mode {
	case "redis":
		kinds = append(kinds, "stop redis", "kill redis")
	case "volatile":
		kinds = append(kinds, "restart redis (volatile)")
	case "failover":
		kinds = []string{"lagging failover"}
	}
	if cfg.only == "" {
		return kinds
	}
	var out []string
	for _, k := range kinds {
		for _, want := range strings.Split(cfg.only, ",") {
			if strings.ReplaceAll(strings.TrimSpace(want), "-", " ") == strings.TrimSuffix(k, " (volatile)") {
				out = append(out, k)
			}
		}
	}
	return out
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitTCP waits until addr accepts a connection (and, with send, answers want).
func waitTCP(ctx context.Context, addr, send, want string) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			ok := send == ""
			if !ok {
				_ = conn.SetDeadline(time.Now().Add(time.Second))
				if _, err := conn.Write([]byte(send)); err == nil {
					line, _ := bufio.NewReader(conn).ReadString('\n')
					ok = strings.HasPrefix(line, want)
				}
			}
			conn.Close()
			if ok {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not come up within 20 s", addr)
}

// dialAll is one client connection that spreads RPCs over every replica (grpc-go's
// round_robin over a static address list) and skips replicas that are down.
func dialAll(addrs []string) (*grpc.ClientConn, error) {
	r := manual.NewBuilderWithScheme("chaos")
	var as []resolver.Address
	for _, a := range addrs {
		as = append(as, resolver.Address{Addr: a})
	}
	r.InitialState(resolver.State{Addresses: as})
	return grpc.NewClient(r.Scheme()+":///replicas",
		grpc.WithResolvers(r),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`))
}

// ---- one session's agent --------------------------------------------------------------

const grace = 1500 * time.Millisecond

// stuckAfter is how long an observed event may stay undelivered before the agent
// aborts the Decide it has waiting (the arbiter's LateTimer: a delivery takes
// milliseconds when the store answers).
const stuckAfter = 100 * time.Millisecond

// event is one observation waiting in the outbox.
type event struct {
	name string
	at   time.Time
	// extra is added to the event's true age as it is reported (-backdate).
	extra time.Duration
	send  func(ctx context.Context, age *durationpb.Duration) (*arbiterv1.Effects, error)
	done  chan struct{}
}

// callRec is what the agent knows of one call id.
type callRec struct {
	registered bool
	finals     map[uint64]bool // seqs of final responses seen
	dead       bool
	unknown    bool // answered "unknown" by the agent itself after a session loss
}

type session struct {
	c   arbiterv1.ArbiterServiceClient
	id  string
	rng *rand.Rand
	res *result
	t0  time.Time

	mu    sync.Mutex
	epoch string
	// delivered counts the events that landed.
	delivered int
	// abortDecide, while a Decide waits, ends it: a delivery failed (see sender).
	abortDecide context.CancelFunc
	// backdate: events' ages are reported up to this much too large; cancelled: the
	// jobs the arbiter said were cancelled (cancelled_job_ids, "cancelled" responses).
	backdate  time.Duration
	cancelled map[string]bool
	conn      int
	outbox    []*event
	kick      chan struct{}
	calls     map[string]*callRec
	jobID     string
	jobAck    chan struct{} // closed when the call's RegisterCall landed with EXECUTE
	lost      bool
	commits   int

	trail []string // what happened, for a failure's example

	closed   bool      // CloseSession and the final Poll answered
	prepared time.Time // when prepare finished (agent clock)
	stopAt   time.Time // when the user's stop began; zero: no stop
	decided  bool
}

func newSession(c arbiterv1.ArbiterServiceClient, id string, rng *rand.Rand, res *result) *session {
	return &session{c: c, id: id, rng: rng, res: res, kick: make(chan struct{}, 1), calls: map[string]*callRec{}, jobAck: make(chan struct{}), cancelled: map[string]bool{}}
}

// rpcErr counts an RPC error by its code and reports whether it is worth retrying.
func (s *session) rpcErr(err error) (retry bool) {
	code := status.Code(err)
	s.res.add(func(r *result) { r.rpcErrors[code.String()]++ })
	switch code {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted, codes.Canceled:
		return true
	}
	return false
}

// retry calls f until it succeeds, fails for good, or ctx ends.
func (s *session) retry(ctx context.Context, f func(ctx context.Context) error) error {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := f(rctx)
		cancel()
		if err == nil {
			return nil
		}
		if status.Code(err) == codes.DataLoss {
			s.rpcErr(err)
			return err
		}
		if !s.rpcErr(err) {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 500*time.Millisecond)
	}
	return ctx.Err()
}

func (s *session) after(d time.Duration) time.Time { return s.t0.Add(d) }

// note records a line of the session's trail (locked by the caller or not: it locks).
func (s *session) note(format string, args ...any) {
	line := fmt.Sprintf("%6d ms ", time.Since(s.t0).Milliseconds()) + fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.trail = append(s.trail, line)
	s.mu.Unlock()
}

// sleepUntil waits until t on the session's clock.
func sleepUntil(ctx context.Context, t time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(t)):
		return true
	}
}

func (s *session) run(ctx context.Context) {
	s.t0 = time.Now()
	sctx, cancel := context.WithTimeout(ctx, 150*time.Second)
	defer cancel()
	if err := s.connect(sctx, ""); err != nil {
		s.res.add(func(r *result) { r.examples = append(r.examples, s.id+": connect: "+err.Error()) })
		return
	}
	senderDone := make(chan struct{})
	go func() { s.sender(sctx); close(senderDone) }()

	prepare := time.Duration(500+s.rng.IntN(2000)) * time.Millisecond
	stop := s.rng.IntN(2) == 0
	reissue := s.rng.IntN(3) == 0
	stopOffset := time.Duration(s.rng.IntN(3300)-800) * time.Millisecond // around the grace window's end

	s.observeSpeech(sctx, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START, s.after(100*time.Millisecond))
	s.observeTranscript(sctx, "Book me tomorrow at 3pm.", s.after(900*time.Millisecond))
	s.observeSpeech(sctx, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END, s.after(900*time.Millisecond))
	s.observeCall(sctx, "c1", "tomorrow at 3pm", s.after(time.Second))

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.backend(sctx, prepare) }()
	if stop {
		s.res.add(func(r *result) { r.stops++ })
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := s.after(time.Second + prepare + grace + stopOffset)
			if !sleepUntil(sctx, start) {
				return
			}
			s.mu.Lock()
			s.stopAt = time.Now()
			s.mu.Unlock()
			s.note("the user starts saying stop")
			s.observeSpeech(sctx, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START, time.Now())
			if sleepUntil(sctx, time.Now().Add(1200*time.Millisecond)) {
				s.observeTranscript(sctx, "Stop, don't book it.", time.Now())
				s.observeSpeech(sctx, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END, time.Now())
			}
		}()
	}
	if reissue && sleepUntil(sctx, s.after(time.Second+prepare+3*time.Second)) {
		s.observeCall(sctx, "c2", "tomorrow 3pm", time.Now())
	}
	wg.Wait()
	sleepUntil(sctx, s.after(15*time.Second))
	s.drain(sctx, 60*time.Second)
	s.closed = s.closeSession(sctx)
	cancel()
	<-senderDone
	s.tally()
}

// connect calls Connect with a new connection id (naming the epoch the agent knew, if
// any) and takes the session's epoch; a lost session is recorded.
func (s *session) connect(ctx context.Context, known string) error {
	s.mu.Lock()
	s.conn++
	connID := fmt.Sprintf("conn-%d", s.conn)
	s.mu.Unlock()
	return s.retry(ctx, func(ctx context.Context) error {
		resp, err := s.c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: s.id, ConnectionId: connID, Epoch: known})
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.epoch = resp.GetEpoch()
		if resp.GetState() == arbiterv1.SessionState_SESSION_STATE_LOST {
			s.markLost()
		}
		s.mu.Unlock()
		s.effects(resp.GetEffects())
		return nil
	})
}

// markLost: the arbiter no longer has the session's earlier epoch: every call in
// flight is answered "unknown" by the agent itself (never as a fresh start). Locked.
func (s *session) markLost() {
	if !s.lost {
		s.lost = true
		s.res.add(func(r *result) { r.lostSessions++ })
	}
	for _, c := range s.calls {
		if c.registered && len(c.finals) == 0 && !c.dead {
			c.unknown = true
		}
	}
}

// enqueue adds an observation to the outbox, in order.
func (s *session) enqueue(ev *event) {
	s.mu.Lock()
	if s.backdate > 0 {
		ev.extra = time.Duration(s.rng.Int64N(int64(s.backdate) + 1))
	}
	s.outbox = append(s.outbox, ev)
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func age(at time.Time) *durationpb.Duration {
	d := time.Since(at)
	if d < time.Millisecond {
		return nil
	}
	return durationpb.New(d)
}

func (s *session) epochNow() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epoch
}

func (s *session) observeSpeech(ctx context.Context, e arbiterv1.SpeechEvent, at time.Time) {
	if !sleepUntil(ctx, at) {
		return
	}
	s.enqueue(&event{name: e.String(), at: time.Now(), done: make(chan struct{}), send: func(ctx context.Context, a *durationpb.Duration) (*arbiterv1.Effects, error) {
		resp, err := s.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: s.id, Event: e, Age: a, Epoch: s.epochNow()})
		return resp.GetEffects(), err
	}})
}

func (s *session) observeTranscript(ctx context.Context, text string, at time.Time) {
	if !sleepUntil(ctx, at) {
		return
	}
	s.enqueue(&event{name: "transcript", at: time.Now(), done: make(chan struct{}), send: func(ctx context.Context, a *durationpb.Duration) (*arbiterv1.Effects, error) {
		resp, err := s.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: s.id, Text: text, Age: a, Epoch: s.epochNow()})
		s.mu.Lock()
		for _, id := range resp.GetCancelledJobIds() {
			s.cancelled[id] = true
		}
		s.mu.Unlock()
		return resp.GetEffects(), err
	}})
}

func (s *session) observeCall(ctx context.Context, id, slot string, at time.Time) {
	if !sleepUntil(ctx, at) {
		return
	}
	s.mu.Lock()
	s.calls[id] = &callRec{finals: map[uint64]bool{}}
	s.mu.Unlock()
	args, _ := structpb.NewStruct(map[string]any{"slot": slot})
	s.enqueue(&event{name: "call " + id, at: time.Now(), done: make(chan struct{}), send: func(ctx context.Context, a *durationpb.Duration) (*arbiterv1.Effects, error) {
		resp, err := s.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: s.id, CallId: id, Tool: "book_slot", Args: args, Age: a, Epoch: s.epochNow()})
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.calls[id].registered = true
		if resp.GetDisposition() == arbiterv1.Disposition_DISPOSITION_EXECUTE && s.jobID == "" {
			s.jobID = resp.GetJobId()
			close(s.jobAck)
		}
		s.mu.Unlock()
		return resp.GetEffects(), nil
	}})
}

// sender delivers the outbox in order, each event retried with its age until it lands
// (or the session is lost: the rest go to the new epoch).
func (s *session) sender(ctx context.Context) {
	for {
		s.mu.Lock()
		var ev *event
		if len(s.outbox) > 0 {
			ev = s.outbox[0]
		}
		s.mu.Unlock()
		if ev == nil {
			select {
			case <-ctx.Done():
				return
			case <-s.kick:
				continue
			}
		}
		var eff *arbiterv1.Effects
		// An event not delivered within stuckAfter (a store frozen under its request),
		// or whose delivery fails, aborts the Decide waiting: it must not be answered a
		// COMMIT before this event lands (an answered COMMIT stands).
		abort := func() {
			s.mu.Lock()
			if s.abortDecide != nil {
				s.abortDecide()
			}
			s.mu.Unlock()
		}
		stuck := time.AfterFunc(stuckAfter-time.Since(ev.at), abort)
		err := s.retry(ctx, func(ctx context.Context) error {
			var err error
			if eff, err = ev.send(ctx, age(ev.at.Add(-ev.extra))); err != nil {
				abort()
			}
			return err
		})
		stuck.Stop()
		switch {
		case status.Code(err) == codes.DataLoss:
			// The session was lost: answer what was in flight "unknown", connect in a new
			// epoch, and deliver this event again there.
			s.mu.Lock()
			known := s.epoch
			s.markLost()
			s.mu.Unlock()
			if s.connect(ctx, known) != nil {
				return
			}
			continue
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			s.res.add(func(r *result) {
				r.examples = append(r.examples, fmt.Sprintf("%s: %s dropped: %v", s.id, ev.name, err))
			})
		}
		s.effects(eff)
		s.note("delivered %s observed at %d ms", ev.name, ev.at.Sub(s.t0).Milliseconds())
		s.mu.Lock()
		s.outbox = s.outbox[1:]
		s.delivered++
		s.mu.Unlock()
		close(ev.done)
	}
}

// undeliveredBefore returns the done channels of the events observed before t and not
// delivered yet.
func (s *session) undeliveredBefore(t time.Time) []chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []chan struct{}
	for _, ev := range s.outbox {
		if ev.at.Before(t) {
			out = append(out, ev.done)
		}
	}
	return out
}

// backend is the fake two-phase backend: it prepares once the call's job exists, then
// asks Decide until it has a decision it may act on, and reports the outcome.
func (s *session) backend(ctx context.Context, prepare time.Duration) {
	select {
	case <-ctx.Done():
		return
	case <-s.jobAck:
	}
	if !sleepUntil(ctx, time.Now().Add(prepare)) {
		return
	}
	s.mu.Lock()
	s.prepared = time.Now()
	job := s.jobID
	s.mu.Unlock()
	s.note("prepared %s", job)
	for ctx.Err() == nil {
		// Ask only once everything observed so far is delivered, as the clients do: an
		// event observed while the agent waited for the earlier ones is waited for too
		// (before, the wait covered only the events undelivered when it began, and a
		// stop observed behind a stuck event went unsaid to a Decide that claimed
		// events_delivered: chaos-23261-11 committed 396 ms after the stop began).
		if ws := s.undeliveredBefore(time.Now().Add(time.Hour)); len(ws) > 0 {
			for _, w := range ws {
				select {
				case <-w:
				case <-ctx.Done():
					return
				}
			}
			continue // more may have been observed meanwhile
		}
		var d *arbiterv1.DecideResponse
		dctx, abort := context.WithCancel(ctx)
		s.mu.Lock()
		if len(s.outbox) > 0 { // observed since the check: wait for it first
			s.mu.Unlock()
			abort()
			continue
		}
		s.abortDecide = abort // from here an event observed aborts this Decide (sender)
		s.mu.Unlock()
		err := s.retry(dctx, func(ctx context.Context) error {
			var err error
			d, err = s.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: s.id, JobId: job, Prepared: true, Wait: durationpb.New(2 * time.Second), EventsDelivered: true})
			return err
		})
		s.mu.Lock()
		s.abortDecide = nil
		s.mu.Unlock()
		aborted := dctx.Err() != nil && ctx.Err() == nil
		abort()
		if aborted {
			s.note("Decide aborted: an event is undelivered")
			continue
		}
		if err != nil {
			return // lost (NOT_FOUND in a new epoch) or the session's time ran out
		}
		s.note("Decide: %v decided at %v: %s", d.GetDecision(), d.GetDecidedAt().AsTime().Sub(s.t0).Milliseconds(), d.GetReason())
		switch d.GetDecision() {
		case arbiterv1.Decision_DECISION_COMMIT:
			s.mu.Lock()
			s.commits++
			s.decided = true
			s.mu.Unlock()
			s.res.add(func(r *result) { r.commits++ })
			s.complete(ctx, job, arbiterv1.Outcome_OUTCOME_COMMITTED)
			return
		case arbiterv1.Decision_DECISION_CANCEL:
			s.mu.Lock()
			s.decided = true
			s.mu.Unlock()
			s.res.add(func(r *result) { r.cancels++ })
			s.complete(ctx, job, arbiterv1.Outcome_OUTCOME_CANCELLED)
			return
		}
	}
}

func (s *session) complete(ctx context.Context, job string, o arbiterv1.Outcome) {
	req := &arbiterv1.CompleteRequest{SessionId: s.id, JobId: job, Outcome: o}
	if o == arbiterv1.Outcome_OUTCOME_COMMITTED {
		req.Result, _ = structpb.NewStruct(map[string]any{"reference": "R-" + s.id})
	}
	_ = s.retry(ctx, func(ctx context.Context) error {
		resp, err := s.c.Complete(ctx, req)
		if err == nil {
			s.effects(resp.GetEffects())
		}
		return err
	})
}

// drain waits (at most d) for the outbox to empty.
func (s *session) drain(ctx context.Context, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		s.mu.Lock()
		n := len(s.outbox)
		s.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// closeSession closes the session and reads its whole effect log, so every outcome
// handed out (by any RPC, a timer or the close) is seen. A session the store no longer
// has (NOT_FOUND) was lost: its calls in flight are answered "unknown" by the agent.
func (s *session) closeSession(ctx context.Context) bool {
	err := s.retry(ctx, func(ctx context.Context) error {
		resp, err := s.c.CloseSession(ctx, &arbiterv1.CloseSessionRequest{SessionId: s.id})
		if err == nil {
			s.effects(resp.GetEffects())
		}
		return err
	})
	if status.Code(err) == codes.NotFound {
		s.mu.Lock()
		s.markLost()
		s.mu.Unlock()
		return true
	}
	if err != nil {
		return false
	}
	zero := uint64(0)
	return s.retry(ctx, func(ctx context.Context) error {
		resp, err := s.c.Poll(ctx, &arbiterv1.PollRequest{SessionId: s.id, AfterSeq: &zero})
		if err == nil {
			s.effects(resp.GetEffects())
		}
		return err
	}) == nil
}

// effects records what the arbiter handed out: final responses by seq, skips.
func (s *session) effects(e *arbiterv1.Effects) {
	if e == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range e.GetResponses() {
		c := s.calls[r.GetCallId()]
		if c == nil || r.GetInterim() {
			continue
		}
		c.finals[r.GetSeq()] = true
		if r.GetPayload().AsMap()["status"] == "cancelled" {
			s.cancelled[r.GetJobId()] = true
		}
	}
	for _, sk := range e.GetSkips() {
		if c := s.calls[sk.GetCallId()]; c != nil {
			c.dead = true
		}
	}
}

// tally adds the session's counts to the result.
func (s *session) tally() {
	s.mu.Lock()
	defer s.mu.Unlock()
	afterStop := !s.stopAt.IsZero() && !s.prepared.IsZero() && s.stopAt.Before(s.prepared.Add(grace)) && s.commits > 0
	s.res.add(func(r *result) {
		r.sessions++
		if !s.closed {
			// The arbiter could not be reached to close the session within its time
			// budget: its ids are judged by nothing the agent could see.
			r.unfinished++
			r.examples = append(r.examples, s.id+": could not be closed within its time budget")
			return
		}
		if s.commits > 1 {
			r.doubleCommits++
			r.examples = append(r.examples, fmt.Sprintf("%s: committed %d times", s.id, s.commits))
		}
		if s.commits > 0 && s.cancelled[s.jobID] {
			r.commitThenCancel++
			r.examples = append(r.examples, fmt.Sprintf("%s: answered COMMIT for %s, then reported it cancelled:\n    %s", s.id, s.jobID, strings.Join(s.trail, "\n    ")))
		}
		if afterStop {
			r.commitsAfterStop++
			r.examples = append(r.examples, fmt.Sprintf("%s: committed; the stop began %v before the commit came due:\n    %s", s.id, s.prepared.Add(grace).Sub(s.stopAt).Round(time.Millisecond), strings.Join(s.trail, "\n    ")))
		}
		for id, c := range s.calls {
			if !c.registered {
				r.notCalled++
				continue
			}
			r.calls++
			switch {
			case len(c.finals) > 1:
				r.answeredTwice++
				r.examples = append(r.examples, fmt.Sprintf("%s/%s: %d final responses", s.id, id, len(c.finals)))
			case len(c.finals) == 0 && !c.dead && !c.unknown:
				r.neverAnswered++
				r.examples = append(r.examples, fmt.Sprintf("%s/%s: never answered", s.id, id))
			}
		}
	})
}

// ---- failover mode --------------------------------------------------------------------

// startFailover starts a Redis primary, its replica and a Sentinel watching them
// (quorum 1, down after 1 s), and returns the store arguments of the replicas.
func (c *cluster) startFailover(ctx context.Context, dir string) ([]string, error) {
	c.dir = dir
	for i := range c.redisPair {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		c.redisPorts[i] = port
	}
	for i := range c.redisPair {
		var replicaOf []string
		if i == 1 {
			replicaOf = []string{"--replicaof", "127.0.0.1", strconv.Itoa(c.redisPorts[0])}
		}
		c.redisPair[i] = c.redisProc(i, replicaOf)
		if err := c.redisPair[i].start(); err != nil {
			return nil, err
		}
		if err := waitTCP(ctx, c.redisAddrOf(i), "PING\r\n", "+PONG"); err != nil {
			return nil, fmt.Errorf("redis-server %d: %v", i+1, err)
		}
	}
	if err := waitFor(ctx, 20*time.Second, func() bool { return replicaOnline(c.redisAddrOf(0)) }); err != nil {
		return nil, fmt.Errorf("the redis replica did not come online: %v", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c.sentinelAddr = "127.0.0.1:" + strconv.Itoa(port)
	conf := filepath.Join(dir, "sentinel.conf")
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor arb 127.0.0.1 %d 1\nsentinel down-after-milliseconds arb 1000\nsentinel failover-timeout arb 10000\nsentinel parallel-syncs arb 1\n", port, dir, c.redisPorts[0])
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		return nil, err
	}
	c.sentinel = &proc{name: "redis-sentinel", bin: "redis-server", args: []string{conf, "--sentinel"}, log: filepath.Join(dir, "sentinel.log")}
	if err := c.sentinel.start(); err != nil {
		return nil, err
	}
	if err := waitTCP(ctx, c.sentinelAddr, "PING\r\n", "+PONG"); err != nil {
		return nil, fmt.Errorf("redis sentinel: %v", err)
	}
	return []string{"--redis-url", "redis://" + c.sentinelAddr + "?master_name=arb"}, nil
}

// redisProc is Redis server i (its own port and directory, AOF with an fsync per
// write), replicating replicaOf when set.
func (c *cluster) redisProc(i int, replicaOf []string) *proc {
	d := filepath.Join(c.dir, fmt.Sprintf("redis-%d", i+1))
	_ = os.MkdirAll(d, 0o700)
	args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(c.redisPorts[i]), "--dir", d, "--save", "",
		"--appendonly", "yes", "--appendfsync", "always", "--repl-timeout", "60"}, replicaOf...)
	return &proc{name: fmt.Sprintf("redis-server %d", i+1), bin: "redis-server", args: args, log: filepath.Join(d, "redis.log")}
}

func (c *cluster) redisAddrOf(i int) string { return "127.0.0.1:" + strconv.Itoa(c.redisPorts[i]) }

// primaryIndex asks the Sentinel which server is the primary.
func (c *cluster) primaryIndex() (int, error) {
	reply, err := command(c.sentinelAddr, "SENTINEL", "get-master-addr-by-name", "arb")
	if err != nil {
		return 0, err
	}
	for i := range c.redisPorts {
		if strings.Contains(reply, "\n"+strconv.Itoa(c.redisPorts[i])+"\r") {
			return i, nil
		}
	}
	return 0, fmt.Errorf("sentinel names no server of ours: %q", reply)
}

// laggingFailover: the replica stops acknowledging (SIGSTOP) while the primary takes
// writes for 1-3 s, the primary dies (SIGKILL), the replica goes on (SIGCONT) and the
// Sentinel promotes it; the old primary comes back as the new one's replica.
func (c *cluster) laggingFailover(ctx context.Context, rng *rand.Rand) error {
	p, err := c.primaryIndex()
	if err != nil {
		return err
	}
	r := 1 - p
	if err := waitFor(ctx, 30*time.Second, func() bool { return replicaOnline(c.redisAddrOf(p)) }); err != nil {
		return fmt.Errorf("replica not online before the fault: %v", err)
	}
	c.redisPair[r].signal(syscall.SIGSTOP)
	// Ballast: 16 MB the primary must send the frozen replica first, more than the
	// sockets between them buffer, so that what the sessions write next stays in the
	// primary's output buffer and the replica really lags (at this run's small write
	// rate the socket buffers alone would hold every write of the stall, and the
	// replica would catch up from them after SIGCONT).
	if _, err := command(c.redisAddrOf(p), "SET", "chaos:ballast", strings.Repeat("b", 16<<20)); err != nil {
		return fmt.Errorf("ballast: %v", err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Second + time.Duration(rng.Int64N(int64(2*time.Second)))):
	}
	c.redisPair[p].signal(syscall.SIGKILL)
	c.redisPair[r].signal(syscall.SIGCONT)
	if err := waitFor(ctx, 30*time.Second, func() bool { i, err := c.primaryIndex(); return err == nil && i == r }); err != nil {
		return fmt.Errorf("sentinel did not promote the replica: %v", err)
	}
	c.redisPair[p] = c.redisProc(p, []string{"--replicaof", "127.0.0.1", strconv.Itoa(c.redisPorts[r])})
	if err := c.redisPair[p].start(); err != nil {
		return err
	}
	if err := waitTCP(ctx, c.redisAddrOf(p), "PING\r\n", "+PONG"); err != nil {
		log, _ := os.ReadFile(c.redisPair[p].log)
		if len(log) > 2000 {
			log = log[len(log)-2000:]
		}
		return fmt.Errorf("the old primary, restarted as a replica: %v; its log ends:\n%s", err, log)
	}
	return nil
}

// replicaOnline reports whether the Redis server at addr has a replica online.
func replicaOnline(addr string) bool {
	reply, err := command(addr, "INFO", "replication")
	return err == nil && strings.Contains(reply, "state=online")
}

// waitFor polls cond every 100 ms until it holds, for at most d.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if cond() {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not within %v", d)
}

// command sends one command to the Redis (or Sentinel) at addr and returns its whole
// reply as read within 300 ms of the first byte (enough for a short reply).
func command(addr string, args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	buf := make([]byte, 64<<10)
	n, err := conn.Read(buf)
	if n == 0 {
		return "", err
	}
	out := string(buf[:n])
	_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	for {
		m, err := conn.Read(buf)
		out += string(buf[:m])
		if err != nil || m == 0 {
			return out, nil
		}
	}
}
