package memory

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
)

// TestStateFileLoopWritesOnlyChanges ticks the loop by hand: a tick writes the file
// only when a session changed since the last write (at debug); a failed write is
// logged as an error and the next tick writes what it missed. Each tick is sent on an
// unbuffered channel to a loop that is stopped right after: stop returns only once
// the loop has finished with the tick, so the test compares files, not times.
func TestStateFileLoopWritesOnlyChanges(t *testing.T) {
	s := New(nil)
	defer s.Close()
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.json")
	var logs bytes.Buffer
	sf := NewStateFile(s, path, time.Hour, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	tick := make(chan time.Time)
	sf.newTicker = func(time.Duration) (<-chan time.Time, func()) { return tick, func() {} }
	if err := sf.Load(); err != nil {
		t.Fatal(err)
	}
	written := func() bool { _, err := os.Stat(path); return err == nil }
	change := func(id string) {
		t.Helper()
		if err := s.Save(context.Background(), arbiter.NewSession(arbiter.SessionKey{ID: id}, time.Now()), 0); err != nil {
			t.Fatal(err)
		}
	}
	// tickOnce runs the loop for one tick.
	tickOnce := func() {
		stop := sf.Start()
		tick <- time.Time{}
		stop()
		stop() // idempotent
	}

	steps := []struct {
		name  string
		setup func()
		write bool
	}{
		{"nothing changed since the write at start", func() {}, false},
		{"a session saved", func() { change("a") }, true},
		{"nothing changed since", func() {}, false},
		{"two sessions saved", func() { change("b"); change("c") }, true},
	}
	for _, st := range steps {
		os.Remove(path)
		st.setup()
		tickOnce()
		if written() != st.write {
			t.Fatalf("%s: file written %v, want %v", st.name, written(), st.write)
		}
	}
	if !strings.Contains(logs.String(), `level=DEBUG msg="session state written" state_file=`+path+" sessions=3") || !strings.Contains(logs.String(), "when=periodic") {
		t.Errorf("log lacks the periodic write of 3 sessions at debug:\n%s", logs.String())
	}

	// The directory goes: the write fails and is logged; back, the next tick writes.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	change("d")
	logs.Reset()
	tickOnce()
	if !strings.Contains(logs.String(), `level=ERROR msg="session state not written"`) || !strings.Contains(logs.String(), "when=periodic") {
		t.Fatalf("a failed periodic write is not logged as an error:\n%s", logs.String())
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tickOnce()
	if !written() {
		t.Fatal("the tick after a failed write did not write the file")
	}
	os.Remove(path)
	if err := sf.Save("shutdown"); err != nil || written() {
		t.Fatalf("Save after the loop wrote every change: %v, written %v; want no write", err, written())
	}
}
