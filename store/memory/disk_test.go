package memory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/memory"
	"github.com/voicearbiter/arbiter/store/sessioncodec"
	"github.com/voicearbiter/arbiter/store/storetest"
)

// mapDisk is a memory.Disk in a map, whose writes the test can fail or hold.
type mapDisk struct {
	mu      sync.Mutex
	recs    map[arbiter.SessionKey]memory.Record
	fail    error         // Put and DeleteExpired fail with it (writing nothing)
	gate    chan struct{} // when set, Put waits until it is closed
	entered chan struct{} // when set, Put sends on it before it waits at gate
	writing map[arbiter.SessionKey]int
	overlap bool // two Puts of one key at once
	deletes int  // DeleteExpired calls
	closed  bool
}

func newMapDisk() *mapDisk {
	return &mapDisk{recs: map[arbiter.SessionKey]memory.Record{}, writing: map[arbiter.SessionKey]int{}}
}

func (d *mapDisk) Put(r memory.Record) error {
	d.mu.Lock()
	gate, entered := d.gate, d.entered
	d.writing[r.Key]++
	d.overlap = d.overlap || d.writing[r.Key] > 1
	d.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if gate != nil {
		<-gate
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writing[r.Key]--
	if d.closed {
		return errors.New("closed")
	}
	if d.fail != nil {
		return d.fail
	}
	r.Session = append([]byte(nil), r.Session...)
	d.recs[r.Key] = r
	return nil
}

func (d *mapDisk) DeleteExpired(keys []arbiter.SessionKey, now time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return d.fail
	}
	d.deletes++
	for _, k := range keys {
		if r, ok := d.recs[k]; ok && !r.Expires.IsZero() && !now.Before(r.Expires) {
			delete(d.recs, k)
		}
	}
	return nil
}

func (d *mapDisk) Records(fn func(memory.Record) error) error {
	d.mu.Lock()
	recs := make([]memory.Record, 0, len(d.recs))
	for _, r := range d.recs {
		recs = append(recs, r)
	}
	d.mu.Unlock()
	for _, r := range recs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (d *mapDisk) Ping(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fail
}

func (d *mapDisk) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return nil
}

func (d *mapDisk) set(f func(d *mapDisk)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(d)
}

func (d *mapDisk) get(key arbiter.SessionKey) (memory.Record, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.recs[key]
	return r, ok
}

func (d *mapDisk) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.recs)
}

