package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/policyfile"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
	"github.com/voicearbiter/arbiter/store/redisstore"
)

// serveCmd is `arbiter serve`.
type serveCmd struct {
	Listen       string        `default:"127.0.0.1:50051" env:"ARBITER_LISTEN" help:"Address to listen on (host:port; port 0 picks a free one)."`
	Tools        string        `env:"ARBITER_TOOLS" type:"existingfile" help:"Tool-policy YAML file. Without one every tool is read-only pass-through."`
	LogLevel     string        `default:"info" enum:"debug,info,warn,error" env:"ARBITER_LOG_LEVEL" help:"Log level: debug, info, warn, error."`
	LogFormat    string        `default:"text" enum:"text,json" env:"ARBITER_LOG_FORMAT" help:"Log format: text or json."`
	IdleTTL      time.Duration `default:"1h" env:"ARBITER_IDLE_TTL" help:"A session expires this long after its last change."`
	MaxWait      time.Duration `default:"30s" env:"ARBITER_MAX_WAIT" help:"Cap on a Decide long-poll."`
	DrainTimeout time.Duration `default:"10s" env:"ARBITER_DRAIN_TIMEOUT" help:"On SIGTERM, how long in-flight RPCs may finish before the server stops hard."`
	RedisURL     string        `name:"redis-url" env:"ARBITER_REDIS_URL" help:"Shared Redis store: redis://[:password@]host:port[/db], rediss:// for TLS, a Cluster seed list (redis://h1:p1?addr=h2:p2&addr=h3:p3, or URLs separated by commas), or Sentinel (redis://sentinel:26379?master_name=NAME). Empty: the embedded in-memory store."`
	HealthEvery  time.Duration `name:"health-interval" default:"1s" env:"ARBITER_HEALTH_INTERVAL" help:"How often the store is pinged to set the gRPC health status (SERVING only while it answers)."`
	StateFile    string        `name:"state-file" env:"ARBITER_STATE_FILE" help:"Keep the embedded store's sessions in this file across restarts: read at start (a missing file is an empty store), written every --state-interval and after the drain on SIGTERM. Not with --redis-url. Empty: sessions live only in memory."`
	StateEvery   time.Duration `name:"state-interval" default:"5s" env:"ARBITER_STATE_INTERVAL" help:"How often --state-file is rewritten when sessions changed (a crash loses at most this much); 0: only on shutdown."`

	MetricsListen  string        `name:"metrics-listen" env:"ARBITER_METRICS_LISTEN" help:"Serve Prometheus metrics at http://ADDR/metrics (e.g. :9090). Empty: no metrics endpoint."`
	AuthTokensFile string        `name:"auth-tokens-file" env:"ARBITER_AUTH_TOKENS_FILE" type:"existingfile" help:"YAML mapping of bearer token to tenant. When set, every RPC but health and reflection needs a known token, and sessions are scoped by its tenant."`
	TLSCert        string        `name:"tls-cert" env:"ARBITER_TLS_CERT" type:"existingfile" help:"Serve TLS with this PEM certificate (needs --tls-key)."`
	TLSKey         string        `name:"tls-key" env:"ARBITER_TLS_KEY" type:"existingfile" help:"PEM private key for --tls-cert."`
	TLSClientCA    string        `name:"tls-client-ca" env:"ARBITER_TLS_CLIENT_CA" type:"existingfile" help:"Require client certificates signed by this PEM CA (mutual TLS; needs --tls-cert)."`
	RateLimit      float64       `name:"rate-limit" env:"ARBITER_RATE_LIMIT" help:"Requests per second each tenant may make (token bucket); 0: unlimited."`
	RateBurst      int           `name:"rate-burst" default:"100" env:"ARBITER_RATE_BURST" help:"Burst size of the per-tenant rate limit."`
	RPCTimeout     time.Duration `name:"rpc-timeout" default:"10s" env:"ARBITER_RPC_TIMEOUT" help:"Deadline of each RPC (Decide: its wait cap on top)."`
	MaxMsgSize     int           `name:"max-msg-size" default:"1048576" env:"ARBITER_MAX_MSG_SIZE" help:"Largest request message in bytes; larger ones get RESOURCE_EXHAUSTED."`
	MaxSessions    int           `name:"max-sessions" env:"ARBITER_MAX_SESSIONS" help:"Most live sessions the embedded store holds (RESOURCE_EXHAUSTED past it); 0: unlimited. Not enforced on Redis, whose memory limit applies."`
	MaxCalls       int           `name:"max-calls-per-session" default:"1024" env:"ARBITER_MAX_CALLS_PER_SESSION" help:"Most function calls one session may register (RESOURCE_EXHAUSTED past it)."`
}

