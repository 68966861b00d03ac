package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// TenantBudget is a per-tenant rate limit that several replicas share
// (redisstore.Limiter counts it in Redis).
type TenantBudget interface {
	// Allow takes one request from tenant's budget and reports whether there was
	// room. An error means the budget could not be asked.
	Allow(ctx context.Context, tenant string) (bool, error)
}

// Timings of a SharedLimiter.
const (
	// SharedLimitTimeout bounds one question to the shared budget: a slow Redis adds
	// at most this much to an RPC before the local budget answers instead.
	SharedLimitTimeout = 250 * time.Millisecond
	// SharedLimitRetry is how long a SharedLimiter uses only its local budget after
	// the shared one failed, so an outage costs one timeout per second, not one per
	// request.
	SharedLimitRetry = time.Second
)

// SharedLimiter is a ratelimit.Limiter (RESOURCE_EXHAUSTED when over) on a budget
// every replica shares, so N replicas together let a tenant make the limit's rate,
// not N times it. While the shared budget cannot be asked (Redis down or slower than
// SharedLimitTimeout), each replica falls back to its own in-process TenantLimiter of
// the same rate and burst, for SharedLimitRetry at a time: the limiter never fails
// a request itself, so a Redis blip does not become a second error path (an RPC that
// needs the store still fails closed there, UNAVAILABLE), and the tenant's rate is
// bounded by N times the limit meanwhile. The switch to the local budget is logged
// once, at warn, and the way back at info. Safe for concurrent use.
type SharedLimiter struct {
	shared TenantBudget
	local  *TenantLimiter
	log    *slog.Logger

	localUntil atomic.Int64 // unix ns: the local budget alone answers until then
	degraded   atomic.Bool  // for logging the switches once
}

// NewSharedLimiter returns a limiter on shared, falling back to local (its RPS and
// Burst should be the shared budget's), logging to log (nil: slog.Default()).
func NewSharedLimiter(shared TenantBudget, local *TenantLimiter, log *slog.Logger) *SharedLimiter {
	if log == nil {
		log = slog.Default()
	}
	return &SharedLimiter{shared: shared, local: local, log: log}
}

// Limit implements ratelimit.Limiter: an error when the caller's tenant is over its
// rate, by the shared budget or, while it cannot be asked, the local one.
func (l *SharedLimiter) Limit(ctx context.Context) error {
	now := time.Now()
	if now.UnixNano() < l.localUntil.Load() {
		return l.local.Limit(ctx)
	}
	tenant := TenantFrom(ctx)
	qctx, cancel := context.WithTimeout(ctx, SharedLimitTimeout)
	ok, err := l.shared.Allow(qctx, tenant)
	cancel()
	if err != nil {
		l.localUntil.Store(now.Add(SharedLimitRetry).UnixNano())
		if l.degraded.CompareAndSwap(false, true) {
			l.log.Warn("rate limit: shared budget unavailable, each replica limits on its own until it answers", "err", err)
		}
		return l.local.Limit(ctx)
	}
	if l.degraded.CompareAndSwap(true, false) {
		l.log.Info("rate limit: shared budget answers again")
	}
	if !ok {
		return fmt.Errorf("tenant %q is over its rate limit of %g requests/s", tenant, l.local.RPS)
	}
	return nil
}