// openStore opens a store on disk, closed when the test ends.
func openStore(t testing.TB, disk memory.Disk, now func() time.Time) *memory.Store {
	t.Helper()
	s, err := memory.Open(disk, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestConformanceOnDisk runs the conformance suite on a store on a disk: every Save
// goes through the disk before memory.
func TestConformanceOnDisk(t *testing.T) {
	storetest.Run(t, "../..", func(t *testing.T, now func() time.Time) arbiter.Store {
		return openStore(t, newMapDisk(), now)
	})
}

// TestDiskHasWhatSaveReturned: when Save returns, the disk holds the record (version,
// expiry, state), and a store opened on the disk again has every session as it was.
func TestDiskHasWhatSaveReturned(t *testing.T) {
	c := newClock()
	disk := newMapDisk()
	s := openStore(t, disk, c.now)
	for v := uint64(0); v < 3; v++ {
		sess := save(t, s, c, keyA, time.Hour, v)
		sent := *sess
		sent.Version = v // as it was encoded
		r, ok := disk.get(keyA)
		if !ok || r.Version != v+1 || string(r.Session) != record(t, &sent) || !r.Expires.Equal(c.now().Add(time.Hour)) {
			t.Fatalf("after save %d the disk has %+v (%v)", v+1, r, ok)
		}
	}
	save(t, s, c, keyForever, 0, 0)
	if r, _ := disk.get(keyForever); !r.Expires.IsZero() {
		t.Fatalf("a session without TTL has expiry %v on disk", r.Expires)
	}
	again := openStore(t, disk, c.now)
	for _, k := range []arbiter.SessionKey{keyA, keyForever} {
		if got, want := load(t, again, k), load(t, s, k); got.Version != want.Version || encoded(t, got) != encoded(t, want) {
			t.Errorf("%v reopened: version %d %s, want %d %s", k, got.Version, encoded(t, got), want.Version, encoded(t, want))
		}
	}
}

// TestDiskWriteFailsClosed: a Save whose disk write fails is Unavailable, and memory
// keeps the previous version (no Load, Watch or later Save sees the change); once the
// disk writes again, a Save at the previous version goes through.
func TestDiskWriteFailsClosed(t *testing.T) {
	c := newClock()
	disk := newMapDisk()
	s := openStore(t, disk, c.now)
	ctx := context.Background()
	save(t, s, c, keyA, time.Hour, 0)
	ch, stop, _ := s.Watch(ctx, keyA)
	defer stop()
	disk.set(func(d *mapDisk) { d.fail = errors.New("no space left on device") })
	sess := load(t, s, keyA)
	sess.Language = "fr"
	if err := s.Save(ctx, sess, time.Hour); arbiter.KindOf(err) != arbiter.Unavailable {
		t.Fatalf("Save with the disk failing: %v, want Unavailable", err)
	}
	if sess.Version != 1 {
		t.Fatalf("a failed Save set the version to %d", sess.Version)
	}
	if got := load(t, s, keyA); got.Version != 1 || got.Language != "de" {
		t.Fatalf("after a failed Save memory has version %d language %q, want 1 de", got.Version, got.Language)
	}
	select {
	case <-ch:
		t.Fatal("a failed Save woke the watcher")
	default:
	}
	if err := s.Save(ctx, arbiter.NewSession(keyForever, c.now()), 0); arbiter.KindOf(err) != arbiter.Unavailable || s.Len() != 1 {
		t.Fatalf("creating a session with the disk failing: %v, %d sessions; want Unavailable and 1", err, s.Len())
	}
	if err := s.Ping(ctx); arbiter.KindOf(err) != arbiter.Unavailable || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("Ping with the disk failing: %v, want Unavailable with the cause", err)
	}
	disk.set(func(d *mapDisk) { d.fail = nil })
	if err := s.Save(ctx, sess, time.Hour); err != nil || sess.Version != 2 {
		t.Fatalf("Save at version 1 once the disk writes: %v, version %d", err, sess.Version)
	}
	if r, _ := disk.get(keyA); r.Version != 2 {
		t.Fatalf("disk version %d, want 2", r.Version)
	}
	<-ch
}

// TestDiskSaveInFlight: while a Save's write is on its way to disk, Load returns the
// previous version, another Save of the session waits for it and then conflicts (the
// disk never gets two writes of one key at once), and a session being created counts
// against MaxSessions.
func TestDiskSaveInFlight(t *testing.T) {
	c := newClock()
	disk := newMapDisk()
	s := openStore(t, disk, c.now)
	s.MaxSessions = 2
	ctx := context.Background()
	save(t, s, c, keyA, time.Hour, 0)
	gate, entered := make(chan struct{}), make(chan struct{}, 4)
	disk.set(func(d *mapDisk) { d.gate, d.entered = gate, entered })

	first, second := load(t, s, keyA), load(t, s, keyA)
	first.Language, second.Language = "fr", "it"
	results := make(chan error, 2)
	go func() { results <- s.Save(ctx, first, time.Hour) }()
	<-entered // first is being written
	if got := load(t, s, keyA); got.Version != 1 || got.Language != "de" {
		t.Fatalf("Load during the write: version %d language %q, want the previous 1 de", got.Version, got.Language)
	}
	go func() { results <- s.Save(ctx, second, time.Hour) }()
	go func() { results <- s.Save(ctx, arbiter.NewSession(keyForever, c.now()), 0) }()
	<-entered // the new session is being written
	if err := s.Save(ctx, arbiter.NewSession(keyAcme, c.now()), 0); arbiter.KindOf(err) != arbiter.ResourceExhausted {
		t.Fatalf("a third session while the second is being created, MaxSessions 2: %v, want ResourceExhausted", err)
	}
	disk.set(func(d *mapDisk) { d.entered = nil })
	close(gate)
	var conflicts, ok int
	for range 3 {
		switch err := <-results; arbiter.KindOf(err) {
		case arbiter.Conflict:
			conflicts++
		default:
			if err != nil {
				t.Fatal(err)
			}
			ok++
		}
	}
	if conflicts != 1 || ok != 2 {
		t.Fatalf("%d conflicts, %d stored; want the second writer of a to conflict", conflicts, ok)
	}
	if got := load(t, s, keyA); got.Version != 2 || got.Language != "fr" {
		t.Fatalf("after the writes: version %d language %q, want 2 fr", got.Version, got.Language)
	}
	if disk.overlap {
		t.Fatal("the disk got two writes of one session at once")
	}
}

// TestDiskSaveWaitEnds: a Save waiting for another write of its session gives up
// with Unavailable when its context ends, having written nothing; the write it
// waited for is stored.
func TestDiskSaveWaitEnds(t *testing.T) {
	c := newClock()
	disk := newMapDisk()
	s := openStore(t, disk, c.now)
	save(t, s, c, keyA, time.Hour, 0)
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	disk.set(func(d *mapDisk) { d.gate, d.entered = gate, entered })
	first, second := load(t, s, keyA), load(t, s, keyA)
	first.Language, second.Language = "fr", "it"
	res := make(chan error, 1)
	go func() { res <- s.Save(context.Background(), first, time.Hour) }()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Save(ctx, second, time.Hour); arbiter.KindOf(err) != arbiter.Unavailable {
		t.Fatalf("Save waiting behind a write, its context ended: %v, want Unavailable", err)
	}
	close(gate)
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if got := load(t, s, keyA); got.Version != 2 || got.Language != "fr" {
		t.Fatalf("version %d language %q, want the first writer's 2 fr", got.Version, got.Language)
	}
	if r, _ := disk.get(keyA); r.Version != 2 {
		t.Fatalf("disk version %d, want 2", r.Version)
	}
}

// TestOpenSkipsExpiredAndRefusesCorrupt: Open leaves out (and deletes from disk) the
// sessions that expired while no process had them, and refuses a disk holding a
// session that does not hold together, naming it and the fault, deleting nothing.
func TestOpenSkipsExpiredAndRefusesCorrupt(t *testing.T) {
	c := newClock()
	disk := newMapDisk()
	s := openStore(t, disk, c.now)
	fill(t, s, c) // a (1 h), forever, acme/a (10 min), short (expired)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	disk.set(func(d *mapDisk) { d.closed = false })
	c.add(20 * time.Minute)
	again := openStore(t, disk, c.now)
	if again.Len() != 2 || disk.len() != 2 {
		t.Fatalf("reopened 20 min on: %d sessions in memory, %d on disk; want a and forever", again.Len(), disk.len())
	}
	load(t, again, keyA)
	load(t, again, keyForever)

	bad := memory.Record{Key: arbiter.SessionKey{ID: "bad"}, Version: 2, Session: []byte(`{"key":{"id":"bad"},"calls":[{"id":"c1","tool":"t","job_id":"job-9","registered_at":"2026-03-01T12:00:00Z"}],"created_at":"2026-03-01T12:00:00Z"}`)}
	expired := memory.Record{Key: arbiter.SessionKey{ID: "old"}, Version: 1, Expires: c.now().Add(-time.Second), Session: []byte(`{}`)}
	for _, r := range []memory.Record{bad, expired} {
		if err := disk.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	_, err := memory.Open(disk, c.now)
	if want := `session "bad": call "c1" names job "job-9", which does not exist`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open of a disk with a broken session: %v, want an error mentioning %s", err, want)
	}
	if disk.len() != 4 {
		t.Fatalf("a refused Open changed the disk: %d records, want 4", disk.len())
	}
	for name, r := range map[string]memory.Record{
		"version 0":    {Key: arbiter.SessionKey{ID: "bad"}, Session: []byte(`{"key":{"id":"bad"}}`)},
		"key mismatch": {Key: arbiter.SessionKey{ID: "bad"}, Version: 1, Session: []byte(`{"key":{"id":"other"}}`)},
		"no JSON":      {Key: arbiter.SessionKey{ID: "bad"}, Version: 1, Session: []byte(`{"key":`)},
	} {
		if err := disk.Put(r); err != nil {
			t.Fatal(err)
		}
		if _, err := memory.Open(disk, c.now); err == nil || !strings.Contains(err.Error(), `session "bad"`) {
			t.Errorf("%s: Open: %v, want an error naming session bad", name, err)
		}
	}
}

// TestOpenFailsWhenDiskCannotBeWritten: Open writes once, so a disk that cannot be
// written fails the start.
func TestOpenFailsWhenDiskCannotBeWritten(t *testing.T) {
	disk := newMapDisk()
	disk.fail = errors.New("read-only file system")
	if _, err := memory.Open(disk, nil); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("Open on a disk that cannot be written: %v", err)
	}
}

