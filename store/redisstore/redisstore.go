// Package redisstore is the shared arbiter.Store on Redis (go-redis v9): a single
// server, a Sentinel-managed primary or a Redis Cluster. Any number of arbiter
// replicas on one Redis give the same answers, because all of a session lives in one
// record that every transition replaces with one atomic compare-and-set.
//
// # Data model
//
// One hash per session, key arb:{TENANT:ID} (see Key), with three fields: v, the
// version; d, the session encoded by sessioncodec.Encode (protobuf; JSON records
// written by earlier versions are read too); c, the lifetime it was written in (the
// session's creation time; absent in records of earlier versions). Everything a session
// has (its calls and their outcomes, jobs, business-key dedupe entries and their
// windows, abandoned marks, utterances) is inside d, so a transition touches exactly
// one key: it is atomic without MULTI, and Cluster-safe by construction. The braces
// are a hash tag, so any future per-session key (and the wake-up channel
// arb:{TENANT:ID}:w) lives in the same slot.
//
//   - Load is one HMGET (one round trip).
//   - Save is one Lua script (EVALSHA, falling back to EVAL once per server): compare v
//     (missing = 0) with the expected version, and c, the session's lifetime (its
//     creation time), with the session's; on a mismatch write nothing, report
//     Conflict and return the current record; otherwise HSET v+1 and d, PEXPIRE the
//     idle TTL (PERSIST for none) and SPUBLISH a wake-up on the session's channel,
//     with the new record in it when it is small (one round trip).
//
// # Local cache
//
// With Options.CacheSessions a Store keeps the records it last read or wrote, by
// version, for that many sessions (least recently used out), and is an
// arbiter.CachedLoader: arbiter.Service steps the cached copy and only Save's
// compare-and-set goes to Redis. Sessions follow their agent's connection to one
// replica, so in the steady state a request that changes a session costs one round
// trip. A copy made stale by another replica's save fails the compare-and-set, whose
// reply carries the current record: the cache takes it and the retry reads nothing. A
// read-only request is answered from the cache only once Current (one HMGET of the
// version and lifetime, not the record) confirmed it, otherwise from a fresh Load
// (Service.Apply). Any Redis error drops the session from the cache (whether a Save was written
// is then unknown), so a failure fails closed exactly as without a cache. Without a
// cache a request that changes a session costs two round trips, one that does not,
// one.
//
// # Wake-ups
//
// Watch uses sharded pub/sub (SSUBSCRIBE/SPUBLISH, Redis 7.0 or later): on a Cluster
// the channel lives on the shard that owns the session's slot, so wake-ups never cross
// the cluster bus. A Store keeps one pub/sub connection per shard it watches (one in
// all on a single server), reference-counts the channels on it, and fans messages out
// to the local watchers. When a pub/sub connection drops, every watcher on it is woken
// (it re-reads the session) and go-redis reconnects and resubscribes; on a Cluster the
// channels are re-routed to the slots' current owners.
//
// A wake-up message is "VERSION:LIFETIME:RECORD": the version the save wrote, its
// lifetime (the record's c) and, when it is at most Options.WakeRecordBytes, the
// record itself (else nothing after the second colon). Before the watchers wake, the
// local cache takes the record unless it holds the same or a later version of that
// lifetime (cache.offer), so a woken Decide steps the new record without a read
// (Service.Decide answers a final decision found in it at once, see there). Versions
// before this one publish the bare version, which is still understood (a wake-up, and
// an older cached copy dropped); they ignore whatever follows it in a message.
//
// # Errors
//
// A missing session is NotFound; a network error, a timeout, a closed client, or a
// Redis that is loading, down, read-only or redirecting is Unavailable (the cause is
// wrapped); a record that does not decode is Internal. Save never reports success it
// has not seen Redis confirm.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/sessioncodec"
)

