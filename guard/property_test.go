package guard

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/voicearbiter/arbiter/arbiter"
)

// TestAnswerFilterProperty: for any interleaving of server calls (new, repeated,
// duplicates by business key, rejected, read-only, BLOCKING), cancellations,
// barge-ins, stops, turns, reconnects, agent answers (for live, dead, answered,
// unknown and foreign ids, before and after the arbiter decided), tool helpers
// deciding and completing, reports delivered late or failing (the store down), watch
// deliveries and time passing:
//
//   - at most one final function response per call id goes upstream on a connection;
//   - none for an id the arbiter had marked dead when it went;
//   - the agent is never given a call the arbiter answers itself;
//   - every call of the open connection is answered or dead once its deadline
//     (max_pending, the guard's slack and the agent's answer wait) has passed, and
//     each answer went by then;
//   - nothing stays held: the guard never wedges a direction;
//   - all of it with the store down for good from any point on (the guard's own
//     deadline answers then).
func TestAnswerFilterProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarness(t, "gemini", Config{})
		h.lateReplies = rapid.Bool().Draw(rt, "lateReplies")
		h.agent(gResumableSetup)
		h.deliverAll()
		ids := []string{"fc_1", "fc_2", "fc_3", "fc_4", "fc_5", "fc_6"}
		tools := []string{"book_slot", "book_slot", "end_call", "get_weather", "nope"}
		slots := []string{"tomorrow 3pm", "tomorrow at 3pm", "Friday 9am"}
		issued := map[*Rule][]string{}
		conns := 1
		n := rapid.IntRange(1, 60).Draw(rt, "steps")
		for i := 0; i < n; i++ {
			switch rapid.IntRange(0, 15).Draw(rt, "action") {
			case 15:
				h.reply()
			case 0, 1:
				id := rapid.SampledFrom(ids).Draw(rt, "call")
				tool := rapid.SampledFrom(tools).Draw(rt, "tool")
				args := map[string]any{}
				if tool == "book_slot" {
					args["slot"] = rapid.SampledFrom(slots).Draw(rt, "slot")
				}
				h.server(gCall(id, tool, args))
				issued[h.rule] = append(issued[h.rule], id)
			case 2:
				h.server(map[string]any{"toolCallCancellation": map[string]any{"ids": []any{rapid.SampledFrom(ids).Draw(rt, "cancel")}}})
			case 3:
				h.server(map[string]any{"voiceActivity": map[string]any{"voiceActivityType": "ACTIVITY_START"}})
				h.server(gContent("interrupted", true))
			case 4:
				text := rapid.SampledFrom([]string{"Actually, stop.", "Yes please.", "Make it Friday instead."}).Draw(rt, "said")
				h.server(gContent("inputTranscription", map[string]any{"text": text}))
				h.server(map[string]any{"voiceActivity": map[string]any{"voiceActivityType": "ACTIVITY_END"}})
			case 5:
				h.server(gContent("turnComplete", true))
			case 6, 7:
				h.deliver()
			case 8:
				h.fail()
			case 9:
				h.watch()
			case 10:
				id := rapid.SampledFrom(append(ids, "fc_unknown")).Draw(rt, "answer")
				h.agent(gAnswer(id, "book_slot", map[string]any{"output": rapid.SampledFrom([]string{"done", "CANCELLED", "error: timeout"}).Draw(rt, "text")}))
			case 11:
				id := rapid.SampledFrom(ids).Draw(rt, "helper")
				switch rapid.IntRange(0, 2).Draw(rt, "how") {
				case 0:
					h.helper(arbiter.Decide{CallID: id})
				case 1:
					h.helper(arbiter.Decide{CallID: id, Prepared: true})
				default:
					if c := h.sess.Call(id); c != nil && c.JobID != "" {
						oc := arbiter.Failed
						switch h.sess.Job(c.JobID).Decision {
						case arbiter.DecisionCommit:
							oc = arbiter.Committed
						case arbiter.DecisionCancel:
							oc = arbiter.Cancelled
						}
						h.helper(arbiter.Complete{CallID: id, Outcome: oc, Error: "backend"})
					}
				}
			case 12:
				h.advance(time.Duration(rapid.IntRange(0, 4000).Draw(rt, "ms")) * time.Millisecond)
			case 14:
				h.down = true // the store goes down for good: reports fail, no watch
			case 13:
				if conns < 3 {
					conns++
					h.reconnect("gemini", conns)
					h.agent(gResumableSetup)
					for i := range ids { // Gemini's call ids are unique in a session
						ids[i] = fmt.Sprintf("c%d_%s", conns, ids[i])
					}
				}
			}
			checkSoFar(rt, h, issued)
		}
		// Time runs out for everything: every report lands, every timer fires.
		end := h.now.Add(arbiter.DefaultTimings.MaxPending + 20*time.Second)
		for h.now.Before(end) {
			h.deliverAll()
			h.watch()
			h.advance(time.Second)
		}
		h.deliverAll()
		h.watch()
		h.step(Tick{})
		checkSoFar(rt, h, issued)
		if len(h.rule.toAgent) > 0 || len(h.rule.toServer) > 0 {
			rt.Fatalf("frames still held at the end: %d to the agent, %d to the server: the guard wedged\nlog:\n%s", len(h.rule.toAgent), len(h.rule.toServer), logs(h))
		}
		checkCounted(rt, h)
		cfg := h.rule.cfg
		for _, id := range issued[h.rule] {
			c := h.rule.calls[id]
			if c == nil {
				continue
			}
			if !c.sent && !c.dead {
				rt.Fatalf("%s is live and was never answered (pending %v)\nlog:\n%s", id, h.rule.Pending(), logs(h))
			}
			for _, a := range h.finals(id, h.rule) {
				if limit := c.seen.Add(h.rule.maxPending(c) + cfg.slack() + cfg.answerWait()); a.at.After(limit) {
					rt.Fatalf("%s answered at %v, after its deadline %v", id, a.at.Sub(t0), limit.Sub(t0))
				}
			}
		}
	})
}

