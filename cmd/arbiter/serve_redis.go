package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"
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
