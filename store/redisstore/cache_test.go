package redisstore_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/redistest"
	"github.com/voicearbiter/arbiter/replay"
	"github.com/voicearbiter/arbiter/store/memory"
	"github.com/voicearbiter/arbiter/store/redisstore"
	"github.com/voicearbiter/arbiter/store/storetest"
)

// TestTwoReplicasCache: two replicas with local caches on one Redis, each serving its
// own ten sessions (sessions follow their agent's connection) except that every fifth
// round each session's request goes to the other replica (a reconnect, a Decide on
// another replica). Every replica's cached copy of a session the other one changed is
// stale, and the compare-and-set must catch it: every session ends exactly as the
// engine alone makes it from the same requests, and the requests cost about one
// round trip each, with the cache hit rate the steady state gives.
func TestTwoReplicasCache(t *testing.T) {
	r := startReplicas(t, 2, 100)
	reps, alone, clock := r.reps, r.alone, r.clock

	ctx := context.Background()
	const sessions, rounds = 20, 20
	var requests int
	lastJob := map[int]string{} // by session: the job its latest RegisterCall started
	total := func() int64 { return reps[0].rt.n.Load() + reps[1].rt.n.Load() }
	for r := range rounds {
		before := total()
		for i := range sessions {
			key := arbiter.SessionKey{ID: fmt.Sprintf("s%d", i)}
			owner := i % 2
			if r%5 == 4 {
				owner = 1 - owner
			}
			var ev arbiter.Event = arbiter.Speech{Kind: []arbiter.SpeechKind{arbiter.ModelOutputStart, arbiter.ModelTurnComplete}[r%2]}
			if r%3 == 0 {
				ev = arbiter.RegisterCall{CallID: fmt.Sprintf("c%d", r), Tool: "book_slot", Args: map[string]any{"slot": fmt.Sprintf("2026-11-%02d 3pm", r+1)}}
			}
			got, _, err := reps[owner].svc.Apply(ctx, key, ev, true)
			if err != nil {
				t.Fatalf("round %d, %s on replica %d: %v", r, key.ID, owner, err)
			}
			want, _, err := alone.Apply(ctx, key, ev, true)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, %s on replica %d: output\n %+v\nwant %+v", r, key.ID, owner, got, want)
			}
			if want.Call != nil {
				lastJob[i] = want.Call.JobID
			}
			requests++
		}
		clock.AdvanceTo(clock.Now().Add(700 * time.Millisecond))
		// Rounds 1 to 3 go to the replica that served the session before: the steady
		// state, exactly one round trip a request (the compare-and-set).
		if n := total() - before; r >= 1 && r <= 3 && n != sessions {
			t.Errorf("round %d (every session on its own replica): %d round trips for %d requests, want %d", r, n, sessions, sessions)
		}
	}
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%d", i)
	}
	sameStored(t, reps[0].st, r.ref, ids...)
	var trips int64
	var hits, misses, stale uint64
	for _, rep := range reps {
		trips += rep.rt.n.Load()
		cs := rep.st.CacheStats()
		hits += cs.Hits
		misses += cs.Misses
		stale += cs.Stale
	}
	rate := float64(hits-stale) / float64(hits+misses)
	perReq := float64(trips) / float64(requests)
	t.Logf("%d requests: %.2f round trips each; cache: %d lookups, %d hits (%d of them stale), %d misses: hit rate %.1f %% (fresh hits)",
		requests, perReq, hits+misses, hits, stale, misses, 100*rate)
	// Per session: 20 requests, 25 lookups. Its first request (round 0) finds no copy
	// and creates the session without a read (one round trip, no lookup); the first on
	// the other replica (round 4) and each later turn to the other replica and back
	// (rounds 5, 9, 10, 14, 15, 19) find no copy or a stale one: a failed
	// compare-and-set, then the retry on the record it returned. So 6 stale hits and 19
	// fresh ones (76 %), 28 round trips for 20 requests (1.4), plus the connections'
	// and the script's first commands.
	if perReq > 1.5 || rate < 0.70 {
		t.Errorf("%.2f round trips a request, hit rate %.2f: want at most 1.5 and at least 0.70", perReq, rate)
	}

	// Read-only requests on each session's own replica, whose copy the other one's
	// change in the last round made stale: answered as the engine alone answers (the
	// copy is checked, found stale, and the request answered from Redis).
	for i := range sessions {
		key := arbiter.SessionKey{ID: fmt.Sprintf("s%d", i)}
		ev := arbiter.Decide{JobID: lastJob[i]}
		got, _, err := reps[i%2].svc.Apply(ctx, key, ev, false)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := alone.Apply(ctx, key, ev, false)
		if err != nil {
			t.Fatal(err)
		}
		if got.Changed || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: read-only decide on the stale replica:\n %+v\nwant %+v", key.ID, got, want)
		}
	}
}

