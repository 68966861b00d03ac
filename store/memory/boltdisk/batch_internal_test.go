package boltdisk

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/memory"
)

// TestGroupCommit: writes queued while a commit is under way go into as few commits
// as MaxBatch allows once it is done, and each writer hears only once its write is
// committed. The commit under way is the test's: it ends only once every write is
// queued, so the counts do not depend on timing.
func TestGroupCommit(t *testing.T) {
	for _, tc := range []struct{ writers, maxBatch, commits int }{
		{50, 1024, 1},
		{50, 16, 4},
		{1, 1024, 1},
	} {
		t.Run(fmt.Sprintf("%d writers, batches of %d", tc.writers, tc.maxBatch), func(t *testing.T) {
			opts := Options{MaxBatch: tc.maxBatch}
			db, err := openDB(filepath.Join(t.TempDir(), "state.db"), opts)
			if err != nil {
				t.Fatal(err)
			}
			d := newDisk(db, "state.db", tc.maxBatch)
			d.mu.Lock()
			d.leader = true // a commit is under way
			d.mu.Unlock()
			errs := make(chan error, tc.writers)
			for i := range tc.writers {
				go func() {
					errs <- d.Put(memory.Record{Key: arbiter.SessionKey{ID: fmt.Sprintf("s%d", i)}, Version: 1, Session: []byte(`{}`)})
				}()
			}
			for queued := 0; queued < tc.writers; {
				d.mu.Lock()
				queued = len(d.queue)
				d.mu.Unlock()
				runtime.Gosched()
			}
			select {
			case err := <-errs:
				t.Fatalf("a Put returned before any commit: %v", err)
			default:
			}
			d.mu.Lock()
			d.handOffLocked() // the commit under way is done
			d.mu.Unlock()
			for range tc.writers {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if st := d.Stats(); st.Commits != uint64(tc.commits) || st.Puts != uint64(tc.writers) {
				t.Fatalf("stats %+v, want %d commits of %d puts", st, tc.commits, tc.writers)
			}
			n := 0
			if err := d.Records(func(memory.Record) error { n++; return nil }); err != nil || n != tc.writers {
				t.Fatalf("%d records (%v), want %d", n, err, tc.writers)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
