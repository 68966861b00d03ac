package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/buildinfo"
	"github.com/voicearbiter/arbiter/policyfile"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
	"github.com/voicearbiter/arbiter/store/memory/boltdisk"
	"github.com/voicearbiter/arbiter/store/redisstore"
)

// serveCmd is `arbiter serve`.
type serveCmd struct {
	Listen       string        `default:"127.0.0.1:50051" env:"ARBITER_LISTEN" help:"Address to listen on (host:port; port 0 picks a free one)."`
	Tools        string        `env:"ARBITER_TOOLS" help:"Tool-policy YAML file. Without one (or empty) every tool is read-only pass-through."`
	LogLevel     string        `default:"info" enum:"debug,info,warn,error" env:"ARBITER_LOG_LEVEL" help:"Log level: debug, info, warn, error."`
	LogFormat    string        `default:"text" enum:"text,json" env:"ARBITER_LOG_FORMAT" help:"Log format: text or json."`
	IdleTTL      time.Duration `default:"1h" env:"ARBITER_IDLE_TTL" help:"A session expires this long after its last change."`
	MaxWait      time.Duration `default:"30s" env:"ARBITER_MAX_WAIT" help:"Cap on a Decide long-poll."`
	DrainTimeout time.Duration `default:"10s" env:"ARBITER_DRAIN_TIMEOUT" help:"On SIGTERM, how long in-flight unary RPCs may finish before the server stops hard (waiting Decides and Watch streams end at once, UNAVAILABLE: clients go on elsewhere)."`
	RedisURL     string        `name:"redis-url" env:"ARBITER_REDIS_URL" help:"Shared Redis store: redis://[:password@]host:port[/db], rediss:// for TLS, a Cluster seed list (redis://h1:p1?addr=h2:p2&addr=h3:p3, or URLs separated by commas), or Sentinel (redis://sentinel:26379?master_name=NAME). Empty: the embedded in-memory store."`
	RedisCache   int           `name:"redis-cache-sessions" default:"10000" env:"ARBITER_REDIS_CACHE_SESSIONS" help:"With --redis-url: how many sessions' records this replica keeps locally, so that a change costs one Redis round trip (a compare-and-set on the cached version; a stale copy costs one retry, never a wrong answer; a read-only request checks the cached version). About 0.7 KB each for an idle session. 0: no cache (every change reads Redis first)."`
	RedisJSON    bool          `name:"redis-json-records" env:"ARBITER_REDIS_JSON_RECORDS" help:"With --redis-url: write session records as JSON (in the hash layout), the format of versions before the protobuf record, which read nothing else. For the first step of a rolling upgrade from such a version: run the new replicas with it until no old one is left, then without it. Both formats are read either way."`
	RedisLegacy  bool          `name:"redis-legacy-records" env:"ARBITER_REDIS_LEGACY_RECORDS" help:"With --redis-url: write session records as versions before the one-string record (2026-12-01) read them: a hash of version, plain protobuf record and lifetime, instead of one string with an S2-compressed record. For the first step of a rolling upgrade from such a version: run the new replicas with it until no old one is left, then without it. Every layout and format is read either way."`
	RedisAcks    int           `name:"redis-replica-acks" default:"1" env:"ARBITER_REDIS_REPLICA_ACKS" help:"With --redis-url: how many replicas must have a write (and the record a read answers from) before it counts, whenever the Redis primary has replicas online (WAIT; at most as many as are online, so a primary without replicas is not waited on). A write they do not acknowledge within --redis-replica-timeout fails the RPC with UNAVAILABLE and nothing is answered, so a failover to a replica loses no answered decision. 0: a write counts once the primary has it, and a failover to a lagging replica can lose it."`
	RedisAckWait time.Duration `name:"redis-replica-timeout" default:"500ms" env:"ARBITER_REDIS_REPLICA_TIMEOUT" help:"With --redis-replica-acks: how long a write (or read) waits for the replicas' acknowledgement before its RPC fails with UNAVAILABLE. Keep it under the Redis client's read timeout (1s unless the URL sets read_timeout)."`
	Volatile     bool          `name:"allow-volatile-store" env:"ARBITER_ALLOW_VOLATILE_STORE" help:"Run on a Redis that can lose what it acknowledged: no AOF (a restart loses every session, or with RDB snapshots rolls them back to the last one), or AOF without appendfsync always (a crash loses up to a second). Without it serve refuses such a Redis."`
	HealthEvery  time.Duration `name:"health-interval" default:"1s" env:"ARBITER_HEALTH_INTERVAL" help:"How often the store is pinged to set the gRPC health status (SERVING only while it answers)."`
	StateFile    string        `name:"state-file" env:"ARBITER_STATE_FILE" help:"Keep the embedded store's sessions in this database file (bbolt): every change is on disk before its RPC answers, so a crash loses nothing that was answered; read at start (a missing file is an empty store; a JSON state file of earlier versions is converted once and kept as FILE.bak). Not with --redis-url. Empty: sessions live only in memory."`
	StateEvery   time.Duration `name:"state-interval" env:"ARBITER_STATE_INTERVAL" hidden:"" help:"Deprecated and ignored: --state-file is written at every change. Accepted so that old configurations still start; a warning is logged when it is set."`

	MetricsListen  string        `name:"metrics-listen" env:"ARBITER_METRICS_LISTEN" help:"Serve Prometheus metrics at http://ADDR/metrics (e.g. :9090), and each session's timeline at http://ADDR/debug/sessions/ID (see --debug-pages). Empty: no metrics endpoint."`
	DebugPages     bool          `name:"debug-pages" default:"true" negatable:"" env:"ARBITER_DEBUG_PAGES" help:"With --metrics-listen, serve /debug/sessions/ID: the session's timeline from its history, behind the RPCs' tokens when --auth-tokens-file is set (Basic authentication with the token as the password, or a Bearer header) and scoped by tenant. --no-debug-pages: metrics only."`
	HealthListen   string        `name:"health-listen" env:"ARBITER_HEALTH_LISTEN" help:"Also serve grpc.health.v1, and nothing else, in plaintext on this address (e.g. :8081), with the statuses of --listen (readiness follows the store and the drain): for probes that cannot speak the TLS of --listen, like the kubelet's gRPC probe. Empty: off."`
	AuthTokensFile string        `name:"auth-tokens-file" env:"ARBITER_AUTH_TOKENS_FILE" type:"existingfile" help:"YAML mapping of bearer token to tenant. When set, every RPC but health and reflection needs a known token, and sessions are scoped by its tenant."`
	UnauthRate     float64       `name:"unauth-rate" default:"1" env:"ARBITER_UNAUTH_RATE" help:"With --auth-tokens-file: failed authentications per second each peer address may make (IPv6: per /64) before it gets RESOURCE_EXHAUSTED instead of UNAUTHENTICATED; a valid token is never limited by it."`
	UnauthBurst    int           `name:"unauth-burst" default:"20" env:"ARBITER_UNAUTH_BURST" help:"Burst of --unauth-rate."`
	UnauthLogEvery time.Duration `name:"unauth-log-interval" default:"1m" env:"ARBITER_UNAUTH_LOG_INTERVAL" help:"Failed authentications are summed up in one warn line per interval (counts by reason and address), not logged one by one; so are failed TLS handshakes (by kind: no client certificate, a bad one, not TLS)."`
	TLSCert        string        `name:"tls-cert" env:"ARBITER_TLS_CERT" type:"existingfile" help:"Serve TLS with this PEM certificate (needs --tls-key)."`
	TLSKey         string        `name:"tls-key" env:"ARBITER_TLS_KEY" type:"existingfile" help:"PEM private key for --tls-cert."`
	TLSClientCA    string        `name:"tls-client-ca" env:"ARBITER_TLS_CLIENT_CA" type:"existingfile" help:"Require client certificates signed by this PEM CA (mutual TLS; needs --tls-cert)."`
	RateLimit      float64       `name:"rate-limit" env:"ARBITER_RATE_LIMIT" help:"Requests per second each tenant may make (token bucket); with --redis-url counted in Redis across every replica (GCRA; each replica on its own while Redis does not answer); 0: unlimited."`
	RateBurst      int           `name:"rate-burst" default:"100" env:"ARBITER_RATE_BURST" help:"Burst size of the per-tenant rate limit."`
	RPCTimeout     time.Duration `name:"rpc-timeout" default:"10s" env:"ARBITER_RPC_TIMEOUT" help:"Deadline of each RPC (Decide: its wait cap on top)."`
	MaxMsgSize     int           `name:"max-msg-size" default:"1048576" env:"ARBITER_MAX_MSG_SIZE" help:"Largest request message in bytes; larger ones get RESOURCE_EXHAUSTED."`
	Handshake      time.Duration `name:"handshake-timeout" default:"5s" env:"ARBITER_HANDSHAKE_TIMEOUT" help:"A new connection that has not finished its TLS and HTTP/2 handshake this long after it was accepted is closed."`
	MaxStreams     uint32        `name:"max-concurrent-streams" default:"1024" env:"ARBITER_MAX_CONCURRENT_STREAMS" help:"RPCs in flight on one connection (about 8 per live conversation: a Watch, a Decide per job, a few unary calls); clients queue past it."`
	MaxHeaderSize  uint32        `name:"max-header-size" default:"8192" env:"ARBITER_MAX_HEADER_SIZE" help:"Largest request header list (metadata) in bytes, as HTTP/2 counts it; an RPC over it fails with RESOURCE_EXHAUSTED."`
	KeepaliveMin   time.Duration `name:"keepalive-min-time" default:"10s" env:"ARBITER_KEEPALIVE_MIN_TIME" help:"Shortest interval between a client's keepalive pings (allowed with no RPC in flight); a client pinging more often gets GOAWAY too_many_pings."`
	KeepaliveTime  time.Duration `name:"keepalive-time" default:"1m" env:"ARBITER_KEEPALIVE_TIME" help:"How long a connection may stay silent before the server pings it (to find clients that vanished)."`
	KeepaliveWait  time.Duration `name:"keepalive-timeout" default:"20s" env:"ARBITER_KEEPALIVE_TIMEOUT" help:"How long the server waits for the answer to its keepalive ping before it closes the connection."`
	MaxConnAge     time.Duration `name:"max-connection-age" env:"ARBITER_MAX_CONNECTION_AGE" help:"Connections go away (GOAWAY) this long after they opened, so clients spread over replicas added since (in-flight RPCs get --rpc-timeout plus --max-wait to finish; Watch streams resume elsewhere); 0: never."`
	MaxSessions    int           `name:"max-sessions" env:"ARBITER_MAX_SESSIONS" help:"Most live sessions the embedded store holds (RESOURCE_EXHAUSTED past it); 0: unlimited. Not enforced on Redis, whose memory limit applies."`
	MaxCalls       int           `name:"max-calls-per-session" default:"1024" env:"ARBITER_MAX_CALLS_PER_SESSION" help:"Most function calls one session may register (RESOURCE_EXHAUSTED past it)."`
	HistoryBytes   int           `name:"history-bytes" default:"1024" env:"ARBITER_HISTORY_BYTES" help:"Bound of the history (GetHistory) each session keeps, in bytes of its entries JSON-encoded: the latest inputs, decisions and holds; 0: none for sessions that do not record."`
	RecordBytes    int           `name:"record-bytes" default:"65536" env:"ARBITER_RECORD_BYTES" help:"Bound of the history of a session that records (ConfigureSession record, or --history-sample), enough to export it whole (arbiter export). Every RPC of such a session reads and writes it."`
	HistorySample  float64       `name:"history-sample" env:"ARBITER_HISTORY_SAMPLE" help:"Fraction (0 to 1) of new sessions that record from their first event, picked by a hash of the session id (every replica picks the same); 0: only those that ask (ConfigureSession record)."`

	proxyFlags
}