// Store is an arbiter.Store on Redis. It is safe for concurrent use by many
// goroutines, and any number of Stores (in any number of processes) may share one
// Redis.
type Store struct {
	client redis.UniversalClient
	hub    *hub
	cache  *cache // nil: none
	// wakeMax is Options.WakeRecordBytes (negative: never).
	wakeMax int
	encode  func(*arbiter.Session) ([]byte, error)
}

// Options configure a Store. The zero value is ready to use.
type Options struct {
	// SubscribeTimeout bounds how long Watch waits for Redis to confirm a new
	// subscription before it gives up with Unavailable. Zero means 3 s.
	SubscribeTimeout time.Duration
	// HealthCheckInterval is how long a pub/sub connection may stay silent before the
	// Store pings it; a ping not answered by the next interval counts as a dropped
	// connection. Zero means 5 s.
	HealthCheckInterval time.Duration
	// CacheSessions is how many sessions' records the Store keeps locally (see Local
	// cache in the package comment): about one record each, 1 KB for an idle session.
	// Zero (or negative) means no cache: every transition reads Redis first.
	CacheSessions int
	// JSONRecords writes records as JSON (sessioncodec.EncodeJSON), the format of
	// versions before the protobuf record, which read nothing else: the first step
	// of a rolling upgrade from such a version, until none of its replicas is left.
	// Either format is read either way. False (the default) writes protobuf.
	JSONRecords bool
	// WakeRecordBytes is the largest record (encoded, in bytes) a Save sends inside
	// its wake-up message, so that replicas watching the session take it into their
	// local cache without reading it (see Wake-ups in the package comment); a larger
	// record's message carries only its version and lifetime. Zero means 8 KiB;
	// negative, never the record.
	WakeRecordBytes int
}

// New returns a Store on client, which it owns from now on: Close closes it. The
// client should be configured with the timeouts it needs (NewClient sets sensible
// ones). New does no I/O; Ping reports whether Redis is reachable.
func New(client redis.UniversalClient, opt Options) *Store {
	if opt.SubscribeTimeout <= 0 {
		opt.SubscribeTimeout = 3 * time.Second
	}
	if opt.HealthCheckInterval <= 0 {
		opt.HealthCheckInterval = 5 * time.Second
	}
	if opt.WakeRecordBytes == 0 {
		opt.WakeRecordBytes = 8 << 10
	}
	c := newCache(opt.CacheSessions)
	st := &Store{client: client, hub: newHub(client, opt, c), cache: c, wakeMax: opt.WakeRecordBytes, encode: sessioncodec.Encode}
	if opt.JSONRecords {
		st.encode = sessioncodec.EncodeJSON
	}
	return st
}

// Open returns a Store on a client made by NewClient(rawURL). Errors: a malformed URL
// (Invalid). Open does no I/O.
func Open(rawURL string, opt Options) (*Store, error) {
	c, err := NewClient(rawURL)
	if err != nil {
		return nil, err
	}
	return New(c, opt), nil
}

// Client returns the store's client (for hooks and diagnostics; do not close it).
func (st *Store) Client() redis.UniversalClient { return st.client }

// Key returns the Redis key of a session's record: arb:{TENANT:ID}. The tenant is
// escaped so that it holds no ':' and the id so that it holds no brace, which keeps
// the mapping one-to-one and the whole {…} the hash tag.
func Key(k arbiter.SessionKey) string {
	return "arb:{" + escape(k.Tenant, true) + ":" + escape(k.ID, false) + "}"
}

// channel returns the session's wake-up channel: its key plus ":w" (same slot).
func channel(k arbiter.SessionKey) string { return Key(k) + ":w" }

