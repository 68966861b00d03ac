package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/redisstore"
)

// redisLogger sends go-redis's own log lines (dial failures, pub/sub reconnects) to
// the server's log at debug level: while Redis is down they come many a second, and
// the health check already logs the outage once, at warn, with its cause.
type redisLogger struct{ log *slog.Logger }

// Printf implements go-redis's logging interface.
func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...))
}

// useRedisLogger routes go-redis's process-wide logger to log.
func useRedisLogger(log *slog.Logger) {
	redis.SetLogger(redisLogger{log: log.With("component", "go-redis")})
}

// durableGate is the Redis store held back until the persistence of every Redis
// server it writes to has been read and found durable (AOF on; see
// redisstore.Persistence.Durable). Until then Load, Save and Watch answer Unavailable
// ("not checked yet"), so no RPC decides anything on a Redis that might be volatile,
// and each Ping (the health loop's) reads the persistence again. This keeps serve
// startable before Redis: when Redis cannot be read at start the server starts
// NOT_SERVING, as for any outage, and the check runs when Redis answers. A check that
// finds a volatile server sends the refusal on refused, and serve stops with it.
//
// Safe for concurrent use.
type durableGate struct {
	arbiter.Store
	rs      *redisstore.Store
	log     *slog.Logger
	ok      atomic.Bool
	mu      sync.Mutex // one check at a time
	refused chan error // buffered 1: the first refusal
}

func newDurableGate(rs *redisstore.Store, log *slog.Logger) *durableGate {
	return &durableGate{Store: rs, rs: rs, log: log, refused: make(chan error, 1)}
}

// errNotChecked answers the RPCs that come before the persistence check.
var errNotChecked = arbiter.Errorf(arbiter.Unavailable, "redis persistence not checked yet (redis unreachable at start)")

// verify reads the persistence unless it already passed. It returns nil once every
// server is durable (logging what each can lose), an Unavailable error when one did
// not answer (try again later), or the refusal, a FailedPrecondition error, which it
// also sends on g.refused.
func (g *durableGate) verify(ctx context.Context) error {
	if g.ok.Load() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ok.Load() {
		return nil
	}
	ps, err := g.rs.Persistence(ctx)
	if err != nil {
		return err
	}
	if err := refuseVolatile(ps); err != nil {
		select {
		case g.refused <- err:
		default:
		}
		return err
	}
	for _, p := range ps {
		g.log.Info("redis persistence", "redis", p.Addr, "read_from", p.From, "a_restart_loses", p.Loses())
	}
	g.ok.Store(true)
	return nil
}

// Load implements arbiter.Store once the persistence passed.
func (g *durableGate) Load(ctx context.Context, key arbiter.SessionKey) (*arbiter.Session, error) {
	if !g.ok.Load() {
		return nil, errNotChecked
	}
	return g.Store.Load(ctx, key)
}

// LoadCached implements arbiter.CachedLoader once the persistence passed.
func (g *durableGate) LoadCached(ctx context.Context, key arbiter.SessionKey) (*arbiter.Session, bool, error) {
	if !g.ok.Load() {
		return nil, false, errNotChecked
	}
	return g.rs.LoadCached(ctx, key)
}

// Current implements arbiter.CachedLoader once the persistence passed.
func (g *durableGate) Current(ctx context.Context, s *arbiter.Session) (bool, error) {
	if !g.ok.Load() {
		return false, errNotChecked
	}
	return g.rs.Current(ctx, s)
}

// Uncached implements arbiter.CachedLoader: false until the persistence passed (the
// load that follows then fails with the gate's error).
func (g *durableGate) Uncached(key arbiter.SessionKey) bool {
	return g.ok.Load() && g.rs.Uncached(key)
}

// Save implements arbiter.Store once the persistence passed.
func (g *durableGate) Save(ctx context.Context, s *arbiter.Session, ttl time.Duration) error {
	if !g.ok.Load() {
		return errNotChecked
	}
	return g.Store.Save(ctx, s, ttl)
}

// Watch implements arbiter.Store once the persistence passed.
func (g *durableGate) Watch(ctx context.Context, key arbiter.SessionKey) (<-chan struct{}, func(), error) {
	if !g.ok.Load() {
		return nil, nil, errNotChecked
	}
	return g.Store.Watch(ctx, key)
}

// Ping implements arbiter.Store: the persistence check until it passed, then PING.
func (g *durableGate) Ping(ctx context.Context) error {
	if err := g.verify(ctx); err != nil {
		return arbiter.Wrap(arbiter.Unavailable, err, "redis persistence not checked")
	}
	return g.Store.Ping(ctx)
}

// refuseVolatile returns the refusal to run on the servers of ps that are not
// durable, saying what each would lose and what to change; nil when all are.
func refuseVolatile(ps []redisstore.Persistence) error {
	var bad []string
	info := false
	for _, p := range ps {
		if !p.Durable() {
			bad = append(bad, fmt.Sprintf("%s would lose %s", p.Addr, p.Loses()))
			info = info || p.From == redisstore.FromInfo
		}
	}
	if len(bad) == 0 {
		return nil
	}
	fix := "set appendonly yes and appendfsync always on it (CONFIG SET, and in redis.conf so a restart keeps them)"
	if info {
		fix = "turn on AOF persistence with an fsync on every write (appendonly yes, appendfsync always; on managed Redis, in the provider's settings, since CONFIG cannot be read to check it)"
	}
	return arbiter.Errorf(arbiter.FailedPrecondition,
		"--redis-url: refusing a volatile Redis: %s; %s, or pass --allow-volatile-store (ARBITER_ALLOW_VOLATILE_STORE=true) to run on it anyway",
		strings.Join(bad, "; "), fix)
}

// logVolatile reads the persistence once for the log, as --allow-volatile-store asks
// it not to refuse anything: a warning for each server that is not durable, nothing
// when Redis does not answer.
func logVolatile(ctx context.Context, rs *redisstore.Store, log *slog.Logger) {
	ps, err := rs.Persistence(ctx)
	if err != nil {
		log.Warn("redis persistence not checked (--allow-volatile-store)", "err", err)
		return
	}
	for _, p := range ps {
		lvl := slog.LevelInfo
		if !p.Durable() {
			lvl = slog.LevelWarn
		}
		log.Log(ctx, lvl, "redis persistence", "redis", p.Addr, "read_from", p.From, "a_restart_loses", p.Loses(), "allow_volatile_store", true)
	}
}
