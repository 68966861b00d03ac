// Package redisstore is the shared arbiter.Store on Redis (go-redis v9): a single
// server, a Sentinel-managed primary or a Redis Cluster. Any number of arbiter
// replicas on one Redis give the same answers, because all of a session lives in one
// record that every transition replaces with one atomic compare-and-set.
//
// # Data model
//
// One string per session, key arb:{TENANT:ID} (see Key): "V:C:D", where V is the
// version (decimal), C the lifetime the record was written in (the session's
// creation time in Unix nanoseconds, decimal, "0" for none; see lifetime) and D the
// session encoded by sessioncodec.Encode (S2-compressed protobuf; the plain protobuf
// and JSON records of earlier versions are read too). Everything a session has (its
// calls and their outcomes, jobs, business-key dedupe entries and their windows,
// abandoned marks, utterances) is inside D, so a transition touches exactly one key:
// it is atomic without MULTI, and Cluster-safe by construction. The braces are a hash
// tag, so any future per-session key (and the wake-up channel arb:{TENANT:ID}:w) lives
// in the same slot.
//
// Versions before 2026-12-01 kept a hash of three fields instead (v the version, d the
// record, c the lifetime, absent in the oldest): a Store reads such a record (Load
// with one more round trip, Current's and Save's scripts in the same one; the session's next
// save rewrites it as a string), and with Options.LegacyRecords (or JSONRecords) writes
// one, which is all those versions read. One string costs Redis 256 B less than that
// hash for the same record (a hash whose value is over 64 B, hash-max-listpack-value,
// is a hashtable of three entries): bench/soak's idle session takes 906 B of
// used_memory instead of 1162 B, and 1418 B with the plain protobuf record of those
// versions (store/redisstore TestHistoryCostPerSession).
//
//   - Load is one GET (one round trip; a record of the old layout, WRONGTYPE to GET,
//     is read by an HMGET after it).
//   - Save is one Lua script (EVALSHA, falling back to EVAL once per server): read the
//     record (either layout), compare its version (missing = 0) with the expected
//     one, its lifetime with the session's, and its content (SHA-1) with the record
//     the session was read from (Session.Digest), so that a copy of the right
//     version but other content (a forged wake-up message, a write a failover lost
//     and another replica made again) never overwrites it; on a mismatch write
//     nothing, report Conflict and return the current record; otherwise SET V+1, C
//     and D with the idle TTL (none: no expiry) and SPUBLISH a wake-up on the
//     session's channel, with the new record in it when it is small (one round trip).
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
// read-only request is answered from the cache only once Current (one script call
// comparing the version, the lifetime and the record's SHA-1, without sending the
// record) confirmed it, otherwise from a fresh Load (Service.Apply). A compare-and-set
// that finds Redis below the version it expected (a copy from a forged message, or a
// write a failover lost) replaces the copy with what Redis holds. Any Redis error
// drops the session from the cache (whether a Save was written is then unknown), so a
// failure fails closed exactly as without a cache. Without a cache a request that
// changes a session costs two round trips, one that does not, one.
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
// lifetime (cache.offer), so a woken Decide steps the new record without a read, and a
// final answer found there costs Current's one small read (Service.Decide). A message
// is only a hint: nothing is answered or written on its record alone. Versions
// before this one publish the bare version, which is still understood (a wake-up, and
// an older cached copy dropped); they ignore whatever follows it in a message.
//
// # Errors
//
// A missing session is NotFound; a network error, a timeout, a closed client, or a
// Redis that is loading, down, read-only or redirecting is Unavailable (the cause is
// wrapped); a record that does not decode, or a key holding neither a string nor a
// hash, is Internal. Save never reports success it has not seen Redis confirm.
package redisstore

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
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
	// hash: write the hash layout of versions before 2026-12-01 (and read it first).
	hash bool
	// replicas: Options.ReplicaAcks' state; nil: no WAIT.
	replicas *replicas
	// floor: the versions this Store answered from (see rollback.go).
	floor *floor
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
	// cache in the package comment): about one record each, 0.7 KB for an idle session.
	// Zero (or negative) means no cache: every transition reads Redis first.
	CacheSessions int
	// JSONRecords writes records as JSON (sessioncodec.EncodeJSON) in the hash layout,
	// what versions before the protobuf record read, and nothing else: the first step
	// of a rolling upgrade from such a version, until none of its replicas is left.
	// Every format is read either way. False (the default) writes protobuf.
	JSONRecords bool
	// LegacyRecords writes what versions before 2026-12-01 read: the hash layout (see
	// Data model in the package comment) with the record as sessioncodec.EncodeProto
	// writes it (protobuf without S2, FormatProto). For the first step of a rolling
	// upgrade from such a version, until none of its replicas is left. Every layout
	// and format is read either way. JSONRecords (which writes the hash layout too)
	// overrides its record format. False (the default) writes one string with a
	// FormatProtoS2 record.
	LegacyRecords bool
	// ReplicaAcks is how many replicas must have a write (and the record a read
	// answers from) before the Store reports it done, whenever the primary has
	// replicas online (see Replica acknowledgements in replicas.go): WAIT with
	// ReplicaTimeout as its bound, asking for at most as many as are online. Zero (or
	// negative) means none: a write is done once the primary has it, and a failover to
	// a lagging replica can lose it silently.
	ReplicaAcks int
	// ReplicaTimeout bounds the WAIT of ReplicaAcks; past it the request fails with
	// Unavailable. Keep it below the client's read timeout (DefaultReadTimeout, 1 s,
	// unless the URL sets read_timeout), which the whole pipeline shares. Zero means
	// 500 ms.
	ReplicaTimeout time.Duration
	// ReplicaCheckEvery is how long the count of a primary's online replicas (INFO
	// replication) is reused before it is read again, by the first request after it.
	// Zero means 1 s.
	ReplicaCheckEvery time.Duration
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
	if opt.ReplicaTimeout <= 0 {
		opt.ReplicaTimeout = 500 * time.Millisecond
	}
	if opt.ReplicaCheckEvery <= 0 {
		opt.ReplicaCheckEvery = time.Second
	}
	c := newCache(opt.CacheSessions)
	st := &Store{client: client, hub: newHub(client, opt, c), cache: c, wakeMax: opt.WakeRecordBytes, encode: sessioncodec.Encode,
		replicas: newReplicas(opt), floor: newFloor(max(opt.CacheSessions, 10000))}
	switch {
	case opt.JSONRecords:
		st.encode, st.hash = sessioncodec.EncodeJSON, true
	case opt.LegacyRecords:
		st.encode, st.hash = sessioncodec.EncodeProto, true
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

// Load implements arbiter.Store with one GET (a record of the hash layout costs an
// HMGET more; with Options.LegacyRecords or JSONRecords the HMGET comes first and a
// string costs a GET more). The session returned is the caller's. Errors: NotFound
// (no record, or its idle TTL ran out); Unavailable (network, timeout, Redis loading
// or down); Internal, naming the session, for a key of another type or a record that
// cannot be the session's (see decodeRecord).
func (st *Store) Load(ctx context.Context, key arbiter.SessionKey) (*arbiter.Session, error) {
	mark := st.floor.mark(key) // before the read: see floor
	hash := st.hash
	for range 2 {
		var (
			version uint64
			life    string
			rec     []byte
			err     error
		)
		if hash {
			version, life, rec, err = st.loadHash(ctx, key)
		} else {
			version, life, rec, err = st.loadString(ctx, key)
		}
		if wrongType(err) {
			hash = !hash // the other layout
			continue
		}
		if err != nil {
			st.cache.drop(key)
			return nil, err
		}
		s, err := decodeRecord(key, version, life, rec, "")
		if err != nil {
			st.cache.drop(key)
			return nil, err
		}
		if answered, ok := mark.below(lifetime(s), version); ok {
			return nil, st.dropRolledBack(ctx, key, lifetime(s), version, answered)
		}
		st.floor.answered(key, lifetime(s), version)
		st.cache.put(key, version, lifetime(s), rec)
		return s, nil
	}
	st.cache.drop(key)
	return nil, arbiter.Errorf(arbiter.Internal, "load session %q: the key holds neither a string nor a hash", key.ID)
}

// loadString reads a record of the string layout: its version, lifetime and encoded
// session. Errors: as Load's; a redis WRONGTYPE error as it is (the key holds another
// type).
func (st *Store) loadString(ctx context.Context, key arbiter.SessionKey) (uint64, string, []byte, error) {
	var get *redis.StringCmd
	aerr := st.acked(ctx, key, "load", func(p redis.Pipeliner) { get = p.Get(ctx, Key(key)) })
	if get == nil {
		return 0, "", nil, aerr
	}
	val, err := get.Result()
	if err == nil && aerr != nil {
		return 0, "", nil, aerr
	}
	if err != nil && !errors.Is(err, redis.Nil) && !wrongType(err) && aerr != nil {
		return 0, "", nil, aerr
	}
	if err != nil {
		if wrongType(err) {
			return 0, "", nil, err
		}
		return 0, "", nil, classify(err, key, "load")
	}
	version, life, rec, ok := parseRecord(val)
	if !ok {
		return 0, "", nil, arbiter.Errorf(arbiter.Internal, "load session %q: malformed record (no version and lifetime before the session)", key.ID)
	}
	return version, life, []byte(rec), nil
}

// loadHash reads a record of the hash layout (fields v, d and c, which records of the
// oldest versions lack: then the lifetime is ""). Errors: as loadString's.
func (st *Store) loadHash(ctx context.Context, key arbiter.SessionKey) (uint64, string, []byte, error) {
	var get *redis.SliceCmd
	aerr := st.acked(ctx, key, "load", func(p redis.Pipeliner) { get = p.HMGet(ctx, Key(key), "v", "d", "c") })
	if get == nil {
		return 0, "", nil, aerr
	}
	vals, err := get.Result()
	if err == nil && aerr != nil {
		return 0, "", nil, aerr
	}
	if err != nil {
		if wrongType(err) {
			return 0, "", nil, err
		}
		return 0, "", nil, classify(err, key, "load")
	}
	if len(vals) != 3 {
		return 0, "", nil, arbiter.Errorf(arbiter.Internal, "load session %q: HMGET returned %d values", key.ID, len(vals))
	}
	if vals[0] == nil && vals[1] == nil && vals[2] == nil {
		return 0, "", nil, arbiter.Fieldf(arbiter.NotFound, "session_id", "session %q not found", key.ID)
	}
	vs, ok1 := vals[0].(string)
	data, ok2 := vals[1].(string)
	life, ok3 := vals[2].(string)
	if !ok1 || !ok2 || (!ok3 && vals[2] != nil) {
		return 0, "", nil, arbiter.Errorf(arbiter.Internal, "load session %q: malformed record (v %T, d %T, c %T)", key.ID, vals[0], vals[1], vals[2])
	}
	version, err := strconv.ParseUint(vs, 10, 64)
	if err != nil {
		return 0, "", nil, arbiter.Errorf(arbiter.Internal, "load session %q: malformed record (version %.20q)", key.ID, vs)
	}
	return version, life, []byte(data), nil
}

// maxVersion is the highest version a record may have: 15 digits, as Save's script
// checks (it compares versions as Lua numbers, doubles, exact up to 2^53).
const maxVersion = 999_999_999_999_999

// decodeRecord turns the record stored at key (its version, its lifetime as stored, ""
// when it has none, the encoded session, and its digest, "" to compute it) into the
// session, or an Internal error
// naming the session when the record cannot be the session at key: it does not
// decode, it is another session's (a record copied to another key), its version is 0
// or beyond maxVersion, or its stored lifetime is not the one in the record. A record
// refused here is never saved over by a compare-and-set that could not succeed: the
// request fails, and the record stays as it is for an operator to look at.
func decodeRecord(key arbiter.SessionKey, version uint64, life string, rec []byte, sum string) (*arbiter.Session, error) {
	s, err := sessioncodec.Decode(rec)
	if err != nil {
		return nil, arbiter.Wrap(arbiter.Internal, err, "load session %q: the record does not decode (%v)", key.ID, err)
	}
	switch {
	case s.Key != key:
		return nil, arbiter.Errorf(arbiter.Internal, "load session %q: the record there is session %q's (tenant %q)", key.ID, s.Key.ID, s.Key.Tenant)
	case version == 0 || version > maxVersion:
		return nil, arbiter.Errorf(arbiter.Internal, "load session %q: malformed record (version %d)", key.ID, version)
	case life != "" && life != lifetime(s):
		return nil, arbiter.Errorf(arbiter.Internal, "load session %q: malformed record (stored lifetime %s, the session's %s)", key.ID, life, lifetime(s))
	}
	if sum == "" {
		sum = digest(rec)
	}
	s.Version, s.Digest = version, sum
	return s, nil
}

// parseRecord splits a record of the string layout, "V:C:D", into its version, its
// lifetime and the encoded session; ok is false when val does not start with a
// decimal version and lifetime (an optional '-' then digits), each followed by ':'.
// It parses a prefix too: then rec is what of D it holds.
func parseRecord(val string) (version uint64, life, rec string, ok bool) {
	v, rest, ok1 := strings.Cut(val, ":")
	life, rec, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 || !decimal(strings.TrimPrefix(life, "-")) || !decimal(v) {
		return 0, "", "", false
	}
	version, err := strconv.ParseUint(v, 10, 64)
	return version, life, rec, err == nil
}

// decimal reports whether s is one or more ASCII digits.
func decimal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// wrongType reports whether err is Redis's WRONGTYPE reply: the key holds the other
// layout.
func wrongType(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.HasPrefix(rerr.Error(), "WRONGTYPE")
}

// LoadCached implements arbiter.CachedLoader: the session from the local cache, with
// cached set, when the cache holds it (no round trip; the copy may be stale, see Local
// cache in the package comment), otherwise Load. The session is the caller's. Errors:
// as Load's.
func (st *Store) LoadCached(ctx context.Context, key arbiter.SessionKey) (*arbiter.Session, bool, error) {
	if version, rec, sum, ok := st.cache.get(key); ok {
		s, err := decodeRecord(key, version, "", rec, sum)
		if err == nil {
			return s, true, nil
		}
		st.cache.drop(key) // a copy that is not the session's (a forged wake-up): ask Redis
	}
	s, err := st.Load(ctx, key)
	return s, false, err
}

// Uncached implements arbiter.CachedLoader: true when the Store keeps a local cache
// (Options.CacheSessions) and holds no usable copy of key. No I/O.
func (st *Store) Uncached(key arbiter.SessionKey) bool {
	return st.cache != nil && !st.cache.holds(key)
}

// Current implements arbiter.CachedLoader with one script call (currentScript, which
// sends back the record's version, lifetime and SHA-1, not the record): whether Redis
// still holds s as loaded, by version, in s's lifetime, and (s.Digest set) with the
// very content s was read from. A hash record without a lifetime (written by an
// earlier version) is compared on its version and content. On false or an error the
// session leaves the cache. Errors: Unavailable; Internal for a record the scripts
// refuse (see readRecordLua).
func (st *Store) Current(ctx context.Context, s *arbiter.Session) (bool, error) {
	res, err := st.runAcked(ctx, s.Key, "load", currentScript)
	if err != nil {
		st.cache.drop(s.Key)
		return false, classify(err, s.Key, "load")
	}
	ok := len(res) == 3
	if ok {
		version, _ := res[0].(int64)
		life, _ := res[1].(string) // nil: a record of an earlier version, without one
		sum, _ := res[2].(string)
		ok = version > 0 && uint64(version) == s.Version && (res[1] == nil || life == lifetime(s)) && (s.Digest == "" || sum == s.Digest)
	}
	if !ok {
		st.cache.drop(s.Key)
	} else {
		st.floor.answered(s.Key, lifetime(s), s.Version)
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

// readRecordLua reads the record at KEYS[1] of either layout into cur (its version, 0
// when there is none), life (its stored lifetime, false for none) and rec (the encoded
// session, false for none). A record without a version, with version 0 or one of
// over 15 digits (Lua compares numbers as doubles), or a string that is not a record,
// is the script error "ERR malformed session record"; a key of another type is
// WRONGTYPE.
const readRecordLua = `
local kind = redis.call('TYPE', KEYS[1]).ok
local cur, life, rec = 0, false, false
if kind == 'string' then
  local s = redis.call('GET', KEYS[1])
  local v, c, at = string.match(s, '^(%d+):(%-?%d+):()')
  if not v or #v > 15 or tonumber(v) == 0 then
    return redis.error_reply('ERR malformed session record')
  end
  cur, life, rec = tonumber(v), c, string.sub(s, at)
elseif kind == 'hash' then
  local h = redis.call('HMGET', KEYS[1], 'v', 'd', 'c')
  if not h[1] or not h[2] or not string.match(h[1], '^%d+$') or #h[1] > 15 or tonumber(h[1]) == 0 then
    return redis.error_reply('ERR malformed session record')
  end
  cur, life, rec = tonumber(h[1]), h[3], h[2]
elseif kind ~= 'none' then
  return redis.error_reply('WRONGTYPE the session key holds a ' .. kind)
end
`

// currentScript reads the record at KEYS[1] (readRecordLua) and returns {version,
// stored lifetime (false: none), SHA-1 of the encoded session, hex}, or {0} when there
// is none: what Current compares, in one round trip and without sending the record.
var currentScript = redis.NewScript(readRecordLua + `
if cur == 0 then
  return {0}
end
return {cur, life, redis.sha1hex(rec)}
`)

// saveScript is the compare-and-set. KEYS[1] the record; ARGV[1] the expected version
// (0: must not exist), ARGV[2] the encoded session, ARGV[3] the idle TTL in ms (0:
// none), ARGV[4] the session's lifetime (lifetime), ARGV[5] "hash" to write the hash
// layout of versions before 2026-12-01 (Options.LegacyRecords), anything else for the
// string "V:C:D"; ARGV[6] "1" to send the record in the wake-up message; ARGV[7] the
// Digest of the record the session was read from ("" for none: the version and the
// lifetime alone are compared). It reads a record of either layout (readRecordLua),
// compares its version, its lifetime and the SHA-1 of its encoded session, and returns {1, new version} or, writing nothing, {0,
// stored version (0: no record), stored record (nil: none), stored lifetime (nil:
// none)}, so that a caller with a stale copy has the current one without another
// read. A hash record without a lifetime (written by an earlier version) is compared
// on its version and digest; a record readRecordLua refuses is never overwritten. The
// wake-up message is "VERSION:LIFETIME:RECORD", RECORD empty when not sent (see
// wakeMessage).
var saveScript = redis.NewScript(readRecordLua + `
if cur ~= tonumber(ARGV[1]) or (cur > 0 and life and life ~= ARGV[4]) or (cur > 0 and ARGV[7] ~= '' and redis.sha1hex(rec) ~= ARGV[7]) then
  return {0, cur, rec, life}
end
local nv = cur + 1
local head = string.format('%d:%s:', nv, ARGV[4]) -- the string record's head, and the wake-up's
local ttl = tonumber(ARGV[3])
if ARGV[5] == 'hash' then
  if kind == 'string' then
    redis.call('DEL', KEYS[1])
  end
  redis.call('HSET', KEYS[1], 'v', string.format('%d', nv), 'd', ARGV[2], 'c', ARGV[4])
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[1], ttl)
  else
    redis.call('PERSIST', KEYS[1])
  end
else
  local val = head .. ARGV[2]
  if ttl > 0 then
    redis.call('SET', KEYS[1], val, 'PX', ttl)
  else
    redis.call('SET', KEYS[1], val)
  end
end
local msg = head
if ARGV[6] == '1' then
  msg = head .. ARGV[2]
end
redis.call('SPUBLISH', KEYS[1] .. ':w', msg)
return {1, nv}
`)

// Save implements arbiter.Store with one script call: compare-and-set on the
// version, write, reset the idle TTL (rounded up to whole milliseconds; 0 keeps the
// record forever) and publish a wake-up, atomically. On success s.Version and
// s.Digest are the new record's and the local cache (if any) holds it. Errors:
// Conflict (the stored record is not the one s was read from: another version,
// lifetime or content (s.Digest); nothing written; the cache now holds the stored
// record, or nothing when there is none); Unavailable (whether the write happened is unknown:
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
	layout := "string"
	if st.hash {
		layout = "hash"
	}
	send := "0"
	if st.wakeMax >= 0 && len(data) <= st.wakeMax {
		send = "1"
	}
	life := lifetime(s)
	expect := ""
	if s.Version > 0 {
		expect = s.Digest
	}
	startHeard := st.cache.heardOf(s.Key)
	mark := st.floor.mark(s.Key)
	res, err := st.runAcked(ctx, s.Key, "save", saveScript, s.Version, data, ttlMS, life, layout, send, expect)
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
		return arbiter.Errorf(arbiter.Internal, "save session %q: unexpected script reply (%d values)", s.Key.ID, len(res))
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
			if answered, ok := mark.below(stored, uint64(version)); ok {
				// Redis went back below a version this replica answered from: report
				// the session lost (rollback.go); the retry finds none.
				if err := st.dropRolledBack(ctx, s.Key, stored, uint64(version), answered); arbiter.KindOf(err) != arbiter.NotFound {
					return err
				}
				return arbiter.Errorf(arbiter.Conflict, "session %q rolled back by redis (version %d, this replica answered from %d): dropped as lost", s.Key.ID, version, answered)
			}
			st.cache.stored(s.Key, s.Version, uint64(version), stored, []byte(rec)) // decoded (and checked) by the next LoadCached
		} else {
			st.cache.drop(s.Key)
		}
		return arbiter.Errorf(arbiter.Conflict, "session %q changed (version %d, expected %d)", s.Key.ID, version, s.Version)
	}
	sum := digest(data)
	st.floor.answered(s.Key, life, uint64(version))
	st.cache.saved(s.Key, s.Version, startHeard, uint64(version), life, data, sum)
	s.Version, s.Digest = uint64(version), sum
	return nil
}

