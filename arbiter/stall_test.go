package arbiter_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/memory"
)

// manualClock is an arbiter.Clock that moves only when set; After fires at once (the
// Decides here do not wait).
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}

func (c *manualClock) set(ms int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = epoch.Add(time.Duration(ms) * time.Millisecond)
}

var epoch = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

// stallingStore is a store whose next Save, once armed, waits until released: a
// store that freezes (Redis under SIGSTOP) while a step's write is on its way.
type stallingStore struct {
	arbiter.Store
	mu       sync.Mutex
	armed    bool
	stalled  chan struct{} // closed when a Save began to wait
	released chan struct{}
}

func (s *stallingStore) arm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed, s.stalled, s.released = true, make(chan struct{}), make(chan struct{})
}

func (s *stallingStore) Save(ctx context.Context, sess *arbiter.Session, ttl time.Duration) error {
	s.mu.Lock()
	armed, stalled, released := s.armed, s.stalled, s.released
	s.armed = false
	s.mu.Unlock()
	if armed {
		close(stalled)
		<-released
	}
	return s.Store.Save(ctx, sess, ttl)
}

// stallFixture is the service every test here runs: book_slot side-effecting (grace
// 1.5 s, transcript_timeout 3 s, trigger_lookback 2 s) on store, at clock, with call
// c1 registered at 0 ms in session id; it returns the service, the session's key and
// the call's job id.
func stallFixture(t *testing.T, store arbiter.Store, clock *manualClock, id string) (*arbiter.Service, arbiter.SessionKey, string) {
	t.Helper()
	policy := &arbiter.Policy{
		Defaults: arbiter.Timings{Grace: 1500 * time.Millisecond, TranscriptTimeout: 3 * time.Second, TriggerLookback: 2 * time.Second},
		Tools: map[string]*arbiter.Tool{"book_slot": {Name: "book_slot", SideEffect: true, Key: []arbiter.KeyArg{{Arg: "slot"}},
			Describe: "the booking for {slot}"}},
	}
	if err := policy.Validate(); err != nil {
		t.Fatal(err)
	}
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: store, Clock: clock}
	key := arbiter.SessionKey{ID: id}
	out, _, err := svc.Apply(context.Background(), key, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "friday"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	return svc, key, out.Call.JobID
}

// TestDecideStalledSaveWithholds: issue 26. The agent's Decide steps at the grace
// window's end and records its COMMIT as handed out, but the store freezes before it
// keeps the record; the user's stop, observed before the commit came due, is stuck
// behind the same store. When the store is back (1.5 s later) the Decide does not
// hand the COMMIT out (its record took longer than LateTimer to keep): it withholds
// it, the stop lands, and the job is cancelled. Before, the COMMIT went out and the
// stop came after a commit that stood.
func TestDecideStalledSaveWithholds(t *testing.T) {
	clock := &manualClock{}
	clock.set(0)
	store := &stallingStore{Store: memory.New(clock.Now)}
	svc, key, job := stallFixture(t, store, clock, "stall")
	ctx := context.Background()
	clock.set(100)
	if d, err := svc.Decide(ctx, key, job, true, 0, nil); err != nil || d.Decision != arbiter.Undecided {
		t.Fatalf("decide at prepare: %+v %v", d, err)
	}

	clock.set(1600) // the grace window's end: the Decide's step decides and answers
	store.arm()
	type answer struct {
		d   arbiter.DecisionResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		d, err := svc.Decide(ctx, key, job, true, 0, nil)
		done <- answer{d, err}
	}()
	<-store.stalled
	clock.set(3100) // the store is frozen for 1.5 s
	close(store.released)
	got := <-done
	if got.err != nil || got.d.Decision != arbiter.Undecided {
		t.Fatalf("the Decide whose record the store kept 1.5 s late answered %+v (%v), want pending (withheld)", got.d, got.err)
	}
	// The stuck events land: the user's stop, observed at 1.2 s.
	for _, ev := range []arbiter.Event{
		arbiter.Speech{Kind: arbiter.UserActivityStart, ObservedAt: epoch.Add(1200 * time.Millisecond)},
		arbiter.Transcript{Text: "Stop, don't book it.", ObservedAt: epoch.Add(1300 * time.Millisecond)},
		arbiter.Speech{Kind: arbiter.UserActivityEnd, ObservedAt: epoch.Add(1300 * time.Millisecond)},
	} {
		if _, _, err := svc.Apply(ctx, key, ev, true); err != nil {
			t.Fatal(err)
		}
	}
	clock.set(3200)
	if d, err := svc.Decide(ctx, key, job, true, 0, nil); err != nil || d.Decision != arbiter.DecisionCancel || d.Cause != arbiter.CauseStop {
		t.Fatalf("after the stop: %+v %v, want cancel (stop)", d, err)
	}
}

