package redisstore_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/redistest"
	"github.com/voicearbiter/arbiter/replay"
	"github.com/voicearbiter/arbiter/store/memory"
	"github.com/voicearbiter/arbiter/store/redisstore"
	"github.com/voicearbiter/arbiter/store/sessioncodec"
	"github.com/voicearbiter/arbiter/store/storetest"
)

// parkClock is a virtual clock that tells when a Decide is about to wait: Service.Decide
// asks After for its timer right before it blocks, after its last round trip of that
// step. The clock never moves on its own, so no timer fires behind a test's back.
type parkClock struct {
	*replay.VirtualClock
	parked chan struct{} // one value per After call
	// noTimers makes After's channel one that never fires: only a save wakes B.
	noTimers *bool
}

func (c parkClock) After(d time.Duration) <-chan time.Time {
	c.parked <- struct{}{}
	if *c.noTimers {
		return nil
	}
	return c.VirtualClock.After(d)
}

// handoff is two replicas on one Redis with a Decide parked on B while A takes the
// events that decide it, as bench/load -mode handoff does, beside the engine alone
// (the memory store) taking the same events.
type handoff struct {
	t     testing.TB
	a, b  *arbiter.Service
	bst   *redisstore.Store
	brt   *roundTrips
	alone *arbiter.Service
	clock parkClock
}

func newHandoff(t testing.TB, aOpt redisstore.Options) *handoff {
	srv := redistest.Start(t)
	e := storetest.BenchEngine(t, "../..")
	vc := replay.NewVirtualClock(replay.Epoch)
	clock := parkClock{VirtualClock: vc, parked: make(chan struct{}, 16), noTimers: new(bool)}
	open := func(opt redisstore.Options) (*redisstore.Store, *roundTrips) {
		client, err := redisstore.NewClient(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		rt := &roundTrips{}
		client.AddHook(rt)
		st := redisstore.New(client, opt)
		t.Cleanup(func() { _ = st.Close() })
		return st, rt
	}
	// Generous pub/sub bounds: on a loaded machine (go test -race ./... on two cores)
	// a slow confirmation or a ping answered late must not read as Redis down, whose
	// wake-up of every watcher would step B once more than these tests count.
	slow := func(o redisstore.Options) redisstore.Options {
		o.CacheSessions, o.SubscribeTimeout, o.HealthCheckInterval = 100, parkWait, 5*time.Minute
		return o
	}
	ast, _ := open(slow(aOpt))
	bst, brt := open(slow(redisstore.Options{}))
	// B's first Current loads its script (EVALSHA, NOSCRIPT, EVAL): done here, so that
	// the tests count the steady state's round trips.
	if _, err := bst.Current(context.Background(), arbiter.NewSession(arbiter.SessionKey{ID: "warm"}, vc.Now())); err != nil {
		t.Fatal(err)
	}
	ref := memory.New(vc.Now)
	t.Cleanup(func() { _ = ref.Close() })
	return &handoff{
		t: t, bst: bst, brt: brt, clock: clock,
		a:     &arbiter.Service{Engine: e, Store: ast, Clock: vc},
		b:     &arbiter.Service{Engine: e, Store: bst, Clock: clock},
		alone: &arbiter.Service{Engine: e, Store: ref, Clock: vc},
	}
}

// parked waits until a Decide B just started waits for the first save of another
// replica: its first step recorded that prepare finished (a save, whose wake-up wakes
// the Decide itself), and its step after that wake-up.
func (h *handoff) parked() {
	h.park("B's first step")
	h.park("B's step on its own save's wake-up")
}

// parkWait bounds every wait of these tests on B: a Decide that never parks again is
// a failure with a name, not a test binary hung until go test's timeout.
const parkWait = 30 * time.Second

// park waits for B's next park (one After call: a step ended and the Decide waits).
func (h *handoff) park(what string) {
	h.t.Helper()
	select {
	case <-h.clock.parked:
	case <-time.After(parkWait):
		h.t.Fatalf("B did not wait again within %v (%s)", parkWait, what)
	}
}

// eventually polls cond every 5 ms until it holds, or fails the test after parkWait.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(parkWait); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("not within %v: %s", parkWait, what)
		}
	}
}

