package redisstore

import (
	"container/list"
	"sync"

	"github.com/voicearbiter/arbiter/arbiter"
)

// cache is a replica's bounded local copy of the records it served: for each session
// the version and the encoded record last read from or written to Redis, or heard in
// a wake-up message, least recently used first out. It never answers a read alone
// (Store.LoadCached's callers compare-and-set on the version and the record's content,
// or confirm with Current); a nil *cache is no cache. Safe for concurrent use.
//
// Each entry also keeps heard, the highest version a wake-up message announced in the
// entry's lifetime. A copy below it is known to be stale and is not handed out (a
// miss), whatever order the replies and messages arrived in: a Load or a Save whose
// reply comes after the message of a later save cannot make the cache go back to a
// copy a woken watcher would take for the news (Service.Decide steps the cached copy
// after a wake-up). A dropped entry that had heard a message stays as a tombstone (no
// record) that keeps heard, for the same reason.
type cache struct {
	mu      sync.Mutex
	max     int
	order   *list.List // of *cacheEntry, most recently used at the front
	entries map[arbiter.SessionKey]*list.Element
	hits    uint64
	misses  uint64
	stale   uint64
	offered uint64
}

type cacheEntry struct {
	key     arbiter.SessionKey
	version uint64
	// life is the lifetime the record was written in (the record's c, see lifetime),
	// "" when unknown.
	life string
	// heard is the highest version a wake-up message announced in lifetime life (0:
	// none).
	heard uint64
	data  []byte // never mutated; nil: a tombstone (see cache)
	// sum is digest(sumOf), kept so that a hit hashes no record: it is data's while
	// sumOf is the very slice data is (records are never mutated), recomputed by get
	// otherwise, whichever way data was replaced.
	sum   string
	sumOf []byte
}

func newCache(max int) *cache {
	if max <= 0 {
		return nil
	}
	return &cache{max: max, order: list.New(), entries: make(map[arbiter.SessionKey]*list.Element)}
}

// get returns the cached version, record and its digest of key, counting a hit or a
// miss (no entry, a tombstone, or a copy older than a version a message announced).
func (c *cache) get(key arbiter.SessionKey) (uint64, []byte, string, bool) {
	if c == nil {
		return 0, nil, "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		c.misses++
		return 0, nil, "", false
	}
	e := el.Value.(*cacheEntry)
	if e.data == nil || e.version < e.heard {
		c.misses++
		return 0, nil, "", false
	}
	c.hits++
	c.order.MoveToFront(el)
	if !sameSlice(e.sumOf, e.data) {
		e.sum, e.sumOf = digest(e.data), e.data
	}
	return e.version, e.data, e.sum, true
}

// sameSlice reports whether a and b are the same non-empty slice (not equal bytes:
// the same memory).
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// holds reports whether get would find key, without counting a hit or a miss or
// changing the order. False on a nil cache.
func (c *cache) holds(key arbiter.SessionKey) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return false
	}
	e := el.Value.(*cacheEntry)
	return e.data != nil && e.version >= e.heard
}

// put records that key is at version, in lifetime life ("" unknown), with record
// data (which it keeps: the caller must not change it): what Redis just said, so it
// replaces whatever the cache held, even a higher version (the session expired and
// started again under its id; a put that lost a race to a newer one costs the next
// transition one retry). Only a copy of the same lifetime that a message announced
// (heard, and held) above version is kept, since Redis said version before it said
// that one; a put below heard is kept but not handed out (get).
func (c *cache) put(key arbiter.SessionKey, version uint64, life string, data []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(key, version, life, data)
}

func (c *cache) putLocked(key arbiter.SessionKey, version uint64, life string, data []byte) {
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*cacheEntry)
		c.order.MoveToFront(el)
		if life == "" || e.life != life {
			e.version, e.life, e.heard, e.data = version, life, 0, data
			return
		}
		if e.data != nil && e.version == e.heard && e.heard > version {
			return // the message's record is the later one
		}
		e.version, e.data = version, data
		return
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, version: version, life: life, data: data})
	for c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(*cacheEntry)
		delete(c.entries, old.key)
	}
}

