package redisstore

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/arbiter"
)

// Rollbacks.
//
// A Store remembers, for the sessions it served lately, the highest version it
// answered from in each session's lifetime (a Save it saw Redis confirm, a Load, a
// Current that said yes): its floor. A record of that lifetime below the floor is a
// rollback when the read that found it was sent after the floor was reached: Redis lost writes this replica acknowledged (a failover to a replica that
// lagged, with Options.ReplicaAcks off or too few replicas waited for; a primary
// restarted on an old snapshot). Such a record is never answered from, as if nothing
// had happened: the Store deletes it (a compare-and-delete on its version and
// lifetime, so a newer write is left alone) and reports the session NotFound, which
// is how a session lost by its store has always been reported: a request naming its
// epoch is DATA_LOSS, Connect naming it is SESSION_STATE_LOST and starts a new epoch,
// and the agent treats what it had in flight as unknown. Another replica of the
// arbiter that did not answer from the lost versions cannot tell; ReplicaAcks is what
// prevents the loss, this detects it where it can.

// floor is the bounded map of versions answered from (at most max sessions; past it
// an arbitrary one is forgotten). Safe for concurrent use.
type floor struct {
	mu  sync.Mutex
	max int
	m   map[arbiter.SessionKey]floorMark
	// rollbacks counts the rollbacks found (Stats).
	rollbacks uint64
}

type floorMark struct {
	life    string
	version uint64
}

func newFloor(max int) *floor {
	return &floor{max: max, m: map[arbiter.SessionKey]floorMark{}}
}

// answered records that version (of lifetime life) of key was answered from.
func (f *floor) answered(key arbiter.SessionKey, life string, version uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.m[key]; ok && m.life == life && m.version >= version {
		return
	}
	if _, ok := f.m[key]; !ok && len(f.m) >= f.max {
		for k := range f.m {
			delete(f.m, k)
			break
		}
	}
	f.m[key] = floorMark{life: life, version: version}
}

// mark returns key's floor now, to compare with what a read sent after this call
// finds (below). A read sent earlier may race with this Store's own writes, and
// finding an older version is then no rollback.
func (f *floor) mark(key arbiter.SessionKey) floorMark {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[key]
}

// below of lifetime life, read after m was
// taken (mark), is a rollback: this Store had answered from a later version of that
// lifetime before the read was sent. It returns that version.
func (m floorMark) below(life string, version uint64) (uint64, bool) {
	if m.version == 0 || life == "" || m.life != life || version >= m.version {
		return 0, false
	}
	return m.version, true
}

// forget drops key's mark (its record was deleted as a rollback).
func (f *floor) forget(key arbiter.SessionKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, key)
	f.rollbacks++
}

// Rollbacks returns how many rolled-back sessions the Store found and reported lost.
func (st *Store) Rollbacks() uint64 {
	st.floor.mu.Lock()
	defer st.floor.mu.Unlock()
	return st.floor.rollbacks
}

// dropRolledBack deletes key's record if it is still version of lifetime life (a
// rollback, see floor) and returns the NotFound error the request gets. Errors:
// Unavailable when the deletion could not be made (the request fails; the next one
// finds the rollback again).
func (st *Store) dropRolledBack(ctx context.Context, key arbiter.SessionKey, life string, version, answered uint64) error {
	if _, err := st.runAcked(ctx, key, "drop rolled-back", dropScript, version, life); err != nil {
		return classify(err, key, "drop rolled-back")
	}
	st.cache.drop(key)
	st.floor.forget(key)
	return arbiter.Fieldf(arbiter.NotFound, "session_id",
		"session %q not found: redis holds version %d of it, older than version %d this replica answered from (a failover or restart lost acknowledged writes); it was dropped and is reported lost",
		key.ID, version, answered)
}

// dropScript deletes KEYS[1] when it holds the record of version ARGV[1] in lifetime
// ARGV[2] (either layout, readRecordLua), and returns 1, else 0.
var dropScript = redis.NewScript(readRecordLua + `
if cur == tonumber(ARGV[1]) and life == ARGV[2] then
  redis.call('DEL', KEYS[1])
  return {1}
end
return {0}
`)
