package guard

import (
	"fmt"
	"regexp"
	"strings"
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
				drawHelper(rt, h, ids)
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
		runOut(h)
		checkSoFar(rt, h, issued)
		checkNothingHeld(rt, h)
		checkCounted(rt, h)
		checkAnsweredByDeadline(rt, h, issued[h.rule], false)
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

// TestAnswerFilterPropertyOpenAI: the same properties on OpenAI Realtime, with each
// function call's events (response.output_item.added, conversation.item.added,
// function_call_arguments.delta/.done, response.output_item.done) drawn in any order,
// any of them missing, and response.done naming the response's calls (completed, or
// cut off by barge-in); call ids re-issued with a new item; server deletes of a call's
// item; agent answers for live, dead, answered and unknown ids; helpers, late or
// failing reports, a store down for good. On top: a call id is registered
// (RegisterCall) at most once, whatever events name it and in whatever order.
func TestAnswerFilterPropertyOpenAI(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarness(t, "openai", Config{})
		h.lateReplies = rapid.Bool().Draw(rt, "lateReplies")
		h.deliverAll()
		ids := []string{"call_1", "call_2", "call_3", "call_4"}
		tools := []string{"book_slot", "book_slot", "end_call", "get_weather", "nope"}
		slots := []string{"tomorrow 3pm", "tomorrow at 3pm", "Friday 9am"}
		issued := map[*Rule][]string{}
		items := map[string]string{} // call id -> its latest item
		nItems, nResp := 0, 0
		n := rapid.IntRange(1, 50).Draw(rt, "steps")
		for i := 0; i < n; i++ {
			switch rapid.IntRange(0, 13).Draw(rt, "action") {
			case 0, 1, 2: // a response with one or two calls, their events in any order
				nResp++
				resp := fmt.Sprintf("r%d", nResp)
				h.server(`{"type":"response.created","response":{"id":"` + resp + `","status":"in_progress","output":[]}}`)
				var output []string
				var events []string
				for k := rapid.IntRange(1, 2).Draw(rt, "calls"); k > 0; k-- {
					id := rapid.SampledFrom(ids).Draw(rt, "call")
					tool := rapid.SampledFrom(tools).Draw(rt, "tool")
					args := `{}`
					if tool == "book_slot" {
						args = `{\"slot\":\"` + rapid.SampledFrom(slots).Draw(rt, "slot") + `\"}`
					}
					nItems++
					item := fmt.Sprintf("item_%d", nItems)
					items[id] = item
					issued[h.rule] = append(issued[h.rule], id)
					fn := `"type":"function_call","call_id":"` + id + `","name":"` + tool + `"`
					all := []string{
						`{"type":"response.output_item.added","response_id":"` + resp + `","item":{"id":"` + item + `","status":"in_progress",` + fn + `,"arguments":""}}`,
						`{"type":"conversation.item.added","previous_item_id":null,"item":{"id":"` + item + `","status":"in_progress",` + fn + `,"arguments":""}}`,
						`{"type":"response.function_call_arguments.delta","response_id":"` + resp + `","item_id":"` + item + `","call_id":"` + id + `","delta":"{"}`,
						`{"type":"response.function_call_arguments.done","response_id":"` + resp + `","item_id":"` + item + `","call_id":"` + id + `","arguments":"` + args + `"}`,
						`{"type":"response.output_item.done","response_id":"` + resp + `","item":{"id":"` + item + `","status":"completed",` + fn + `,"arguments":"` + args + `"}}`,
					}
					// Any order, any missing (response.done names the call at the end).
					order := rapid.Permutation(all).Draw(rt, "order")
					events = append(events, order[:rapid.IntRange(0, len(order)).Draw(rt, "sent")]...)
					output = append(output, `{"id":"`+item+`","status":"completed",`+fn+`,"arguments":"`+args+`"}`)
				}
				for _, e := range events {
					h.server(e)
					if rapid.IntRange(0, 3).Draw(rt, "deliverBetween") == 0 {
						h.deliver()
					}
				}
				status := `"status":"completed"`
				if rapid.Bool().Draw(rt, "cutOff") {
					h.server(`{"type":"input_audio_buffer.speech_started","audio_start_ms":100,"item_id":"u` + resp + `"}`)
					status = `"status":"cancelled","status_details":{"type":"cancelled","reason":"turn_detected"}`
				}
				h.server(`{"type":"response.done","response":{"id":"` + resp + `",` + status + `,"output":[` + strings.Join(output, ",") + `]}}`)
			case 3:
				if item := items[rapid.SampledFrom(ids).Draw(rt, "delete")]; item != "" {
					h.server(`{"type":"conversation.item.deleted","item_id":"` + item + `"}`)
				}
			case 4:
				text := rapid.SampledFrom([]string{"Actually, stop.", "Yes please.", "Make it Friday instead."}).Draw(rt, "said")
				h.server(`{"type":"conversation.item.input_audio_transcription.completed","item_id":"u0","transcript":"` + text + `"}`)
			case 5, 6:
				h.deliver()
			case 7:
				h.fail()
			case 8:
				h.watch()
			case 9:
				id := rapid.SampledFrom(append(ids, "call_unknown")).Draw(rt, "answer")
				out := rapid.SampledFrom([]string{"done", "CANCELLED", "error: timeout"}).Draw(rt, "text")
				h.agent(`{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"` + id + `","output":"` + out + `"}}`)
				h.agent(`{"type":"response.create"}`)
			case 10:
				drawHelper(rt, h, ids)
			case 11:
				h.advance(time.Duration(rapid.IntRange(0, 4000).Draw(rt, "ms")) * time.Millisecond)
			case 12:
				h.down = true
			case 13:
				h.reply()
			}
			checkSoFar(rt, h, issued)
			checkRegisteredOnce(rt, h)
		}
		runOut(h)
		checkSoFar(rt, h, issued)
		checkRegisteredOnce(rt, h)
		checkNothingHeld(rt, h)
		checkCounted(rt, h)
		checkAnsweredByDeadline(rt, h, issued[h.rule], true)
	})
}