// TestJanitorDeletesFromDisk: an expired session leaves the disk too, and a new
// lifetime of the same id saved after it expired stays there.
func TestJanitorDeletesFromDisk(t *testing.T) {
	c := newClock()
	disk := newMapDisk()
	s := openStore(t, disk, c.now)
	for i := range 10 {
		save(t, s, c, arbiter.SessionKey{ID: fmt.Sprintf("s%d", i)}, time.Minute, 0)
	}
	c.add(2 * time.Minute)
	save(t, s, c, arbiter.SessionKey{ID: "s0"}, time.Minute, 0) // s0 again, version 1
	deadline := time.Now().Add(5 * time.Second)
	for disk.len() > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d records on disk 5 s after 9 sessions expired, want 1", disk.len())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r, ok := disk.get(arbiter.SessionKey{ID: "s0"}); !ok || r.Version != 1 {
		t.Fatalf("the new lifetime of s0 on disk: %+v %v", r, ok)
	}
}

// TestCloseClosesDisk: Close closes the disk; a later Save is Unavailable, Loads
// still answer.
func TestCloseClosesDisk(t *testing.T) {
	c := newClock()
	disk := newMapDisk()
	s, err := memory.Open(disk, c.now)
	if err != nil {
		t.Fatal(err)
	}
	save(t, s, c, keyA, time.Hour, 0)
	if err := s.Close(); err != nil || !disk.closed {
		t.Fatalf("Close: %v, disk closed %v", err, disk.closed)
	}
	if err := s.Save(context.Background(), load(t, s, keyA), time.Hour); arbiter.KindOf(err) != arbiter.Unavailable {
		t.Fatalf("Save after Close: %v, want Unavailable", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// record is s as a store keeps it (sessioncodec.Encode).
func record(t *testing.T, s *arbiter.Session) string {
	t.Helper()
	b, err := sessioncodec.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
