// Package memory is the embedded, in-process arbiter.Store: the default when no Redis
// is configured. It keeps each session as its encoded bytes (so callers always get
// private copies, exactly as from a shared store) and drops sessions whose idle TTL
// ran out. On a Disk (Open; boltdisk is the one serve uses) every Save is on stable
// storage before it returns, and the next process opens the same sessions; without
// one (New) sessions live as long as the process. Snapshot and Restore carry sessions
// as a JSON document, the format --state-file had before it became a database.
package memory

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/sessioncodec"
)

// Store is an in-memory arbiter.Store, optionally durable on a Disk. It is safe for
// concurrent use. Loads and Watch never touch the disk: the sessions are in memory,
// and on a Disk memory holds only what the disk has.
type Store struct {
	// MaxSessions bounds how many sessions the store holds: creating one more is
	// ResourceExhausted. Zero means unlimited. Set it before first use.
	MaxSessions int

	now  func() time.Time
	disk Disk // nil: sessions live only in memory

	mu       sync.Mutex
	sessions map[arbiter.SessionKey]*record
	// writing holds, for each key whose Save is being written to disk, a channel
	// closed when the write is over. The record becomes visible (to Load, Watch,
	// other Saves) only once the disk has it; another Save of the key waits.
	writing map[arbiter.SessionKey]chan struct{}
	// creating counts the writes in writing that create a session (MaxSessions).
	creating int
	// gone lists the expired sessions dropped from memory but not yet from the disk
	// (the janitor deletes them there).
	gone []arbiter.SessionKey
	// expiries indexes the sessions that have an idle TTL by when it runs out (see
	// expiry.go), and callExpiries the call index's entries, so the janitor finds the
	// expired ones without walking the rest.
	expiries     expiryIndex[arbiter.SessionKey]
	callExpiries expiryIndex[callKey]
	// swept counts the sessions and call-index entries the janitor examined (tests).
	swept    int
	watchers map[arbiter.SessionKey]map[chan struct{}]struct{}
	// calls is the call index (IndexCall), in memory only: a restart forgets it.
	calls       map[callKey]callEntry
	stop        chan struct{}
	stopOnce    sync.Once
	janitorDone chan struct{}
}

// record is one stored session. A record is never changed once stored (a Save stores
// a new one), so readers may use it after releasing the lock.
type record struct {
	data    []byte
	version uint64
	expires time.Time // zero: never
}

// sweepEvery is how often the janitor drops every expired session (a sweep takes
// them from the time index, in order of expiry, and looks at no other session; loads
// and saves drop the expired session they touch at once).
const sweepEvery = time.Second

// New returns an empty store that keeps sessions in memory only. now is the clock
// used for idle TTLs (nil: time.Now). A janitor goroutine drops expired sessions
// every second even when no request comes, so memory falls back once sessions
// expire; Close stops it. The janitor's round costs O(log n) per expired session
// and nothing per live one (a time index, not a walk of every session under the
// store's lock).
func New(now func() time.Time) *Store {
	m := newStore(now)
	go m.janitor()
	return m
}

// newStore returns an empty store without its janitor.
func newStore(now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{
		now:          now,
		sessions:     map[arbiter.SessionKey]*record{},
		expiries:     newExpiryIndex[arbiter.SessionKey](),
		callExpiries: newExpiryIndex[callKey](),
		writing:      map[arbiter.SessionKey]chan struct{}{},
		watchers:     map[arbiter.SessionKey]map[chan struct{}]struct{}{},
		calls:        map[callKey]callEntry{},
		stop:         make(chan struct{}),
		janitorDone:  make(chan struct{}),
	}
}

func (m *Store) janitor() {
	defer close(m.janitorDone)
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.janitorTick()
		}
	}
}

// janitorTick is one round of the janitor.
func (m *Store) janitorTick() {
	m.mu.Lock()
	m.sweepLocked()
	m.mu.Unlock()
	m.deleteGone()
}

// deleteGone deletes the expired sessions dropped from memory from the disk too. A
// failed deletion is tried again at the next sweep; an expired record left on disk
// is only space (Open skips it).
func (m *Store) deleteGone() {
	m.mu.Lock()
	keys := m.gone
	m.gone = nil
	m.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	if err := m.disk.DeleteExpired(keys, m.now()); err != nil {
		m.mu.Lock()
		m.gone = append(m.gone, keys...)
		m.mu.Unlock()
	}
}

