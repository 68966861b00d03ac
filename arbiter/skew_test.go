package arbiter

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Replica clocks (issue 26). Two replicas serve one session; the second one's clock
// runs skew ahead of the first's (behind when negative). The agent reports each event,
// with its true age, to either replica at random, and its Decide waits on either; each
// replica steps the session on its own clock. What the skew may not do: withdraw a
// COMMIT a Decide handed out (answers are ordered by the store, not by clocks: Step),
// or make any other difference to what the arbiter decides than placing an event the
// skew's worth earlier or later on the session's timeline.
//
// TestPropertyReplicaClockSkew checks both: the session answers no job both COMMIT and
// CANCEL and never withdraws an answered COMMIT, whatever the skew, and its decision
// differs from the same session on clocks that agree only when the user's speech began
// within |skew| + skewSlack of the commit's due time. It also logs what it measured:
// for each band of skews, how many sessions were decided otherwise and the farthest
// from the due time a difference came.
func TestPropertyReplicaClockSkew(t *testing.T) {
	var mu strings.Builder
	type band struct{ runs, differ, farthest int }
	bands := map[int]*band{}
	rapid.Check(t, func(rt *rapid.T) {
		sc := skewScenario{
			skew:     rapid.IntRange(-1500, 1500).Draw(rt, "skewMs"),
			prepared: rapid.IntRange(100, 2000).Draw(rt, "prepared"),
			stop:     rapid.Bool().Draw(rt, "stop"),
			seed:     rapid.Uint64().Draw(rt, "replicas"),
		}
		due := sc.prepared + 1500
		sc.speechAt = due + rapid.IntRange(-2500, 2500).Draw(rt, "speechFromDue")
		sc.speechAt = max(sc.speechAt, 1)
		sc.talk = rapid.IntRange(300, 1500).Draw(rt, "talkMs")
		sc.delay = rapid.IntRange(0, 50).Draw(rt, "deliveryMs")
		got := runSkew(rt, sc)
		ref := runSkew(rt, skewScenario{prepared: sc.prepared, stop: sc.stop, seed: sc.seed, speechAt: sc.speechAt, talk: sc.talk, delay: sc.delay})
		b := bands[abs(sc.skew)/500]
		if b == nil {
			b = &band{}
			bands[abs(sc.skew)/500] = b
		}
		b.runs++
		if got.acted != ref.acted {
			b.differ++
			from := abs(sc.speechAt - due)
			b.farthest = max(b.farthest, from)
			if from > abs(sc.skew)+skewSlack {
				rt.Fatalf("with clocks %d ms apart the job is %s, with clocks that agree %s; the speech began %d ms from the commit's due time, more than the skew allows\n%+v\nskewed:\n%s\nagreeing:\n%s",
					sc.skew, orPending(got.acted), orPending(ref.acted), sc.speechAt-due, sc, strings.Join(got.log, "\n"), strings.Join(ref.log, "\n"))
			}
		}
	})
	keys := make([]int, 0, len(bands))
	for k := range bands {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		b := bands[k]
		fmt.Fprintf(&mu, "\n  |skew| %4d-%4d ms: %3d sessions, %3d decided otherwise, the farthest %4d ms from the due time", k*500, k*500+499, b.runs, b.differ, b.farthest)
	}
	t.Logf("replica clock skew, measured:%s", mu.String())
}

// skewSlack is what the bound allows beyond the skew: the agent's delivery delay (at
// most 50 ms here) and a millisecond of rounding.
const skewSlack = 51

// skewScenario is one session on two replicas: skew is the second replica's clock
// less the first's (ms); a booking called at 0 and prepared at prepared; the user
// speaks at speechAt for talk ms, a stop or something else; every event reaches its
// replica delay ms after it happened. seed picks the replica of each request.
type skewScenario struct {
	skew, prepared, speechAt, talk, delay int
	stop                                  bool
	seed                                  uint64
}

type skewRun struct {
	acted Decision
	log   []string
}