// Run starts the server and blocks until the context ends (SIGINT/SIGTERM), then
// drains: health turns NOT_SERVING, GracefulStop closes the listener and sends every
// connection GOAWAY, open Watch streams and waiting Decides end with UNAVAILABLE
// (SERVER_DRAINING: clients resume or ask again elsewhere), the other unary RPCs
// finish racing DrainTimeout, then the store (and its Redis client) closes. The store is pinged every --health-interval
// (server.HealthWatcher): health is SERVING only while Redis answers; the server
// starts even when Redis is down (NOT_SERVING, RPCs answer UNAVAILABLE) and recovers
// without a restart when it comes back. With --state-file the embedded store runs on
// a bbolt database (boltdisk): its sessions are loaded at start (a corrupt file fails
// the start), and every change is on disk before the RPC that made it answers.
func (c *serveCmd) Run(env *runEnv) error {
	log, logBuf, err := c.bufferedLogger(env.stderr)
	if err != nil {
		return err
	}
	defer logBuf.Close() // last: every line of the run is out before Run returns
	policy, err := loadPolicy(c.Tools)
	if err != nil {
		return err
	}
	if err := c.validate(); err != nil {
		return usageError{err}
	}
	certs, err := c.loadProxyCerts()
	if err != nil {
		return usageError{err}
	}
	opts, err := c.serverOptions(log)
	if err != nil {
		return err
	}
	tr, err := newTracing(env.ctx, env.lookupEnv(), env.stdout, log)
	if err != nil {
		return err
	}
	if tr.tp != nil {
		opts.TracerProvider = tr.tp
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tr.shutdown(ctx); err != nil {
			log.Warn("tracing: spans not exported at shutdown", "err", err)
		}
	}()
	st, err := c.openStore(env.ctx, log)
	if err != nil {
		return err
	}
	opts.Limiter = c.limiter(st, log)
	historyBytes := c.HistoryBytes
	if historyBytes == 0 {
		historyBytes = -1 // the engine's "none"
	}
	svc := &arbiter.Service{
		Engine: &arbiter.Engine{Policy: policy, MaxCalls: c.MaxCalls, HistoryBytes: historyBytes, RecordBytes: c.RecordBytes},
		Store:  server.InstrumentStore(st.store, opts.Metrics), Clock: arbiter.SystemClock{},
		IdleTTL: c.IdleTTL, MaxWait: c.MaxWait, HistorySample: c.HistorySample, Calls: st.calls(),
	}
	srv := server.New(svc, log)
	gs, hs := server.NewGRPCServer(srv, opts)
	var debug http.Handler
	if c.DebugPages && c.MetricsListen != "" {
		debug = srv.DebugHandler(opts)
	}
	lis, healthLis, stopMetrics, err := c.listen(opts.Metrics, debug, log)
	if err != nil {
		_ = st.store.Close()
		return err
	}
	_, stopProxy, err := c.startProxy(svc, srv, opts, certs, log)
	if err != nil {
		stopMetrics()
		_ = lis.Close()
		_ = st.store.Close()
		return err
	}
	// A store down at start is not fatal: the first check sets NOT_SERVING.
	hw := server.NewHealthWatcher(st.store, hs, log, c.HealthEvery)
	hw.Check(env.ctx)
	// The health port answers from the first check on, and until Run returns: through
	// the drain (NOT_SERVING) and the last state write.
	defer serveHealthPort(healthLis, hs, log)()
	if opts.Metrics != nil {
		counting, stopCounting := context.WithCancel(env.ctx)
		defer stopCounting()
		go opts.Metrics.CountSessions(counting, st.count, sessionCountEvery)
	}
	log.Info("arbiter serving", append(c.servingAttrs(lis.Addr().String(), st.name, policy, opts), "tracing", tr.name())...)
	_ = logBuf.Flush() // the start's lines out now, for whoever waits for them
	if env.ready != nil {
		env.ready <- lis.Addr().String()
	}
	stopHealth := hw.Start(env.ctx)
	errc := make(chan error, 1)
	go func() { errc <- gs.Serve(lis) }()
	select {
	case err := <-errc:
		stopHealth()
		stopProxy()
		stopMetrics()
		if cerr := st.store.Close(); err == nil {
			err = cerr
		}
		return err
	case err := <-st.refused():
		// Redis came up volatile after a start without it: nothing was served on it
		// (the gate answered every RPC UNAVAILABLE), so stop at once.
		log.Error("refusing the redis store", "err", err)
		stopHealth()
		gs.Stop()
		stopProxy()
		stopMetrics()
		_ = st.store.Close()
		return err
	case <-env.ctx.Done():
	}
	start := time.Now()
	log.Info("draining", "timeout", c.DrainTimeout)
	stopHealth()
	var took []any
	if c.ProxyListen != "" {
		stopProxy() // guarded agents reconnect elsewhere (Gemini: with their handle, to the same session)
		took = []any{"wire_guard", time.Since(start).Round(time.Millisecond)}
	}
	c.drain(log, start, took, hs, srv, gs)
	stopMetrics()
	return st.store.Close()
}

