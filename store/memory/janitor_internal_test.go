package memory

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
)

// BenchmarkJanitorIdle is one janitor tick over 100,000 idle sessions (each with an
// hour to live, none due): the work the janitor does every second while nothing
// expires, under the store's lock.
func BenchmarkJanitorIdle(b *testing.B) {
	m := newStore(nil)
	fillIdle(b, m, 100_000)
	b.ResetTimer()
	for b.Loop() {
		m.janitorTick()
	}
}

func fillIdle(b *testing.B, m *Store, n int) []arbiter.SessionKey {
	b.Helper()
	keys := make([]arbiter.SessionKey, n)
	for i := range keys {
		keys[i] = arbiter.SessionKey{ID: fmt.Sprintf("idle-%06d", i)}
		if err := m.Save(context.Background(), arbiter.NewSession(keys[i], time.Now()), time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	return keys
}

// TestJanitorLooksOnlyAtExpired: a janitor round drops exactly the sessions whose
// idle TTL ran out, earliest first, and examines no other: not the 1,000 that have
// an hour left, not those without a TTL, not those saved again with a longer one (a
// round used to walk every session under the store's lock).
func TestJanitorLooksOnlyAtExpired(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	m := newStore(clock)
	ctx := context.Background()
	save := func(id string, ttl time.Duration) *arbiter.Session {
		t.Helper()
		s := arbiter.NewSession(arbiter.SessionKey{ID: id}, clock())
		if err := m.Save(ctx, s, ttl); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for i := range 1000 {
		save(fmt.Sprintf("idle-%d", i), time.Hour)
	}
	for i := range 5 {
		save(fmt.Sprintf("forever-%d", i), 0)
	}
	var short []*arbiter.Session
	for i := range 10 {
		short = append(short, save(fmt.Sprintf("short-%d", i), time.Minute+time.Duration(i)*time.Second))
	}
	for _, s := range short[:3] { // a new lifetime of their TTL
		if err := m.Save(ctx, s, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 { // the call index's entries expire by the same rule
		ttl := time.Hour
		if i < 2 {
			ttl = time.Minute
		}
		if err := m.IndexCall(ctx, "", fmt.Sprintf("call-%d", i), "idle-1", ttl); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	m.janitorTick()
	if m.swept != 7+2 {
		t.Errorf("the janitor examined %d sessions and call-index entries, want the 7 + 2 expired ones", m.swept)
	}
	if _, err := m.LookupCall(ctx, "", "call-1"); arbiter.KindOf(err) != arbiter.NotFound {
		t.Errorf("an expired call-index entry: %v", err)
	}
	if id, err := m.LookupCall(ctx, "", "call-2"); err != nil || id != "idle-1" {
		t.Errorf("a live call-index entry: %q %v", id, err)
	}
	if n := m.Len(); n != 1000+5+3 {
		t.Errorf("%d sessions left, want 1008", n)
	}
	for i, s := range short {
		_, err := m.Load(ctx, s.Key)
		if gone := arbiter.KindOf(err) == arbiter.NotFound; gone != (i >= 3) {
			t.Errorf("%s: Load %v", s.Key.ID, err)
		}
	}
	mu.Lock()
	now = now.Add(3 * time.Hour)
	mu.Unlock()
	m.janitorTick()
	if n, x := m.Len(), m.expiries.len()+m.callExpiries.len(); n != 5 || x != 0 || len(m.calls) != 0 {
		t.Errorf("after every TTL ran out: %d sessions, %d in the time index; want the 5 without a TTL, none indexed", n, x)
	}
}
