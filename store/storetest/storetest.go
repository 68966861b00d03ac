// Package storetest is the conformance suite every arbiter.Store must pass (in the
// manner of testing/slogtest): the Store contract itself (compare-and-set, NotFound,
// idle TTL, Watch), and the engine's behaviour goldens in arbiter/testdata (every
// scenario, recorded session and workflow: confirm-then-act runs, deadlines, unknown
// outcomes, reconnects) run through arbiter.Service on the store under test, each
// step's output compared with what the engine alone gives. The gRPC-level replays of
// testdata/ are package replay's tests.
package storetest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/arbiter/enginetest"
)

// NewStore returns a fresh, empty store for one test, and registers its cleanup with
// t. now is the clock the store may use for idle TTLs.
type NewStore func(t *testing.T, now func() time.Time) arbiter.Store

// Run runs the whole suite. root is the repository root (for arbiter/testdata/).
func Run(t *testing.T, root string, newStore NewStore) {
	t.Run("Contract", func(t *testing.T) { RunContract(t, newStore) })
	t.Run("Goldens", func(t *testing.T) { RunGoldens(t, root, newStore) })
	t.Run("LostSession", func(t *testing.T) { RunLostSession(t, newStore) })
	t.Run("CallIndex", func(t *testing.T) { RunCallIndex(t, newStore) })
}

// RunCallIndex checks a store's arbiter.CallIndex (skipped for a store without one):
// a call id indexed in a tenant is found there, and only there; indexing it again for
// the same session keeps it; for another session makes it ambiguous
// (FailedPrecondition naming call_id: a tool's report must never land in another
// conversation); an unknown one is NotFound naming call_id; an entry expires with its
// ttl (checked by waiting: a real store's TTL runs on its own clock).
func RunCallIndex(t *testing.T, newStore NewStore) {
	st := newStore(t, time.Now)
	idx, ok := st.(arbiter.CallIndex)
	if !ok {
		t.Skipf("%T keeps no call index", st)
	}
	ctx := context.Background()
	if err := idx.IndexCall(ctx, "", "fc_1", "s1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := idx.IndexCall(ctx, "acme", "fc_1", "s2", time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tenant, want string }{{"", "s1"}, {"acme", "s2"}} {
		if got, err := idx.LookupCall(ctx, c.tenant, "fc_1"); err != nil || got != c.want {
			t.Errorf("LookupCall(%q, fc_1) = %q, %v; want %q", c.tenant, got, err, c.want)
		}
	}
	if err := idx.IndexCall(ctx, "", "fc_1", "s1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, _ := idx.LookupCall(ctx, "", "fc_1"); got != "s1" {
		t.Errorf("after a second IndexCall for the same session, LookupCall = %q, want s1", got)
	}
	if err := idx.IndexCall(ctx, "", "fc_1", "s3", time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, err := idx.LookupCall(ctx, "", "fc_1"); arbiter.KindOf(err) != arbiter.FailedPrecondition || arbiter.FieldOf(err) != "call_id" {
		t.Errorf("a call id of two sessions: LookupCall = %q, %v; want FailedPrecondition naming call_id", got, err)
	}
	if got, _ := idx.LookupCall(ctx, "acme", "fc_1"); got != "s2" {
		t.Errorf("another tenant's: %q", got)
	}
	for _, c := range []struct{ tenant, call string }{{"", "fc_2"}, {"other", "fc_1"}} {
		if _, err := idx.LookupCall(ctx, c.tenant, c.call); arbiter.KindOf(err) != arbiter.NotFound || arbiter.FieldOf(err) != "call_id" {
			t.Errorf("LookupCall(%q, %q) = %v, want NotFound naming call_id", c.tenant, c.call, err)
		}
	}
	if err := idx.IndexCall(ctx, "", "fc_short", "s1", 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := idx.LookupCall(ctx, "", "fc_short")
		if arbiter.KindOf(err) == arbiter.NotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fc_short indexed for 50ms still found after 5s (%v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fixedClock is an arbiter.Clock that reads a time the test sets.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fixedClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- c.Now().Add(d)
	return ch
}

func (c *fixedClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// RunLostSession checks, through arbiter.Service, that a session its store lost is
// reported, never started again silently (issue 12): a store that loses everything
// is modelled by a second, empty store under the same Service settings. A request
// naming the lost epoch is DataLoss and stores nothing; Connect naming it starts a new
// lifetime and says the old one was lost; a job id of the lost lifetime is NotFound.
func RunLostSession(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	key := arbiter.SessionKey{Tenant: "t1", ID: "lost"}
	policy := &arbiter.Policy{Tools: map[string]*arbiter.Tool{"book_slot": {Name: "book_slot", SideEffect: true}}}
	if err := policy.Validate(); err != nil {
		t.Fatal(err)
	}
	clock := &fixedClock{now: time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)}
	service := func(st arbiter.Store) *arbiter.Service {
		return &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: st, Clock: clock}
	}
	before := service(newStore(t, clock.Now))
	out, _, err := before.Apply(ctx, key, arbiter.Connect{ConnectionID: "k1"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Connect.State != arbiter.ConnectNew || out.Connect.Epoch == "" {
		t.Fatalf("first Connect: %+v, want a new session with an epoch", out.Connect)
	}
	epoch := out.Connect.Epoch
	out, _, err = before.Apply(ctx, key, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "3pm"}, Epoch: epoch}, true)
	if err != nil {
		t.Fatal(err)
	}
	staleJob := out.Call.JobID

	clock.set(clock.Now().Add(time.Minute))
	lost := newStore(t, clock.Now) // the store restarted with nothing
	after := service(lost)
	_, _, err = after.Apply(ctx, key, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "3pm"}, Epoch: epoch}, true)
	if arbiter.KindOf(err) != arbiter.DataLoss {
		t.Fatalf("a re-issued call naming the lost epoch: %v, want DataLoss", err)
	}
	if _, err := lost.Load(ctx, key); arbiter.KindOf(err) != arbiter.NotFound {
		t.Fatalf("the refused call stored a session: %v", err)
	}
	out, _, err = after.Apply(ctx, key, arbiter.Connect{ConnectionID: "k2", Epoch: epoch}, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Connect.State != arbiter.ConnectLost || out.Connect.Epoch == epoch || out.Connect.Epoch == "" {
		t.Fatalf("Connect naming the lost epoch %q: %+v, want lost with a new epoch", epoch, out.Connect)
	}
	out, _, err = after.Apply(ctx, key, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "3pm"}, Epoch: out.Connect.Epoch}, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Call.JobID == staleJob {
		t.Fatalf("the new lifetime reuses job id %q", staleJob)
	}
	if _, _, err := after.Apply(ctx, key, arbiter.Decide{JobID: staleJob, Prepared: true}, false); arbiter.KindOf(err) != arbiter.NotFound {
		t.Fatalf("a stale Decide for %s: %v, want NotFound", staleJob, err)
	}
}

