package memory

import (
	"container/heap"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
)

// expiryIndex orders the sessions that have an idle TTL by when it runs out: a binary
// min-heap of entries with each entry's position, and a map from key to entry, so
// that setting, moving and removing a session's expiry are O(log n) and the earliest
// one is O(1). Sessions that never expire are not in it. Not safe for concurrent use
// (the Store's lock guards it).
type expiryIndex struct {
	h     expiryHeap
	byKey map[arbiter.SessionKey]*expiryEntry
}

type expiryEntry struct {
	key arbiter.SessionKey
	at  time.Time
	i   int // position in the heap
}

func newExpiryIndex() expiryIndex {
	return expiryIndex{byKey: map[arbiter.SessionKey]*expiryEntry{}}
}

// set records that key's session expires at at (zero: never, which takes it out).
func (x *expiryIndex) set(key arbiter.SessionKey, at time.Time) {
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
		e = &expiryEntry{key: key, at: at}
		x.byKey[key] = e
		heap.Push(&x.h, e)
	}
}

// remove takes key out of the index, if it is there.
func (x *expiryIndex) remove(key arbiter.SessionKey) {
	if e, ok := x.byKey[key]; ok {
		heap.Remove(&x.h, e.i)
		delete(x.byKey, key)
	}
}

// first returns the session that expires first and when; ok is false when no
// session in the index expires.
func (x *expiryIndex) first() (key arbiter.SessionKey, at time.Time, ok bool) {
	if len(x.h) == 0 {
		return arbiter.SessionKey{}, time.Time{}, false
	}
	return x.h[0].key, x.h[0].at, true
}

// len returns how many sessions the index holds.
func (x *expiryIndex) len() int { return len(x.h) }

// expiryHeap is container/heap's view of the entries, earliest first.
type expiryHeap []*expiryEntry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].i, h[j].i = i, j
}
func (h *expiryHeap) Push(x any) {
	e := x.(*expiryEntry)
	e.i = len(*h)
	*h = append(*h, e)
}
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}
