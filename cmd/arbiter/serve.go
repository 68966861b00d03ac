package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
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
// restart when it comes back.
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
	log.Info("arbiter serving", attrs...)
	if env.ready != nil {
		env.ready <- lis.Addr().String()
	}
	hctx, stopHealth := context.WithCancel(env.ctx)
	healthDone := make(chan struct{})
	go func() { hc.loop(hctx); close(healthDone) }()
	errc := make(chan error, 1)
	go func() { errc <- gs.Serve(lis) }()
	select {
	case err := <-errc:
		stopHealth()
		<-healthDone
		if metricsSrv != nil {
			_ = metricsSrv.Close()
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
	return store.Close()
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
