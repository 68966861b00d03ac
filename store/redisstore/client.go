package redisstore

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/arbiter"
)

// Default client timeouts, used where the URL sets none.
const (
	DefaultDialTimeout  = 2 * time.Second
	DefaultReadTimeout  = 1 * time.Second
	DefaultWriteTimeout = 1 * time.Second
	// DefaultMaxRetries bounds go-redis's retries of a command that failed on the
	// network (with its backoff of 8 ms to 512 ms). The save script is safe to retry:
	// a retry of a save that did land finds the version moved and reports Conflict,
	// and the service re-reads the session.
	DefaultMaxRetries = 2
	// DefaultDialAttempts is how many times one connection is dialled (50 ms apart)
	// before the command fails: few, so a down Redis fails requests fast.
	DefaultDialAttempts = 2
)

// NewClient returns a go-redis client for rawURL. It does no I/O. Accepted forms:
//
//   - redis://[[user]:password@]host:port[/db][?option=value...] — one server;
//     rediss:// is the same over TLS. Options are go-redis's (dial_timeout,
//     read_timeout, pool_size, ...).
//   - redis://host1:port1?addr=host2:port2&addr=host3:port3 — a Redis Cluster from a
//     seed list (go-redis ParseClusterURL); add cluster=true for a one-seed cluster.
//   - redis://host1:port1,redis://host2:port2,... — a Cluster seed list written as
//     URLs separated by commas (credentials and options from the first).
//   - redis://[:password@]sentinel1:26379?master_name=NAME[&addr=sentinel2:26379] — a
//     primary managed by Sentinel (go-redis ParseFailoverURL); the password in the
//     user info is the Sentinels', the primary's goes in the password= option.
//
// Timeouts the URL leaves unset are DefaultDialTimeout, DefaultReadTimeout and
// DefaultWriteTimeout; retries DefaultMaxRetries and DefaultDialAttempts; and the
// client honours context deadlines. Errors: Invalid, naming what is wrong (the password is never shown).
func NewClient(rawURL string) (redis.UniversalClient, error) {
	rawURL = strings.TrimSpace(rawURL)
	if rawURL == "" {
		return nil, arbiter.Errorf(arbiter.Invalid, "redis url: empty")
	}
	parts := strings.Split(rawURL, ",")
	u, err := url.Parse(parts[0])
	if err != nil {
		return nil, arbiter.Errorf(arbiter.Invalid, "redis url: cannot parse %q", redact(parts[0]))
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, arbiter.Errorf(arbiter.Invalid, "redis url: scheme %q, want redis:// or rediss://", u.Scheme)
	}
	q := u.Query()
	forceCluster, _ := strconv.ParseBool(q.Get("cluster"))
	cluster := len(parts) > 1 || q.Has("addr") || forceCluster
	q.Del("cluster")
	for _, p := range parts[1:] {
		p = strings.TrimSpace(p)
		host := p
		if strings.Contains(p, "://") {
			pu, err := url.Parse(p)
			if err != nil || pu.Host == "" {
				return nil, arbiter.Errorf(arbiter.Invalid, "redis url: cannot parse seed %q", redact(p))
			}
			host = pu.Host
		}
		q.Add("addr", host)
	}
	u.RawQuery = q.Encode()
	s := u.String()
	switch {
	case q.Has("master_name"):
		o, err := redis.ParseFailoverURL(s)
		if err != nil {
			return nil, arbiter.Wrap(arbiter.Invalid, err, "redis url (sentinel) %q", redact(s))
		}
		tune(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.MaxRetries, &o.DialerRetries, &o.DialerRetryTimeout, &o.ContextTimeoutEnabled)
		return redis.NewFailoverClient(o), nil
	case cluster:
		o, err := redis.ParseClusterURL(s)
		if err != nil {
			return nil, arbiter.Wrap(arbiter.Invalid, err, "redis url (cluster) %q", redact(s))
		}
		tune(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.MaxRetries, &o.DialerRetries, &o.DialerRetryTimeout, &o.ContextTimeoutEnabled)
		return redis.NewClusterClient(o), nil
	default:
		o, err := redis.ParseURL(s)
		if err != nil {
			return nil, arbiter.Wrap(arbiter.Invalid, err, "redis url %q", redact(s))
		}
		tune(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.MaxRetries, &o.DialerRetries, &o.DialerRetryTimeout, &o.ContextTimeoutEnabled)
		return redis.NewClient(o), nil
	}
}

// tune applies the defaults to the fields that go-redis's Options, ClusterOptions and
// FailoverOptions share: timeouts and retries the URL left unset, and honouring
// context deadlines.
func tune(dial, read, write *time.Duration, retries, dialRetries *int, dialRetryTimeout *time.Duration, ctxTimeouts *bool) {
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{dial, DefaultDialTimeout}, {read, DefaultReadTimeout}, {write, DefaultWriteTimeout}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if *retries == 0 {
		*retries = DefaultMaxRetries
	}
	if *dialRetries == 0 {
		*dialRetries, *dialRetryTimeout = DefaultDialAttempts, 50*time.Millisecond
	}
	*ctxTimeouts = true
}

// redact returns rawURL with any password replaced by "xxxxx".
func redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparseable URL)"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Redact returns the URL (or comma-separated URLs) with passwords masked, for logs.
func Redact(rawURL string) string {
	parts := strings.Split(rawURL, ",")
	for i, p := range parts {
		if strings.Contains(p, "://") {
			parts[i] = redact(strings.TrimSpace(p))
		}
	}
	return strings.Join(parts, ",")
}
