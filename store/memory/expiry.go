package memory

import (
	"container/heap"
	"time"
)

// expiryIndex orders the sessions (or call-index entries) that have an idle TTL by
// when it runs out: a binary
// min-heap of entries with each entry's position, and a map from key to entry, so
// that setting, moving and removing a session's expiry are O(log n) and the earliest
// one is O(1). Sessions that never expire are not in it. Not safe for concurrent use
// (the Store's lock guards it).
type expiryIndex[K comparable] struct {
	h     expiryHeap[K]
	byKey map[K]*expiryEntry[K]
}

type expiryEntry[K comparable] struct {
	key K
	at  time.Time
	i   int // position in the heap
}

func newExpiryIndex[K comparable]() expiryIndex[K] {
	return expiryIndex[K]{byKey: map[K]*expiryEntry[K]{}}
}

// set records that key's session expires at at (zero: never, which takes it out).
func (x *expiryIndex[K]) set(key K, at time.Time) {
	e, ok := x.byKey[key]
	switch {
	case at.IsZero():
		if ok {
			x.remove(key)
		}
	case ok:
		e.at = at
		heap.Fix(&x.h, e.i)
	default:
		e = &expiryEntry[K]{key: key, at: at}
		x.byKey[key] = e
		heap.Push(&x.h, e)
	}
}

// remove takes key out of the index, if it is there.
func (x *expiryIndex[K]) remove(key K) {
	if e, ok := x.byKey[key]; ok {
		heap.Remove(&x.h, e.i)
		delete(x.byKey, key)
	}
}

// first returns the session that expires first and when; ok is false when no
// session in the index expires.
func (x *expiryIndex[K]) first() (key K, at time.Time, ok bool) {
	if len(x.h) == 0 {
		return key, time.Time{}, false
	}
	return x.h[0].key, x.h[0].at, true
}

// len returns how many sessions the index holds.
func (x *expiryIndex[K]) len() int { return len(x.h) }

// expiryHeap is container/heap's view of the entries, earliest first.
type expiryHeap[K comparable] []*expiryEntry[K]

func (h expiryHeap[K]) Len() int           { return len(h) }
func (h expiryHeap[K]) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h expiryHeap[K]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].i, h[j].i = i, j
}
func (h *expiryHeap[K]) Push(x any) {
	e := x.(*expiryEntry[K])
	e.i = len(*h)
	*h = append(*h, e)
}
func (h *expiryHeap[K]) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}