// both applies ev on A and on the engine alone, which must answer the same.
func (h *handoff) both(key arbiter.SessionKey, ev arbiter.Event) arbiter.Output {
	h.t.Helper()
	ctx := context.Background()
	got, _, err := h.a.Apply(ctx, key, ev, true)
	if err != nil {
		h.t.Fatalf("%s: %T on A: %v", key.ID, ev, err)
	}
	want, _, err := h.alone.Apply(ctx, key, ev, true)
	if err != nil {
		h.t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		h.t.Fatalf("%s: %T on A:\n %+v\nwant %+v", key.ID, ev, got, want)
	}
	return got
}

// answer is what a Decide returned.
type answer struct {
	d   arbiter.DecisionResult
	err error
}

// answer waits for the Decide on B to answer, at most parkWait.
func (h *handoff) answer(done <-chan answer) answer {
	h.t.Helper()
	select {
	case a := <-done:
		return a
	case <-time.After(parkWait):
		h.t.Fatalf("Decide on B did not answer within %v", parkWait)
		return answer{}
	}
}

// decideOnB starts Decide(job, prepared, wait 10 s) on replica B and returns once it
// is parked (stepped and waiting); its answer arrives on the channel.
func (h *handoff) decideOnB(key arbiter.SessionKey, job string) <-chan answer {
	done := make(chan answer, 1)
	go func() {
		d, err := h.b.Decide(context.Background(), key, job, true, 10*time.Second, nil)
		done <- answer{d, err}
	}()
	h.parked()
	return done
}

