package boltdisk_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/memory"
	"github.com/voicearbiter/arbiter/store/memory/boltdisk"
	"github.com/voicearbiter/arbiter/store/storetest"
)

// clock is a settable clock for idle TTLs.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

func quiet() boltdisk.Options { return boltdisk.Options{Log: slog.New(slog.DiscardHandler)} }

// open opens the database at path and a store on it; the store (and the file) is
// closed when the test ends unless the test closed it.
func open(t testing.TB, path string, now func() time.Time) (*memory.Store, *boltdisk.Disk) {
	t.Helper()
	d, err := boltdisk.Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	s, err := memory.Open(d, now)
	if err != nil {
		_ = d.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, d
}

// TestConformance runs the conformance suite on the embedded store on a bbolt file.
func TestConformance(t *testing.T) {
	storetest.Run(t, "../../..", func(t *testing.T, now func() time.Time) arbiter.Store {
		s, _ := open(t, filepath.Join(t.TempDir(), "state.db"), now)
		return s
	})
}

func encoded(t testing.TB, s *arbiter.Session) string {
	t.Helper()
	b, err := arbiter.EncodeSession(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func load(t testing.TB, s arbiter.Store, key arbiter.SessionKey) *arbiter.Session {
	t.Helper()
	sess, err := s.Load(context.Background(), key)
	if err != nil {
		t.Fatalf("load %v: %v", key, err)
	}
	return sess
}

// fill saves 40 sessions from 8 writers at once (tenants t0..t3, each saved three
// times, TTL 1 h; every tenth with no TTL) and returns their keys.
func fill(t *testing.T, s *memory.Store, c *clock) []arbiter.SessionKey {
	t.Helper()
	var keys []arbiter.SessionKey
	for i := range 40 {
		keys = append(keys, arbiter.SessionKey{Tenant: fmt.Sprintf("t%d", i%4), ID: fmt.Sprintf("s%02d", i)})
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(keys); i += 8 {
				sess := arbiter.NewSession(keys[i], c.now())
				ttl := time.Hour
				if i%10 == 0 {
					ttl = 0
				}
				for v := range 3 {
					sess.Seq = v + i
					if err := s.Save(context.Background(), sess, ttl); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	return keys
}

// TestReopenHasEverySession: a store opened again on the file has every session with
// its version and state byte for byte, and the TTLs run on from where they were.
func TestReopenHasEverySession(t *testing.T) {
	c := newClock()
	path := filepath.Join(t.TempDir(), "state.db")
	s, d := open(t, path, c.now)
	keys := fill(t, s, c)
	want := map[arbiter.SessionKey]string{}
	for _, k := range keys {
		sess := load(t, s, k)
		if sess.Version != 3 {
			t.Fatalf("%v: version %d, want 3", k, sess.Version)
		}
		want[k] = encoded(t, sess)
	}
	if st := d.Stats(); st.Puts != 120 {
		t.Fatalf("stats %+v: want 120 puts", st)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c.add(30 * time.Minute)
	again, _ := open(t, path, c.now)
	if again.Len() != len(keys) {
		t.Fatalf("%d sessions reopened, want %d", again.Len(), len(keys))
	}
	for _, k := range keys {
		if got := encoded(t, load(t, again, k)); got != want[k] {
			t.Errorf("%v reopened:\n%s\nwant\n%s", k, got, want[k])
		}
	}
	// Compare-and-set goes on from version 3.
	sess := load(t, again, keys[1])
	stale := *sess
	if err := again.Save(context.Background(), sess, time.Hour); err != nil || sess.Version != 4 {
		t.Fatalf("save after reopen: %v, version %d", err, sess.Version)
	}
	if err := again.Save(context.Background(), &stale, time.Hour); arbiter.KindOf(err) != arbiter.Conflict {
		t.Fatalf("stale save after reopen: %v, want Conflict", err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	c.add(31 * time.Minute) // every session with a TTL expired but keys[1], saved again 31 min ago
	third, _ := open(t, path, c.now)
	if third.Len() != 5 {
		t.Fatalf("%d sessions 61 min on, want the 4 without TTL and the one saved again", third.Len())
	}
	if v := load(t, third, keys[1]).Version; v != 4 {
		t.Fatalf("version %d, want 4", v)
	}
}

// TestWriteFailsClosed: once the file is closed under the store, a Save is
// Unavailable and memory keeps the previous version; Ping says the disk cannot be
// written.
func TestWriteFailsClosed(t *testing.T) {
	c := newClock()
	s, d := open(t, filepath.Join(t.TempDir(), "state.db"), c.now)
	key := arbiter.SessionKey{ID: "a"}
	sess := arbiter.NewSession(key, c.now())
	ctx := context.Background()
	if err := s.Save(ctx, sess, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	sess.Seq = 9
	if err := s.Save(ctx, sess, time.Hour); arbiter.KindOf(err) != arbiter.Unavailable {
		t.Fatalf("Save on a closed file: %v, want Unavailable", err)
	}
	if got := load(t, s, key); got.Version != 1 || got.Seq != 0 {
		t.Fatalf("memory after a failed write: version %d seq %d, want 1 0", got.Version, got.Seq)
	}
	if err := s.Ping(ctx); arbiter.KindOf(err) != arbiter.Unavailable {
		t.Fatalf("Ping on a closed file: %v, want Unavailable", err)
	}
}

// TestDeleteExpiredKeepsNewLifetime: DeleteExpired removes a record only if it
// expired by the time given, so a session saved again meanwhile stays.
func TestDeleteExpiredKeepsNewLifetime(t *testing.T) {
	d, err := boltdisk.Open(filepath.Join(t.TempDir(), "state.db"), quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	put := func(id string, expires time.Time) {
		t.Helper()
		if err := d.Put(memory.Record{Key: arbiter.SessionKey{ID: id}, Version: 1, Expires: expires, Session: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	put("old", t0)
	put("renewed", t0.Add(time.Hour))
	put("forever", time.Time{})
	keys := []arbiter.SessionKey{{ID: "old"}, {ID: "renewed"}, {ID: "forever"}, {ID: "missing"}}
	if err := d.DeleteExpired(keys, t0); err != nil {
		t.Fatal(err)
	}
	var left []string
	if err := d.Records(func(r memory.Record) error { left = append(left, r.Key.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(left, ",") != "forever,renewed" {
		t.Fatalf("left %v, want forever and renewed", left)
	}
}

// writeSnapshot writes a JSON snapshot of three sessions (one expired by the time
// the test reads it) to path and returns the store it came from.
func writeSnapshot(t *testing.T, path string, c *clock) *memory.Store {
	t.Helper()
	src := memory.New(c.now)
	t.Cleanup(func() { _ = src.Close() })
	for i, ttl := range []time.Duration{time.Hour, 0, time.Minute} {
		sess := arbiter.NewSession(arbiter.SessionKey{Tenant: "acme", ID: fmt.Sprintf("s%d", i)}, c.now())
		for range 2 {
			if err := src.Save(context.Background(), sess, ttl); err != nil {
				t.Fatal(err)
			}
		}
	}
	var buf bytes.Buffer
	if _, err := src.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestOpenConvertsSnapshot: a JSON snapshot at the path (the old --state-file) is
// converted once into a database holding its sessions, the snapshot kept as .bak;
// the next Open finds a database and converts nothing.
func TestOpenConvertsSnapshot(t *testing.T) {
	c := newClock()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	src := writeSnapshot(t, path, c)
	snap, _ := os.ReadFile(path)
	c.add(2 * time.Minute) // s2 (TTL 1 min) expired meanwhile
	var logs bytes.Buffer
	d, err := boltdisk.Open(path, boltdisk.Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`msg="state file converted from a JSON snapshot to a database"`, "state_file=" + path, "sessions=3", "snapshot_kept_as=" + path + ".bak"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	if bak, _ := os.ReadFile(path + ".bak"); !bytes.Equal(bak, snap) {
		t.Errorf("the .bak differs from the snapshot")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("files after the conversion: %v, want state.json and state.json.bak", entries)
	}
	s, err := memory.Open(d, c.now)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		k := arbiter.SessionKey{Tenant: "acme", ID: fmt.Sprintf("s%d", i)}
		if got, want := load(t, s, k), load(t, src, k); got.Version != 2 || encoded(t, got) != encoded(t, want) {
			t.Errorf("%v after the conversion: version %d %s, want 2 %s", k, got.Version, encoded(t, got), encoded(t, want))
		}
	}
	if s.Len() != 2 {
		t.Fatalf("%d sessions, want 2 (s2 expired)", s.Len())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	again, err := boltdisk.Open(path, boltdisk.Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if logs.Len() != 0 {
		t.Errorf("the second Open logged:\n%s", logs.String())
	}
}

// TestOpenErrors: a snapshot that does not hold together, a file that is neither a
// database nor a snapshot, a bbolt file of something else and a file another Open
// holds each fail Open with an error naming the file and the fault, changing nothing.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	const body = `{"format":"arbiter-memory-store/v1","sessions":[{"key":{"id":"x"},`
	os.WriteFile(corrupt, []byte(body), 0o600)
	broken := filepath.Join(dir, "broken.json")
	os.WriteFile(broken, []byte(`{"format":"arbiter-memory-store/v1","sessions":[{"key":{"id":"a"},"version":1,"session":{"key":{"id":"a"},"calls":[{"id":"c1","tool":"t","job_id":"job-9","registered_at":"2026-03-01T12:00:00Z"}],"created_at":"2026-03-01T12:00:00Z"}}]}`), 0o600)
	garbage := filepath.Join(dir, "garbage")
	os.WriteFile(garbage, bytes.Repeat([]byte("garbage!"), 1024), 0o600)
	other := filepath.Join(dir, "other.db")
	db, err := bolt.Open(other, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("kv")); return err })
	db.Close()
	held := filepath.Join(dir, "held.db")
	h, err := boltdisk.Open(held, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	cases := []struct {
		path string
		want string
	}{
		{corrupt, "not a session snapshot"},
		{broken, `session "a": call "c1" names job "job-9", which does not exist`},
		{garbage, "neither a session database nor a JSON session snapshot"},
		{other, "something else"},
		{held, "another process has it open"},
	}
	for _, tc := range cases {
		before, _ := os.ReadFile(tc.path)
		opts := quiet()
		opts.LockTimeout = 100 * time.Millisecond
		d, err := boltdisk.Open(tc.path, opts)
		if err == nil {
			d.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%s): %v, want an error naming it and %q", filepath.Base(tc.path), err, tc.want)
		}
		if after, _ := os.ReadFile(tc.path); !bytes.Equal(before, after) {
			t.Errorf("Open(%s) changed the file", filepath.Base(tc.path))
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 5 {
		t.Errorf("files left: %v, want only the five of the test", entries)
	}
}

// TestOpenRefusesBrokenRecord: a record in the database whose session does not hold
// together refuses the store at start, naming the session and the fault.
func TestOpenRefusesBrokenRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	d, err := boltdisk.Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	bad := memory.Record{Key: arbiter.SessionKey{Tenant: "acme", ID: "bad"}, Version: 3,
		Session: []byte(`{"key":{"tenant":"acme","id":"bad"},"calls":[{"id":"c1","tool":"t","job_id":"job-9","registered_at":"2026-03-01T12:00:00Z"}],"created_at":"2026-03-01T12:00:00Z"}`)}
	if err := d.Put(bad); err != nil {
		t.Fatal(err)
	}
	_, err = memory.Open(d, nil)
	if want := `session "acme/bad": call "c1" names job "job-9", which does not exist`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open: %v, want an error mentioning %s", err, want)
	}
	d.Close()
}

// TestOpenRefusesDamagedFile: a state file that lost its contents (empty), lost its
// end (truncated) or has a page overwritten is refused at Open with an error naming
// the file and the fault, leaving the file as it was: never a Go panic or a fault
// inside bbolt, never an empty store started in its place. A page overwritten with
// zeros or garbage is either refused or (a page the database no longer uses) opens
// with every session as it was.
func TestOpenRefusesDamagedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	c := newClock()
	s, _ := open(t, path, c.now)
	keys := fill(t, s, c)
	for i := range 200 { // enough sessions for a few levels of pages
		sess := arbiter.NewSession(arbiter.SessionKey{ID: fmt.Sprintf("big%03d", i)}, c.now())
		sess.Language = strings.Repeat("x", 300)
		if err := s.Save(t.Context(), sess, time.Hour); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, sess.Key)
	}
	want := map[arbiter.SessionKey]string{}
	for _, k := range keys {
		want[k] = encoded(t, load(t, s, k))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	pages := len(orig) / page

	// try writes b as a file, opens it, and returns Open's error, or nil when the
	// store opened with every session as it was.
	try := func(name string, b []byte) error {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
		d, err := boltdisk.Open(p, quiet())
		if err == nil {
			var st *memory.Store
			if st, err = memory.Open(d, c.now); err != nil {
				d.Close()
			} else {
				for k, w := range want {
					if got, lerr := st.Load(t.Context(), k); lerr != nil || encoded(t, got) != w {
						t.Errorf("%s: opened, but session %v is %v (lost or changed)", name, k, lerr)
					}
				}
				st.Close()
			}
		}
		if err != nil && !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
		if after, _ := os.ReadFile(p); err != nil && !bytes.Equal(after, b) {
			t.Errorf("%s: a refused Open changed the file", name)
		}
		return err
	}

	if err := try("empty", nil); err == nil || !strings.Contains(err.Error(), "the file is empty") {
		t.Errorf("empty file: %v, want a refusal saying it is empty", err)
	}
	// Cut anywhere: refused as truncated, or (only the unused space bbolt grows the
	// file by is gone) every session is there.
	truncated := 0
	for n := 100; n < len(orig); n += page {
		if err := try(fmt.Sprintf("truncated-%d", n), orig[:n]); err != nil {
			truncated++
			if !strings.Contains(err.Error(), "truncated") {
				t.Errorf("file truncated to %d bytes: %v, want a refusal saying it is truncated", n, err)
			}
		}
	}
	if truncated < 3 {
		t.Errorf("only %d truncations refused", truncated)
	}
	// One meta page overwritten (a commit's meta write torn by a crash looks the same):
	// bbolt opens at the other (the commit before, when the overwritten one was the
	// newest: its sessions' last change is gone), and Open says so in a warning.
	for meta := 0; meta < 2; meta++ {
		b := bytes.Clone(orig)
		copy(b[meta*page+16:], "garbage!garbage!") // the page header is 16 bytes: the meta's magic and version
		p := filepath.Join(dir, fmt.Sprintf("meta-%d", meta))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var logged bytes.Buffer
		d, err := boltdisk.Open(p, boltdisk.Options{Log: slog.New(slog.NewTextHandler(&logged, nil))})
		if err != nil {
			t.Errorf("meta page %d overwritten: %v, want it opened at the other", meta, err)
			continue
		}
		d.Close()
		if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "meta pages is invalid") {
			t.Errorf("meta page %d overwritten: no warning logged:\n%s", meta, logged.String())
		}
	}
	refused := 0
	for pg := 2; pg < pages; pg++ { // pages 0 and 1 are bbolt's two meta pages: either one may be torn
		for _, fill := range []byte{0x00, 0xA5} {
			b := bytes.Clone(orig)
			for i := pg * page; i < (pg+1)*page; i++ {
				b[i] ^= fill
				if fill == 0 {
					b[i] = 0
				}
			}
			if err := try(fmt.Sprintf("page-%d-%x", pg, fill), b); err != nil {
				refused++
				if !strings.Contains(err.Error(), "damaged") {
					t.Errorf("page %d overwritten: %v, want a refusal saying the database is damaged", pg, err)
				}
			}
		}
	}
	if refused == 0 {
		t.Errorf("no overwritten page was refused (%d pages): the test damaged nothing that is read", pages)
	}
}
