package arbiter

import (
	"strings"
	"testing"
)

// continuationPolicy is bookingPolicy plus book_show (a text key) and book_table (a
// datetime key and an optional number), each edited by mods.
func continuationPolicy(mods ...func(*Policy)) *Policy {
	return bookingPolicy(append([]func(*Policy){func(p *Policy) {
		p.Tools["book_show"] = &Tool{Name: "book_show", SideEffect: true, Key: []KeyArg{{Arg: "show"}}}
		p.Tools["book_table"] = &Tool{Name: "book_table", SideEffect: true, Behavior: Blocking,
			Key: []KeyArg{{Arg: "slot", As: KeyDatetime}, {Arg: "party", As: KeyNumber, Optional: true}}}
	}}, mods...)...)
}

// TestContinuation: issue 25, item 7. A side-effecting call made while the user is
// still speaking, followed once the utterance ends by a call of the same tool whose
// key extends it, replaces the first if the first has not committed: the first is
// cancelled (superseded) and answered "superseded"; one commit. Before, both
// committed. The cases around it say what "extends" and "still speaking" are not.
func TestContinuation(t *testing.T) {
	type call struct {
		tool string
		args map[string]any
		key  string
	}
	half := func(tool string, args map[string]any) call { return call{tool: tool, args: args} }
	cases := []struct {
		name     string
		policy   *Policy
		first    call
		second   call
		resumeAt int  // when the user goes on speaking (the call comes at 1500); 0: not at all
		replaced bool // the second call replaces the first
	}{
		{"a day, then its minute", continuationPolicy(),
			half("book_slot", map[string]any{"slot": "tomorrow"}), half("book_slot", map[string]any{"slot": "tomorrow at 3pm"}), 2000, true},
		{"words, then more words", continuationPolicy(),
			half("book_show", map[string]any{"show": "two tickets for Don't Stop"}), half("book_show", map[string]any{"show": "two tickets for Don't Stop Believin' the musical"}), 2000, true},
		{"an optional argument added", continuationPolicy(),
			half("book_table", map[string]any{"slot": "friday 7pm"}), half("book_table", map[string]any{"slot": "Friday at 7pm", "party": 4.0}), 1700, true},
		{"the user was speaking when the call came", continuationPolicy(),
			half("book_slot", map[string]any{"slot": "tomorrow"}), half("book_slot", map[string]any{"slot": "2026-10-02T15:00:00Z"}), 1400, true},
		{"another slot is another request", continuationPolicy(),
			half("book_slot", map[string]any{"slot": "tomorrow"}), half("book_slot", map[string]any{"slot": "saturday 3pm"}), 2000, false},
		{"other words are another request", continuationPolicy(),
			half("book_show", map[string]any{"show": "two tickets for Cats"}), half("book_show", map[string]any{"show": "two tickets for Hamilton"}), 2000, false},
		{"a changed number is another request", continuationPolicy(),
			half("book_table", map[string]any{"slot": "friday 7pm", "party": 2.0}), half("book_table", map[string]any{"slot": "friday 7pm", "party": 4.0}), 2000, false},
		{"the user did not go on speaking", continuationPolicy(),
			half("book_slot", map[string]any{"slot": "tomorrow"}), half("book_slot", map[string]any{"slot": "tomorrow at 3pm"}), 0, false},
		{"the user spoke again, but later than a pause", continuationPolicy(),
			half("book_slot", map[string]any{"slot": "tomorrow"}), half("book_slot", map[string]any{"slot": "tomorrow at 3pm"}), 3600, false},
		{"continuation off", continuationPolicy(func(p *Policy) { p.Tools["book_slot"].Continuation = ContinuationOff }),
			half("book_slot", map[string]any{"slot": "tomorrow"}), half("book_slot", map[string]any{"slot": "tomorrow at 3pm"}), 2000, false},
		{"an explicit business key", continuationPolicy(),
			call{"book_slot", map[string]any{"slot": "tomorrow"}, "slot-17"}, call{"book_slot", map[string]any{"slot": "tomorrow at 3pm"}, "slot-17-15h"}, 2000, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.policy)
			h.step(0, Speech{Kind: UserActivityStart})
			h.step(1200, Transcript{Text: "Book it for me"})
			if c.resumeAt == 0 || c.resumeAt > 1200 {
				h.step(1200, Speech{Kind: UserActivityEnd})
			}
			h.step(1500, RegisterCall{CallID: "c1", Tool: c.first.tool, Args: c.first.args, BusinessKey: c.first.key})
			first := h.jobOf("c1")
			h.step(1600, Decide{JobID: first, Prepared: true})
			end := 3000
			if c.resumeAt > 0 {
				if c.resumeAt > 1200 {
					h.step(c.resumeAt, Speech{Kind: UserActivityStart})
				}
				end = max(end, c.resumeAt+500)
				h.step(end, Transcript{Text: "the rest of it."})
				h.step(end, Speech{Kind: UserActivityEnd})
			}
			h.step(end+700, RegisterCall{CallID: "c2", Tool: c.second.tool, Args: c.second.args, BusinessKey: c.second.key})
			j := h.s.Job(first)
			if got := j.Cause == CauseSuperseded; got != c.replaced {
				t.Fatalf("first job %s (decision %q, cause %q): superseded %v, want %v", first, j.Decision, j.Cause, got, c.replaced)
			}
			if !c.replaced {
				return
			}
			h.step(end+800, Complete{JobID: first, Outcome: Cancelled})
			r := h.responses[len(h.responses)-1]
			if r.CallID != "c1" || r.Payload["status"] != "superseded" || r.Payload["superseded_by"] != "c2" || r.Payload["executed"] != false {
				t.Fatalf("response %+v: want c1 answered superseded by c2", r)
			}
			second := h.jobOf("c2")
			h.step(end+900, Decide{JobID: second, Prepared: true})
			h.step(end+5000, Tick{})
			if h.commits() != 1 || h.s.Job(second).Decision != DecisionCommit {
				t.Fatalf("%d commits: want the whole request's only", h.commits())
			}
			for _, n := range h.notes {
				if n.JobID == first {
					t.Errorf("a note about the superseded job: %q", n.Text)
				}
			}
		})
	}
}