// TestDecideAbortedIsNotAnswered: issue 26. The agent aborts its waiting Decide (an
// event it observed is undelivered: the API's rule) just as the Decide's step records
// the COMMIT as handed out; the reply never reaches it. The Decide takes the answer
// back, so the stop the agent then delivers (observed before the commit came due,
// but in time: no outage) cancels the job instead of coming after a commit that
// would stand.
func TestDecideAbortedIsNotAnswered(t *testing.T) {
	clock := &manualClock{}
	clock.set(0)
	store := &stallingStore{Store: memory.New(clock.Now)}
	svc, key, job := stallFixture(t, store, clock, "abort")
	ctx := context.Background()
	clock.set(100)
	if _, err := svc.Decide(ctx, key, job, true, 0, nil); err != nil {
		t.Fatal(err)
	}
	clock.set(1600)
	store.arm()
	dctx, abort := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := svc.Decide(dctx, key, job, true, 0, nil)
		done <- err
	}()
	<-store.stalled
	abort() // the agent aborts: its stop, observed at 1.4 s, is undelivered
	close(store.released)
	if err := <-done; err == nil {
		t.Fatalf("the aborted Decide answered")
	}
	for _, ev := range []arbiter.Event{
		arbiter.Speech{Kind: arbiter.UserActivityStart, ObservedAt: epoch.Add(1400 * time.Millisecond)},
		arbiter.Transcript{Text: "Stop, don't book it.", ObservedAt: epoch.Add(1500 * time.Millisecond)},
		arbiter.Speech{Kind: arbiter.UserActivityEnd, ObservedAt: epoch.Add(1500 * time.Millisecond)},
	} {
		if _, _, err := svc.Apply(ctx, key, ev, true); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := svc.Decide(ctx, key, job, true, 0, nil); err != nil || d.Decision != arbiter.DecisionCancel {
		t.Fatalf("after the stop: %+v %v, want cancel", d, err)
	}
}

// lossyStore writes its next Save once armed but answers Unavailable (the store
// crashed after it kept the write: its fate is unknown to the writer).
type lossyStore struct {
	arbiter.Store
	mu    sync.Mutex
	armed bool
}

func (s *lossyStore) Save(ctx context.Context, sess *arbiter.Session, ttl time.Duration) error {
	s.mu.Lock()
	armed := s.armed
	s.armed = false
	s.mu.Unlock()
	err := s.Store.Save(ctx, sess, ttl)
	if armed && err == nil {
		return arbiter.Errorf(arbiter.Unavailable, "the store went away after the write")
	}
	return err
}

