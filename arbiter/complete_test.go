package arbiter

import (
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// bigResult is a result of about n bytes JSON-encoded.
func bigResult(n int) map[string]any {
	return map[string]any{"reference": "R-1", "blob": strings.Repeat("x", max(n-30, 0))}
}

// TestCompleteAnswersEveryCall: issue 25, item 5. A Complete is taken whatever its
// result and error carry, and answers every live call of its job: a result over the
// size or depth bound is left out (result_omitted says why; the outcome stands), an
// error is cleaned and cut; a retry of it is the same report. Before, each of these was
// INVALID_ARGUMENT and nothing answered the calls.
func TestCompleteAnswersEveryCall(t *testing.T) {
	cases := []struct {
		name    string
		outcome Outcome
		result  map[string]any
		error   string
		check   func(t *testing.T, p map[string]any)
	}{
		{"commit with a result over 64 KiB", Committed, bigResult(70 << 10), "", func(t *testing.T, p map[string]any) {
			o, _ := p[keyResultOmitted].(map[string]any)
			if p[keyStatus] != "committed" || p[keyResult] != nil || o["reason"] != ResultTooLarge || o["max_bytes"] != MaxArgsBytes || o["bytes"].(int) <= MaxArgsBytes {
				t.Errorf("payload %v: want committed, result_omitted too_large with its size", p)
			}
		}},
		{"commit with a result nested 17 levels", Committed, nested(17, map[string]any{"reference": "R-1"}), "", func(t *testing.T, p map[string]any) {
			o, _ := p[keyResultOmitted].(map[string]any)
			if p[keyStatus] != "committed" || o["reason"] != ResultTooDeep || o["max_depth"] != MaxArgsDepth {
				t.Errorf("payload %v: want committed, result_omitted too_deep", p)
			}
		}},
		{"commit with NaN in the result", Committed, map[string]any{"reference": "R-1", "score": math.NaN()}, "", func(t *testing.T, p map[string]any) {
			if r := resultOf(p); r["reference"] != "R-1" || r["score"] != nil {
				t.Errorf("payload %v: want the result with NaN as null", p)
			}
		}},
		{"failure with an error over 4 KiB", Failed, nil, strings.Repeat("é", 3000), func(t *testing.T, p map[string]any) {
			e, _ := p[keyError].(string)
			if p[keyStatus] != "failed" || len(e) > MaxErrorBytes || !strings.HasPrefix(e, "ééé") || !strings.HasSuffix(e, errorCut(6000, MaxErrorBytes)) {
				t.Errorf("error %q (%d bytes): want it cut to %d with the marker", e, len(e), MaxErrorBytes)
			}
		}},
		{"failure with a NUL in the error", Failed, nil, "backend\x00down\x1b[0m", func(t *testing.T, p map[string]any) {
			if p[keyError] != "backend\uFFFDdown\uFFFD[0m" {
				t.Errorf("error %q: want the control characters replaced", p[keyError])
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, bookingPolicy())
			h.step(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}, Behavior: Blocking})
			h.step(10, RegisterCall{CallID: "c2", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow at 3pm"}})
			h.step(1000, Decide{JobID: h.jobOf("c1"), Prepared: true})
			h.step(2600, Tick{})
			ev := Complete{JobID: h.jobOf("c1"), Outcome: c.outcome, Result: c.result, Error: c.error}
			out, err := h.try(2700, ev)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if len(out.Effects.Responses) != 2 {
				t.Fatalf("%d responses, want both calls answered: %+v", len(out.Effects.Responses), out.Effects)
			}
			for _, r := range out.Effects.Responses {
				c.check(t, r.Payload)
			}
			again, err := h.try(2800, ev)
			if err != nil || len(again.Effects.Responses) != 2 || again.Effects.Responses[0].Seq != out.Effects.Responses[0].Seq {
				t.Fatalf("retry: %v %+v: want the same responses again", err, again.Effects)
			}
			other := ev
			other.Result, other.Error = bigResult(80<<10), c.error+"!"
			if _, err := h.try(2900, other); KindOf(err) != FailedPrecondition {
				t.Fatalf("a retry with another result or error: %v, want failed precondition", err)
			}
		})
	}
}

// TestPropertyCompleteAnswers: no input to Complete leaves a call unanswered. Random
// sessions of calls (side-effecting and read-only, duplicates among them), prepares,
// stops, and then random Complete reports: any outcome (a bogus one too), results of
// any size and depth (over the bounds, with NaN), error texts of any length with
// control characters, and retries (the same report again, or another). After every
// step: a Complete is refused only for the job's state (its outcome does not fit, or a
// retry says something else), never for what it carries; one that records an outcome
// answers every live call of its job; no call is answered twice; and at the end (past
// max_pending) every call has its one answer.
func TestPropertyCompleteAnswers(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := &Engine{Policy: bookingPolicy()}
		s := NewSession(SessionKey{ID: "p"}, t0)
		now := 0
		answered := map[string]int{}
		step := func(ev Event) (Output, error) {
			out, err := e.Step(s, ms(now), ev)
			for _, r := range out.Effects.Responses {
				if r.Seq > out.LogStart && !r.Interim {
					answered[r.CallID]++
				}
			}
			for _, k := range out.Effects.Skips {
				if k.Seq > out.LogStart {
					answered[k.CallID]++
				}
			}
			for id, n := range answered {
				if n > 1 {
					rt.Fatalf("call %s answered %d times", id, n)
				}
			}
			return out, err
		}
		slots := []string{"tomorrow 3pm", "tomorrow at 3pm", "friday 10am", "2026-11-05T09:30:00Z"}
		for i, n := 0, rapid.IntRange(1, 4).Draw(rt, "calls"); i < n; i++ {
			now += rapid.IntRange(0, 500).Draw(rt, "gap")
			tool := rapid.SampledFrom([]string{"book_slot", "book_slot", "get_weather"}).Draw(rt, "tool")
			ev := RegisterCall{CallID: "c" + string(rune('1'+i)), Tool: tool,
				Args:     map[string]any{"slot": rapid.SampledFrom(slots).Draw(rt, "slot")},
				Behavior: rapid.SampledFrom([]Behavior{BehaviorUnspecified, Blocking}).Draw(rt, "behavior")}
			if _, err := step(ev); err != nil {
				rt.Fatalf("RegisterCall: %v", err)
			}
		}
		for _, j := range s.Jobs {
			if j.SideEffect && rapid.Bool().Draw(rt, "prepare") {
				now += rapid.IntRange(0, 2000).Draw(rt, "prepareAt")
				step(Decide{JobID: j.ID, Prepared: true})
			}
		}
		if rapid.IntRange(0, 3).Draw(rt, "stop?") == 0 {
			step(Transcript{Text: "Stop, don't book it."})
		}
		var last *Complete
		for i, n := 0, rapid.IntRange(1, 8).Draw(rt, "completes"); i < n; i++ {
			now += rapid.IntRange(0, 3000).Draw(rt, "completeGap")
			step(Tick{}) // timers due by now fire here, so the Complete below meets the state it is checked against
			var ev Complete
			if last != nil && rapid.Bool().Draw(rt, "retry") {
				ev = *last
			} else {
				ev = Complete{
					JobID:   rapid.SampledFrom(s.Jobs).Draw(rt, "job").ID,
					Outcome: rapid.SampledFrom([]Outcome{Committed, Cancelled, Failed, Result, Unknown, "bogus"}).Draw(rt, "outcome"),
					Result:  anyResult(rt),
					Error:   anyErrorText(rt),
				}
			}
			j := s.job(ev.JobID)
			was := *j
			fits := propCompleteFits(&was, ev)
			_, err := step(ev)
			switch {
			case ev.Outcome == "bogus":
				if KindOf(err) != Invalid || FieldOf(err) != "outcome" {
					rt.Fatalf("a bogus outcome: %v, want invalid naming outcome", err)
				}
			case fits && err != nil:
				rt.Fatalf("Complete %s %s (job %s decision %q outcome %q) refused for what it carries: %v", ev.JobID, ev.Outcome, j.ID, was.Decision, was.Outcome, err)
			case !fits && err == nil:
				rt.Fatalf("Complete %s %s taken, but the job (decision %q, outcome %q) does not take it", ev.JobID, ev.Outcome, was.Decision, was.Outcome)
			case err != nil && KindOf(err) != FailedPrecondition:
				rt.Fatalf("Complete refused with %v (kind %s), want failed precondition", err, KindOf(err))
			}
			if err == nil && j.Outcome != NotCompleted {
				for _, id := range j.CallIDs {
					if c := s.call(id); c.Outcome == nil {
						rt.Fatalf("job %s completed %s but call %s has no answer", j.ID, j.Outcome, id)
					}
				}
			}
			kept := ev
			last = &kept
		}
		now += 120_000
		step(Tick{})
		for _, c := range s.Calls {
			if c.Outcome == nil || answered[c.ID] != 1 {
				rt.Fatalf("call %s: outcome %+v, answered %d times; want exactly one answer at the end", c.ID, c.Outcome, answered[c.ID])
			}
		}
	})
}