// bufferedLogger is logger on a server.LogBuffer over w: lines below warn (the effect
// lines; an OK RPC's access line too at --log-level debug) are written out every
// server.LogBufferFlush or when the buffer fills, warn and error lines at once. Close
// the buffer when done.
func (c *serveCmd) bufferedLogger(w io.Writer) (*slog.Logger, *server.LogBuffer, error) {
	lb := server.NewLogBuffer(w)
	log, err := c.logger(lb)
	if err != nil {
		_ = lb.Close()
		return nil, nil, err
	}
	return slog.New(lb.Handler(log.Handler())), lb, nil
}

// logger returns the logger --log-level and --log-format ask for, writing to w.
func (c *serveCmd) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, err
	}
	hopts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "json" {
		hopts.ReplaceAttr = server.LogDurations // "1.5s", not nanoseconds
		return slog.New(slog.NewJSONHandler(w, hopts)), nil
	}
	return slog.New(slog.NewTextHandler(w, hopts)), nil
}

// flagRange is one flag's range check: its name, its value as given, and what it must
// be (empty when it is in range).
type flagRange struct {
	flag  string
	value any
	want  string
}

// outOfRange returns an error naming the first flag of checks out of its range, with its
// value ("--max-wait=-5s: must be positive"), or nil.
func outOfRange(checks ...flagRange) error {
	for _, f := range checks {
		if f.want != "" {
			return fmt.Errorf("%s=%v: must be %s", f.flag, f.value, f.want)
		}
	}
	return nil
}