// Run starts the server and blocks until the context ends (SIGINT/SIGTERM), then
// drains: health turns NOT_SERVING, open Watch streams end with UNAVAILABLE (clients
// resume elsewhere), GracefulStop lets unary RPCs finish racing DrainTimeout, then the
// store (and its Redis client) closes. With --redis-url the store is pinged every
// --health-interval: health is SERVING only while Redis answers; the server starts even
// when Redis is down (NOT_SERVING, RPCs answer UNAVAILABLE) and recovers without a
// restart when it comes back. With --state-file the embedded store's sessions are
// restored from the file at start (a corrupt file fails the start), written to it
// every --state-interval while they change, and once more after the drain, when no
// RPC can change them any more.
func (c *serveCmd) Run(env *runEnv) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return err
	}
	hopts := &slog.HandlerOptions{Level: level}
	var log *slog.Logger
	if c.LogFormat == "json" {
		log = slog.New(slog.NewJSONHandler(env.stderr, hopts))
	} else {
		log = slog.New(slog.NewTextHandler(env.stderr, hopts))
	}
	policy, err := loadPolicy(c.Tools)
	if err != nil {
		return err
	}
	if c.IdleTTL <= 0 || c.MaxWait <= 0 || c.DrainTimeout <= 0 || c.HealthEvery <= 0 || c.RPCTimeout <= 0 {
		return fmt.Errorf("--idle-ttl, --max-wait, --drain-timeout, --health-interval and --rpc-timeout must be positive")
	}
	if c.StateFile != "" && c.RedisURL != "" {
		return fmt.Errorf("--state-file is for the embedded store; Redis keeps its own state: drop one of --state-file and --redis-url")
	}
	if c.StateEvery < 0 {
		return fmt.Errorf("--state-interval must not be negative")
	}
	if c.MaxMsgSize < 1024 || c.MaxCalls < 1 || c.MaxSessions < 0 || c.RateLimit < 0 || c.RateBurst < 1 {
		return fmt.Errorf("--max-msg-size must be at least 1024, --max-calls-per-session and --rate-burst at least 1, --max-sessions and --rate-limit not negative")
	}
	opts := server.Options{Logger: log, MaxRecvMsgSize: c.MaxMsgSize, RPCTimeout: c.RPCTimeout}
	if c.AuthTokensFile != "" {
		if opts.Tokens, err = server.LoadTokens(c.AuthTokensFile); err != nil {
			return err
		}
	}
	if c.RateLimit > 0 {
		opts.Limiter = &server.TenantLimiter{RPS: c.RateLimit, Burst: c.RateBurst}
	}
	switch {
	case c.TLSCert != "" || c.TLSKey != "":
		if c.TLSCert == "" || c.TLSKey == "" {
			return fmt.Errorf("--tls-cert and --tls-key go together")
		}
		if opts.TLS, err = server.TLSConfig(c.TLSCert, c.TLSKey, c.TLSClientCA); err != nil {
			return err
		}
	case c.TLSClientCA != "":
		return fmt.Errorf("--tls-client-ca needs --tls-cert and --tls-key")
	}
	if c.MetricsListen != "" {
		opts.Metrics = server.NewMetrics()
	}
	var (
		store     arbiter.Store
		storeName = "memory"
		state     *stateFile // nil without --state-file
	)
	if c.RedisURL != "" {
		rs, err := redisstore.Open(c.RedisURL, redisstore.Options{})
		if err != nil {
			return fmt.Errorf("--redis-url: %v", arbiter.MessageOf(err))
		}
		store, storeName = rs, "redis"
		useRedisLogger(log)
	} else {
		ms := memory.New(nil)
		ms.MaxSessions = c.MaxSessions
		store = ms
		if c.StateFile != "" {
			state = &stateFile{store: ms, path: c.StateFile, every: c.StateEvery, log: log}
			if err := state.load(); err != nil {
				_ = store.Close()
				return err
			}
		}
	}
	svc := &arbiter.Service{
		Engine: &arbiter.Engine{Policy: policy, MaxCalls: c.MaxCalls}, Store: store, Clock: arbiter.SystemClock{},
		IdleTTL: c.IdleTTL, MaxWait: c.MaxWait,
	}
	srv := server.New(svc, log)
	gs, hs := server.NewGRPCServer(srv, opts)
	lis, err := net.Listen("tcp", c.Listen)
	if err != nil {
		_ = store.Close()
		return err
	}
	var metricsSrv *http.Server
	if opts.Metrics != nil {
		mlis, err := net.Listen("tcp", c.MetricsListen)
		if err != nil {
			_ = lis.Close()
			_ = store.Close()
			return fmt.Errorf("--metrics-listen: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", opts.Metrics.Handler())
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = metricsSrv.Serve(mlis) }()
		log.Info("metrics serving", "addr", mlis.Addr().String(), "path", "/metrics")
	}
	// A store that cannot be reached at start is not fatal: the server starts
	// NOT_SERVING (RPCs answer UNAVAILABLE) and turns SERVING when the store answers,
	// so an orchestrator can start arbiter and Redis in any order.
	hc := &healthCheck{store: store, hs: hs, log: log, every: c.HealthEvery}
	hc.check(env.ctx)
	attrs := []any{"addr", lis.Addr().String(), "store", storeName, "tools", len(policy.Tools),
		"tls", opts.TLS != nil, "auth", opts.Tokens != nil}
	if c.RedisURL != "" {
		attrs = append(attrs, "redis", redisstore.Redact(c.RedisURL))
	}
	if state != nil {
		attrs = append(attrs, "state_file", c.StateFile)
	}
	log.Info("arbiter serving", attrs...)
	if env.ready != nil {
		env.ready <- lis.Addr().String()
	}
	hctx, stopHealth := context.WithCancel(env.ctx)
	healthDone := make(chan struct{})
	go func() { hc.loop(hctx); close(healthDone) }()
	stopState := state.start()
	errc := make(chan error, 1)
	go func() { errc <- gs.Serve(lis) }()
	select {
	case err := <-errc:
		stopHealth()
		<-healthDone
		if metricsSrv != nil {
			_ = metricsSrv.Close()
		}
		stopState()
		if serr := state.save("stop"); serr != nil && err == nil {
			err = serr
		}
		_ = store.Close()
		return err
	case <-env.ctx.Done():
	}
	log.Info("draining", "timeout", c.DrainTimeout)
	stopHealth()
	<-healthDone
	hs.Shutdown() // every service NOT_SERVING: load balancers stop sending
	// Watch streams last as long as their sessions: end them now (UNAVAILABLE, the
	// client resumes on another replica with after_seq) so they do not hold the drain
	// until its timeout.
	srv.Shutdown()
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(c.DrainTimeout):
		log.Warn("drain timeout: stopping hard")
		gs.Stop()
	}
	if metricsSrv != nil {
		_ = metricsSrv.Close()
	}
	// Every RPC has finished (or was cut by the hard stop): the last state is final.
	stopState()
	if err := state.save("shutdown"); err != nil {
		_ = store.Close()
		return err
	}
	return store.Close()
}

