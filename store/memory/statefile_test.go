package memory_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/store/memory"
)

// logTo returns a logger writing text lines at debug and up to buf.
func logTo(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	return err == nil
}

// stored returns how many live sessions the file at path holds, read into a new
// store on c.
func stored(t *testing.T, c *fakeClock, path string) int {
	t.Helper()
	n, err := newStore(t, c).LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStateFileLoadMissing: a missing file starts an empty store, logs so, and is
// written at once (with no sessions).
func TestStateFileLoadMissing(t *testing.T) {
	c := newClock()
	s := newStore(t, c)
	path := filepath.Join(t.TempDir(), "state.json")
	var logs bytes.Buffer
	if err := memory.NewStateFile(s, path, 0, logTo(&logs)).Load(); err != nil {
		t.Fatal(err)
	}
	if n := stored(t, c, path); n != 0 {
		t.Fatalf("the file written at start holds %d sessions, want 0", n)
	}
	for _, want := range []string{`msg="no state file yet: starting with no sessions" state_file=` + path, `msg="session state written"`, "sessions=0", "when=start"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestStateFileLoadRestores: Load restores what another store wrote, with the count
// logged, and writes the file back at once without the sessions that expired
// meanwhile.
func TestStateFileLoadRestores(t *testing.T) {
	c := newClock()
	src := newStore(t, c)
	fill(t, src, c)
	path := filepath.Join(t.TempDir(), "state.json")
	if _, err := src.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	c.add(20 * time.Minute) // acme/a (TTL 10 min) expires while the server is down
	dst := newStore(t, c)
	var logs bytes.Buffer
	if err := memory.NewStateFile(dst, path, 0, logTo(&logs)).Load(); err != nil {
		t.Fatal(err)
	}
	if got, want := encoded(t, load(t, dst, keyA)), encoded(t, load(t, src, keyA)); got != want {
		t.Fatalf("restored a:\n%s\nwant\n%s", got, want)
	}
	if n := stored(t, c, path); n != 2 {
		t.Fatalf("the file written back at start holds %d sessions, want 2 (a, forever)", n)
	}
	if !strings.Contains(logs.String(), `msg="sessions restored" state_file=`+path+" sessions=2") {
		t.Errorf("log lacks the restore of 2 sessions:\n%s", logs.String())
	}
}

// TestStateFileSaveOnlyWhenChanged: Save writes the file only when a session changed
// since the last write, and logs why at info.
func TestStateFileSaveOnlyWhenChanged(t *testing.T) {
	c := newClock()
	s := newStore(t, c)
	path := filepath.Join(t.TempDir(), "state.json")
	var logs bytes.Buffer
	sf := memory.NewStateFile(s, path, 0, logTo(&logs))
	if err := sf.Load(); err != nil {
		t.Fatal(err)
	}
	os.Remove(path) // so a write shows as the file's return
	if err := sf.Save("shutdown"); err != nil || exists(t, path) {
		t.Fatalf("Save with nothing changed: %v, file written %v; want no write", err, exists(t, path))
	}
	save(t, s, c, keyA, time.Hour, 0)
	logs.Reset()
	if err := sf.Save("shutdown"); err != nil || !exists(t, path) {
		t.Fatalf("Save after a change: %v, file written %v; want a write", err, exists(t, path))
	}
	if n := stored(t, c, path); n != 1 {
		t.Fatalf("the file holds %d sessions, want 1", n)
	}
	if !strings.Contains(logs.String(), `level=INFO msg="session state written" state_file=`+path+" sessions=1") || !strings.Contains(logs.String(), "when=shutdown") {
		t.Errorf("log lacks the write at shutdown:\n%s", logs.String())
	}
	os.Remove(path)
	if err := sf.Save("stop"); err != nil || exists(t, path) {
		t.Fatalf("Save with nothing changed since the last: %v, file written %v; want no write", err, exists(t, path))
	}
}

// TestStateFileLoadErrors: a corrupt file fails Load with an error naming it and the
// fault, restores nothing and is left as it was; a path that cannot be written fails
// Load too, naming the path.
func TestStateFileLoadErrors(t *testing.T) {
	c := newClock()
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	const body = `{"format":"arbiter-memory-store/v1","sessions":[{"key":{"id":"x"},`
	os.WriteFile(corrupt, []byte(body), 0o600)
	s := newStore(t, c)
	err := memory.NewStateFile(s, corrupt, 0, slog.New(slog.DiscardHandler)).Load()
	if err == nil || !strings.Contains(err.Error(), corrupt) || !strings.Contains(err.Error(), "not a session snapshot") {
		t.Fatalf("Load of a corrupt file: %v, want an error naming it", err)
	}
	if b, _ := os.ReadFile(corrupt); string(b) != body {
		t.Errorf("the corrupt file was changed: %q", b)
	}
	if s.Len() != 0 {
		t.Errorf("%d sessions restored from a corrupt file", s.Len())
	}
	unwritable := filepath.Join(dir, "missing", "state.json")
	if err := memory.NewStateFile(s, unwritable, 0, slog.New(slog.DiscardHandler)).Load(); err == nil || !strings.Contains(err.Error(), unwritable) {
		t.Fatalf("Load with a path that cannot be written: %v, want an error naming it", err)
	}
}

// TestStateFileNil: a nil *StateFile (no state file configured) saves nothing and
// runs no loop.
func TestStateFileNil(t *testing.T) {
	var sf *memory.StateFile
	if err := sf.Save("shutdown"); err != nil {
		t.Fatal(err)
	}
	stop := sf.Start()
	stop()
}