// positive, atLeast and notNegative say what a value must be when it is not ("" when it is).
func positive[T int | int64 | uint32 | float64 | time.Duration](v T) string {
	if v <= 0 {
		return "positive"
	}
	return ""
}

func atLeast[T int | int64 | uint32 | float64 | time.Duration](v, least T) string {
	if v < least {
		return fmt.Sprintf("at least %v", least)
	}
	return ""
}

func notNegative[T int | int64 | uint32 | float64 | time.Duration](v T) string {
	if v < 0 {
		return "0 or more"
	}
	return ""
}

// validate checks the flags that kong cannot: ranges and combinations. An error names
// the flag and the value given (the first out of range, in the order of --help).
func (c *serveCmd) validate() error {
	within01 := ""
	if c.HistorySample < 0 || c.HistorySample > 1 {
		within01 = "within 0..1"
	}
	if err := outOfRange(
		flagRange{"--idle-ttl", c.IdleTTL, positive(c.IdleTTL)},
		flagRange{"--max-wait", c.MaxWait, positive(c.MaxWait)},
		flagRange{"--drain-timeout", c.DrainTimeout, positive(c.DrainTimeout)},
		flagRange{"--health-interval", c.HealthEvery, positive(c.HealthEvery)},
		flagRange{"--rpc-timeout", c.RPCTimeout, positive(c.RPCTimeout)},
		flagRange{"--redis-replica-acks", c.RedisAcks, notNegative(c.RedisAcks)},
		flagRange{"--redis-replica-timeout", c.RedisAckWait, positive(c.RedisAckWait)},
		flagRange{"--max-msg-size", c.MaxMsgSize, atLeast(c.MaxMsgSize, 1024)},
		flagRange{"--max-calls-per-session", c.MaxCalls, atLeast(c.MaxCalls, 1)},
		flagRange{"--max-sessions", c.MaxSessions, notNegative(c.MaxSessions)},
		flagRange{"--rate-limit", c.RateLimit, notNegative(c.RateLimit)},
		flagRange{"--rate-burst", c.RateBurst, atLeast(c.RateBurst, 1)},
		flagRange{"--handshake-timeout", c.Handshake, positive(c.Handshake)},
		flagRange{"--keepalive-min-time", c.KeepaliveMin, positive(c.KeepaliveMin)},
		flagRange{"--keepalive-time", c.KeepaliveTime, atLeast(c.KeepaliveTime, time.Second)},
		flagRange{"--keepalive-timeout", c.KeepaliveWait, positive(c.KeepaliveWait)},
		flagRange{"--max-connection-age", c.MaxConnAge, notNegative(c.MaxConnAge)},
		flagRange{"--max-concurrent-streams", c.MaxStreams, atLeast(c.MaxStreams, 1)},
		flagRange{"--max-header-size", c.MaxHeaderSize, atLeast(c.MaxHeaderSize, 1024)},
		flagRange{"--unauth-rate", c.UnauthRate, positive(c.UnauthRate)},
		flagRange{"--unauth-burst", c.UnauthBurst, atLeast(c.UnauthBurst, 1)},
		flagRange{"--unauth-log-interval", c.UnauthLogEvery, positive(c.UnauthLogEvery)},
		flagRange{"--history-bytes", c.HistoryBytes, notNegative(c.HistoryBytes)},
		flagRange{"--record-bytes", c.RecordBytes, atLeast(c.RecordBytes, 1024)},
		flagRange{"--history-sample", c.HistorySample, within01},
	); err != nil {
		return err
	}
	if c.StateFile != "" && c.RedisURL != "" {
		return fmt.Errorf("--state-file is for the embedded store; Redis keeps its own state: drop one of --state-file and --redis-url")
	}
	if c.RedisLegacy && c.RedisJSON {
		return fmt.Errorf("--redis-legacy-records and --redis-json-records each write one older record format: choose the one the oldest replica still running reads")
	}
	if (c.RedisLegacy || c.RedisJSON) && c.RedisURL == "" {
		return fmt.Errorf("--redis-legacy-records and --redis-json-records are for the Redis store (--redis-url); the embedded store, --state-file too, writes only the current format")
	}
	return c.proxyValidate()
}

