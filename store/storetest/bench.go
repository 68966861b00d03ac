package storetest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/policyfile"
)

// benchEpoch is the virtual clock the benchmark sessions start at.
var benchEpoch = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

// BenchEngine returns the engine the benchmark sessions are made with: the booking
// policy (root is the repository root, for testdata/tools/booking.yaml) and the
// default history bound.
func BenchEngine(tb testing.TB, root string) *arbiter.Engine {
	tb.Helper()
	policy, err := policyfile.Load(filepath.Join(root, "testdata/tools/booking.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	return &arbiter.Engine{Policy: policy}
}

// IdleSession returns the session bench/soak leaves behind (the "idle session" of
// issue 16 and bench/HISTORY.md): RegisterCall book_slot, user voice activity start
// and end, the transcript "Stop.", Decide(prepared) -> CANCEL, Complete(CANCELLED).
func IdleSession(tb testing.TB, e *arbiter.Engine, id string) *arbiter.Session {
	return BusySession(tb, e, id, 1)
}

// BusySession returns a session with n calls, n jobs and n user utterances: n times
// a booking of another slot, every other one stopped by the user ("Stop.", CANCEL)
// and the rest committed after the grace window (Decide, Complete COMMITTED). The
// engine is stepped directly on a virtual clock, 500 ms an event.
func BusySession(tb testing.TB, e *arbiter.Engine, id string, n int) *arbiter.Session {
	tb.Helper()
	now := benchEpoch
	s := arbiter.NewSession(arbiter.SessionKey{ID: id}, now)
	step := func(ev arbiter.Event) arbiter.Output {
		now = now.Add(500 * time.Millisecond)
		out, err := e.Step(s, now, ev)
		if err != nil {
			tb.Fatalf("%T: %v", ev, err)
		}
		return out
	}
	for i := range n {
		now = now.Add(3 * time.Second) // past the trigger lookback of the last utterance
		out := step(arbiter.RegisterCall{CallID: fmt.Sprintf("fc_%s_%d", id, i), Tool: "book_slot",
			Args: map[string]any{"slot": fmt.Sprintf("2026-11-%02d %dpm", 1+i%28, 1+i%11)}})
		job := out.Call.JobID
		step(arbiter.Speech{Kind: arbiter.UserActivityStart})
		step(arbiter.Speech{Kind: arbiter.UserActivityEnd})
		if i%2 == 0 {
			step(arbiter.Transcript{Text: "Stop."})
			step(arbiter.Decide{JobID: job, Prepared: true})
			step(arbiter.Complete{JobID: job, Outcome: arbiter.Cancelled})
			continue
		}
		step(arbiter.Transcript{Text: "Yes, that one please."})
		step(arbiter.Decide{JobID: job, Prepared: true})
		now = now.Add(2 * time.Second) // past the grace window
		if d := step(arbiter.Decide{JobID: job, Prepared: true}); d.Decision == nil || d.Decision.Decision != arbiter.DecisionCommit {
			tb.Fatalf("job %s: decision %+v, want commit", job, d.Decision)
		}
		step(arbiter.Complete{JobID: job, Outcome: arbiter.Committed, Result: map[string]any{"confirmation": fmt.Sprintf("BK-%04d", i)}})
	}
	return s
}

// BenchTransition measures one transition on st through arbiter.Service: a load, an
// engine step that changes the session (ReportSpeech, model output start and turn
// complete in turn) and a compare-and-set save, on an idle session and on a session
// with 20 calls, jobs and utterances (BusySession). newStore returns a fresh store
// (cleaned up by b) and, for a networked store, a counter of the round trips it has
// made (nil: none to count); then the benchmark reports roundtrips/op.
func BenchTransition(b *testing.B, root string, newStore func(b *testing.B) (arbiter.Store, func() int64)) {
	e := BenchEngine(b, root)
	for _, c := range []struct {
		name string
		n    int
	}{{"idle", 1}, {"calls20", 20}} {
		b.Run(c.name, func(b *testing.B) {
			st, trips := newStore(b)
			s := BusySession(b, e, "bench-"+c.name, c.n)
			s.Version = 0
			ctx := context.Background()
			if err := st.Save(ctx, s, time.Hour); err != nil {
				b.Fatal(err)
			}
			clock := &fixedClock{now: s.Now}
			svc := &arbiter.Service{Engine: e, Store: st, Clock: clock}
			kinds := []arbiter.SpeechKind{arbiter.ModelOutputStart, arbiter.ModelTurnComplete}
			var before int64
			if trips != nil {
				before = trips()
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				out, _, err := svc.Apply(ctx, s.Key, arbiter.Speech{Kind: kinds[n%2]}, false)
				if err != nil || !out.Changed {
					b.Fatalf("apply: changed %v, %v", out.Changed, err)
				}
				n++
			}
			if trips != nil {
				b.ReportMetric(float64(trips()-before)/float64(n), "roundtrips/op")
			}
		})
	}
}