// offer takes what a wake-up message said (wake): key reached version in lifetime
// life, with record data (nil: the message carried none). A message can arrive after
// the reply of a Load or a Save that read or wrote a later version on another
// connection, so unlike put it never replaces a newer copy. With a record and a
// lifetime: it is taken when the cache holds nothing for key (or a tombstone of that
// lifetime), or a lower version of the same lifetime; an equal or higher version is
// kept; a copy of another or an unknown lifetime is dropped (which of the two is newer
// is not known; a drop costs the next request one read, never an answer). Either way a
// message of the entry's lifetime raises its heard. Without a record (a message of an
// earlier version, or a record over Options.WakeRecordBytes): a lower version is
// dropped (it is stale: the next request reads instead of stepping it), anything else
// kept. It reports whether the cache took the record.
func (c *cache) offer(key arbiter.SessionKey, version uint64, life string, data []byte) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	var e *cacheEntry
	if ok {
		e = el.Value.(*cacheEntry)
	}
	switch {
	case ok && life != "" && e.life == life:
		e.heard = max(e.heard, version)
		if data == nil {
			return false // get no longer hands out a copy below heard
		}
		if e.data == nil || e.version < version {
			e.version, e.data = version, data
			c.order.MoveToFront(el)
			c.offered++
			return true
		}
		return false
	case data == nil:
		if ok && e.version < version {
			c.removeLocked(el)
		}
		return false
	case ok:
		c.removeLocked(el) // another or an unknown lifetime
		return false
	}
	c.putLocked(key, version, life, data)
	c.entries[key].Value.(*cacheEntry).heard = version
	c.offered++
	return true
}

func (c *cache) removeLocked(el *list.Element) {
	c.order.Remove(el)
	delete(c.entries, el.Value.(*cacheEntry).key)
}

// conflict records that a compare-and-set expecting version failed: a stale hit when
// the cache held that version.
func (c *cache) conflict(key arbiter.SessionKey, version uint64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok && el.Value.(*cacheEntry).version == version {
		c.stale++
	}
}

// heardOf returns the highest version a wake-up message announced for key (0: none),
// for Save to compare after its compare-and-set (saved).
func (c *cache) heardOf(key arbiter.SessionKey) uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		return el.Value.(*cacheEntry).heard
	}
	return 0
}

// saved takes the record a successful compare-and-set wrote: key at version (in
// lifetime life) with record data, the compare-and-set having expected expected. If
// a message had announced, before that Save began (startHeard), a version beyond
// expected, Redis never kept it (the compare-and-set found expected): a forged message
// or a write a failover lost. Unless a message came since, heard is forgotten, so
// that the session's copies are handed out again (get) instead of every request
// reading Redis for as long as the entry lives. sum is data's digest, which Save
// computed already. Otherwise as put.
func (c *cache) saved(key arbiter.SessionKey, expected, startHeard, version uint64, life string, data []byte, sum string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		if e := el.Value.(*cacheEntry); startHeard > expected && e.heard == startHeard {
			e.heard = 0
		}
	}
	c.putLocked(key, version, life, data)
	if e := c.entries[key].Value.(*cacheEntry); sameSlice(e.data, data) {
		e.sum, e.sumOf = sum, data
	}
}

// stored takes what a failed compare-and-set found in Redis: key at version (in
// lifetime life, "" unknown) with record data, where the compare-and-set expected
// expected. As put, except when Redis holds less than expected: the copy that was
// stepped claimed a version Redis never reached or has gone back from (a forged or
// replayed wake-up message, a failover that lost writes), so nothing the cache holds
// or heard above version can be trusted: the stored record replaces it and heard
// comes down to version. Otherwise every retry would step the same copy and fail.
func (c *cache) stored(key arbiter.SessionKey, expected, version uint64, life string, data []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok && version < expected {
		e := el.Value.(*cacheEntry)
		c.order.MoveToFront(el)
		e.version, e.life, e.heard, e.data = version, life, 0, data
		return
	}
	c.putLocked(key, version, life, data)
}

// drop forgets key's record (unknown or gone); an entry that heard a message stays as
// a tombstone that keeps heard (see cache).
func (c *cache) drop(key arbiter.SessionKey) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		if e := el.Value.(*cacheEntry); e.heard > 0 {
			e.version, e.data = 0, nil
			return
		}
		c.removeLocked(el)
	}
}

// CacheStats counts the local cache's lookups (Store.LoadCached) since the Store was
// made.
type CacheStats struct {
	// Hits were answered from the cache, Misses read Redis.
	Hits, Misses uint64
	// Stale counts the compare-and-sets that failed although the cache held the
	// version they expected: copies another replica's save had made stale (each cost
	// a retry, no read).
	Stale uint64
	// Sessions is how many sessions the cache holds now (tombstones too: sessions
	// dropped after a wake-up message, which keep the version it announced).
	Sessions int
	// Woken counts the records that wake-up messages brought into the cache (another
	// replica's saves, taken without a read; see Options.WakeRecordBytes).
	Woken uint64
}

func (c *cache) stats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits, Misses: c.misses, Stale: c.stale, Sessions: c.order.Len(), Woken: c.offered}
}