// checkTLSFiles names the gRPC listener's TLS flag whose file holds no PEM block of
// its kind (--tls-cert a certificate, --tls-key a private key, --tls-client-ca a
// certificate), as the guard's (loadProxyCerts); server.TLSConfig then reads them.
func (c *serveCmd) checkTLSFiles() error {
	isCert := func(t string) bool { return t == "CERTIFICATE" }
	if _, err := readPEM("--tls-cert", c.TLSCert, "certificate", isCert); err != nil {
		return err
	}
	if _, err := readPEM("--tls-key", c.TLSKey, "private key", func(t string) bool { return strings.HasSuffix(t, "PRIVATE KEY") }); err != nil {
		return err
	}
	if c.TLSClientCA != "" {
		if _, err := readPEM("--tls-client-ca", c.TLSClientCA, "certificate", isCert); err != nil {
			return err
		}
	}
	return nil
}

// serverOptions builds the gRPC server's options: limits, tokens, TLS and metrics (the
// rate limit depends on the store: limiter).
func (c *serveCmd) serverOptions(log *slog.Logger) (server.Options, error) {
	opts := server.Options{
		Logger: log, MaxRecvMsgSize: c.MaxMsgSize, RPCTimeout: c.RPCTimeout,
		UnauthRPS: c.UnauthRate, UnauthBurst: c.UnauthBurst, UnauthLogInterval: c.UnauthLogEvery,
		Conn: server.ConnLimits{
			Handshake: c.Handshake, MaxStreams: c.MaxStreams, MaxHeaderSize: c.MaxHeaderSize,
			KeepaliveMinTime: c.KeepaliveMin, KeepaliveTime: c.KeepaliveTime, KeepaliveTimeout: c.KeepaliveWait,
			MaxConnectionAge: c.MaxConnAge,
		},
	}
	var err error
	if c.AuthTokensFile != "" {
		if opts.Tokens, err = server.LoadTokens(c.AuthTokensFile); err != nil {
			return opts, err
		}
	}
	switch {
	case c.TLSCert != "" || c.TLSKey != "":
		if c.TLSCert == "" || c.TLSKey == "" {
			return opts, usageError{fmt.Errorf("--tls-cert and --tls-key go together")}
		}
		if err := c.checkTLSFiles(); err != nil {
			return opts, usageError{err}
		}
		if opts.TLS, err = server.TLSConfig(c.TLSCert, c.TLSKey, c.TLSClientCA); err != nil {
			return opts, usageError{fmt.Errorf("--tls-cert %s and --tls-key %s: %w", c.TLSCert, c.TLSKey, err)}
		}
	case c.TLSClientCA != "":
		return opts, usageError{fmt.Errorf("--tls-client-ca needs --tls-cert and --tls-key")}
	}
	if c.MetricsListen != "" {
		opts.Metrics = server.NewMetrics()
	}
	return opts, nil
}

