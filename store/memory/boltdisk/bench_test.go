package boltdisk_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/memory"
	"github.com/voicearbiter/arbiter/store/memory/boltdisk"
	"github.com/voicearbiter/arbiter/store/storetest"
)

// benchWriters are the concurrent writers each Save benchmark runs with.
var benchWriters = []int{1, 8, 50}

// benchSession returns a session of the size a booking reaches after a few calls,
// made by the engine: four calls of a side-effecting tool, each decided and
// completed (4.4 KB encoded).
func benchSession(b *testing.B, key arbiter.SessionKey) *arbiter.Session {
	b.Helper()
	policy := &arbiter.Policy{Tools: map[string]*arbiter.Tool{"book_slot": {Name: "book_slot", SideEffect: true}}}
	if err := policy.Validate(); err != nil {
		b.Fatal(err)
	}
	c := newClock()
	st := memory.New(c.now)
	defer st.Close()
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: st, Clock: serviceClock{c}}
	ctx := context.Background()
	for i := range 4 {
		out, _, err := svc.Apply(ctx, key, arbiter.RegisterCall{CallID: fmt.Sprintf("call_%d", i), Tool: "book_slot", Args: map[string]any{"slot": fmt.Sprintf("tomorrow %dpm", i+1)}}, true)
		if err != nil {
			b.Fatal(err)
		}
		job := out.Call.JobID
		if _, _, err := svc.Apply(ctx, key, arbiter.Decide{JobID: job, Prepared: true}, false); err != nil {
			b.Fatal(err)
		}
		c.add(2 * time.Second) // past the grace: the commit is due
		if _, _, err := svc.Apply(ctx, key, arbiter.Complete{JobID: job, Outcome: arbiter.Committed, Result: map[string]any{"reference": "R-" + job}}, false); err != nil {
			b.Fatal(err)
		}
	}
	s, err := st.Load(ctx, key)
	if err != nil {
		b.Fatal(err)
	}
	s.Version = 0
	return s
}

// serviceClock is a clock as an arbiter.Clock (nothing in the benchmarks waits).
type serviceClock struct{ c *clock }

func (s serviceClock) Now() time.Time { return s.c.now() }

func (s serviceClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- s.c.now()
	return ch
}

// runWriters runs b.N Saves spread over writers goroutines, each saving its own
// session again and again (load, change, compare-and-set save: what a Service does).
func runWriters(b *testing.B, st arbiter.Store, writers int) {
	ctx := context.Background()
	sessions := make([]*arbiter.Session, writers)
	for w := range sessions {
		sessions[w] = benchSession(b, arbiter.SessionKey{Tenant: "bench", ID: fmt.Sprintf("w%d", w)})
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := sessions[w]
			for next.Add(1) <= int64(b.N) {
				s.Seq++
				if err := st.Save(ctx, s, time.Hour); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "saves/s")
}

// BenchmarkSave: Save on the plain memory store and on the store on a bbolt file
// (each Save committed and synced before it returns), with 1, 8 and 50 writers at
// once. commits/save below 1 is the group commit; every commit syncs the file twice
// (fdatasync of the data pages, then of the meta page).
func BenchmarkSave(b *testing.B) {
	for _, writers := range benchWriters {
		b.Run(fmt.Sprintf("store=memory/writers=%d", writers), func(b *testing.B) {
			st := memory.New(nil)
			defer st.Close()
			runWriters(b, st, writers)
		})
		b.Run(fmt.Sprintf("store=bbolt/writers=%d", writers), func(b *testing.B) {
			st, d := open(b, filepath.Join(b.TempDir(), "state.db"), nil)
			before := d.Stats()
			runWriters(b, st, writers)
			commits := float64(d.Stats().Commits - before.Commits)
			b.ReportMetric(commits/float64(b.N), "commits/save")
			b.ReportMetric(2*commits/float64(b.N), "fsyncs/save")
		})
	}
}

// BenchmarkPut compares ways of committing one write per call to a bbolt file, with
// 1, 8 and 50 writers at once, each writing a 2 KB value: boltdisk's committer (what
// Save uses), bbolt's DB.Batch with its default 10 ms MaxBatchDelay, and one
// DB.Update per write. The commits are counted from the file's transaction ids.
func BenchmarkPut(b *testing.B) {
	val := make([]byte, 2048)
	ways := []struct {
		name string
		put  func(d *boltdisk.Disk, db *bolt.DB, key []byte) error
	}{
		{"committer", func(d *boltdisk.Disk, _ *bolt.DB, key []byte) error {
			return d.Put(memory.Record{Key: arbiter.SessionKey{ID: string(key)}, Version: 1, Session: val})
		}},
		{"bbolt-Batch", func(_ *boltdisk.Disk, db *bolt.DB, key []byte) error {
			return db.Batch(func(tx *bolt.Tx) error { return tx.Bucket([]byte("sessions")).Put(key, val) })
		}},
		{"bbolt-Update", func(_ *boltdisk.Disk, db *bolt.DB, key []byte) error {
			return db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("sessions")).Put(key, val) })
		}},
	}
	for _, writers := range benchWriters {
		for _, way := range ways {
			b.Run(fmt.Sprintf("way=%s/writers=%d", way.name, writers), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "state.db")
				var d *boltdisk.Disk
				var db *bolt.DB
				if way.name == "committer" {
					var err error
					if d, err = boltdisk.Open(path, quiet()); err != nil {
						b.Fatal(err)
					}
					defer d.Close()
				} else {
					var err error
					if db, err = bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: true, FreelistType: bolt.FreelistMapType}); err != nil {
						b.Fatal(err)
					}
					defer db.Close()
					if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("sessions")); return err }); err != nil {
						b.Fatal(err)
					}
				}
				txid := func() int {
					id := 0
					_ = db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
					return id
				}
				base := 0
				if db != nil {
					base = txid()
				}
				var next atomic.Int64
				var wg sync.WaitGroup
				start := time.Now()
				b.ResetTimer()
				for w := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						key := []byte(fmt.Sprintf("w%d", w))
						for next.Add(1) <= int64(b.N) {
							if err := way.put(d, db, key); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "puts/s")
				if d != nil {
					b.ReportMetric(float64(d.Stats().Commits)/float64(b.N), "commits/put")
				} else {
					b.ReportMetric(float64(txid()-base)/float64(b.N), "commits/put")
				}
			})
		}
	}
}

// BenchmarkTransition measures one transition (load, step, save synced to the bbolt
// file) on the embedded durable store.
func BenchmarkTransition(b *testing.B) {
	storetest.BenchTransition(b, "../../..", func(b *testing.B) (arbiter.Store, func() int64) {
		d, err := boltdisk.Open(filepath.Join(b.TempDir(), "state.db"), boltdisk.Options{})
		if err != nil {
			b.Fatal(err)
		}
		st, err := memory.Open(d, nil)
		if err != nil {
			_ = d.Close()
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		return st, nil
	})
}