// stateFile keeps the embedded store's sessions in a file (--state-file): restored at
// start, written every interval while sessions change, and once more at shutdown.
// save and start are no-ops on a nil *stateFile (no --state-file).
type stateFile struct {
	store *memory.Store
	path  string
	every time.Duration // 0: no periodic writes
	log   *slog.Logger

	written uint64 // store.Changes() before the last successful write; only the owner of the writes touches it
}

// load restores the file into the store (a missing file starts empty) and writes it
// back at once, so a path that cannot be written fails the start rather than the
// first snapshot, and sessions that expired while the server was down leave the file.
func (sf *stateFile) load() error {
	start := time.Now()
	n, err := sf.store.LoadFile(sf.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		sf.log.Info("no state file yet: starting with no sessions", "state_file", sf.path)
	case err != nil:
		return fmt.Errorf("--state-file: %w", err)
	default:
		sf.log.Info("sessions restored", "state_file", sf.path, "sessions", n, "took", time.Since(start).Round(time.Microsecond))
	}
	if err := sf.save("start"); err != nil {
		return fmt.Errorf("--state-file: %w", err)
	}
	return nil
}

// save writes the file unless nothing changed since the last write (at "start" it
// always writes); why ("start", "periodic", "shutdown", "stop") is logged. A failed
// periodic write is logged here; the others are returned for the caller to report.
func (sf *stateFile) save(why string) error {
	if sf == nil {
		return nil
	}
	changes := sf.store.Changes() // read before: a change racing the write is written again next time
	if changes == sf.written && why != "start" {
		return nil
	}
	start := time.Now()
	n, err := sf.store.SaveFile(sf.path)
	if err != nil {
		if why == "periodic" { // the others return it
			sf.log.Error("session state not written", "err", err, "when", why)
		}
		return err
	}
	sf.written = changes
	level := slog.LevelDebug
	if why != "periodic" {
		level = slog.LevelInfo
	}
	sf.log.Log(context.Background(), level, "session state written", "state_file", sf.path, "sessions", n,
		"took", time.Since(start).Round(time.Microsecond), "when", why)
	return nil
}