// limiter returns the per-tenant rate limit (--rate-limit, --rate-burst): counted in
// Redis when the store is Redis, so several replicas share each tenant's budget, with
// an in-process one for when Redis does not answer; in process for the embedded store;
// nil when off.
func (c *serveCmd) limiter(st *openedStore, log *slog.Logger) ratelimit.Limiter {
	if c.RateLimit <= 0 {
		return nil
	}
	local := &server.TenantLimiter{RPS: c.RateLimit, Burst: c.RateBurst}
	if st.redis == nil {
		return local
	}
	return server.NewSharedLimiter(redisstore.NewLimiter(st.redis.Client(), c.RateLimit, c.RateBurst), local, log)
}

// openedStore is the store serve runs on.
type openedStore struct {
	store arbiter.Store
	name  string            // "memory" or "redis", for the log
	gate  *durableGate      // Redis without --allow-volatile-store
	redis *redisstore.Store // nil for the embedded store
	mem   *memory.Store     // nil for Redis
}

// sessionCountEvery is how often arbiter_sessions is sampled.
const sessionCountEvery = 15 * time.Second

// count is how many sessions the store holds, for arbiter_sessions: the embedded
// store's count (expired ones go within a second), or Redis's key count (INFO
// keyspace: the sessions plus the rate limiter's few keys).
func (st *openedStore) count(ctx context.Context) (int64, error) {
	if st.redis != nil {
		return st.redis.Keys(ctx)
	}
	return int64(st.mem.Len()), nil
}