// TestDecideWriteUnknownTakesBack: issue 26. The write of the Decide's step that hands
// out a COMMIT fails with Unavailable although the store kept it (Redis killed after
// its AOF write): the COMMIT never went out, and the Decide takes its record back once
// the store answers, so the stop the agent then delivers (observed before the commit
// came due) cancels the job.
func TestDecideWriteUnknownTakesBack(t *testing.T) {
	clock := &manualClock{}
	clock.set(0)
	store := &lossyStore{Store: memory.New(clock.Now)}
	svc, key, job := stallFixture(t, store, clock, "lossy")
	ctx := context.Background()
	clock.set(100)
	if _, err := svc.Decide(ctx, key, job, true, 0, nil); err != nil {
		t.Fatal(err)
	}
	clock.set(1600)
	store.mu.Lock()
	store.armed = true
	store.mu.Unlock()
	if d, err := svc.Decide(ctx, key, job, true, 0, nil); arbiter.KindOf(err) != arbiter.Unavailable {
		t.Fatalf("Decide over a write of unknown fate: %+v %v, want Unavailable", d, err)
	}
	for _, ev := range []arbiter.Event{
		arbiter.Speech{Kind: arbiter.UserActivityStart, ObservedAt: epoch.Add(1400 * time.Millisecond)},
		arbiter.Transcript{Text: "Stop, don't book it.", ObservedAt: epoch.Add(1500 * time.Millisecond)},
		arbiter.Speech{Kind: arbiter.UserActivityEnd, ObservedAt: epoch.Add(1500 * time.Millisecond)},
	} {
		if _, _, err := svc.Apply(ctx, key, ev, true); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := svc.Decide(ctx, key, job, true, 0, nil); err != nil || d.Decision != arbiter.DecisionCancel {
		t.Fatalf("after the stop: %+v %v, want cancel", d, err)
	}
}

// TestDecideDeliveredStalledSave: the follow-up to issue 26 (CI under load). An agent
// that declares the delivery contract (Decide.Delivered: DecideRequest's
// events_delivered) asks Decide at the grace window's end; the store keeps the
// COMMIT's record late. For such an agent a late record says nothing (a stuck event
// of its would have aborted the call), so the COMMIT goes out, not withheld for
// DeliveryWait. When its caller has gone (it aborted the call: an event is stuck),
// the COMMIT is still taken back, and the stop it then delivers cancels the job.
// Before, both Decides lost the answer: the first was withheld 2 s.
func TestDecideDeliveredStalledSave(t *testing.T) {
	setup := func(t *testing.T) (*arbiter.Service, *manualClock, *stallingStore, string) {
		clock := &manualClock{}
		clock.set(0)
		store := &stallingStore{Store: memory.New(clock.Now)}
		svc, _, job := stallFixture(t, store, clock, "delivered")
		clock.set(100)
		return svc, clock, store, job
	}
	key := arbiter.SessionKey{ID: "delivered"}
	decide := func(ctx context.Context, svc *arbiter.Service, job string) (arbiter.DecisionResult, error) {
		return svc.DecideBy(ctx, key, arbiter.Decide{JobID: job, Prepared: true, Delivered: true}, 0, nil)
	}
	// stalled runs a Decide at the grace window's end whose record the store keeps
	// 1.5 s late; abort, when set, ends the caller's context while it waits.
	stalled := func(ctx context.Context, svc *arbiter.Service, clock *manualClock, store *stallingStore, job string, abort func()) (arbiter.DecisionResult, error) {
		if d, err := decide(ctx, svc, job); err != nil || d.Decision != arbiter.Undecided {
			t.Fatalf("decide at prepare: %+v %v", d, err)
		}
		clock.set(1600)
		store.arm()
		type answer struct {
			d   arbiter.DecisionResult
			err error
		}
		done := make(chan answer, 1)
		go func() {
			d, err := decide(ctx, svc, job)
			done <- answer{d, err}
		}()
		<-store.stalled
		clock.set(3100)
		if abort != nil {
			abort()
		}
		close(store.released)
		got := <-done
		return got.d, got.err
	}

	t.Run("record kept late: the COMMIT goes out", func(t *testing.T) {
		svc, clock, store, job := setup(t)
		d, err := stalled(context.Background(), svc, clock, store, job, nil)
		if err != nil || d.Decision != arbiter.DecisionCommit {
			t.Fatalf("the Decide (events delivered) whose record the store kept 1.5 s late answered %+v (%v), want COMMIT", d, err)
		}
		s, err := svc.Get(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if j := s.Job(job); j.AnsweredAt.IsZero() || !j.WithheldUntil.IsZero() {
			t.Fatalf("the COMMIT handed out: answered at %v, withheld until %v; want answered, never withheld", j.AnsweredAt, j.WithheldUntil)
		}
	})
	t.Run("caller gone: the COMMIT is taken back", func(t *testing.T) {
		svc, clock, store, job := setup(t)
		ctx, abort := context.WithCancel(context.Background())
		defer abort()
		if d, err := stalled(ctx, svc, clock, store, job, abort); err == nil {
			t.Fatalf("the aborted Decide answered %+v", d)
		}
		for _, ev := range []arbiter.Event{
			arbiter.Speech{Kind: arbiter.UserActivityStart, ObservedAt: epoch.Add(1400 * time.Millisecond)},
			arbiter.Transcript{Text: "Stop, don't book it.", ObservedAt: epoch.Add(1500 * time.Millisecond)},
			arbiter.Speech{Kind: arbiter.UserActivityEnd, ObservedAt: epoch.Add(1500 * time.Millisecond)},
		} {
			if _, _, err := svc.Apply(context.Background(), key, ev, true); err != nil {
				t.Fatal(err)
			}
		}
		if d, err := decide(context.Background(), svc, job); err != nil || d.Decision != arbiter.DecisionCancel || d.Cause != arbiter.CauseStop {
			t.Fatalf("after the stop: %+v %v, want cancel (stop)", d, err)
		}
	})
}

// TestDecideDeliveredWriteUnknown: the write of the step that hands out a COMMIT to
// a Decide that declares the delivery contract fails with Unavailable although the
// store kept it. The COMMIT never went out, so it is taken back (as for any agent),
// but not withheld: the agent asks again once its events are delivered, and, having
// observed nothing, is answered COMMIT at once instead of PENDING for DeliveryWait.
func TestDecideDeliveredWriteUnknown(t *testing.T) {
	clock := &manualClock{}
	clock.set(0)
	store := &lossyStore{Store: memory.New(clock.Now)}
	svc, key, job := stallFixture(t, store, clock, "lossy-delivered")
	ctx := context.Background()
	decide := func() (arbiter.DecisionResult, error) {
		return svc.DecideBy(ctx, key, arbiter.Decide{JobID: job, Prepared: true, Delivered: true}, 0, nil)
	}
	clock.set(100)
	if _, err := decide(); err != nil {
		t.Fatal(err)
	}
	clock.set(1600)
	store.mu.Lock()
	store.armed = true
	store.mu.Unlock()
	if d, err := decide(); arbiter.KindOf(err) != arbiter.Unavailable {
		t.Fatalf("Decide over a write of unknown fate: %+v %v, want Unavailable", d, err)
	}
	clock.set(1700)
	if d, err := decide(); err != nil || d.Decision != arbiter.DecisionCommit {
		t.Fatalf("the Decide asked again (events delivered, none observed): %+v %v, want COMMIT", d, err)
	}
}
