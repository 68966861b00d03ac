package arbiter

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestPropertyNoCommitOnATimelineMissingAnEvent: issue 12's "a store outage turns a
// stop into a commit". A booking is prepared; the user may speak (a stop, or
// something else) around the grace window's end; the store is down for a random
// window, during which no step can be stored: the agent's events are retried after it
// with their observation times, and the parked Decide retries too, in a random order
// with them. The agent follows the adapters' rule: it does not act on a COMMIT while
// an event it observed before the COMMIT arrived is undelivered; it delivers it and
// asks again. Whatever the window and the order, the agent never commits a job that
// the same session without the outage cancels; in particular never after a stop it
// observed before the commit came due.
func TestPropertyNoCommitOnATimelineMissingAnEvent(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		sc := drawOutageScenario(rt)
		ref := runOutage(rt, sc, false)
		got := runOutage(rt, sc, true)
		if got.acted == DecisionCommit && ref.acted != DecisionCommit {
			rt.Fatalf("committed across the outage, but without it the job is %s\nscenario %+v\noutage run:\n%s\nreference:\n%s",
				orPending(ref.acted), sc, strings.Join(got.log, "\n"), strings.Join(ref.log, "\n"))
		}
		if sc.speaks && sc.stop && sc.speechAt < sc.prepared+1500 && got.acted == DecisionCommit {
			rt.Fatalf("committed after a stop observed before the commit came due\n%s", strings.Join(got.log, "\n"))
		}
	})
}

// outageScenario is one session: a booking called at 0, prepared at prepared, the
// user's utterance (start, transcript with end of activity), and the store outage.
type outageScenario struct {
	prepared     int  // ms: prepare finished, Decide(prepared=true)
	speaks       bool // the user speaks
	speechAt     int  // voice activity starts
	transcriptAt int  // the final transcript and the end of voice activity
	stop         bool // the transcript says stop (else something else)
	down, up     int  // the store is unreachable in [down, up)
	// order ranks what is retried when the store is back: the Decide and each event,
	// lowest first.
	order map[string]int
}

func drawOutageScenario(rt *rapid.T) outageScenario {
	sc := outageScenario{
		prepared: rapid.IntRange(0, 3000).Draw(rt, "prepared"),
		speaks:   rapid.Bool().Draw(rt, "speaks"),
		stop:     rapid.Bool().Draw(rt, "stop"),
		down:     rapid.IntRange(1, 6000).Draw(rt, "down"),
		order:    map[string]int{},
	}
	sc.speechAt = rapid.IntRange(1, 6000).Draw(rt, "speechAt")
	sc.transcriptAt = sc.speechAt + rapid.IntRange(300, 2500).Draw(rt, "transcriptDelay")
	sc.up = sc.down + rapid.IntRange(0, 8000).Draw(rt, "outage")
	for _, k := range []string{"decide", "start", "transcript", "end"} {
		sc.order[k] = rapid.IntRange(0, 3).Draw(rt, "order "+k)
	}
	return sc
}

// outageRun is what the agent did.
type outageRun struct {
	acted Decision // the decision the agent acted on (Undecided: none by the end)
	log   []string
}

// pendingEvent is an event the agent observed and has not delivered yet.
type pendingEvent struct {
	name     string
	observed int
	ev       func(observed time.Time) Event
}