// propCompleteFits is the property's own statement of when Complete takes a report:
// a first outcome that fits the job (outcomeFits), the real outcome of an unknown
// commit, or a retry saying what the first one said (compared as kept).
func propCompleteFits(j *Job, ev Complete) bool {
	switch {
	case j.Outcome == NotCompleted:
		return outcomeFits(j, ev.Outcome) == nil
	case j.Outcome == Unknown && (ev.Outcome == Committed || ev.Outcome == Failed):
		return true
	case j.Outcome != ev.Outcome:
		return false
	}
	r := ev.taken()
	return r.err == j.Error && r.same(j)
}

// anyResult draws a result: none, small, over the size bound, over the depth bound, or
// with a NaN.
func anyResult(t *rapid.T) map[string]any {
	switch rapid.IntRange(0, 5).Draw(t, "resultKind") {
	case 0:
		return nil
	case 1:
		return map[string]any{"reference": "R-" + rapid.StringMatching(`[0-9]{1,3}`).Draw(t, "ref")}
	case 2:
		return bigResult(rapid.IntRange(MaxArgsBytes-64, 2*MaxArgsBytes).Draw(t, "size"))
	case 3:
		return nested(rapid.IntRange(MaxArgsDepth-1, 40).Draw(t, "depth"), map[string]any{"reference": "R-9"})
	case 4:
		return map[string]any{"score": math.Inf(rapid.SampledFrom([]int{1, -1}).Draw(t, "sign")), "n": math.NaN()}
	}
	return map[string]any{}
}

// anyErrorText draws an error text: empty, short, with control characters or bytes
// that are not UTF-8, or over MaxErrorBytes.
func anyErrorText(t *rapid.T) string {
	switch rapid.IntRange(0, 3).Draw(t, "errorKind") {
	case 0:
		return ""
	case 1:
		return rapid.String().Draw(t, "error")
	case 2:
		return "down\x00\x07\xff" + rapid.StringMatching(`[a-z]{0,8}`).Draw(t, "errorTail")
	}
	return strings.Repeat(rapid.SampledFrom([]string{"e", "é", "\x00", "界"}).Draw(t, "errorRune"), rapid.IntRange(MaxErrorBytes-4, 3*MaxErrorBytes).Draw(t, "errorLen"))
}