// start writes the file every sf.every until the returned function is called; that
// function returns once no write is in progress, so the caller may write next.
func (sf *stateFile) start() (stop func()) {
	if sf == nil || sf.every <= 0 {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(sf.every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				_ = sf.save("periodic") // logged; the next tick tries again
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit); <-done }) }
}

// healthCheck sets the gRPC health status (overall and the arbiter service) from the
// store's Ping: SERVING while it answers, NOT_SERVING while it does not.
type healthCheck struct {
	store   arbiter.Store
	hs      *health.Server
	log     *slog.Logger
	every   time.Duration
	serving *bool // nil until the first check
}

// loop checks every hc.every until ctx ends.
func (hc *healthCheck) loop(ctx context.Context) {
	t := time.NewTicker(hc.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			hc.check(ctx)
		}
	}
}

// check pings the store (bounded by the interval, at most 2 s) and sets the status,
// logging each change.
func (hc *healthCheck) check(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, min(hc.every, 2*time.Second))
	err := hc.store.Ping(ctx)
	cancel()
	ok := err == nil
	if hc.serving != nil && *hc.serving == ok {
		return
	}
	st := healthpb.HealthCheckResponse_SERVING
	if ok {
		if hc.serving != nil {
			hc.log.Info("store reachable again: serving")
		}
	} else {
		st = healthpb.HealthCheckResponse_NOT_SERVING
		hc.log.Warn("store unreachable: not serving until it answers", "err", err)
	}
	hc.serving = &ok
	hc.hs.SetServingStatus("", st)
	hc.hs.SetServingStatus(arbiterv1.ArbiterService_ServiceDesc.ServiceName, st)
}

// loadPolicy loads the tool policy, or the empty (all pass-through) policy for "".
func loadPolicy(path string) (*arbiter.Policy, error) {
	if path == "" {
		p := &arbiter.Policy{}
		return p, p.Validate()
	}
	return policyfile.Load(path)
}
