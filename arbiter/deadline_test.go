package arbiter

import (
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestDeadlines: every live call id is answered by its max_pending deadline (60 s by
// default) whatever the agent fails to send, and a late result never answers it again.
func TestDeadlines(t *testing.T) {
	t.Run("read-only result never comes, then comes late", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		j := sp.do(1000, RegisterCall{CallID: "w1", Tool: "get_weather", Args: map[string]any{"city": "Lyon"}}).Call.JobID
		if out := sp.do(60999, Tick{}); len(out.Effects.Responses) != 0 {
			t.Fatalf("answered before the deadline: %+v", out.Effects)
		}
		out := sp.do(61000, Tick{})
		if len(out.Effects.Responses) != 1 || out.Effects.Responses[0].Payload["status"] != "timeout" ||
			!strings.Contains(out.Effects.Responses[0].Payload["error"].(string), "no result from get_weather within 1m0s") {
			t.Fatalf("deadline: %+v", out.Effects)
		}
		late := sp.do(70000, Complete{JobID: j, Outcome: Result, Result: map[string]any{"temp_c": 21.0}})
		if len(late.Effects.Responses) != 0 || len(late.Effects.Notes) != 1 || !strings.Contains(late.Effects.Notes[0].Text, "after its call had timed out") {
			t.Fatalf("late result: %+v", late.Effects)
		}
	})
	t.Run("prepare never reported: cancelled at the deadline", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
		out := sp.do(61000, Decide{JobID: j})
		if out.Decision.Decision != DecisionCancel || len(out.Effects.Responses) != 1 || out.Effects.Responses[0].Payload["status"] != "timeout" {
			t.Fatalf("deadline: decision %+v effects %+v", out.Decision, out.Effects)
		}
		done := sp.do(61000, Complete{JobID: j, Outcome: Cancelled})
		if !done.Effects.Empty() {
			t.Fatalf("the id was answered already; Complete handed out %+v", done.Effects)
		}
	})
	t.Run("commit started, never reported: outcome unknown, then the note", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy(func(p *Policy) { p.Defaults.MaxPending = 10 * time.Second }))
		j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
		sp.do(2000, Decide{JobID: j, Prepared: true})
		if d := sp.do(3500, Decide{JobID: j, Prepared: true}).Decision; d.Decision != DecisionCommit {
			t.Fatalf("decision %+v", d)
		}
		out := sp.do(11000, Tick{})
		if len(out.Effects.Responses) != 1 || out.Effects.Responses[0].Payload["status"] != "unknown" {
			t.Fatalf("deadline during the commit: %+v", out.Effects)
		}
		late := sp.do(15000, Complete{JobID: j, Outcome: Committed, Result: map[string]any{"reference": "R-9"}})
		if len(late.Effects.Responses) != 0 || len(late.Effects.Notes) != 1 || !strings.Contains(late.Effects.Notes[0].Text, "is confirmed (reference R-9)") {
			t.Fatalf("late commit: %+v", late.Effects)
		}
	})
	t.Run("duplicate waiting on a stuck job is answered too", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy(func(p *Policy) { p.Defaults.MaxPending = 10 * time.Second }))
		sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
		sp.do(5000, RegisterCall{CallID: "c2", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow at 3pm"}})
		first := sp.do(11000, Tick{}).Effects.Responses
		second := sp.do(15000, Tick{}).Effects.Responses
		if len(first) != 1 || first[0].CallID != "c1" || len(second) != 1 || second[0].CallID != "c2" || second[0].Payload["duplicate_of"] != "c1" {
			t.Fatalf("deadlines: %+v then %+v", first, second)
		}
	})
}

// TestPropertyDeadlinesAnswerEveryCall: whatever the agent fails to send (no prepare,
// no Complete, no transcript), once every deadline has passed no call id is left
// without an outcome, and none gets two.
func TestPropertyDeadlinesAnswerEveryCall(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := &Engine{Policy: bookingPolicy(func(p *Policy) { p.Defaults.MaxPending = 20 * time.Second })}
		s := NewSession(SessionKey{ID: "p"}, ms(0))
		outcomes := map[string]int{}
		now := 0
		step := func(ev Event) Output {
			out, _ := e.Step(s, ms(now), ev)
			// Ids are minted (never repeated) and no Complete is repeated, so every
			// response handed out is a new outcome.
			for _, r := range out.Effects.Responses {
				outcomes[r.CallID]++
			}
			for _, k := range out.Effects.Skips {
				outcomes[k.CallID]++
			}
			return out
		}
		tools := []string{"book_slot", "get_weather"}
		n := rapid.IntRange(5, 40).Draw(rt, "events")
		for i := 0; i < n; i++ {
			now += rapid.IntRange(0, 4000).Draw(rt, "dt")
			switch rapid.IntRange(0, 6).Draw(rt, "kind") {
			case 0, 1:
				b := NonBlocking
				if rapid.Bool().Draw(rt, "blocking") {
					b = Blocking
				}
				step(RegisterCall{Tool: rapid.SampledFrom(tools).Draw(rt, "tool"), Behavior: b,
					Args: map[string]any{"slot": rapid.SampledFrom([]string{"tomorrow 3pm", "tomorrow 4pm"}).Draw(rt, "slot")}})
			case 2:
				step(Speech{Kind: UserActivityStart})
			case 3:
				step(Speech{Kind: Interrupted})
			case 4:
				step(Speech{Kind: UserActivityEnd})
			case 5:
				// A forgetful agent: sometimes prepares, sometimes completes as decided.
				for _, j := range s.Jobs {
					if j.Outcome != NotCompleted || !rapid.Bool().Draw(rt, "act") {
						continue
					}
					if !j.SideEffect {
						step(Complete{JobID: j.ID, Outcome: Result})
						continue
					}
					d := step(Decide{JobID: j.ID, Prepared: true}).Decision
					switch {
					case d.Decision == DecisionCommit && rapid.Bool().Draw(rt, "commit"):
						step(Complete{JobID: j.ID, Outcome: Committed})
					case d.Decision == DecisionCancel:
						step(Complete{JobID: j.ID, Outcome: Cancelled})
					}
				}
			case 6:
				step(Tick{})
			}
		}
		now += 60000 // past every deadline, abandon wait and transcript timeout
		step(Tick{})
		for _, c := range s.Calls {
			if c.Outcome == nil {
				rt.Fatalf("call %s (%s) has no outcome after every deadline passed", c.ID, c.Tool)
			}
			if outcomes[c.ID] != 1 {
				rt.Fatalf("call %s handed out %d outcomes", c.ID, outcomes[c.ID])
			}
		}
	})
}

// TestRepeatOfDeadID: registering an id again after it died returns the recorded
// answer and the skip, so a retrying agent never answers it.
func TestRepeatOfDeadID(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Behavior: Blocking, Args: map[string]any{"slot": "tomorrow 3pm"}})
	sp.do(2000, Speech{Kind: Interrupted})
	out := sp.do(2100, RegisterCall{CallID: "c1", Tool: "book_slot", Behavior: Blocking, Args: map[string]any{"slot": "tomorrow 3pm"}})
	if !out.Call.Repeat || len(out.Effects.Skips) != 1 || out.Effects.Skips[0].Reason != "abandoned" || len(out.Effects.Responses) != 0 {
		t.Fatalf("repeat of a dead id: %+v %+v", out.Call, out.Effects)
	}
}