// gResumableSetup asks for session resumption: a connection's end leaves the
// session for the next.
var gResumableSetup = func() map[string]any {
	s := map[string]any{}
	for k, v := range gSetup["setup"].(map[string]any) {
		s[k] = v
	}
	s["sessionResumption"] = map[string]any{}
	return map[string]any{"setup": s}
}()

func checkSoFar(rt *rapid.T, h *harness, issued map[*Rule][]string) {
	for r := range issued {
		seen := map[string]bool{}
		for _, a := range h.answers {
			if a.connRule != r || a.willCont {
				continue
			}
			if seen[a.call] {
				rt.Fatalf("%s answered twice on one connection\nlog:\n%s", a.call, logs(h))
			}
			seen[a.call] = true
		}
	}
	for _, a := range h.answers {
		if a.deadThen {
			rt.Fatalf("%s answered while the arbiter had it dead\nlog:\n%s", a.call, logs(h))
		}
	}
	for _, id := range h.agentCalls() {
		if c := h.sess.Call(id); c != nil && c.Disposition != arbiter.Execute {
			rt.Fatalf("the agent was given %s, a %s call", id, c.Disposition)
		}
	}
}

func logs(h *harness) string {
	s := ""
	for _, l := range h.logs {
		s += l + "\n"
	}
	return s + fmt.Sprintf("(%d frames up, %d down)", len(h.toServer), len(h.toAgent))
}

// Words a counted line may carry (LogLine.What, Why: the metrics' label values, so a
// fixed set, never an id).
var (
	countedWhat = regexp.MustCompile(`^(dropped agent answer|injected response|injected note|kept call from agent|dropped server call|kept answer from agent delete)$`)
	countedWhy  = regexp.MustCompile(`^(dead id: (abandoned|withdrawn|connection_closed|session_closed|provider_timeout|unknown_call|not_executed)|` +
		`already answered|unknown call id on this connection|call not given to the agent yet|the arbiter answers this call itself|` +
		`interim answer for a call not live|repeated call id|the model keeps one answer per call|` +
		`execute|duplicate|reject|run|deadline|guard deadline|agent did not answer|failed closed|)$`)
)

// checkCounted: every line the rule counted names its entry with words of the fixed
// set, and Counts is exactly the sum of those lines.
func checkCounted(rt *rapid.T, h *harness) {
	sum := Counts{}
	for i, c := range h.counted {
		if !countedWhat.MatchString(c[0]) || !countedWhy.MatchString(c[1]) {
			rt.Fatalf("a counted line says %q / %q: not a word of the fixed set (a label value of arbiter_guard_actions_total)", c[0], c[1])
		}
		if i < h.countedFrom {
			continue // an earlier connection's
		}
		k := c[0]
		if c[1] != "" {
			k += ": " + c[1]
		}
		sum[k]++
	}
	if fmt.Sprint(sum) != fmt.Sprint(h.rule.Counts()) {
		rt.Fatalf("counted lines %v; Counts %v", sum, h.rule.Counts())
	}
}
