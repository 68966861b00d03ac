package redisstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/redistest"
	"github.com/voicearbiter/arbiter/policyfile"
	"github.com/voicearbiter/arbiter/replay"
	"github.com/voicearbiter/arbiter/store/redisstore"
	"github.com/voicearbiter/arbiter/store/storetest"
)

// roundTrips counts what the client sends to Redis: one per command (ProcessHook) and
// one per pipeline (ProcessPipelineHook), each a network round trip.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

// bench is an arbiter.Service under the booking policy on a real redis-server, on a
// frozen virtual clock (so timers never decide behind the benchmark's back), with the
// local cache serve has by default (--redis-cache-sessions).
type bench struct {
	svc *arbiter.Service
	rt  *roundTrips
	ctx context.Context
}

func newBench(b *testing.B) *bench {
	b.Helper()
	srv := redistest.Start(b)
	policy, err := policyfile.Load("../../testdata/tools/booking.yaml")
	if err != nil {
		b.Fatal(err)
	}
	client, err := redisstore.NewClient(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	rt := &roundTrips{}
	client.AddHook(rt)
	st := redisstore.New(client, redisstore.Options{CacheSessions: benchCache})
	b.Cleanup(func() { _ = st.Close() })
	clock := replay.NewVirtualClock(replay.Epoch)
	be := &bench{svc: &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: st, Clock: clock}, rt: rt, ctx: context.Background()}
	// Load the save script into Redis's cache (EVAL once), so the numbers are the
	// steady state's: EVALSHA only.
	be.apply(b, arbiter.SessionKey{ID: "warm-up"}, arbiter.Speech{Kind: arbiter.ModelOutputStart}, true)
	return be
}

func (be *bench) apply(b *testing.B, key arbiter.SessionKey, ev arbiter.Event, create bool) arbiter.Output {
	out, _, err := be.svc.Apply(be.ctx, key, ev, create)
	if err != nil {
		b.Fatalf("%T: %v", ev, err)
	}
	return out
}

// run measures op b.N times and reports round trips per op; setup (not measured,
// not counted) runs before each op.
func (be *bench) run(b *testing.B, setup func(i int), op func(i int)) {
	var counted int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if setup != nil {
			b.StopTimer()
			setup(i)
			b.StartTimer()
		}
		before := be.rt.n.Load()
		op(i)
		counted += be.rt.n.Load() - before
	}
	b.StopTimer()
	b.ReportMetric(float64(counted)/float64(b.N), "roundtrips/op")
}

// BenchmarkHotPath measures the RPCs an agent makes on every turn, through
// arbiter.Service on a real redis-server.
func BenchmarkHotPath(b *testing.B) {
	b.Run("RegisterCall", func(b *testing.B) {
		be := newBench(b)
		be.run(b, nil, func(i int) {
			key := arbiter.SessionKey{ID: fmt.Sprintf("reg-%d", i/16)} // 16 calls a session
			be.apply(b, key, arbiter.RegisterCall{CallID: fmt.Sprintf("c%d", i), Tool: "get_weather", Args: map[string]any{"city": fmt.Sprint(i)}}, true)
		})
	})
	b.Run("ReportSpeech", func(b *testing.B) {
		be := newBench(b)
		key := arbiter.SessionKey{ID: "speech"}
		kinds := []arbiter.SpeechKind{arbiter.ModelOutputStart, arbiter.ModelTurnComplete}
		be.run(b, nil, func(i int) {
			be.apply(b, key, arbiter.Speech{Kind: kinds[i%2]}, true)
		})
	})
	b.Run("ReportTranscript", func(b *testing.B) {
		be := newBench(b)
		key := arbiter.SessionKey{ID: "transcript"}
		be.apply(b, key, arbiter.Speech{Kind: arbiter.UserActivityStart}, true)
		be.run(b, nil, func(i int) {
			be.apply(b, key, arbiter.Transcript{Text: fmt.Sprintf("I would like the slot at %d", i), Interim: true}, true)
		})
	})
	b.Run("Decide", func(b *testing.B) {
		// The common case: the job is prepared and still held (grace window), so the
		// poll reads and answers PENDING without writing.
		be := newBench(b)
		key := arbiter.SessionKey{ID: "decide"}
		out := be.apply(b, key, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}, true)
		job := out.Call.JobID
		be.apply(b, key, arbiter.Decide{JobID: job, Prepared: true}, false)
		be.run(b, nil, func(i int) {
			d, err := be.svc.Decide(be.ctx, key, job, true, 0, nil)
			if err != nil || d.Decision != arbiter.Undecided {
				b.Fatalf("decide: %+v %v", d, err)
			}
		})
	})
	b.Run("DecideDeciding", func(b *testing.B) {
		// A Decide that makes the decision (the grace window ran out): it writes.
		be := newBench(b)
		clock := be.svc.Clock.(*replay.VirtualClock)
		var key arbiter.SessionKey
		var job string
		be.run(b, func(i int) {
			key = arbiter.SessionKey{ID: fmt.Sprintf("decide-%d", i)}
			out := be.apply(b, key, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}, true)
			job = out.Call.JobID
			be.apply(b, key, arbiter.Decide{JobID: job, Prepared: true}, false)
			clock.AdvanceTo(clock.Now().Add(2 * time.Second))
		}, func(i int) {
			d, err := be.svc.Decide(be.ctx, key, job, true, 0, nil)
			if err != nil || d.Decision != arbiter.DecisionCommit {
				b.Fatalf("decide: %+v %v", d, err)
			}
		})
	})
	b.Run("Complete", func(b *testing.B) {
		be := newBench(b)
		var key arbiter.SessionKey
		var job string
		be.run(b, func(i int) {
			key = arbiter.SessionKey{ID: fmt.Sprintf("complete-%d", i/16)}
			out := be.apply(b, key, arbiter.RegisterCall{CallID: fmt.Sprintf("c%d", i), Tool: "get_weather", Args: map[string]any{"city": fmt.Sprint(i)}}, true)
			job = out.Call.JobID
		}, func(i int) {
			be.apply(b, key, arbiter.Complete{JobID: job, Outcome: arbiter.Result, Result: map[string]any{"temp": 21.5}}, false)
		})
	})
}

// benchCache is the local cache of the benchmarks' stores: serve's default.
const benchCache = 10000

// BenchmarkTransition measures one transition (load, step, compare-and-set save) on a
// real redis-server started for it, with serve's default local cache, and the round
// trips it makes; BenchmarkTransitionNoCache the same without the cache.
func BenchmarkTransition(b *testing.B) { benchTransition(b, benchCache) }

// BenchmarkTransitionNoCache: BenchmarkTransition with --redis-cache-sessions 0.
func BenchmarkTransitionNoCache(b *testing.B) { benchTransition(b, 0) }

func benchTransition(b *testing.B, cacheSessions int) {
	storetest.BenchTransition(b, "../..", func(b *testing.B) (arbiter.Store, func() int64) {
		srv := redistest.Start(b)
		client, err := redisstore.NewClient(srv.URL())
		if err != nil {
			b.Fatal(err)
		}
		rt := &roundTrips{}
		client.AddHook(rt)
		st := redisstore.New(client, redisstore.Options{CacheSessions: cacheSessions})
		b.Cleanup(func() { _ = st.Close() })
		return st, rt.n.Load
	})
}