// digest is a record's fingerprint, as Redis's redis.sha1hex computes it in the
// scripts: the SHA-1 of the encoded session, in hex.
func digest(rec []byte) string {
	sum := sha1.Sum(rec)
	return hex.EncodeToString(sum[:])
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
	var ae *arbiter.Error
	if errors.As(err, &ae) {
		return err // classified already (acked)
	}
	if errors.Is(err, redis.Nil) {
		return arbiter.Fieldf(arbiter.NotFound, "session_id", "session %q not found", key.ID)
	}
	var rerr redis.Error
	if errors.As(err, &rerr) && !transient(rerr.Error()) {
		// Redis answered, with an error that retrying will not fix (WRONGTYPE, a
		// script error such as a malformed record): a bug or a foreign key in our key
		// space. Its first line says which (the script's own replies are short).
		msg, _, _ := strings.Cut(rerr.Error(), "\n")
		if len(msg) > 120 {
			msg = msg[:120]
		}
		return arbiter.Wrap(arbiter.Internal, err, "%s session %q: %s", what, key.ID, strings.ToValidUTF8(msg, "?"))
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

// callKey is the call index's key of a call id in a tenant: arb:c:{TENANT:CALL}, the
// tenant and the call id escaped as Key escapes a session's (its own slot: a call is
// looked up before its session is known).
func callKey(tenant, callID string) string {
	return "arb:c:{" + escape(tenant, true) + ":" + escape(callID, false) + "}"
}

// indexCallScript records a call's session, or marks the call id ambiguous ("") when
// another session holds it: KEYS[1] the call's key, ARGV[1] the session id, ARGV[2]
// the TTL in ms.
var indexCallScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then
  redis.call('SET', KEYS[1], '', 'PX', ARGV[2])
  return 1
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 0
`)

// IndexCall implements arbiter.CallIndex with one script call: every replica finds
// the call's session (an ambiguous call id is stored as "").
func (st *Store) IndexCall(ctx context.Context, tenant, callID, id string, ttl time.Duration) error {
	if ttl <= 0 {
		ttl = 30 * 24 * time.Hour
	}
	if err := indexCallScript.Run(ctx, st.client, []string{callKey(tenant, callID)}, id, ttl.Milliseconds()).Err(); err != nil {
		return arbiter.Wrap(arbiter.Unavailable, err, "index call %q: redis unavailable", callID)
	}
	return nil
}

// LookupCall implements arbiter.CallIndex with one GET.
func (st *Store) LookupCall(ctx context.Context, tenant, callID string) (string, error) {
	id, err := st.client.Get(ctx, callKey(tenant, callID)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", arbiter.Fieldf(arbiter.NotFound, "call_id", "call %q is not known (only calls the wire guard registered are found by their id alone): give session_id", callID)
	case err != nil:
		return "", arbiter.Wrap(arbiter.Unavailable, err, "look up call %q: redis unavailable", callID)
	case id == "":
		return "", arbiter.AmbiguousCall(callID)
	}
	return id, nil
}