// calls is the store's call index (arbiter.CallIndex): Redis's, shared by every
// replica, or the embedded store's.
func (st *openedStore) calls() arbiter.CallIndex {
	if st.redis != nil {
		return st.redis
	}
	return st.mem
}

// refused receives the gate's refusal of a volatile Redis; nil (never) without a gate.
func (st *openedStore) refused() <-chan error {
	if st.gate == nil {
		return nil
	}
	return st.gate.refused
}

// persistenceCheckTimeout bounds the persistence check at start (a Redis that does
// not answer within it is checked again by the health loop).
const persistenceCheckTimeout = 3 * time.Second

// openStore opens Redis (--redis-url) or the embedded store, on the database
// --state-file names if set. Redis is checked for persistence (durableGate): a
// volatile one is refused unless --allow-volatile-store, one that does not answer is
// checked again when it does.
func (c *serveCmd) openStore(ctx context.Context, log *slog.Logger) (*openedStore, error) {
	if c.StateEvery != 0 {
		log.Warn("--state-interval is deprecated and ignored: --state-file is written at every change", "state_interval", c.StateEvery)
	}
	if c.RedisURL != "" {
		rs, err := redisstore.Open(c.RedisURL, redisstore.Options{CacheSessions: c.RedisCache, JSONRecords: c.RedisJSON, LegacyRecords: c.RedisLegacy,
			ReplicaAcks: c.RedisAcks, ReplicaTimeout: c.RedisAckWait})
		if err != nil {
			return nil, fmt.Errorf("--redis-url: %v", arbiter.MessageOf(err))
		}
		useRedisLogger(log)
		ctx, cancel := context.WithTimeout(ctx, persistenceCheckTimeout)
		defer cancel()
		if c.Volatile {
			logVolatile(ctx, rs, log)
			return &openedStore{store: rs, name: "redis", redis: rs}, nil
		}
		gate := newDurableGate(rs, log)
		switch err := gate.verify(ctx); arbiter.KindOf(err) {
		case arbiter.FailedPrecondition:
			_ = rs.Close()
			return nil, fmt.Errorf("%s", arbiter.MessageOf(err))
		case arbiter.Unavailable:
			log.Warn("redis persistence not checked: redis does not answer; not serving until it does and is durable", "err", err)
		}
		return &openedStore{store: gate, name: "redis", gate: gate, redis: rs}, nil
	}
	if c.StateFile == "" {
		ms := memory.New(nil)
		ms.MaxSessions = c.MaxSessions
		return &openedStore{store: ms, name: "memory", mem: ms}, nil
	}
	ms, err := openStateFile(c.StateFile, log)
	if err != nil {
		return nil, fmt.Errorf("--state-file: %w", err)
	}
	ms.MaxSessions = c.MaxSessions
	return &openedStore{store: ms, name: "memory", mem: ms}, nil
}