// escape percent-encodes '%', '{', '}' and, in a tenant, ':' and anything outside
// [A-Za-z0-9_.-].
func escape(s string, tenant bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		plain := c != '%' && c != '{' && c != '}'
		if tenant {
			plain = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
		}
		if plain {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// Load implements arbiter.Store with one HMGET. The session returned is the
// caller's. Errors: NotFound (no record, or its idle TTL ran out); Unavailable
// (network, timeout, Redis loading or down); Internal (a record that does not decode).
func (st *Store) Load(ctx context.Context, key arbiter.SessionKey) (*arbiter.Session, error) {
	vals, err := st.client.HMGet(ctx, Key(key), "v", "d").Result()
	if err != nil {
		st.cache.drop(key)
		return nil, classify(err, key, "load")
	}
	if len(vals) != 2 {
		return nil, arbiter.Errorf(arbiter.Internal, "load session %q: HMGET returned %d values", key.ID, len(vals))
	}
	if vals[0] == nil && vals[1] == nil {
		st.cache.drop(key)
		return nil, arbiter.Fieldf(arbiter.NotFound, "session_id", "session %q not found", key.ID)
	}
	return st.decode(key, vals[0], vals[1])
}

// decode turns a record's v and d, as go-redis returns them, into a session, and
// caches it. Errors: Internal for a malformed record (then dropped from the cache).
func (st *Store) decode(key arbiter.SessionKey, v, d any) (*arbiter.Session, error) {
	vs, ok1 := v.(string)
	data, ok2 := d.(string)
	if !ok1 || !ok2 {
		st.cache.drop(key)
		return nil, arbiter.Errorf(arbiter.Internal, "load session %q: malformed record (v %T, d %T)", key.ID, v, d)
	}
	version, err := strconv.ParseUint(vs, 10, 64)
	if err != nil {
		st.cache.drop(key)
		return nil, arbiter.Wrap(arbiter.Internal, err, "load session %q: malformed version", key.ID)
	}
	rec := []byte(data)
	s, err := sessioncodec.Decode(rec)
	if err != nil {
		st.cache.drop(key)
		return nil, err
	}
	s.Version = version
	st.cache.put(key, version, lifetime(s), rec)
	return s, nil
}

// LoadCached implements arbiter.CachedLoader: the session from the local cache, with
// cached set, when the cache holds it (no round trip; the copy may be stale, see Local
// cache in the package comment), otherwise Load. The session is the caller's. Errors:
// as Load's.
func (st *Store) LoadCached(ctx context.Context, key arbiter.SessionKey) (*arbiter.Session, bool, error) {
	if version, rec, ok := st.cache.get(key); ok {
		s, err := sessioncodec.Decode(rec)
		if err == nil {
			s.Version = version
			return s, true, nil
		}
		st.cache.drop(key)
	}
	s, err := st.Load(ctx, key)
	return s, false, err
}

// Current implements arbiter.CachedLoader with one HMGET of the record's version and
// lifetime (a few bytes, not the record): whether Redis still holds s.Version of s's
// lifetime. A record without a lifetime (written by an earlier version) is compared
// on its version. On false or an error the session leaves the local cache. Errors:
// Unavailable.
func (st *Store) Current(ctx context.Context, s *arbiter.Session) (bool, error) {
	vals, err := st.client.HMGet(ctx, Key(s.Key), "v", "c").Result()
	if err != nil {
		st.cache.drop(s.Key)
		return false, classify(err, s.Key, "load")
	}
	ok := len(vals) == 2
	if ok {
		v, _ := vals[0].(string)
		ok = v == strconv.FormatUint(s.Version, 10)
		if c, isStr := vals[1].(string); ok && isStr {
			ok = c == lifetime(s)
		}
	}
	if !ok {
		st.cache.drop(s.Key)
	}
	return ok, nil
}

// CacheStats returns the local cache's counters (all zero without a cache).
func (st *Store) CacheStats() CacheStats { return st.cache.stats() }

// lifetime names the lifetime of s for the compare-and-set: its CreatedAt in Unix
// nanoseconds. A session that expired (or that Redis lost) and was started again
// under its id has another CreatedAt, so a copy of the old lifetime cannot pass the
// compare-and-set on a version number the new one happens to have reached (which a
// copy held in the local cache for longer than the idle TTL otherwise could).
func lifetime(s *arbiter.Session) string {
	if s.CreatedAt.IsZero() {
		return "0"
	}
	return strconv.FormatInt(s.CreatedAt.UnixNano(), 10)
}

// saveScript is the compare-and-set. KEYS[1] the record; ARGV[1] the expected version
// (0: must not exist), ARGV[2] the encoded session, ARGV[3] the idle TTL in ms (0:
// none), ARGV[4] the session's lifetime (lifetime), ARGV[5] "1" to send the record in
// the wake-up message. It returns {1, new version} or, writing nothing, {0, stored
// version (0: no record), stored record (nil: none), stored lifetime (nil: none)}, so
// that a caller with a stale copy has the current one without another read. The
// record's field c holds the lifetime it was written in; a record without one (written
// by an earlier version) is compared on its version alone. The wake-up message is
// "VERSION:LIFETIME:RECORD", RECORD empty when not sent (see wakeMessage).
var saveScript = redis.NewScript(`
local rec = redis.call('HMGET', KEYS[1], 'v', 'd', 'c')
local cur = tonumber(rec[1] or '0')
if cur ~= tonumber(ARGV[1]) or (cur > 0 and rec[3] and rec[3] ~= ARGV[4]) then
  return {0, cur, rec[2], rec[3]}
end
local nv = cur + 1
redis.call('HSET', KEYS[1], 'v', nv, 'd', ARGV[2], 'c', ARGV[4])
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
else
  redis.call('PERSIST', KEYS[1])
end
local msg = nv .. ':' .. ARGV[4] .. ':'
if ARGV[5] == '1' then
  msg = msg .. ARGV[2]
end
redis.call('SPUBLISH', KEYS[1] .. ':w', msg)
return {1, nv}
`)

// Save implements arbiter.Store with one script call: compare-and-set on the
// version, write, reset the idle TTL (rounded up to whole milliseconds; 0 keeps the
// record forever) and publish a wake-up, atomically. On success s.Version is the new
// version and the local cache (if any) holds the record. Errors: Conflict (the stored
// version is not s.Version; nothing written; the cache now holds the stored record,
// or nothing when there is none); Unavailable (whether the write happened is unknown:
// reload before deciding; the session leaves the cache); Internal (an unexpected
// reply).
func (st *Store) Save(ctx context.Context, s *arbiter.Session, ttl time.Duration) error {
	data, err := st.encode(s)
	if err != nil {
		return err
	}
	var ttlMS int64
	if ttl > 0 {
		ttlMS = (ttl + time.Millisecond - 1).Milliseconds()
	}
	send := "0"
	if st.wakeMax >= 0 && len(data) <= st.wakeMax {
		send = "1"
	}
	life := lifetime(s)
	res, err := saveScript.Run(ctx, st.client, []string{Key(s.Key)}, s.Version, data, ttlMS, life, send).Slice()
	if err != nil {
		st.cache.drop(s.Key)
		return classify(err, s.Key, "save")
	}
	var ok, version int64
	if len(res) >= 2 {
		ok, _ = res[0].(int64)
		version, _ = res[1].(int64)
	}
	if len(res) < 2 || version < 0 || (ok == 1) != (len(res) == 2) {
		st.cache.drop(s.Key)
		return arbiter.Errorf(arbiter.Internal, "save session %q: unexpected script reply %v", s.Key.ID, res)
	}
	if ok != 1 {
		st.cache.conflict(s.Key, s.Version)
		if len(res) < 3 || res[2] == nil || version == 0 {
			st.cache.drop(s.Key)
		} else if rec, isStr := res[2].(string); isStr {
			var stored string // "": a record of an earlier version, without a lifetime
			if len(res) >= 4 {
				stored, _ = res[3].(string)
			}
			st.cache.put(s.Key, uint64(version), stored, []byte(rec)) // decoded (and checked) by the next LoadCached
		} else {
			st.cache.drop(s.Key)
		}
		return arbiter.Errorf(arbiter.Conflict, "session %q changed (version %d, expected %d)", s.Key.ID, version, s.Version)
	}
	s.Version = uint64(version)
	st.cache.put(s.Key, s.Version, life, data)
	return nil
}

// Watch implements arbiter.Store. It returns once Redis has confirmed the
// subscription, so a save after Watch returns is never missed. Errors: Unavailable
// when Redis does not confirm within Options.SubscribeTimeout, or the store is
// closed; ctx's error wrapped as Unavailable when ctx ends first.
func (st *Store) Watch(ctx context.Context, key arbiter.SessionKey) (<-chan struct{}, func(), error) {
	return st.hub.watch(ctx, key, channel(key))
}

// Ping implements arbiter.Store: PING on a single server, PING on every master of a
// Cluster. Errors: Unavailable.
func (st *Store) Ping(ctx context.Context) error {
	var err error
	if cc, ok := st.client.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return c.Ping(ctx).Err() })
	} else {
		err = st.client.Ping(ctx).Err()
	}
	if err != nil {
		return arbiter.Wrap(arbiter.Unavailable, err, "redis unreachable")
	}
	return nil
}

