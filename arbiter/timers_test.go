package arbiter

import (
	"fmt"
	"testing"
	"time"
)

// pendingSession returns a session of n pending calls registered at 0, all due at
// their max_pending deadline (60 s) at once: every other one a side-effecting
// booking (its own business key, its own job, prepared and held by an open utterance,
// so each job also offers its hold timers), the rest read-only calls. It is issue
// 26's Poll that fires 1,024 deadlines at once.
func pendingSession(tb testing.TB, e *Engine, n int) *Session {
	tb.Helper()
	s := NewSession(SessionKey{ID: "pending"}, ms(0))
	for i := 0; i < n; i++ {
		ev := RegisterCall{CallID: fmt.Sprintf("c%d", i), Tool: "get_weather", Args: map[string]any{"city": fmt.Sprintf("city %d", i)}}
		if i%2 == 0 {
			ev = RegisterCall{CallID: fmt.Sprintf("c%d", i), Tool: "book_slot", BusinessKey: fmt.Sprintf("slot-%d", i), Args: map[string]any{"slot": "tomorrow 3pm"}}
		}
		if _, err := e.Step(s, ms(0), ev); err != nil {
			tb.Fatal(err)
		}
	}
	for _, j := range s.Jobs {
		if j.SideEffect {
			if _, err := e.Step(s, ms(10), Decide{JobID: j.ID, Prepared: true}); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if _, err := e.Step(s, ms(20), Speech{Kind: UserActivityStart}); err != nil {
		tb.Fatal(err)
	}
	return s
}

// fireAll steps s to just past every deadline with one Tick and checks that each call
// was answered.
func fireAll(tb testing.TB, e *Engine, s *Session, n int) {
	tb.Helper()
	out, err := e.Step(s, ms(61000), Tick{})
	if err != nil {
		tb.Fatal(err)
	}
	if len(out.Effects.Responses) != n {
		tb.Fatalf("%d deadline answers, want %d", len(out.Effects.Responses), n)
	}
}

// longPolicy is bookingPolicy with max_hold long enough that the open utterance still
// holds every booking when the deadlines fire, and room for 4,096 calls.
func longPolicy() *Policy {
	return bookingPolicy(func(p *Policy) {
		p.Defaults.MaxHold = 10 * time.Minute
		p.Defaults.TranscriptTimeout = 10 * time.Minute
	})
}

// TestTimersFireInOnePass: issue 26. Firing N due deadlines in one step costs about N
// log N, not N² (each timer rescanning every call and job): the allocations of the
// step that fires them grow linearly with N, give or take. Counted, not timed: at
// 256 and 512 calls, twice the calls may cost at most 2.5 times the allocations (a
// rescan per timer made it 4 times). The session keeps a history, so the holds the
// deadlines end are tracked too.
func TestTimersFireInOnePass(t *testing.T) {
	e := &Engine{Policy: longPolicy(), MaxCalls: 4096}
	allocs := func(n int) float64 {
		// Copies of one session, made before counting: each run fires its own.
		enc, err := EncodeSession(pendingSession(t, e, n))
		if err != nil {
			t.Fatal(err)
		}
		const runs = 2
		copies := make([]*Session, runs+1) // AllocsPerRun runs once more, to warm up
		for i := range copies {
			if copies[i], err = DecodeSession(enc); err != nil {
				t.Fatal(err)
			}
		}
		return testing.AllocsPerRun(runs, func() {
			s := copies[0]
			copies = copies[1:]
			fireAll(t, e, s, n)
		})
	}
	a, b := allocs(256), allocs(512)
	t.Logf("allocations firing 256 deadlines: %.0f, 512: %.0f (x%.2f)", a, b, b/a)
	if b > 2.5*a {
		t.Fatalf("firing 512 deadlines allocates %.0f, %.2f times the %.0f of 256: the timers are rescanned per firing", b, b/a, a)
	}
}

// BenchmarkFireDeadlines: one step firing N due max_pending deadlines (issue 26: 1,024
// pending calls cost 1.05 s of CPU in one Poll, 2,048 6.5 s). One op is the Tick
// that fires them all; building the session is not timed.
func BenchmarkFireDeadlines(b *testing.B) {
	for _, n := range []int{128, 256, 512, 1024, 2048} {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			e := &Engine{Policy: longPolicy(), MaxCalls: 4096}
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s := pendingSession(b, e, n)
				b.StartTimer()
				fireAll(b, e, s, n)
			}
		})
	}
}
