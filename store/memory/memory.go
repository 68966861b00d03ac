// Package memory is the embedded, in-process arbiter.Store: the default when no Redis
// is configured. It keeps each session as its encoded bytes (so callers always get
// private copies, exactly as from a shared store) and drops sessions whose idle TTL
// ran out. Snapshot and Restore (SaveFile and LoadFile for a file) carry the sessions
// across a restart of the process.
package memory

import (
	"context"
	"sync"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
)

// Store is an in-memory arbiter.Store. It is safe for concurrent use. Sessions live
// only as long as the process, unless saved with SaveFile (or Snapshot) and restored
// with LoadFile (or Restore) by the next one.
type Store struct {
	// MaxSessions bounds how many sessions the store holds: creating one more is
	// ResourceExhausted. Zero means unlimited. Set it before first use.
	MaxSessions int

	now func() time.Time

	mu       sync.Mutex
	sessions map[arbiter.SessionKey]*record
	watchers map[arbiter.SessionKey]map[chan struct{}]struct{}
	changes  uint64 // successful Saves and Restores; see Changes
	stop     chan struct{}
	stopOnce sync.Once

	fileMu sync.Mutex // serializes SaveFile
}

// record is one stored session. A record is never changed once stored (a Save stores
// a new one), so readers may use it after releasing the lock.
type record struct {
	data    []byte
	version uint64
	expires time.Time // zero: never
}

// sweepEvery is how often the janitor drops every expired session (a sweep walks
// all sessions; loads and saves drop the expired session they touch at once).
const sweepEvery = time.Second

// New returns an empty store. now is the clock used for idle TTLs (nil: time.Now).
// A janitor goroutine drops expired sessions every second even when no request
// comes, so memory falls back once sessions expire; Close stops it.
func New(now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	m := &Store{
		now:      now,
		sessions: map[arbiter.SessionKey]*record{},
		watchers: map[arbiter.SessionKey]map[chan struct{}]struct{}{},
		stop:     make(chan struct{}),
	}
	go m.janitor()
	return m
}

func (m *Store) janitor() {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.mu.Lock()
			m.sweepLocked()
			m.mu.Unlock()
		}
	}
}

// Load implements arbiter.Store.
func (m *Store) Load(_ context.Context, key arbiter.SessionKey) (*arbiter.Session, error) {
	m.mu.Lock()
	r, ok := m.sessions[key]
	if ok && m.expired(r) {
		delete(m.sessions, key)
		ok = false
	}
	m.mu.Unlock()
	if !ok {
		return nil, arbiter.Errorf(arbiter.NotFound, "session_id: session %q not found", key.ID)
	}
	s, err := arbiter.DecodeSession(r.data)
	if err != nil {
		return nil, err
	}
	s.Version = r.version
	return s, nil
}

func (m *Store) expired(r *record) bool {
	return !r.expires.IsZero() && !m.now().Before(r.expires)
}

// Save implements arbiter.Store.
func (m *Store) Save(_ context.Context, s *arbiter.Session, ttl time.Duration) error {
	data, err := arbiter.EncodeSession(s)
	if err != nil {
		return arbiter.Wrap(arbiter.Internal, err, "encode session")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.sessions[s.Key]
	if ok && m.expired(r) {
		delete(m.sessions, s.Key)
		ok = false
	}
	var cur uint64
	if ok {
		cur = r.version
	}
	if cur != s.Version {
		return arbiter.Errorf(arbiter.Conflict, "session %q changed (version %d, expected %d)", s.Key.ID, cur, s.Version)
	}
	if !ok && m.MaxSessions > 0 && len(m.sessions) >= m.MaxSessions {
		m.sweepLocked()
		if len(m.sessions) >= m.MaxSessions {
			return arbiter.Errorf(arbiter.ResourceExhausted, "session_id: the server holds %d sessions, its limit; close sessions or retry later", len(m.sessions))
		}
	}
	nr := &record{data: data, version: cur + 1}
	if ttl > 0 {
		nr.expires = m.now().Add(ttl)
	}
	m.sessions[s.Key] = nr
	m.changes++
	s.Version = nr.version
	for ch := range m.watchers[s.Key] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return nil
}

func (m *Store) sweepLocked() {
	for k, r := range m.sessions {
		if m.expired(r) {
			delete(m.sessions, k)
		}
	}
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

// Ping implements arbiter.Store; the memory store is always reachable.
func (m *Store) Ping(context.Context) error { return nil }

// Close implements arbiter.Store: it stops the janitor. The sessions stay readable.
func (m *Store) Close() error {
	m.stopOnce.Do(func() { close(m.stop) })
	return nil
}
