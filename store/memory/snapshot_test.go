package memory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/memory"
)

// fakeClock is a settable clock for idle TTLs.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func newStore(t *testing.T, c *fakeClock) *memory.Store {
	t.Helper()
	s := memory.New(c.now)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// save stores a new session (or a new version of it) with some state in it.
func save(t *testing.T, s *memory.Store, c *fakeClock, key arbiter.SessionKey, ttl time.Duration, version uint64) *arbiter.Session {
	t.Helper()
	sess := arbiter.NewSession(key, c.now())
	sess.Version = version
	sess.Language = "de"
	sess.Seq = int(version) + 7
	if err := s.Save(context.Background(), sess, ttl); err != nil {
		t.Fatalf("save %v: %v", key, err)
	}
	return sess
}

func load(t *testing.T, s *memory.Store, key arbiter.SessionKey) *arbiter.Session {
	t.Helper()
	sess, err := s.Load(context.Background(), key)
	if err != nil {
		t.Fatalf("load %v: %v", key, err)
	}
	return sess
}

func encoded(t *testing.T, s *arbiter.Session) string {
	t.Helper()
	b, err := arbiter.EncodeSession(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func snapshot(t testing.TB, s *memory.Store) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := s.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var (
	keyA       = arbiter.SessionKey{ID: "a"}
	keyForever = arbiter.SessionKey{ID: "forever"}
	keyAcme    = arbiter.SessionKey{Tenant: "acme", ID: "a"} // same id, another tenant
	keyShort   = arbiter.SessionKey{ID: "short"}
)

// fill stores a (version 3, TTL 1 h), forever (no TTL), acme/a (TTL 10 min) and short
// (TTL 1 s), then lets short expire.
func fill(t *testing.T, s *memory.Store, c *fakeClock) {
	t.Helper()
	for v := uint64(0); v < 3; v++ {
		save(t, s, c, keyA, time.Hour, v)
	}
	save(t, s, c, keyForever, 0, 0)
	save(t, s, c, keyAcme, 10*time.Minute, 0)
	save(t, s, c, keyShort, time.Second, 0)
	c.add(2 * time.Second)
}

// TestSnapshotRestoreRoundTrip: every live session comes back with its version, its
// state byte for byte and its absolute expiry; the expired one is not written.
func TestSnapshotRestoreRoundTrip(t *testing.T) {
	c := newClock()
	src := newStore(t, c)
	fill(t, src, c)
	var buf bytes.Buffer
	n, err := src.Snapshot(&buf)
	if err != nil || n != 3 {
		t.Fatalf("Snapshot wrote %d sessions (%v), want 3", n, err)
	}
	if strings.Contains(buf.String(), `"short"`) {
		t.Fatalf("the expired session is in the snapshot:\n%s", buf.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("the snapshot is not one JSON document: %v\n%s", err, buf.String())
	}

	dst := newStore(t, c)
	n, err = dst.Restore(bytes.NewReader(buf.Bytes()))
	if err != nil || n != 3 {
		t.Fatalf("Restore restored %d sessions (%v), want 3", n, err)
	}
	for _, k := range []arbiter.SessionKey{keyA, keyForever, keyAcme} {
		want, got := load(t, src, k), load(t, dst, k)
		if got.Version != want.Version {
			t.Errorf("%v: version %d after restore, want %d", k, got.Version, want.Version)
		}
		if encoded(t, got) != encoded(t, want) {
			t.Errorf("%v: state differs after restore\n got %s\nwant %s", k, encoded(t, got), encoded(t, want))
		}
	}
	if v := load(t, dst, keyA).Version; v != 3 {
		t.Fatalf("a: version %d, want 3", v)
	}
	if _, err := dst.Load(context.Background(), keyShort); arbiter.KindOf(err) != arbiter.NotFound {
		t.Fatalf("the expired session after restore: %v, want NotFound", err)
	}
	if !bytes.Equal(snapshot(t, dst), buf.Bytes()) { // same clock: the same document
		t.Errorf("a snapshot of the restored store differs from the one it came from")
	}

	// The TTLs run on from where they were: acme/a (10 min) goes first, then a (1 h);
	// forever stays.
	c.add(10 * time.Minute)
	if _, err := dst.Load(context.Background(), keyAcme); arbiter.KindOf(err) != arbiter.NotFound {
		t.Fatalf("acme/a 10 min on: %v, want NotFound", err)
	}
	load(t, dst, keyA)
	c.add(time.Hour)
	if _, err := dst.Load(context.Background(), keyA); arbiter.KindOf(err) != arbiter.NotFound {
		t.Fatalf("a 1 h on: %v, want NotFound", err)
	}
	load(t, dst, keyForever)
}

// TestRestoreSkipsExpired: a session whose expiry passed while the process was down
// is not restored.
func TestRestoreSkipsExpired(t *testing.T) {
	c := newClock()
	src := newStore(t, c)
	fill(t, src, c)
	snap := snapshot(t, src)
	c.add(15 * time.Minute) // acme/a (10 min) expired meanwhile
	dst := newStore(t, c)
	n, err := dst.Restore(bytes.NewReader(snap))
	if err != nil || n != 2 {
		t.Fatalf("Restore restored %d sessions (%v), want 2", n, err)
	}
	if dst.Len() != 2 {
		t.Fatalf("%d sessions stored, want 2", dst.Len())
	}
	if _, err := dst.Load(context.Background(), keyAcme); arbiter.KindOf(err) != arbiter.NotFound {
		t.Fatalf("acme/a: %v, want NotFound", err)
	}
	load(t, dst, keyA)
	load(t, dst, keyForever)
}

// TestCompareAndSetAfterRestore: versions carry over, so of two writers that read the
// same version before the restart exactly one wins after it, and a new session under a
// restored key is a conflict.
func TestCompareAndSetAfterRestore(t *testing.T) {
	c := newClock()
	src := newStore(t, c)
	fill(t, src, c)
	before := load(t, src, keyA) // a writer read version 3 before the restart
	dst := newStore(t, c)
	if _, err := dst.Restore(bytes.NewReader(snapshot(t, src))); err != nil {
		t.Fatal(err)
	}
	stale := load(t, dst, keyA)
	if stale.Version != before.Version {
		t.Fatalf("version %d after restore, want %d", stale.Version, before.Version)
	}
	ctx := context.Background()
	before.Language = "fr"
	if err := dst.Save(ctx, before, time.Hour); err != nil {
		t.Fatalf("save at the version read before the restart: %v", err)
	}
	if before.Version != 4 {
		t.Fatalf("version %d after the save, want 4", before.Version)
	}
	if err := dst.Save(ctx, stale, time.Hour); arbiter.KindOf(err) != arbiter.Conflict {
		t.Fatalf("save at the stale version: %v, want Conflict", err)
	}
	fresh := arbiter.NewSession(keyForever, c.now()) // version 0: "must not exist"
	if err := dst.Save(ctx, fresh, 0); arbiter.KindOf(err) != arbiter.Conflict {
		t.Fatalf("creating a restored session anew: %v, want Conflict", err)
	}
	if got := load(t, dst, keyA); got.Language != "fr" || got.Version != 4 {
		t.Fatalf("a: language %q version %d, want fr 4", got.Language, got.Version)
	}
}

// TestRestoreReplacesAndWakes: Restore replaces a session stored under the same key,
// keeps the others, and wakes the session's watchers.
func TestRestoreReplacesAndWakes(t *testing.T) {
	c := newClock()
	src := newStore(t, c)
	fill(t, src, c)
	snap := snapshot(t, src)
	dst := newStore(t, c)
	save(t, dst, c, keyA, time.Hour, 0)
	save(t, dst, c, arbiter.SessionKey{ID: "other"}, time.Hour, 0)
	ch, stop, err := dst.Watch(context.Background(), keyA)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if _, err := dst.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("the watcher of a restored session was not woken")
	}
	if v := load(t, dst, keyA).Version; v != 3 {
		t.Fatalf("a: version %d, want the restored 3", v)
	}
	load(t, dst, arbiter.SessionKey{ID: "other"})
	if dst.Len() != 4 {
		t.Fatalf("%d sessions, want 4", dst.Len())
	}
}

// TestRestoreRejectsCorrupt: input that is not a whole, consistent snapshot is an
// error saying what is wrong, and changes nothing.
func TestRestoreRejectsCorrupt(t *testing.T) {
	c := newClock()
	src := newStore(t, c)
	fill(t, src, c)
	good := string(snapshot(t, src))
	rec := func(key, session string, version int) string {
		return fmt.Sprintf(`{"format":"arbiter-memory-store/v1","written":"2026-03-01T12:00:00Z","sessions":[{"key":%s,"version":%d,"session":%s}]}`, key, version, session)
	}
	okSession := encoded(t, arbiter.NewSession(keyA, c.now()))
	cases := []struct{ name, in, want string }{
		{"empty", "", "not a session snapshot"},
		{"not JSON", "hello", "not a session snapshot"},
		{"truncated", good[:len(good)/2], "not a session snapshot"},
		{"trailing data", good + "{}", "data after the document"},
		{"other format", `{"format":"something-else/v9","sessions":[]}`, "snapshot format"},
		{"no sessions", `{"format":"arbiter-memory-store/v1"}`, "no sessions list"},
		{"bad session", rec(`{"id":"a"}`, `{"key":{"id":"a"},"calls":5}`, 2), `session "a"`},
		{"no session", rec(`{"id":"a"}`, `null`, 2), `its state is of session`},
		{"key mismatch", rec(`{"id":"b"}`, okSession, 2), `its state is of session "a"`},
		{"version 0", rec(`{"id":"a"}`, okSession, 0), "version 0"},
		{"no id", rec(`{"tenant":"x"}`, okSession, 1), "no key id"},
		// Issue 12: a state file that decodes but does not hold together (a call that
		// names no job made a later Complete dereference nil) is refused at load,
		// naming the session and the fault.
		{"call names no job", rec(`{"id":"a"}`, `{"key":{"id":"a"},"calls":[{"id":"c1","tool":"t","job_id":"job-9","registered_at":"2026-03-01T12:00:00Z"}],"created_at":"2026-03-01T12:00:00Z"}`, 2), `session "a": call "c1" names job "job-9", which does not exist`},
		{"log gap", rec(`{"id":"a"}`, `{"key":{"id":"a"},"log_seq":3,"log":[{"seq":1,"note":{"job_id":"","text":"x"}},{"seq":3,"note":{"job_id":"","text":"y"}}]}`, 2), `session "a": log entry 3 follows 1`},
		{"twice", strings.Replace(rec(`{"id":"a"}`, okSession, 1), "}]}", "},"+
			fmt.Sprintf(`{"key":{"id":"a"},"version":2,"session":%s}]}`, okSession), 1), "twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst := newStore(t, c)
			save(t, dst, c, keyA, time.Hour, 0)
			n, err := dst.Restore(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Restore: %d, %v; want an error mentioning %q", n, err, tc.want)
			}
			if dst.Len() != 1 || load(t, dst, keyA).Version != 1 {
				t.Fatalf("a failed Restore changed the store")
			}
		})
	}
}

// TestSnapshotConcurrent: Snapshot runs alongside Saves and other Snapshots (run
// with -race); each one is a whole document, and the last holds every session.
func TestSnapshotConcurrent(t *testing.T) {
	s := memory.New(nil)
	defer s.Close()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				sess := arbiter.NewSession(arbiter.SessionKey{ID: fmt.Sprintf("w%d-%d", w, i)}, time.Now())
				if err := s.Save(context.Background(), sess, time.Hour); err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					var buf bytes.Buffer
					if _, err := s.Snapshot(&buf); err != nil {
						t.Error(err)
						return
					}
					if _, err := memory.ReadSnapshot(&buf); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	dst := memory.New(nil)
	defer dst.Close()
	if n, err := dst.Restore(bytes.NewReader(snapshot(t, s))); err != nil || n != 200 {
		t.Fatalf("Restore: %d, %v; want 200", n, err)
	}
}

// TestRestoreRefusedOnDisk: a store on a disk does not restore into memory what the
// disk would not have.
func TestRestoreRefusedOnDisk(t *testing.T) {
	c := newClock()
	src := newStore(t, c)
	fill(t, src, c)
	dst := openStore(t, newMapDisk(), c.now)
	if n, err := dst.Restore(bytes.NewReader(snapshot(t, src))); err == nil || !strings.Contains(err.Error(), "disk") || n != 0 || dst.Len() != 0 {
		t.Fatalf("Restore on a disk: %d, %v, %d sessions; want an error and nothing restored", n, err, dst.Len())
	}
}

// benchStore returns a store of 1000 sessions, each with 20 calls' worth of state.
func benchStore(b *testing.B) *memory.Store {
	s := memory.New(nil)
	b.Cleanup(func() { _ = s.Close() })
	for i := 0; i < 1000; i++ {
		sess := arbiter.NewSession(arbiter.SessionKey{ID: fmt.Sprintf("s%04d", i)}, time.Now())
		for j := 0; j < 20; j++ {
			sess.Calls = append(sess.Calls, &arbiter.Call{ID: fmt.Sprintf("call_%d", j), Tool: "book_slot", RegisteredAt: sess.CreatedAt})
		}
		if err := s.Save(context.Background(), sess, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkSnapshot measures writing the snapshot of benchStore (what the import of
// an old state file reads).
func BenchmarkSnapshot(b *testing.B) {
	s := benchStore(b)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if _, err := s.Snapshot(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "snapshot-bytes")
}

// BenchmarkReadSnapshot measures reading and checking the snapshot of benchStore.
func BenchmarkReadSnapshot(b *testing.B) {
	snap := snapshot(b, benchStore(b))
	for b.Loop() {
		if recs, err := memory.ReadSnapshot(bytes.NewReader(snap)); err != nil || len(recs) != 1000 {
			b.Fatalf("ReadSnapshot: %d, %v", len(recs), err)
		}
	}
}