// Load implements arbiter.Store. It reads memory only.
func (m *Store) Load(_ context.Context, key arbiter.SessionKey) (*arbiter.Session, error) {
	m.mu.Lock()
	r, ok := m.sessions[key]
	if ok && m.expired(r) {
		m.dropLocked(key)
		ok = false
	}
	m.mu.Unlock()
	if !ok {
		// Fieldf's message without fmt (every RegisterCall of a new session gets here).
		return nil, &arbiter.Error{Kind: arbiter.NotFound, Field: "session_id", Message: "session_id: session " + strconv.Quote(key.ID) + " not found"}
	}
	s, err := sessioncodec.Decode(r.data)
	if err != nil {
		return nil, err
	}
	s.Version = r.version
	return s, nil
}

func (m *Store) expired(r *record) bool {
	return !r.expires.IsZero() && !m.now().Before(r.expires)
}

// dropLocked forgets an expired session, and has the janitor delete it from disk.
func (m *Store) dropLocked(key arbiter.SessionKey) {
	delete(m.sessions, key)
	m.expiries.remove(key)
	if m.disk != nil {
		m.gone = append(m.gone, key)
	}
}

// Save implements arbiter.Store. On a Disk the new record is written to disk before
// Save returns, and only then stored in memory: until then Load returns the previous
// version, and another Save of the same session waits for this one (then usually
// fails with Conflict); ctx bounds that wait (Unavailable when it ends), not the
// write itself, which a Save always waits for. Concurrent Saves of different
// sessions share the disk's syncs. When the disk write fails, Save fails with
// Unavailable and memory keeps the previous version (whether the disk kept the new
// one is unknown until a later Save overwrites it).
func (m *Store) Save(ctx context.Context, s *arbiter.Session, ttl time.Duration) error {
	data, err := sessioncodec.Encode(s)
	if err != nil {
		return err
	}
	m.mu.Lock()
	if err := m.awaitWriteLocked(ctx, s.Key); err != nil {
		m.mu.Unlock()
		return err
	}
	nr, create, err := m.nextLocked(s, data, ttl)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	if m.disk == nil {
		m.storeLocked(s.Key, nr)
		m.mu.Unlock()
		s.Version = nr.version
		return nil
	}
	done := make(chan struct{})
	m.writing[s.Key] = done
	if create {
		m.creating++
	}
	m.mu.Unlock()

	err = m.disk.Put(Record{Key: s.Key, Version: nr.version, Expires: nr.expires, Session: nr.data})
	m.mu.Lock()
	delete(m.writing, s.Key)
	if create {
		m.creating--
	}
	if err == nil {
		m.storeLocked(s.Key, nr)
	}
	close(done)
	m.mu.Unlock()
	if err != nil {
		return arbiter.Wrap(arbiter.Unavailable, err, "session %q not stored: the write to disk failed; retry", s.Key.ID)
	}
	s.Version = nr.version
	return nil
}

// awaitWriteLocked waits, with the lock held on entry and on return, until no write
// of key is in progress. Errors: Unavailable when ctx ends first.
func (m *Store) awaitWriteLocked(ctx context.Context, key arbiter.SessionKey) error {
	for {
		done, ok := m.writing[key]
		if !ok {
			return nil
		}
		m.mu.Unlock()
		select {
		case <-done:
			m.mu.Lock()
		case <-ctx.Done():
			m.mu.Lock()
			return arbiter.Wrap(arbiter.Unavailable, ctx.Err(), "session %q: another write of it is still on its way to disk", key.ID)
		}
	}
}

// nextLocked returns the record that saving s as data stores, and whether it creates
// the session. Errors: Conflict when s.Version is not the stored version;
// ResourceExhausted when creating it would pass MaxSessions.
func (m *Store) nextLocked(s *arbiter.Session, data []byte, ttl time.Duration) (*record, bool, error) {
	r, ok := m.sessions[s.Key]
	if ok && m.expired(r) {
		m.dropLocked(s.Key)
		ok = false
	}
	var cur uint64
	if ok {
		cur = r.version
	}
	if cur != s.Version {
		return nil, false, arbiter.Errorf(arbiter.Conflict, "session %q changed (version %d, expected %d)", s.Key.ID, cur, s.Version)
	}
	if !ok && m.MaxSessions > 0 && len(m.sessions)+m.creating >= m.MaxSessions {
		m.sweepLocked()
		if n := len(m.sessions) + m.creating; n >= m.MaxSessions {
			return nil, false, arbiter.Fieldf(arbiter.ResourceExhausted, "session_id", "the server holds %d sessions, its limit; close sessions or retry later", n)
		}
	}
	nr := &record{data: data, version: cur + 1}
	if ttl > 0 {
		nr.expires = m.now().Add(ttl)
	}
	return nr, !ok, nil
}