// checkAnsweredByDeadline: each call id of ids (issued on the current connection) is
// answered or dead, and each final response for it went by its deadline (max_pending
// after the call was seen, plus the config's slack and answer wait). An id the rule
// does not know is skipped, or fails the run when mustKnow (OpenAI: every call issued
// reaches the rule).
func checkAnsweredByDeadline(rt *rapid.T, h *harness, ids []string, mustKnow bool) {
	cfg := h.rule.cfg
	for _, id := range ids {
		c := h.rule.calls[id]
		if c == nil {
			if mustKnow {
				rt.Fatalf("%s was issued and is unknown to the rule\nlog:\n%s", id, logs(h))
			}
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
}

// checkRegisteredOnce: the rule reported at most one RegisterCall per call id.
func checkRegisteredOnce(rt *rapid.T, h *harness) {
	seen := map[string]bool{}
	for _, e := range h.reported {
		if rc, ok := e.(arbiter.RegisterCall); ok {
			if seen[rc.CallID] {
				rt.Fatalf("%s registered twice\nlog:\n%s", rc.CallID, logs(h))
			}
			seen[rc.CallID] = true
		}
	}
}

// drawHelper draws what a tool's helper does for one of ids: Decide (before or after
// its prepare), or Complete with the outcome its decision allows (a commit committed,
// a cancel cancelled, neither failed).
func drawHelper(rt *rapid.T, h *harness, ids []string) {
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
}

// runOut lets time run out for everything the session has pending (its longest
// max_pending and 20 s more): every report lands, every effect is watched, every timer
// fires.
func runOut(h *harness) {
	end := h.now.Add(arbiter.DefaultTimings.MaxPending + 20*time.Second)
	for h.now.Before(end) {
		h.deliverAll()
		h.watch()
		h.advance(time.Second)
	}
	h.deliverAll()
	h.watch()
	h.step(Tick{})
}

// checkNothingHeld fails when the rule still holds frames once time has run out (the
// guard wedged).
func checkNothingHeld(rt *rapid.T, h *harness) {
	if len(h.rule.toAgent) > 0 || len(h.rule.toServer) > 0 {
		rt.Fatalf("frames still held at the end: %d to the agent, %d to the server: the guard wedged\nlog:\n%s", len(h.rule.toAgent), len(h.rule.toServer), logs(h))
	}
}
