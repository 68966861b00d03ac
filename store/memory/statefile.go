package memory

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"sync"
	"time"
)

// StateFile keeps a Store's sessions in a file across restarts (SaveFile, LoadFile):
// restored with Load at start, written by the loop Start runs every interval while
// sessions change, and with Save once more at shutdown. Every write is logged with
// why it happened ("start", "periodic", or Save's argument). Save and Start are no-ops
// on a nil *StateFile, so a caller without a state file may hold a nil one.
//
// Load, Save and the loop Start runs are not meant to run at the same time: call
// Load first, and stop the loop before the last Save.
type StateFile struct {
	store    *Store
	path     string
	interval time.Duration // 0: no periodic writes
	log      *slog.Logger

	// newTicker makes the loop's ticker (time.NewTicker's channel and Stop); tests
	// replace it to tick by hand.
	newTicker func(time.Duration) (<-chan time.Time, func())
	// written is store.Changes() before the last successful write; only the writer
	// touches it.
	written uint64
}

// NewStateFile returns the state file at path for store, written every interval
// while sessions change (0: only by Load and Save; negative intervals are the
// caller's to refuse), logging to log (nil: slog.Default()). It touches nothing until
// Load is called.
func NewStateFile(store *Store, path string, interval time.Duration, log *slog.Logger) *StateFile {
	if log == nil {
		log = slog.Default()
	}
	return &StateFile{store: store, path: path, interval: interval, log: log, newTicker: systemTicker}
}

func systemTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Load restores the file into the store (a missing file starts empty) and writes it
// back at once, so a path that cannot be written fails the start rather than the
// first periodic write, and sessions that expired while the server was down leave the
// file. Errors name the file: a corrupt file (which restores nothing and is left as
// it is) or a failed write.
func (sf *StateFile) Load() error {
	start := time.Now()
	n, err := sf.store.LoadFile(sf.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		sf.log.Info("no state file yet: starting with no sessions", "state_file", sf.path)
	case err != nil:
		return err
	default:
		sf.log.Info("sessions restored", "state_file", sf.path, "sessions", n, "took", time.Since(start).Round(time.Microsecond))
	}
	return sf.write("start", true, slog.LevelInfo)
}

// Save writes the file unless no session changed since the last write, logging the
// write at info with why (say "shutdown"). Its error, which names the file, is the
// caller's to report. A nil *StateFile writes nothing.
func (sf *StateFile) Save(why string) error {
	if sf == nil {
		return nil
	}
	return sf.write(why, false, slog.LevelInfo)
}

// Start writes the file every interval while sessions change, logging each write at
// debug and each failed one as an error (the next tick tries again), until the
// returned function is called. That function returns once no write is in progress,
// so the caller may Save next; it is idempotent. With no interval (or a nil
// *StateFile) nothing runs.
func (sf *StateFile) Start() (stop func()) {
	if sf == nil || sf.interval <= 0 {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick, stopTicker := sf.newTicker(sf.interval)
		defer stopTicker()
		for {
			select {
			case <-quit:
				return
			case <-tick:
				if err := sf.write("periodic", false, slog.LevelDebug); err != nil {
					sf.log.Error("session state not written", "err", err, "when", "periodic")
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit); <-done }) }
}

// write writes the file, unless always is false and nothing changed since the last
// write, and logs the write at level.
func (sf *StateFile) write(why string, always bool, level slog.Level) error {
	changes := sf.store.Changes() // read before: a change racing the write is written again next time
	if changes == sf.written && !always {
		return nil
	}
	start := time.Now()
	n, err := sf.store.SaveFile(sf.path)
	if err != nil {
		return err
	}
	sf.written = changes
	sf.log.Log(context.Background(), level, "session state written", "state_file", sf.path, "sessions", n,
		"took", time.Since(start).Round(time.Microsecond), "when", why)
	return nil
}
