package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/arbiter"
)

// Limiter is a per-tenant rate limit counted in Redis, so every replica on the same
// Redis shares one budget per tenant: GCRA (github.com/go-redis/redis_rate), one Lua
// script per request on one key, LimitKey(tenant), which holds the tenant's
// theoretical arrival time and expires once the tenant is back to a full burst. The
// script reads Redis's clock (TIME), so replicas' clocks do not matter. One key per
// script call is Cluster-safe; the key's hash tag is the tenant, so on a Cluster each
// tenant's budget lives on one shard. Safe for concurrent use.
type Limiter struct {
	lim   *redis_rate.Limiter
	limit redis_rate.Limit
}

// NewLimiter returns a limiter on client (which it does not own) that lets each
// tenant make rps requests per second (positive) with bursts of burst (at least 1):
// a tenant that has been quiet may make burst requests at once, then one every 1/rps
// seconds.
func NewLimiter(client redis.UniversalClient, rps float64, burst int) *Limiter {
	// Rate 1 per 1/rps: the emission interval is exact for any rps, not only whole
	// numbers per second.
	period := time.Duration(float64(time.Second) / rps)
	return &Limiter{lim: redis_rate.NewLimiter(client), limit: redis_rate.Limit{Rate: 1, Period: period, Burst: burst}}
}

// LimitKey returns the key of a tenant's budget, without the library's "rate:"
// prefix: arb:{TENANT} (escaped like a session key's tenant).
func LimitKey(tenant string) string { return "arb:{" + escape(tenant, true) + "}" }

// Allow takes one request from tenant's budget and reports whether there was room.
// Errors: Unavailable when Redis does not answer (nothing is known about the budget
// then); Internal for an unexpected reply.
func (l *Limiter) Allow(ctx context.Context, tenant string) (bool, error) {
	res, err := l.lim.Allow(ctx, LimitKey(tenant), l.limit)
	if err != nil {
		return false, classifyLimit(err)
	}
	return res.Allowed > 0, nil
}

// classifyLimit turns a go-redis error from the limiter's script into an arbiter
// error: Unavailable unless Redis answered with an error that retrying will not fix.
func classifyLimit(err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) && !transient(rerr.Error()) {
		return arbiter.Wrap(arbiter.Internal, err, "rate limit")
	}
	return arbiter.Wrap(arbiter.Unavailable, err, "rate limit: redis unavailable")
}