// runSkew plays sc in true time: each request is stepped on its replica's clock (the
// true time plus that replica's offset). The agent's Decide, parked from the
// prepare, wakes when its replica's clock reaches the session's next timer and after
// each event; the agent acts on the first COMMIT or CANCEL.
func runSkew(rt *rapid.T, sc skewScenario) skewRun {
	e := &Engine{Policy: bookingPolicy()}
	s := NewSession(SessionKey{ID: "skew"}, ms(0))
	var run skewRun
	rnd := sc.seed
	replica := func() int { // an xorshift over the seed: which replica takes a request
		rnd ^= rnd << 13
		rnd ^= rnd >> 7
		rnd ^= rnd << 17
		return int(rnd % 2)
	}
	offset := []int{0, sc.skew}
	answered := map[string]Decision{}
	step := func(at int, r int, what string, ev Event) Output {
		out, err := e.Step(s, ms(at+offset[r]), ev)
		if err != nil {
			rt.Fatalf("%d %s on replica %d: %v", at, what, r, err)
		}
		run.log = append(run.log, fmt.Sprintf("%6d replica %d %-22s decisions %v revoked %v", at, r, what, out.Decisions, out.Revoked))
		for _, j := range s.Jobs {
			if answered[j.ID] == DecisionCommit && (j.Decision != DecisionCommit || j.AnsweredAt.IsZero()) {
				rt.Fatalf("job %s was answered COMMIT; now %s (answered %v)\n%s", j.ID, orPending(j.Decision), j.AnsweredAt, strings.Join(run.log, "\n"))
			}
		}
		if d := out.Decision; d != nil && d.Decision != Undecided {
			if prev, ok := answered[d.JobID]; ok && prev != d.Decision {
				rt.Fatalf("job %s answered %s after %s\n%s", d.JobID, d.Decision, prev, strings.Join(run.log, "\n"))
			}
			answered[d.JobID] = d.Decision
		}
		return out
	}
	// An event observed at obs reaches a replica delay ms later, with its age.
	deliver := func(obs int, what string, ev func(time.Time) Event) {
		r := replica()
		arrival := obs + sc.delay
		step(arrival, r, what, ev(ms(arrival+offset[r]-sc.delay)))
	}
	deliver(0, "call", func(o time.Time) Event {
		return RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}, ObservedAt: o}
	})
	job := s.Calls[0].JobID
	text := "What time is it there?"
	if sc.stop {
		text = "Stop, don't book it."
	}
	type pending struct {
		at   int
		what string
		ev   func(time.Time) Event
	}
	events := []pending{
		{sc.speechAt, "speech start", func(o time.Time) Event { return Speech{Kind: UserActivityStart, ObservedAt: o} }},
		{sc.speechAt + sc.talk, "transcript", func(o time.Time) Event { return Transcript{Text: text, ObservedAt: o} }},
		{sc.speechAt + sc.talk, "speech end", func(o time.Time) Event { return Speech{Kind: UserActivityEnd, ObservedAt: o} }},
	}
	dr := replica() // the Decide's replica
	decideAt := sc.prepared
	for guard := 0; guard < 50; guard++ {
		if len(events) > 0 && events[0].at+sc.delay <= decideAt {
			p := events[0]
			events = events[1:]
			deliver(p.at, p.what, p.ev)
			decideAt = max(decideAt, p.at+sc.delay) // the Decide wakes on the change
			continue
		}
		out := step(decideAt, dr, "decide", Decide{JobID: job, Prepared: true, Live: true})
		if d := out.Decision.Decision; d != Undecided {
			// The agent acts on it; what it observed goes on arriving (a stop said
			// just before the commit came due, on the replica whose clock runs behind).
			run.acted = d
			for _, p := range events {
				deliver(p.at, p.what, p.ev)
			}
			return run
		}
		next := -1
		if due, ok := e.NextTimer(s); ok {
			next = max(msOf(due)-offset[dr], decideAt+1) // when the Decide's replica reaches it
		}
		if len(events) > 0 && (next < 0 || events[0].at+sc.delay < next) {
			next = events[0].at + sc.delay
		}
		if next < 0 {
			break
		}
		decideAt = next
	}
	return run
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