// RunContract checks the Store interface's promises.
func RunContract(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	key := arbiter.SessionKey{Tenant: "t1", ID: "s1"}
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

	t.Run("LoadMissingIsNotFound", func(t *testing.T) {
		st := newStore(t, nil)
		_, err := st.Load(ctx, key)
		if arbiter.KindOf(err) != arbiter.NotFound {
			t.Fatalf("Load of a missing session: %v, want NotFound", err)
		}
	})
	t.Run("SaveLoadRoundTrip", func(t *testing.T) {
		st := newStore(t, nil)
		s := arbiter.NewSession(key, t0)
		s.Seq = 7
		s.Calls = []*arbiter.Call{{ID: "c1", Tool: "book_slot", RegisteredAt: t0, Behavior: arbiter.Blocking}}
		if err := st.Save(ctx, s, time.Hour); err != nil {
			t.Fatal(err)
		}
		if s.Version != 1 {
			t.Fatalf("version after first save %d, want 1", s.Version)
		}
		got, err := st.Load(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != 1 || got.Seq != 7 || len(got.Calls) != 1 || got.Calls[0].ID != "c1" || !got.Calls[0].RegisteredAt.Equal(t0) {
			t.Fatalf("loaded %+v", got)
		}
		// The copy is the caller's: changing it changes nothing stored.
		got.Seq = 99
		again, _ := st.Load(ctx, key)
		if again.Seq != 7 {
			t.Fatalf("store shares memory with a loaded copy")
		}
	})
	t.Run("TenantsAreSeparate", func(t *testing.T) {
		st := newStore(t, nil)
		if err := st.Save(ctx, arbiter.NewSession(key, t0), time.Hour); err != nil {
			t.Fatal(err)
		}
		_, err := st.Load(ctx, arbiter.SessionKey{Tenant: "t2", ID: key.ID})
		if arbiter.KindOf(err) != arbiter.NotFound {
			t.Fatalf("other tenant's load: %v, want NotFound", err)
		}
	})
	t.Run("CompareAndSet", func(t *testing.T) {
		st := newStore(t, nil)
		s := arbiter.NewSession(key, t0)
		if err := st.Save(ctx, s, time.Hour); err != nil {
			t.Fatal(err)
		}
		a, _ := st.Load(ctx, key)
		b, _ := st.Load(ctx, key)
		a.Seq = 1
		if err := st.Save(ctx, a, time.Hour); err != nil {
			t.Fatal(err)
		}
		b.Seq = 2
		if err := st.Save(ctx, b, time.Hour); arbiter.KindOf(err) != arbiter.Conflict {
			t.Fatalf("stale save: %v, want Conflict", err)
		}
		if err := st.Save(ctx, arbiter.NewSession(key, t0), time.Hour); arbiter.KindOf(err) != arbiter.Conflict {
			t.Fatalf("create over an existing session: %v, want Conflict", err)
		}
		got, _ := st.Load(ctx, key)
		if got.Seq != 1 || got.Version != 2 {
			t.Fatalf("after the race: seq %d version %d, want 1 and 2", got.Seq, got.Version)
		}
	})
	t.Run("ConcurrentWritersOneWinnerEach", func(t *testing.T) {
		st := newStore(t, nil)
		if err := st.Save(ctx, arbiter.NewSession(key, t0), time.Hour); err != nil {
			t.Fatal(err)
		}
		const writers, incs = 8, 10
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < incs; i++ {
					for {
						s, err := st.Load(ctx, key)
						if err != nil {
							t.Error(err)
							return
						}
						s.Seq++
						err = st.Save(ctx, s, time.Hour)
						if err == nil {
							break
						}
						if arbiter.KindOf(err) != arbiter.Conflict {
							t.Error(err)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		got, _ := st.Load(ctx, key)
		if got.Seq != writers*incs {
			t.Fatalf("seq %d after %d increments: an update was lost", got.Seq, writers*incs)
		}
	})
	t.Run("IdleTTLExpires", func(t *testing.T) {
		var mu sync.Mutex
		now := t0
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		st := newStore(t, clock)
		if err := st.Save(ctx, arbiter.NewSession(key, t0), 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Load(ctx, key); err != nil {
			t.Fatalf("load before expiry: %v", err)
		}
		mu.Lock()
		now = now.Add(time.Second)
		mu.Unlock()
		// Stores with their own clock (Redis) expire in real time.
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, err := st.Load(ctx, key)
			if arbiter.KindOf(err) == arbiter.NotFound {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("session still there after its TTL: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	t.Run("WatchWakesOnSave", func(t *testing.T) {
		st := newStore(t, nil)
		ch, stop, err := st.Watch(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		other, stopOther, err := st.Watch(ctx, arbiter.SessionKey{Tenant: "t1", ID: "other"})
		if err != nil {
			t.Fatal(err)
		}
		defer stopOther()
		if err := st.Save(ctx, arbiter.NewSession(key, t0), time.Hour); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal("no wake-up within 5 s of a save")
		}
		select {
		case <-other:
			t.Fatal("a watch on another session woke up")
		case <-time.After(100 * time.Millisecond):
		}
	})
	t.Run("Ping", func(t *testing.T) {
		st := newStore(t, nil)
		if err := st.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// RunGoldens runs the engine's behaviour goldens (root/arbiter/testdata: every
// scenario, recorded session and workflow as engine events at explicit times, in
// enginetest's language) through arbiter.Service.Apply on a fresh store for each
// script, and compares every step's output with the expected output the engine alone
// gives (`go test ./arbiter -rewrite` updates it).
func RunGoldens(t *testing.T, root string, newStore NewStore) {
	enginetest.Run(t, filepath.Join(root, "arbiter", "testdata"), func(t *testing.T, engine *arbiter.Engine, key arbiter.SessionKey) enginetest.Stepper {
		clock := &stepClock{now: enginetest.Epoch}
		svc := &arbiter.Service{Engine: engine, Store: newStore(t, clock.Now), Clock: clock}
		return &serviceStepper{svc: svc, clock: clock, key: key}
	})
}

// serviceStepper steps a script's session through the Service, its clock set to each
// event's time.
type serviceStepper struct {
	svc   *arbiter.Service
	clock *stepClock
	key   arbiter.SessionKey
}

func (s *serviceStepper) Step(now time.Time, ev arbiter.Event, create bool) (arbiter.Output, *arbiter.Session, error) {
	s.clock.set(now)
	return s.svc.Apply(context.Background(), s.key, ev, create)
}

// stepClock is the Service's and the store's clock: it reads the time of the event
// being stepped. Safe for concurrent use (the memory store's janitor reads it).
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Now implements arbiter.Clock.
func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After implements arbiter.Clock. Only Decide and Watch wait, and the goldens step
// through Apply alone, so time never has to pass: the channel fires at once.
func (c *stepClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}
