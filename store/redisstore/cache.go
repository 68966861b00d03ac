package redisstore

import (
	"container/list"
	"sync"

	"github.com/voicearbiter/arbiter/arbiter"
)

// cache is a replica's bounded local copy of the records it served: for each session
// the version and the encoded record last read from or written to Redis, least
// recently used first out. It never answers a read alone (Store.LoadCached's callers
// compare-and-set on the version); a nil *cache is no cache. Safe for concurrent use.
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
	data []byte // never mutated
}

func newCache(max int) *cache {
	if max <= 0 {
		return nil
	}
	return &cache{max: max, order: list.New(), entries: make(map[arbiter.SessionKey]*list.Element)}
}

// get returns the cached version and record of key, counting a hit or a miss.
func (c *cache) get(key arbiter.SessionKey) (uint64, []byte, bool) {
	if c == nil {
		return 0, nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		c.misses++
		return 0, nil, false
	}
	c.hits++
	c.order.MoveToFront(el)
	e := el.Value.(*cacheEntry)
	return e.version, e.data, true
}

// put records that key is at version, in lifetime life ("" unknown), with record
// data (which it keeps: the caller must not change it): what Redis just said, so it
// replaces whatever the cache held, even a higher version (the session expired and
// started again under its id; a put that lost a race to a newer one costs the next
// transition one retry).
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
		e.version, e.life, e.data = version, life, data
		c.order.MoveToFront(el)
		return
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, version: version, life: life, data: data})
	for c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(*cacheEntry)
		delete(c.entries, old.key)
	}
}

// offer takes what a wake-up message said (wake): key reached version in lifetime
// life, with record data (nil: the message carried none). Unlike put it never
// replaces a newer copy: a message can arrive after a Load or a Save that read or
// wrote a later version on another connection. So, with a record: it is taken when
// the cache holds nothing for key, or a lower version of the same lifetime; a copy of
// another or an unknown lifetime is dropped (which of the two is newer is not known;
// a drop costs the next request one read, never an answer); an equal or higher
// version of the same lifetime is kept. Without a record (a message of an earlier
// version, or a record over Options.WakeRecordBytes): a lower version is dropped (it
// is stale: the next request reads instead of stepping it), anything else kept. It
// reports whether the cache took the record.
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
	case data == nil:
		if ok && e.version < version {
			c.order.Remove(el)
			delete(c.entries, key)
		}
		return false
	case !ok:
		c.putLocked(key, version, life, data)
		c.offered++
		return true
	case life == "" || e.life != life:
		c.order.Remove(el)
		delete(c.entries, key)
		return false
	case e.version < version:
		e.version, e.data = version, data
		c.order.MoveToFront(el)
		c.offered++
		return true
	}
	return false
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

// drop forgets key (its record is unknown or gone).
func (c *cache) drop(key arbiter.SessionKey) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.order.Remove(el)
		delete(c.entries, key)
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
	// Sessions is how many sessions the cache holds now.
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