// run plays one hand-off on session key: a call and the user's voice on A, B's
// Decide(prepared) parked, then on A the end of the user's turn and a transcript
// (text), which decides the job. It checks B's answer against the engine alone's and
// returns B's round trips from the moment its Decide first waited to its answer.
func (h *handoff) run(key arbiter.SessionKey, text string) (arbiter.DecisionResult, int64) {
	h.t.Helper()
	ctx := context.Background()
	out := h.both(key, arbiter.RegisterCall{CallID: "fc_1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
	job := out.Call.JobID
	h.both(key, arbiter.Speech{Kind: arbiter.UserActivityStart})
	done := h.decideOnB(key, job)
	// B's first step recorded that prepare finished: so does the engine alone's.
	if _, err := h.alone.Decide(ctx, key, job, true, 0, nil); err != nil {
		h.t.Fatal(err)
	}
	before := h.brt.n.Load()
	h.both(key, arbiter.Speech{Kind: arbiter.UserActivityEnd})
	var got answer
	select {
	case got = <-done:
		h.t.Fatalf("%s: Decide on B answered %+v (%v) before the transcript", key.ID, got.d, got.err)
	case <-h.clock.parked: // woken by that save, stepped, waiting again
	case <-time.After(parkWait):
		h.t.Fatalf("%s: Decide on B did not wait again within %v after the end of the user's turn", key.ID, parkWait)
	}
	// B stepped its Decide after that save: so does the engine alone.
	if _, err := h.alone.Decide(ctx, key, job, true, 0, nil); err != nil {
		h.t.Fatal(err)
	}
	h.both(key, arbiter.Transcript{Text: text})
	got = h.answer(done)
	trips := h.brt.n.Load() - before
	if got.err != nil {
		h.t.Fatalf("%s: Decide on B: %v", key.ID, got.err)
	}
	want, err := h.alone.Decide(ctx, key, job, true, 0, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if !reflect.DeepEqual(got.d, want) {
		h.t.Fatalf("%s: Decide on B:\n %+v\nwant %+v", key.ID, got.d, want)
	}
	return got.d, trips
}

// TestWakeDecide: a Decide parked on replica B, decided by the saves of replica A,
// answers as the engine alone does, and costs B one round trip between the wake-up
// and the answer when A's wake-ups carry the record (B's cache takes it; Current
// confirms the CANCEL it holds, version and content, without the record). When they
// do not (a record over WakeRecordBytes), the stale cached copy is dropped on each
// wake-up and B reads the record once for each: two round trips. Either way the
// answer is the same.
func TestWakeDecide(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opt   redisstore.Options
		trips int64
	}{
		{"record sent", redisstore.Options{}, 1},
		{"version only", redisstore.Options{WakeRecordBytes: -1}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHandoff(t, tc.opt)
			for i := range 5 {
				d, trips := h.run(arbiter.SessionKey{Tenant: "t", ID: fmt.Sprintf("s%d", i)}, "Actually, stop. Don't book it.")
				if d.Decision != arbiter.DecisionCancel {
					t.Fatalf("decision %+v, want CANCEL", d)
				}
				if trips != tc.trips {
					t.Errorf("session %d: %d round trips on B from the wake-up to the answer, want %d", i, trips, tc.trips)
				}
			}
			if cs := h.bst.CacheStats(); tc.trips == 1 && cs.Woken == 0 {
				t.Errorf("B's cache %+v: no record taken from a wake-up", cs)
			}
		})
	}
}

// TestWakeDecideCommit: a COMMIT that A's timer recorded (the grace window ran out
// on A) is answered by the Decide parked on B from the record A's wake-up carried,
// after one round trip (Current: a COMMIT never rests on a message alone), as the
// engine alone answers. B's own timers never fire here, so
// that A's step is the one that decides.
func TestWakeDecideCommit(t *testing.T) {
	h := newHandoff(t, redisstore.Options{})
	*h.clock.noTimers = true
	ctx := context.Background()
	for i := range 3 {
		key := arbiter.SessionKey{ID: fmt.Sprintf("commit%d", i)}
		out := h.both(key, arbiter.RegisterCall{CallID: "fc_1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
		job := out.Call.JobID
		done := h.decideOnB(key, job)
		if _, err := h.alone.Decide(ctx, key, job, true, 0, nil); err != nil {
			t.Fatal(err)
		}
		before := h.brt.n.Load()
		h.clock.AdvanceTo(h.clock.Now().Add(1500 * time.Millisecond)) // the 1.5 s grace window's end: A decides in time
		if out := h.both(key, arbiter.Tick{}); len(out.Decisions) != 1 || out.Decisions[0].Decision != arbiter.DecisionCommit {
			t.Fatalf("%s: A's tick decided %+v, want a COMMIT", key.ID, out.Decisions)
		}
		got := h.answer(done)
		trips := h.brt.n.Load() - before
		if got.err != nil {
			t.Fatal(got.err)
		}
		want, err := h.alone.Decide(ctx, key, job, true, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.d, want) || got.d.Decision != arbiter.DecisionCommit {
			t.Fatalf("%s: Decide on B:\n %+v\nwant %+v (commit)", key.ID, got.d, want)
		}
		if trips != 1 {
			t.Errorf("%s: %d round trips on B from the wake-up to the answer, want 1 (Current confirming the COMMIT)", key.ID, trips)
		}
	}
}

// TestWakeForgedDecision: a wake-up message carrying a record in which the job is
// decided, committed or cancelled, though Redis holds it pending (a forged or replayed
// message: whoever can publish on the session's channel), never makes the Decide
// parked on B answer: a final answer is confirmed with Redis first (version and
// content), which says otherwise, and B goes on waiting on what Redis holds, until
// the user's stop cancels the job.
func TestWakeForgedDecision(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       arbiter.Decision
	}{
		{"commit", "Yes, please go ahead.", arbiter.DecisionCommit},
		{"cancel", "Stop, don't book it.", arbiter.DecisionCancel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHandoff(t, redisstore.Options{})
			ctx := context.Background()
			key := arbiter.SessionKey{ID: "forged-" + tc.name}
			f := newForger(t, h)
			register := arbiter.RegisterCall{CallID: "fc_1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}
			job := h.both(key, register).Call.JobID
			f.apply(key, register)
			h.both(key, arbiter.Speech{Kind: arbiter.UserActivityStart})
			f.apply(key, arbiter.Speech{Kind: arbiter.UserActivityStart})
			done := h.decideOnB(key, job)
			for _, svc := range []*arbiter.Service{h.alone, f.svc} { // B's first step recorded the prepare
				if _, err := svc.Decide(ctx, key, job, true, 0, nil); err != nil {
					t.Fatal(err)
				}
			}
			f.apply(key, arbiter.Speech{Kind: arbiter.UserActivityEnd})
			f.apply(key, arbiter.Transcript{Text: tc.text})
			f.clock.AdvanceTo(f.clock.Now().Add(1500 * time.Millisecond)) // the 1.5 s grace window's end: decided in time
			f.apply(key, arbiter.Tick{})
			if d, err := f.svc.Decide(ctx, key, job, true, 0, nil); err != nil || d.Decision != tc.want {
				t.Fatalf("the forger's Decide: %+v, %v; want %v to forge", d, err, tc.want)
			}
			f.publish(key, 99)
			select {
			case got := <-done:
				t.Fatalf("Decide on B answered %+v (%v) on a forged record", got.d, got.err)
			case <-h.clock.parked: // stepped the forged copy, found it is not what Redis holds, read Redis, waits again
			case <-time.After(parkWait):
				t.Fatalf("Decide on B did not wait again within %v after the forged message", parkWait)
			}
			h.both(key, arbiter.Speech{Kind: arbiter.UserActivityEnd})
			h.both(key, arbiter.Transcript{Text: "Actually, stop. Don't book it."})
			got := h.answer(done)
			want, err := h.alone.Decide(ctx, key, job, true, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.err != nil || !reflect.DeepEqual(got.d, want) || got.d.Decision != arbiter.DecisionCancel {
				t.Fatalf("Decide on B: %+v (%v)\nwant %+v (cancel)", got.d, got.err, want)
			}
		})
	}
}

// TestWakeForgedSameVersion: a forged message announcing the very version Redis
// reaches next, with other content, stays in B's cache when the real save of that
// version arrives (a message never replaces a copy of the same version); a change
// then made on B steps the forged copy, and the compare-and-set, which compares the
// record's content as well as its version, refuses it: B answers as the engine alone
// does, and Redis holds what the engine alone holds.
func TestWakeForgedSameVersion(t *testing.T) {
	h := newHandoff(t, redisstore.Options{})
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "same-version"}
	f := newForger(t, h)
	register := arbiter.RegisterCall{CallID: "fc_1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}
	h.both(key, register)
	f.apply(key, register)
	ch, stop, err := h.bst.Watch(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if _, _, err := h.b.Apply(ctx, key, arbiter.Speech{Kind: arbiter.ModelOutputStart}, true); err != nil { // B caches it
		t.Fatal(err)
	}
	if _, _, err := h.alone.Apply(ctx, key, arbiter.Speech{Kind: arbiter.ModelOutputStart}, true); err != nil {
		t.Fatal(err)
	}
	<-ch
	f.apply(key, arbiter.Speech{Kind: arbiter.ModelOutputStart})
	f.apply(key, arbiter.RegisterCall{CallID: "fc_forged", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 9pm"}})
	s, err := h.bst.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	f.publish(key, s.Version+1)
	<-ch
	h.both(key, arbiter.Speech{Kind: arbiter.UserActivityStart}) // the real save of that version, on A
	<-ch
	if got, cached, err := h.bst.LoadCached(ctx, key); err != nil || !cached || got.Version != s.Version+1 || len(got.Calls) != 2 {
		t.Fatalf("B's cache: %+v, cached %v, %v; want the forged copy at version %d", got, cached, err, s.Version+1)
	}
	ev := arbiter.RegisterCall{CallID: "fc_2", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 4pm"}}
	got, _, err := h.b.Apply(ctx, key, ev, true)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := h.alone.Apply(ctx, key, ev, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("RegisterCall on B:\n %+v\nwant %+v", got, want)
	}
	sameStored(t, h.bst, h.alone.Store, key.ID)
}

// forger is the engine alone on a store and a clock of its own (at the handoff's
// start, so its sessions have the same lifetime), whose records a test publishes as
// forged wake-up messages.
type forger struct {
	t     *testing.T
	h     *handoff
	clock *replay.VirtualClock
	store *memory.Store
	svc   *arbiter.Service
}

func newForger(t *testing.T, h *handoff) *forger {
	clock := replay.NewVirtualClock(h.alone.Clock.Now())
	st := memory.New(clock.Now)
	t.Cleanup(func() { _ = st.Close() })
	return &forger{t: t, h: h, clock: clock, store: st, svc: &arbiter.Service{Engine: h.alone.Engine, Store: st, Clock: clock}}
}

func (f *forger) apply(key arbiter.SessionKey, ev arbiter.Event) {
	f.t.Helper()
	if _, _, err := f.svc.Apply(context.Background(), key, ev, true); err != nil {
		f.t.Fatal(err)
	}
}

// publish sends the forger's record of key on the session's wake-up channel as
// version version.
func (f *forger) publish(key arbiter.SessionKey, version uint64) {
	f.t.Helper()
	ctx := context.Background()
	s, err := f.store.Load(ctx, key)
	if err != nil {
		f.t.Fatal(err)
	}
	rec, err := sessioncodec.Encode(s)
	if err != nil {
		f.t.Fatal(err)
	}
	msg := fmt.Sprintf("%d:%d:%s", version, s.CreatedAt.UnixNano(), rec)
	if err := f.h.bst.Client().SPublish(ctx, redisstore.Key(key)+":w", msg).Err(); err != nil {
		f.t.Fatal(err)
	}
}

// TestWakeUndecidedIsConfirmed: a Decide whose wait ends with the job undecided
// answers from a copy Redis confirmed, not from one a wake-up brought: B's cache is
// handed a forged message (a higher version holding an older record, from before the
// user spoke) and the Decide's answer is still what Redis holds (held by the user's
// speech, not in its grace window).
//
// The test waits on what B holds, not on a count of B's steps: on a loaded machine
// the wake-ups of A's save and of the forged message may reach B's Decide as one
// (its wake-up channel holds one), and either way the wait ends on B's cached copy,
// which is the forged one by then.
func TestWakeUndecidedIsConfirmed(t *testing.T) {
	h := newHandoff(t, redisstore.Options{})
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "undecided"}
	out := h.both(key, arbiter.RegisterCall{CallID: "fc_1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
	job := out.Call.JobID
	done := make(chan answer, 1)
	go func() {
		d, err := h.b.Decide(ctx, key, job, true, time.Second, nil) // less than the 1.5 s grace
		done <- answer{d, err}
	}()
	h.park("B's first step") // B recorded that prepare finished (version 2)
	if _, err := h.alone.Decide(ctx, key, job, true, 0, nil); err != nil {
		t.Fatal(err)
	}
	client := h.bst.Client()
	prepared := storedRecord(t, client, key)
	h.both(key, arbiter.Speech{Kind: arbiter.UserActivityStart}) // version 3
	forged := fmt.Sprintf("9:%d:%s", replay.Epoch.UnixNano(), prepared)
	if err := client.SPublish(ctx, redisstore.Key(key)+":w", forged).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "B's cache holds the forged version 9", func() bool {
		s, cached, err := h.bst.LoadCached(ctx, key)
		return err == nil && cached && s.Version == 9
	})
	// The wait ends: the virtual clock moves past B's deadline. B may be between a
	// step's reading of the clock and its timer's registration (a wake-up still in
	// flight), so that its timer falls due a second later: the clock then moves on a
	// second more, at most twice (the hold lasts until 6.5 s: still undecided).
	var got answer
	for i := 0; ; i++ {
		h.clock.AdvanceTo(h.clock.Now().Add(time.Second))
		select {
		case got = <-done:
		case <-time.After(100 * time.Millisecond):
			if i < 2 {
				continue
			}
			got = h.answer(done)
		}
		break
	}
	if got.err != nil {
		t.Fatal(got.err)
	}
	want, err := h.alone.Decide(ctx, key, job, true, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.d, want) || got.d.Decision != arbiter.Undecided {
		t.Fatalf("Decide on B at the end of its wait:\n %+v\nwant %+v (undecided)", got.d, want)
	}
}

// TestWakeForgedVersion: a wake-up message announcing a version Redis never wrote
// (forged, or a save a failover lost) with a record in it does not wedge the session
// on the replica that heard it: the first compare-and-set on that copy fails, its
// reply (what Redis holds) replaces the copy, and the retry succeeds, answering as the
// engine alone does.
func TestWakeForgedVersion(t *testing.T) {
	h := newHandoff(t, redisstore.Options{})
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "forged-version"}
	h.both(key, arbiter.RegisterCall{CallID: "fc_1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
	ch, stop, err := h.bst.Watch(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	h.both(key, arbiter.Speech{Kind: arbiter.UserActivityStart})
	<-ch
	rec := storedRecord(t, h.bst.Client(), key)
	s, err := h.bst.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	forged := fmt.Sprintf("99:%d:%s", s.CreatedAt.UnixNano(), rec)
	if err := h.bst.Client().SPublish(ctx, redisstore.Key(key)+":w", forged).Err(); err != nil {
		t.Fatal(err)
	}
	<-ch
	if got, cached, err := h.bst.LoadCached(ctx, key); err != nil || !cached || got.Version != 99 {
		t.Fatalf("B's cache: version %v, cached %v, %v; want the forged version 99", got, cached, err)
	}
	for _, ev := range []arbiter.Event{arbiter.Speech{Kind: arbiter.UserActivityEnd}, arbiter.Transcript{Text: "Actually, stop. Don't book it."}} {
		got, _, err := h.b.Apply(ctx, key, ev, true)
		if err != nil {
			t.Fatalf("%T on B after the forged message: %v", ev, err)
		}
		want, _, err := h.alone.Apply(ctx, key, ev, true)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%T on B:\n %+v\nwant %+v", ev, got, want)
		}
	}
}

// TestWakeOutOfOrder: wake-up messages older than B's cached copy, of another
// lifetime, or from an earlier version (the bare version) never put an older record
// in B's cache: B's next request on the session answers from what Redis holds.
func TestWakeOutOfOrder(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a, err := redisstore.Open(srv.URL(), redisstore.Options{CacheSessions: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := redisstore.Open(srv.URL(), redisstore.Options{CacheSessions: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	key := arbiter.SessionKey{ID: "order"}
	ch, stop, err := b.Watch(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	s := arbiter.NewSession(key, replay.Epoch)
	records := map[uint64]string{}
	for range 3 {
		s.Seq++ // any change
		if err := a.Save(ctx, s, time.Minute); err != nil {
			t.Fatal(err)
		}
		<-ch
		records[s.Version] = storedRecord(t, a.Client(), key)
	}
	check := func(what string, wantVersion uint64, wantCached bool) {
		t.Helper()
		got, cached, err := b.LoadCached(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != wantVersion || cached != wantCached || got.Seq != int(wantVersion) {
			t.Fatalf("%s: B has version %d (seq %d, cached %v), want %d (cached %v)", what, got.Version, got.Seq, cached, wantVersion, wantCached)
		}
	}
	check("after three saves", 3, true)
	publish := func(msg string) {
		t.Helper()
		if err := a.Client().SPublish(ctx, redisstore.Key(key)+":w", msg).Err(); err != nil {
			t.Fatal(err)
		}
		<-ch // B's hub offers a message to the cache before it wakes the watchers
	}
	life := fmt.Sprint(replay.Epoch.UnixNano())
	publish("2:" + life + ":" + records[2]) // an older record, late
	check("after version 2's message", 3, true)
	publish("3:" + life + ":" + records[2]) // the same version: never replaced
	check("after a second version 3", 3, true)
	publish("2") // an earlier version's bare message, older
	check("after a bare version 2", 3, true)
	publish("9:" + fmt.Sprint(replay.Epoch.Add(time.Hour).UnixNano()) + ":" + records[1]) // another lifetime
	check("after another lifetime's message", 3, false)                                   // dropped, read again
	publish("garbage")
	check("after a malformed message", 3, true)
	publish("4") // a newer bare version (an earlier replica's save): the copy is stale
	check("after a bare version 4", 3, false)
	if cs := b.CacheStats(); cs.Woken != 3 {
		t.Errorf("B's cache %+v: want the records of the three saves taken", cs)
	}
}

// BenchmarkWakeDecide: one hand-off a op (TestWakeDecide's: a call, the user's turn
// and a stop on A, a Decide parked on B), reporting B's round trips from the moment
// its Decide waits to its answer (wake-trips/op: two wake-ups, the end of the user's
// turn and the transcript), with the record in the wake-up messages and without.
func BenchmarkWakeDecide(b *testing.B) {
	for _, bc := range []struct {
		name string
		opt  redisstore.Options
	}{
		{"record=sent", redisstore.Options{}},
		{"record=none", redisstore.Options{WakeRecordBytes: -1}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := newHandoff(b, bc.opt)
			var trips int64
			b.ResetTimer()
			for i := range b.N {
				_, n := h.run(arbiter.SessionKey{ID: fmt.Sprintf("b%d", i)}, "Actually, stop. Don't book it.")
				trips += n
			}
			b.ReportMetric(float64(trips)/float64(b.N), "wake-trips/op")
		})
	}
}

// storedRecord is the encoded session Redis holds for key (the D of "V:C:D").
func storedRecord(t *testing.T, client redis.UniversalClient, key arbiter.SessionKey) string {
	t.Helper()
	val, err := client.Get(context.Background(), redisstore.Key(key)).Result()
	if err != nil {
		t.Fatal(err)
	}
	_, _, rec, ok := redisstore.ParseRecord(val)
	if !ok {
		t.Fatalf("session %q: malformed record %q", key.ID, val)
	}
	return rec
}
