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
}

type cacheEntry struct {
	key     arbiter.SessionKey
	version uint64
	data    []byte // never mutated
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

// put records that key is at version with record data (which it keeps: the caller
// must not change it): what Redis just said, so it replaces whatever the cache held,
// even a higher version (the session expired and started again under its id; a put
// that lost a race to a newer one costs the next transition one retry).
func (c *cache) put(key arbiter.SessionKey, version uint64, data []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*cacheEntry)
		e.version, e.data = version, data
		c.order.MoveToFront(el)
		return
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, version: version, data: data})
	for c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(*cacheEntry)
		delete(c.entries, old.key)
	}
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
}

func (c *cache) stats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits, Misses: c.misses, Stale: c.stale, Sessions: c.order.Len()}
}