// TestCreateWithoutRead: a session a replica holds no copy of is created by one
// round trip (the compare-and-set at version 0), by RegisterCall and ReportSpeech
// alike; on a replica that has not seen an existing session the same request costs a
// failed compare-and-set and the retry on the record it returned (two, as a read and
// a save would), and one the stored record refuses the same two (the failed
// compare-and-set, then Current confirming the refusal). Every answer is the engine alone's.
func TestCreateWithoutRead(t *testing.T) {
	r := startReplicas(t, 2, 10)
	reps, alone := r.reps, r.alone
	ctx := context.Background()
	// Each replica's first call of a script may cost an EVAL after a NOSCRIPT: warm
	// both scripts on both.
	for i, rep := range reps {
		warm := arbiter.SessionKey{ID: fmt.Sprintf("warm%d", i)}
		_, s, err := rep.svc.Apply(ctx, warm, arbiter.Speech{Kind: arbiter.ModelOutputStart}, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rep.st.Current(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		replica int
		key     string
		ev      arbiter.Event
		trips   int64
	}{
		{0, "new-call", arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}, 1},
		{0, "new-speech", arbiter.Speech{Kind: arbiter.UserActivityStart}, 1},
		{1, "new-call", arbiter.RegisterCall{CallID: "c2", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 4pm"}}, 2},
		{1, "new-speech", arbiter.Speech{Kind: arbiter.UserActivityEnd}, 2},
		{0, "new-call", arbiter.Speech{Kind: arbiter.ModelOutputStart}, 2}, // stale copy: replica 1 saved since
		{0, "reused", arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}, 1},
		// A call id reused with other arguments, on a replica without a copy: the new
		// session it steps takes it, the compare-and-set does not, and the stored
		// record it returned refuses it (FAILED_PRECONDITION), an answer Current then
		// confirms.
		{1, "reused", arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 5pm"}}, 2},
	}
	for _, st := range steps {
		key := arbiter.SessionKey{ID: st.key}
		rep := reps[st.replica]
		before := rep.rt.n.Load()
		got, _, gotErr := rep.svc.Apply(ctx, key, st.ev, true)
		trips := rep.rt.n.Load() - before
		want, _, wantErr := alone.Apply(ctx, key, st.ev, true)
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("%s on replica %d: error %v, want %v", st.key, st.replica, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s on replica %d: output\n %+v\nwant %+v", st.key, st.replica, got, want)
		}
		if trips != st.trips {
			t.Errorf("%s (%T) on replica %d: %d round trips, want %d", st.key, st.ev, st.replica, trips, st.trips)
		}
	}
	sameStored(t, reps[0].st, r.ref, "new-call", "new-speech", "reused")
}

// TestCacheAfterLostWrite: Redis loses a write (a failover to a replica that had not
// got it; here the record set back by hand) and another replica makes the same
// version again with other content: the replica that wrote the lost one still caches
// it, and its next change must not overwrite the other's (the compare-and-set compares
// the record's content, not only its version). Every session ends as the engine alone
// makes it from the requests Redis kept, and a business key the kept request booked
// is a duplicate afterwards.
func TestCacheAfterLostWrite(t *testing.T) {
	r := startReplicas(t, 2, 10)
	reps, alone := r.reps, r.alone
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "lost-write"}
	call := func(id, slot string) arbiter.RegisterCall {
		return arbiter.RegisterCall{CallID: id, Tool: "book_slot", Args: map[string]any{"slot": slot}}
	}
	both := func(replica int, ev arbiter.Event) {
		t.Helper()
		got, _, err := reps[replica].svc.Apply(ctx, key, ev, true)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := alone.Apply(ctx, key, ev, true)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v on replica %d:\n %+v\nwant %+v", ev, replica, got, want)
		}
	}
	both(0, call("c1", "tomorrow 10am"))
	rc := reps[0].st.Client()
	kept, err := rc.Get(ctx, redisstore.Key(key)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := reps[0].svc.Apply(ctx, key, call("c2", "tomorrow 11am"), true); err != nil { // the write Redis loses
		t.Fatal(err)
	}
	if err := rc.Set(ctx, redisstore.Key(key), kept, 0).Err(); err != nil {
		t.Fatal(err)
	}
	both(1, call("c3", "tomorrow 12pm")) // the same version again, on the other replica
	both(0, call("c4", "tomorrow 1pm"))  // replica 0 still caches its lost write
	both(0, call("c5", "tomorrow 12pm")) // c3's business key
	sameStored(t, reps[1].st, r.ref, key.ID)
}

// TestCacheForgetsAnUnkeptVersion: a wake-up message announcing a version Redis
// never reaches (forged, or a write a failover lost), without a record, makes the
// replica that heard it read Redis for its next request, but not for ever: once a
// compare-and-set succeeded below that version, the replica forgets it, and the
// requests after cost one round trip each again.
func TestCacheForgetsAnUnkeptVersion(t *testing.T) {
	rep := startReplicas(t, 1, 10).reps[0]
	st, rt, svc, client := rep.st, rep.rt, rep.svc, rep.st.Client()
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "unkept"}
	_, s, err := svc.Apply(ctx, key, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	ch, stop, err := st.Watch(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	msg := fmt.Sprintf("999999999999999:%d:", s.CreatedAt.UnixNano())
	if err := client.SPublish(ctx, redisstore.Key(key)+":w", msg).Err(); err != nil {
		t.Fatal(err)
	}
	<-ch
	kinds := []arbiter.SpeechKind{arbiter.ModelOutputStart, arbiter.ModelTurnComplete}
	for i := range 4 {
		before := rt.n.Load()
		if _, _, err := svc.Apply(ctx, key, arbiter.Speech{Kind: kinds[i%2]}, true); err != nil {
			t.Fatal(err)
		}
		<-ch // its own save's wake-up
		if n := rt.n.Load() - before; i > 0 && n != 1 {
			t.Errorf("request %d after the message: %d round trips, want 1", i+1, n)
		}
	}
}

// replicas is a redis-server of a test's own with arbiter replicas on it, each a
// Service over a Store with a local cache and a go-redis hook counting its round
// trips, all on one virtual clock; beside them the engine alone on the memory store
// (alone, over ref), whose answers the tests compare theirs with.
type replicas struct {
	reps  []replica
	alone *arbiter.Service
	ref   *memory.Store
	clock *replay.VirtualClock
}

// replica is one of replicas: its store, its round trips, its service.
type replica struct {
	st  *redisstore.Store
	rt  *roundTrips
	svc *arbiter.Service
}

// startReplicas starts n replicas with caches of cacheSessions sessions (see
// replicas); everything stops at the test's end.
func startReplicas(t *testing.T, n, cacheSessions int) *replicas {
	t.Helper()
	srv := redistest.Start(t)
	e := storetest.BenchEngine(t, "../..")
	clock := replay.NewVirtualClock(replay.Epoch)
	r := &replicas{clock: clock, ref: memory.New(clock.Now)}
	t.Cleanup(func() { _ = r.ref.Close() })
	r.alone = &arbiter.Service{Engine: e, Store: r.ref, Clock: clock}
	for range n {
		client, err := redisstore.NewClient(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		rt := &roundTrips{}
		client.AddHook(rt)
		st := redisstore.New(client, redisstore.Options{CacheSessions: cacheSessions})
		t.Cleanup(func() { _ = st.Close() })
		r.reps = append(r.reps, replica{st: st, rt: rt, svc: &arbiter.Service{Engine: e, Store: st, Clock: clock}})
	}
	return r
}

// services returns the replicas' services, in order.
func (r *replicas) services() []*arbiter.Service {
	svcs := make([]*arbiter.Service, len(r.reps))
	for i, rep := range r.reps {
		svcs[i] = rep.svc
	}
	return svcs
}

// sameStored fails t unless got holds each session (by id, default tenant) exactly as
// want, the engine alone's store, does.
func sameStored(t *testing.T, got, want arbiter.Store, ids ...string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids {
		key := arbiter.SessionKey{ID: id}
		g, err := got.Load(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		w, err := want.Load(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		g.Digest, w.Digest = "", "" // the stores' fingerprints of their records
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: stored session differs from the engine alone's:\n got %+v\nwant %+v", id, g, w)
		}
	}
}

// TestCacheFailsClosed: with the cache, a Redis that is down fails every request with
// Unavailable, those that change the session and those that do not (which are never
// answered from the cache), and a Redis that came back empty (no persistence) is not
// papered over by the cached copy: the session is gone (NotFound), and a new one
// starts on version 1.
func TestCacheFailsClosed(t *testing.T) {
	srv := redistest.Start(t)
	st, err := redisstore.Open(srv.URL(), redisstore.Options{CacheSessions: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := storetest.BenchEngine(t, "../..")
	clock := replay.NewVirtualClock(replay.Epoch)
	svc := &arbiter.Service{Engine: e, Store: st, Clock: clock}
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "cached"}
	out, _, err := svc.Apply(ctx, key, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "2026-11-02 3pm"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	job := out.Call.JobID
	if _, _, err := svc.Apply(ctx, key, arbiter.Speech{Kind: arbiter.ModelOutputStart}, true); err != nil {
		t.Fatal(err)
	}
	// A Decide before prepare while the job is held changes nothing: read-only.
	readOnly := arbiter.Decide{JobID: job}
	if out, _, err := svc.Apply(ctx, key, readOnly, false); err != nil || out.Changed {
		t.Fatalf("read-only decide: changed %v, %v", out.Changed, err)
	}
	if cs := st.CacheStats(); cs.Sessions != 1 || cs.Hits == 0 {
		t.Fatalf("cache %+v, want the session cached and hit", cs)
	}

	srv.Kill()
	for _, ev := range []arbiter.Event{readOnly, arbiter.Speech{Kind: arbiter.ModelTurnComplete}} {
		if _, _, err := svc.Apply(ctx, key, ev, false); arbiter.KindOf(err) != arbiter.Unavailable {
			t.Errorf("%T with Redis down: %v, want Unavailable", ev, err)
		}
	}
	srv.Restart() // no persistence: everything is gone
	for _, ev := range []arbiter.Event{arbiter.Speech{Kind: arbiter.ModelTurnComplete}, readOnly} {
		if _, _, err := svc.Apply(ctx, key, ev, false); arbiter.KindOf(err) != arbiter.NotFound {
			t.Errorf("%T on the emptied Redis: %v, want NotFound", ev, err)
		}
	}
	_, s, err := svc.Apply(ctx, key, arbiter.Speech{Kind: arbiter.ModelOutputStart}, true)
	if err != nil || s.Version != 1 || len(s.Calls) != 0 {
		t.Fatalf("new session: %v, version %d, %d calls; want version 1 and no calls", err, s.Version, len(s.Calls))
	}
}

// TestCacheSessionStartedAgain: a session that expired in Redis while a replica held
// it in its cache, and was started again by another replica (its version back at 1,
// below the cached one), is continued from Redis's record: one stale compare-and-set,
// then the retry on the record it returned, not a lost race every time (ABORTED).
func TestCacheSessionStartedAgain(t *testing.T) {
	r := startReplicas(t, 2, 10)
	svcs := r.services()
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "again"}
	kinds := []arbiter.SpeechKind{arbiter.ModelOutputStart, arbiter.ModelTurnComplete}
	for i := range 5 {
		if _, _, err := svcs[0].Apply(ctx, key, arbiter.Speech{Kind: kinds[i%2]}, true); err != nil {
			t.Fatal(err)
		}
	}
	st0 := svcs[0].Store.(*redisstore.Store)
	if err := st0.Client().Del(ctx, redisstore.Key(key)).Err(); err != nil { // its idle TTL ran out
		t.Fatal(err)
	}
	// Another creation time: another lifetime (a lifetime is the creation time to the
	// nanosecond; with the clock frozen, version 1 of the same lifetime below the
	// version 5 this replica answered from would be a rollback, see rollback.go).
	r.clock.AdvanceTo(r.clock.Now().Add(time.Millisecond))
	if _, s, err := svcs[1].Apply(ctx, key, arbiter.Speech{Kind: arbiter.ModelOutputStart}, true); err != nil || s.Version != 1 {
		t.Fatalf("started again on the other replica: %v, version %v", err, s)
	}
	_, s, err := svcs[0].Apply(ctx, key, arbiter.Speech{Kind: arbiter.ModelTurnComplete}, true)
	if err != nil || s.Version != 2 {
		t.Fatalf("the replica that cached version 5: %v, %+v; want version 2", err, s)
	}
	if cs := st0.CacheStats(); cs.Stale != 1 {
		t.Errorf("cache %+v, want one stale hit", cs)
	}
}

// TestCacheLifetime: a replica caching version 3 of a session that then expired and
// was started again elsewhere, and has reached version 3 again, does not overwrite the
// new lifetime with a step of the old one: the compare-and-set compares the lifetime
// (the session's creation time) too, so the replica continues the new lifetime.
func TestCacheLifetime(t *testing.T) {
	r := startReplicas(t, 2, 10)
	svcs, clock := r.services(), r.clock
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "lifetime"}
	reg := func(svc *arbiter.Service, id string) *arbiter.Session {
		t.Helper()
		_, s, err := svc.Apply(ctx, key, arbiter.RegisterCall{CallID: id, Tool: "book_slot", Args: map[string]any{"slot": "2026-11-03 " + id}}, true)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, id := range []string{"old1", "old2", "old3"} {
		reg(svcs[0], id)
	}
	st0 := svcs[0].Store.(*redisstore.Store)
	if err := st0.Client().Del(ctx, redisstore.Key(key)).Err(); err != nil { // its idle TTL ran out
		t.Fatal(err)
	}
	clock.AdvanceTo(clock.Now().Add(time.Millisecond)) // another creation time: another lifetime; no timer due
	for _, id := range []string{"new1", "new2", "new3"} {
		reg(svcs[1], id)
	}
	// A read-only step on the replica caching version 3 of the old lifetime answers
	// from the new one (Current compares the lifetime too).
	if _, s, err := svcs[0].Apply(ctx, key, arbiter.Tick{}, false); err != nil || len(s.Calls) != 3 || s.Calls[0].ID != "new1" {
		t.Fatalf("tick: %v, %+v; want the new lifetime", err, s)
	}
	s := reg(svcs[0], "new4")
	var ids []string
	for _, c := range s.Calls {
		ids = append(ids, c.ID)
	}
	if s.Version != 4 || !reflect.DeepEqual(ids, []string{"new1", "new2", "new3", "new4"}) {
		t.Fatalf("version %d, calls %v: want version 4 and the new lifetime's calls", s.Version, ids)
	}
}

// TestCacheReadOnlyIsCurrent: a read-only request (a Tick that fires nothing, as
// Watch and GetSession step) on a replica whose cached copy another replica's change
// made stale answers with the change: the copy is checked (Current) before a read-only
// answer stands.
func TestCacheReadOnlyIsCurrent(t *testing.T) {
	svcs := startReplicas(t, 2, 10).services()
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "readonly"}
	if _, _, err := svcs[0].Apply(ctx, key, arbiter.Speech{Kind: arbiter.ModelOutputStart}, true); err != nil {
		t.Fatal(err)
	}
	if out, _, err := svcs[0].Apply(ctx, key, arbiter.Tick{}, false); err != nil || out.Changed {
		t.Fatalf("tick: changed %v, %v; want a read-only step", out.Changed, err)
	}
	if _, _, err := svcs[1].Apply(ctx, key, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "2026-11-04 3pm"}}, true); err != nil {
		t.Fatal(err)
	}
	_, s, err := svcs[0].Apply(ctx, key, arbiter.Tick{}, false)
	if err != nil || len(s.Calls) != 1 || s.Version != 2 {
		t.Fatalf("tick on the replica with the stale copy: %v, version %d, %d calls; want version 2 with the other replica's call", err, s.Version, len(s.Calls))
	}
	if cs := svcs[0].Store.(*redisstore.Store).CacheStats(); cs.Hits < 2 {
		t.Errorf("cache %+v: the ticks did not use the cache", cs)
	}
}