// Close stops every watch's pub/sub connection and closes the client. Calls after the
// first return nil.
func (st *Store) Close() error {
	if !st.hub.close() {
		return nil
	}
	return st.client.Close()
}

// classify turns a go-redis error into an arbiter error of the right kind.
func classify(err error, key arbiter.SessionKey, what string) error {
	if errors.Is(err, redis.Nil) {
		return arbiter.Fieldf(arbiter.NotFound, "session_id", "session %q not found", key.ID)
	}
	var rerr redis.Error
	if errors.As(err, &rerr) && !transient(rerr.Error()) {
		// Redis answered, with an error that retrying will not fix (WRONGTYPE, a
		// script error): a bug or a foreign key in our key space.
		return arbiter.Wrap(arbiter.Internal, err, "%s session %q", what, key.ID)
	}
	return arbiter.Wrap(arbiter.Unavailable, err, "%s session %q: redis unavailable", what, key.ID)
}

// transient reports whether a Redis error reply means "not now" rather than "never".
func transient(msg string) bool {
	for _, p := range []string{"LOADING", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "READONLY", "MOVED", "ASK", "BUSY", "NOREPLICAS", "OOM", "ERR max number of clients"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// Keys returns how many keys the store's database holds, from INFO keyspace (no scan:
// one command per primary): on a Cluster the sum over its primaries (database 0),
// otherwise the client's database. That is one key per session, closed ones too
// until their idle TTL runs out, plus whatever else lives in that database (the rate
// limiter keeps one key per tenant that made a request within its burst's
// refill time). Errors: Unavailable.
func (st *Store) Keys(ctx context.Context) (int64, error) {
	var total int64
	count := func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "keyspace").Result()
		if err != nil {
			return err
		}
		n, err := keyspaceKeys(info, c.Options().DB)
		total += n
		return err
	}
	var err error
	switch c := st.client.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		err = c.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return count(ctx, c)
		})
	case *redis.Client:
		err = count(ctx, c)
	default:
		return 0, arbiter.Errorf(arbiter.Internal, "count keys: unsupported client %T", st.client)
	}
	if err != nil {
		return 0, arbiter.Wrap(arbiter.Unavailable, err, "count keys: redis unavailable")
	}
	return total, nil
}

// keyspaceKeys reads database db's key count from an INFO keyspace reply
// ("db0:keys=12,expires=12,avg_ttl=3599000"); a database with no keys has no line.
func keyspaceKeys(info string, db int) (int64, error) {
	prefix := "db" + strconv.Itoa(db) + ":"
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix)
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "keys="); ok {
				return strconv.ParseInt(v, 10, 64)
			}
		}
		return 0, fmt.Errorf("INFO keyspace: no key count in %q", line)
	}
	return 0, nil
}