// storeLocked stores r as key's record and wakes key's watchers.
func (m *Store) storeLocked(key arbiter.SessionKey, r *record) {
	m.sessions[key] = r
	m.expiries.set(key, r.expires)
	for ch := range m.watchers[key] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// sweepLocked drops every expired session and call-index entry, earliest expiry
// first, taking them from the time indexes: it looks at none that has time left.
func (m *Store) sweepLocked() {
	now := m.now()
	for {
		key, at, ok := m.expiries.first()
		if !ok || now.Before(at) {
			break
		}
		m.swept++
		m.dropLocked(key)
	}
	for {
		key, at, ok := m.callExpiries.first()
		if !ok || now.Before(at) {
			break
		}
		m.swept++
		m.callExpiries.remove(key)
		delete(m.calls, key)
	}
}

// callKey and callEntry are the call index's entries: a call id in a tenant, and its
// session.
type callKey struct{ tenant, call string }
type callEntry struct {
	session string
	expires time.Time // zero: never
}

// IndexCall implements arbiter.CallIndex, in memory only (not on the Disk: the index
// is a lookup aid, and a restart forgets it). An ambiguous call id keeps session "".
func (m *Store) IndexCall(_ context.Context, tenant, callID, id string, ttl time.Duration) error {
	e := callEntry{session: id}
	if ttl > 0 {
		e.expires = m.now().Add(ttl)
	}
	k := callKey{tenant, callID}
	m.mu.Lock()
	if old, ok := m.calls[k]; ok && old.session != id && (old.expires.IsZero() || m.now().Before(old.expires)) {
		e.session = "" // two sessions: ambiguous
	}
	m.calls[k] = e
	m.callExpiries.set(k, e.expires)
	m.mu.Unlock()
	return nil
}

// LookupCall implements arbiter.CallIndex.
func (m *Store) LookupCall(_ context.Context, tenant, callID string) (string, error) {
	m.mu.Lock()
	e, ok := m.calls[callKey{tenant, callID}]
	m.mu.Unlock()
	switch {
	case !ok || (!e.expires.IsZero() && !m.now().Before(e.expires)):
		return "", arbiter.Fieldf(arbiter.NotFound, "call_id", "call %q is not known here (only calls the wire guard registered are found by their id alone): give session_id", callID)
	case e.session == "":
		return "", arbiter.AmbiguousCall(callID)
	}
	return e.session, nil
}

// Len returns how many sessions are stored, expired ones included until the janitor
// (or a save) sweeps them.
func (m *Store) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

// Watch implements arbiter.Store.
func (m *Store) Watch(_ context.Context, key arbiter.SessionKey) (<-chan struct{}, func(), error) {
	ch := make(chan struct{}, 1)
	m.mu.Lock()
	if m.watchers[key] == nil {
		m.watchers[key] = map[chan struct{}]struct{}{}
	}
	m.watchers[key][ch] = struct{}{}
	m.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			m.mu.Lock()
			delete(m.watchers[key], ch)
			if len(m.watchers[key]) == 0 {
				delete(m.watchers, key)
			}
			m.mu.Unlock()
		})
	}, nil
}

// Ping implements arbiter.Store: memory is always reachable; on a Disk, Ping is the
// disk's (Unavailable when it cannot be written).
func (m *Store) Ping(ctx context.Context) error {
	if m.disk == nil {
		return nil
	}
	if err := m.disk.Ping(ctx); err != nil {
		return arbiter.Wrap(arbiter.Unavailable, err, "the session disk cannot be written: %v", err)
	}
	return nil
}

// Close implements arbiter.Store: it stops the janitor and, on a Disk, closes it
// once the writes under way are on it; later Saves fail with Unavailable. The
// sessions stay readable.
func (m *Store) Close() error {
	var err error
	m.stopOnce.Do(func() {
		close(m.stop)
		<-m.janitorDone
		if m.disk != nil {
			err = m.disk.Close()
		}
	})
	return err
}