// TestContinuationAbandoned: on Gemini the user going on speaking interrupts the model,
// which drops the BLOCKING call (its id is dead); the whole request then replaces the
// abandoned half one, which ends without its "not made, ask the user" note.
func TestContinuationAbandoned(t *testing.T) {
	h := newHarness(t, continuationPolicy())
	h.run([]timed{
		at(0, userStart), at(1200, said("Book a table for Friday")), at(1200, userEnd),
		at(1500, ev(RegisterCall{CallID: "c1", Tool: "book_table", Args: map[string]any{"slot": "friday"}})),
		at(1900, userStart), at(1900, interrupted),
		at(3000, said("at seven, for four.")), at(3000, userEnd),
		at(3800, ev(RegisterCall{CallID: "c2", Tool: "book_table", Args: map[string]any{"slot": "friday 7pm", "party": 4.0}})),
		at(4000, prepared("c2")),
		at(20000, tick),
	})
	first, second := h.s.Job(h.jobOf("c1")), h.s.Job(h.jobOf("c2"))
	if first.Cause != CauseSuperseded || second.Decision != DecisionCommit || h.commits() != 1 {
		t.Fatalf("first %s/%s, second %s: want the first superseded and the second committed", first.Decision, first.Cause, second.Decision)
	}
	h.step(20100, Complete{JobID: first.ID, Outcome: Cancelled})
	for _, n := range h.notes {
		if n.JobID == first.ID {
			t.Errorf("a note about the superseded job: %q", n.Text)
		}
	}
}

// TestContinuationWait: the wait after a continuing utterance applies only to speech
// that can be the rest of a request: an acknowledgement right after the call, or a
// stop, does not hold the commit past its grace window.
func TestContinuationWait(t *testing.T) {
	for _, c := range []struct {
		said     string
		decision Decision
		at       int
	}{
		{"at three in the afternoon.", DecisionCommit, 4700}, // 2700 + 2 s
		{"Thanks.", DecisionCommit, 3100},                    // the grace window's end
		{"Stop, don't book it.", DecisionCancel, 2700},
	} {
		h := newHarness(t, continuationPolicy())
		h.run([]timed{
			at(1500, book("c1", "tomorrow")),
			at(1600, prepared("c1")),
			at(2000, userStart), at(2700, said(c.said)), at(2700, userEnd),
			at(10000, tick),
		})
		j := h.s.Job(h.jobOf("c1"))
		if j.Decision != c.decision || msOf(j.DecidedAt) != c.at {
			t.Errorf("%q: %s at %d, want %s at %d (%s)", c.said, j.Decision, msOf(j.DecidedAt), c.decision, c.at, j.Reason)
		}
		if c.at == 4700 && !strings.Contains(j.Reason, "for a call completing the request") {
			t.Errorf("%q: reason %q", c.said, j.Reason)
		}
	}
}