// openStateFile opens the embedded store on the database at path (converting a JSON
// state file of earlier versions), logging how many sessions it holds. Errors name
// the file.
func openStateFile(path string, log *slog.Logger) (*memory.Store, error) {
	start := time.Now()
	_, statErr := os.Stat(path)
	disk, err := boltdisk.Open(path, boltdisk.Options{Log: log})
	if err != nil {
		return nil, err
	}
	ms, err := memory.Open(disk, nil)
	if err != nil {
		_ = disk.Close()
		return nil, fmt.Errorf("read session state %s: %w (a damaged record: restore the file from a backup, or remove it to start with no sessions)", path, err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		log.Info("no state file yet: starting with no sessions", "state_file", path)
	} else {
		log.Info("sessions restored", "state_file", path, "sessions", ms.Len(), "took", time.Since(start).Round(time.Microsecond))
	}
	return ms, nil
}

// servingAttrs are the "arbiter serving" line's attributes.
func (c *serveCmd) servingAttrs(addr, storeName string, policy *arbiter.Policy, opts server.Options) []any {
	bi := buildinfo.Get()
	attrs := []any{"addr", addr, "store", storeName, "tools", len(policy.Tools),
		"tls", opts.TLS != nil, "auth", opts.Tokens != nil, "version", bi.Version, "commit", bi.Commit}
	if c.RedisURL != "" {
		attrs = append(attrs, "redis", redisstore.Redact(c.RedisURL))
	}
	if c.StateFile != "" {
		attrs = append(attrs, "state_file", c.StateFile)
	}
	return attrs
}

// listen opens the gRPC listener (--listen) and the health listener (--health-listen;
// nil without it), and with m serves metrics (--metrics-listen), and debug's pages
// beside them when debug is not nil, until the returned function is called.
func (c *serveCmd) listen(m *server.Metrics, debug http.Handler, log *slog.Logger) (lis, healthLis net.Listener, stopMetrics func(), err error) {
	if lis, err = net.Listen("tcp", c.Listen); err != nil {
		return nil, nil, nil, fmt.Errorf("--listen: %w", err)
	}
	if c.HealthListen != "" {
		if healthLis, err = net.Listen("tcp", c.HealthListen); err != nil {
			_ = lis.Close()
			return nil, nil, nil, fmt.Errorf("--health-listen: %w", err)
		}
	}
	if stopMetrics, err = serveMetrics(m, debug, c.MetricsListen, log); err != nil {
		_ = lis.Close()
		if healthLis != nil {
			_ = healthLis.Close()
		}
		return nil, nil, nil, fmt.Errorf("--metrics-listen: %w", err)
	}
	return lis, healthLis, stopMetrics, nil
}

// serveHealthPort serves hs alone on lis (server.ServeHealth: --health-listen, the same
// health statuses in plaintext on a second port) until the returned function is
// called; with a nil lis it serves nothing. Run serves it from the first store check
// until it returns, through the drain.
func serveHealthPort(lis net.Listener, hs *health.Server, log *slog.Logger) (stop func()) {
	if lis == nil {
		return func() {}
	}
	log.Info("health serving", "addr", lis.Addr().String())
	return server.ServeHealth(lis, hs)
}

// serveMetrics serves m at http://addr/metrics, and debug (when not nil) at
// http://addr/debug/sessions/ (server.DebugPath), until the returned function is
// called; without m it serves nothing.
func serveMetrics(m *server.Metrics, debug http.Handler, addr string, log *slog.Logger) (stop func(), err error) {
	if m == nil {
		return func() {}, nil
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	attrs := []any{"addr", lis.Addr().String(), "path", "/metrics"}
	if debug != nil {
		mux.Handle(server.DebugPath, debug)
		attrs = append(attrs, "debug_pages", server.DebugPath+"{id}")
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(lis) }()
	log.Info("metrics serving", attrs...)
	return func() { _ = hs.Close() }, nil
}

// drain stops serving within --drain-timeout: health turns NOT_SERVING,
// GracefulStop closes the listener and sends each connection GOAWAY (clients open new
// RPCs elsewhere), open Watch streams and waiting Decides end (they would hold the
// graceful stop for as long as a session lives, or a Decide's wait: up to 30 s), and
// the other unary RPCs finish until the timeout, when the server stops hard. It logs
// how long the whole drain took since start ("draining"), with attrs (the wire
// guard's part: its connections' close handshakes, before the gRPC drain).
func (c *serveCmd) drain(log *slog.Logger, start time.Time, attrs []any, hs *health.Server, srv *server.Server, gs *grpc.Server) {
	hs.Shutdown() // every service NOT_SERVING: load balancers stop sending
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	// UNAVAILABLE, reason SERVER_DRAINING, RetryInfo 0: a Watch resumes on another
	// replica with after_seq, a Decide asks again there (a decision made is in the
	// store). Started after GracefulStop, so that the GOAWAY usually reaches a client
	// before the UNAVAILABLE that makes it retry; a Decide retried here anyway answers
	// without waiting.
	srv.Shutdown()
	select {
	case <-done:
		log.Info("drained", append([]any{"took", time.Since(start).Round(time.Millisecond)}, attrs...)...)
	case <-time.After(c.DrainTimeout):
		log.Warn("drain timeout: stopping hard", append([]any{"took", time.Since(start).Round(time.Millisecond)}, attrs...)...)
		gs.Stop()
	}
}

// loadPolicy loads the tool policy, or the empty (all pass-through) policy for "".
func loadPolicy(path string) (*arbiter.Policy, error) {
	if path == "" { // unset, or ARBITER_TOOLS= in a container's environment: no policy
		p := &arbiter.Policy{}
		return p, p.Validate()
	}
	if st, err := os.Stat(path); err != nil {
		return nil, usageError{fmt.Errorf("--tools: %w", err)}
	} else if st.IsDir() {
		return nil, usageError{fmt.Errorf("--tools: %s is a directory, not a tool-policy YAML file", path)}
	}
	return policyfile.Load(path)
}