// runOutage plays the scenario with the outage (or without it, for the reference): a
// small discrete simulation of the agent, its retries and the arbiter's timers.
func runOutage(rt *rapid.T, sc outageScenario, outage bool) outageRun {
	e := &Engine{Policy: bookingPolicy()}
	s := NewSession(SessionKey{ID: "outage"}, ms(0))
	var run outageRun
	down := func(at int) bool { return outage && at >= sc.down && at < sc.up }
	step := func(at int, what string, ev Event) (Output, bool) {
		if down(at) {
			run.log = append(run.log, fmt.Sprintf("%6d %-28s UNAVAILABLE", at, what))
			return Output{}, false
		}
		out, err := e.Step(s, ms(at), ev)
		if err != nil {
			rt.Fatalf("%d %s: %v", at, what, err)
		}
		run.log = append(run.log, fmt.Sprintf("%6d %-28s decisions %v revoked %v", at, what, out.Decisions, out.Revoked))
		return out, true
	}
	if _, ok := step(0, "call", RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}); !ok {
		rt.Fatalf("the call must land")
	}
	job := s.Calls[0].JobID

	// The user's events, each delivered when it is observed, or retried once the store
	// is back (after the others ranked lower), with its observation time.
	var outbox []pendingEvent
	if sc.speaks {
		text := "What time is it there?"
		if sc.stop {
			text = "Stop, don't book it."
		}
		outbox = []pendingEvent{
			{"start", sc.speechAt, func(at time.Time) Event { return Speech{Kind: UserActivityStart, ObservedAt: at} }},
			{"transcript", sc.transcriptAt, func(at time.Time) Event { return Transcript{Text: text, ObservedAt: at} }},
			{"end", sc.transcriptAt, func(at time.Time) Event { return Speech{Kind: UserActivityEnd, ObservedAt: at} }},
		}
	}
	deliverAt := func(name string, observed int) int {
		if !down(observed) {
			return observed
		}
		return sc.up + sc.order[name]
	}
	// The agent's Decide: prepared at sc.prepared, then parked, waking on each timer.
	decideAt := sc.prepared
	if down(decideAt) {
		decideAt = sc.up + sc.order["decide"]
	}
	undelivered := func(before int) bool {
		for _, p := range outbox {
			if p.observed <= before {
				return true
			}
		}
		return false
	}
	for guard := 0; guard < 100; guard++ {
		// The next thing to happen: an event delivery or the Decide.
		next, isEvent := decideAt, false
		sort.SliceStable(outbox, func(a, b int) bool {
			return deliverAt(outbox[a].name, outbox[a].observed) < deliverAt(outbox[b].name, outbox[b].observed)
		})
		if len(outbox) > 0 {
			if at := deliverAt(outbox[0].name, outbox[0].observed); decideAt < 0 || at < decideAt || (at == decideAt && sc.order[outbox[0].name] < sc.order["decide"]) {
				next, isEvent = at, true
			}
		}
		if next < 0 {
			break
		}
		if isEvent {
			p := outbox[0]
			ev := p.ev(time.Time{})
			if p.observed != next {
				ev = p.ev(ms(p.observed))
			}
			if _, ok := step(next, "deliver "+p.name, ev); ok {
				outbox = outbox[1:]
			}
			continue
		}
		out, ok := step(next, "decide", Decide{JobID: job, Prepared: true})
		if !ok {
			decideAt = sc.up + sc.order["decide"]
			continue
		}
		d := out.Decision.Decision
		switch {
		case d == DecisionCancel:
			run.acted = d
			return run
		case d == DecisionCommit && undelivered(next):
			// The adapters' rule: deliver what was observed first, then ask again.
			run.log = append(run.log, fmt.Sprintf("%6d COMMIT held back: an earlier event is undelivered", next))
			decideAt = -1
			for _, p := range outbox {
				decideAt = max(decideAt, deliverAt(p.name, p.observed)+1)
			}
		case d == DecisionCommit:
			run.acted = d
			return run
		default:
			// Parked: it wakes at the next timer, or when an event lands (the next
			// iteration delivers it first if it comes earlier).
			decideAt = -1
			if due, ok := e.NextTimer(s); ok {
				decideAt = msOf(due)
				if decideAt <= next {
					decideAt = next + 1
				}
			}
			if len(outbox) > 0 {
				at := deliverAt(outbox[0].name, outbox[0].observed) + 1
				if decideAt < 0 || at < decideAt {
					decideAt = at
				}
			}
			if decideAt >= 0 && down(decideAt) {
				decideAt = sc.up + sc.order["decide"]
			}
		}
	}
	return run
}
