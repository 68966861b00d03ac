package arbiter

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The triggering utterance of most scripts below, as in the recorded sessions
// (shared/fixtures/traces): the user asks, the model calls 1 ms after speech ends.
var asked = []timed{
	at(500, userStart),
	at(4160, said("Book me the 3:00 p.m. slot tomorrow, please.")),
	at(4163, userEnd),
}

func script(parts ...[]timed) []timed {
	var out []timed
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

const stopText = "Actually, stop. Don't book it."

var committedR1 = map[string]any{"reference": "R-1"}

func TestEngineScenarios(t *testing.T) {
	cases := []struct {
		name   string
		policy *Policy
		script []timed
		want   want
		extra  func(t *testing.T, h *harness)
	}{
		{
			// Case 1 (fixture A): NON_BLOCKING call, the user says stop 1 s after it.
			name:   "stop 1s after a NON_BLOCKING call cancels it",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(5164, userStart),
				at(7500, said(stopText)),
				at(7500, userEnd),
				at(8164, prepared("c1")),
				at(8164, complete("c1", Cancelled, nil)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 7500, DecisionCancel, stopText}},
				responses: []wantResponse{{"c1", 8164, map[string]any{"status": "cancelled", "executed": false}}},
				notes:     []wantNote{{"c1", 8164, DeliverNow, []string{"cancelled", "Nothing is scheduled"}}},
			},
			extra: func(t *testing.T, h *harness) {
				if r := h.callResult("c1"); r.Disposition != Execute || !r.SideEffect {
					t.Errorf("c1: %+v, want execute, side effect", r)
				}
				if len(h.decides) != 1 || h.decides[0].Decision != DecisionCancel || msOf(h.decides[0].DecidedAt) != 7500 {
					t.Errorf("Decide(prepared) answered %+v, want cancel decided at 7500", h.decides)
				}
			},
		},
		{
			// Case 2 (fixture C): BLOCKING; `interrupted` at speech start drops the call;
			// after the stop the model re-issues it in other words.
			name:   "BLOCKING stop then reworded re-issue is a duplicate answered cancelled",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, bookBlocking("c1", "tomorrow at 3pm")),
				at(5322, userStart),
				at(5322, interrupted),
				at(5322, modelDone),
				at(8164, prepared("c1")),
				at(8638, said(stopText)),
				at(8638, userEnd),
				at(8640, complete("c1", Cancelled, nil)),
				at(8655, interrupted),
				at(12000, bookBlocking("c2", "3:00 p.m. tomorrow")),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 8638, DecisionCancel, stopText}},
				responses: []wantResponse{{"c2", 12000, map[string]any{"status": "cancelled", "duplicate_of": "c1"}}},
				skips:     []wantSkip{{"c1", 5322, "abandoned"}},
				notes:     []wantNote{{"c1", 8640, DeliverNow, []string{"cancelled", "Nothing is scheduled"}}},
			},
			extra: func(t *testing.T, h *harness) {
				r1, r2 := h.callResult("c1"), h.callResult("c2")
				if r2.Disposition != Duplicate || r2.DuplicateOf != "c1" || r2.JobID != r1.JobID {
					t.Errorf("re-issue: %+v, want duplicate of c1 in job %s", r2, r1.JobID)
				}
				if h.commits() != 0 || len(h.s.Jobs) != 1 {
					t.Errorf("%d jobs, %d commits; want 1 job, no commit", len(h.s.Jobs), h.commits())
				}
			},
		},
		{
			// Case 2, the re-issue arriving before the agent completed the cancel: the
			// cancel is settled (nothing can be committed), so the re-issue is answered
			// with it at once, not at the Complete, which a barge-in in between would
			// leave with a dead id (golden reissue_before_cancel_complete).
			name:   "BLOCKING stop then re-issue before Complete is answered with the cancel at once",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, bookBlocking("c1", "tomorrow at 3pm")),
				at(5322, userStart),
				at(5322, interrupted),
				at(8164, prepared("c1")),
				at(8638, said(stopText)),
				at(8638, userEnd),
				at(8900, bookBlocking("c2", "3:00 p.m. tomorrow")),
				at(9000, complete("c1", Cancelled, nil)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 8638, DecisionCancel, stopText}},
				responses: []wantResponse{{"c2", 8900, map[string]any{"status": "cancelled", "duplicate_of": "c1"}}},
				skips:     []wantSkip{{"c1", 5322, "abandoned"}},
				// A cancelled response on a live id carries the status: the note says it too.
				notes: []wantNote{{"c1", 9000, DeliverNow, []string{"cancelled"}}},
			},
			extra: func(t *testing.T, h *harness) {
				if r := h.callResult("c2"); r.Disposition != Duplicate || r.DuplicateOf != "c1" {
					t.Errorf("re-issue: %+v, want duplicate of c1", r)
				}
			},
		},
		{
			// Case 2b: re-issue before any stop; the user only asks a follow-up.
			name:   "BLOCKING re-issue revives the abandoned job and commits on the live id",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, bookBlocking("c1", "tomorrow at 3pm")),
				at(5322, userStart),
				at(5322, interrupted),
				at(6500, userEnd),
				at(7000, said("And what's the weather like there?")),
				at(7500, bookBlocking("c2", "3:00 p.m. tomorrow")),
				at(8164, prepared("c1")),
				at(10000, tick),
				at(10000, complete("c1", Committed, committedR1)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 9664, DecisionCommit, "grace"}},
				responses: []wantResponse{{"c2", 10000, map[string]any{"status": "committed", "result": map[string]any{"reference": "R-1"}, "duplicate_of": "c1"}}},
				skips:     []wantSkip{{"c1", 5322, "abandoned"}},
			},
			extra: func(t *testing.T, h *harness) {
				if r := h.callResult("c2"); r.Disposition != Duplicate {
					t.Errorf("re-issue: %+v, want duplicate", r)
				}
				if o := h.s.Call("c1").Outcome; o == nil || !o.Dead {
					t.Errorf("c1 outcome %+v, want dead", o)
				}
			},
		},
		{
			// Case 2c: interrupted, never re-issued: cancelled when abandon_wait runs out.
			name:   "BLOCKING abandoned without re-issue cancels after abandon_wait",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, bookBlocking("c1", "tomorrow at 3pm")),
				at(5322, userStart),
				at(5322, interrupted),
				at(6000, userEnd),
				at(6100, said("Hmm, let me think.")),
				at(8164, prepared("c1")),
				at(15000, tick),
				at(16000, tick),
				at(16000, complete("c1", Cancelled, nil)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 15322, DecisionCancel, "abandoned"}},
				skips:     []wantSkip{{"c1", 5322, "abandoned"}},
				notes:     []wantNote{{"c1", 16000, DeliverNow, []string{"not made", "whether they still want it"}}},
			},
		},
		{
			name:   "BLOCKING abandoned without re-issue commits after abandon_wait under on_abandon commit",
			policy: bookingPolicy(onAbandon(Commit)),
			script: script(asked, []timed{
				at(4164, bookBlocking("c1", "tomorrow at 3pm")),
				at(5322, userStart),
				at(5322, interrupted),
				at(6000, userEnd),
				at(6100, said("Hmm, let me think.")),
				at(8164, prepared("c1")),
				at(15000, tick),
				at(16000, tick),
				at(16000, complete("c1", Committed, committedR1)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 15322, DecisionCommit, ""}},
				skips:     []wantSkip{{"c1", 5322, "abandoned"}},
				// No live id to carry the result: the note tells the model.
				notes: []wantNote{{"c1", 16000, DeliverNow, []string{"confirmed", "R-1"}}},
			},
		},
		{
			// Case 3: the stop is merged into the request's own utterance.
			name:   "stop merged into the request cancels at registration",
			policy: bookingPolicy(),
			script: []timed{
				at(500, userStart),
				at(4100, said("Book 3pm tomorrow. No wait, stop.")),
				at(4110, userEnd),
				at(4164, book("c1", "tomorrow 3pm")),
				at(4200, poll("c1")),
				at(4200, complete("c1", Cancelled, nil)),
			},
			want: want{
				decisions: []wantDecision{{"c1", 4164, DecisionCancel, "No wait, stop."}},
				responses: []wantResponse{{"c1", 4200, map[string]any{"status": "cancelled"}}},
				notes:     []wantNote{{"c1", 4200, DeliverNow, []string{"cancelled"}}},
			},
			extra: func(t *testing.T, h *harness) {
				if len(h.decides) != 1 || h.decides[0].Decision != DecisionCancel {
					t.Errorf("Decide(prepared: false) answered %+v, want cancel", h.decides)
				}
			},
		},
		{
			name:   "stop merged into the request, transcript after the call, cancels before prepare",
			policy: bookingPolicy(),
			script: []timed{
				at(500, userStart),
				at(4100, userEnd),
				at(4164, book("c1", "tomorrow 3pm")),
				at(5400, said("Book 3pm tomorrow. No wait, stop.")),
				at(5500, poll("c1")),
				at(5500, complete("c1", Cancelled, nil)),
			},
			want: want{
				decisions: []wantDecision{{"c1", 5400, DecisionCancel, "No wait, stop."}},
				responses: []wantResponse{{"c1", 5500, map[string]any{"status": "cancelled"}}},
				notes:     []wantNote{{"c1", 5500, DeliverNow, []string{"cancelled"}}},
			},
			extra: func(t *testing.T, h *harness) {
				if len(h.decides) != 1 || h.decides[0].Decision != DecisionCancel {
					t.Errorf("Decide(prepared: false) answered %+v, want cancel", h.decides)
				}
			},
		},
		{
			// Case 4: a follow-up question while pending holds, then commits.
			name:   "follow-up question settling after the grace window commits when it settles",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(8164, prepared("c1")),
				at(9000, userStart),
				at(10000, userEnd),
				at(10800, said("What's the weather like there?")),
				at(12000, complete("c1", Committed, committedR1)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 10800, DecisionCommit, ""}},
				responses: []wantResponse{{"c1", 12000, map[string]any{"status": "committed", "result": map[string]any{"reference": "R-1"}}}},
			},
		},
		{
			name:   "follow-up question settling inside the grace window commits at its end",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(5000, userStart),
				at(6000, userEnd),
				at(6500, said("What's the weather like there?")),
				at(6600, ev(RegisterCall{CallID: "w1", Tool: "get_weather", Args: map[string]any{"city": "Paris"}})),
				at(6700, complete("w1", Result, map[string]any{"forecast": "sun"})),
				at(8164, prepared("c1")),
				at(12000, tick),
				at(12000, complete("c1", Committed, committedR1)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 9664, DecisionCommit, ""}},
				responses: []wantResponse{
					{"w1", 6700, map[string]any{"status": "ok", "result": map[string]any{"forecast": "sun"}}},
					{"c1", 12000, map[string]any{"status": "committed"}},
				},
			},
		},
		{
			// Case 5: speech with no transcript.
			name:   "speech without transcript cancels 3s after it ends",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(8164, prepared("c1")),
				at(9000, userStart),
				at(10500, userEnd),
				at(13499, tick),
				at(20000, tick),
				at(20000, complete("c1", Cancelled, nil)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 13500, DecisionCancel, "no transcript"}},
				responses: []wantResponse{{"c1", 20000, map[string]any{"status": "cancelled"}}},
				notes:     []wantNote{{"c1", 20000, DeliverNow, []string{"could not be confirmed", "whether they still want it"}}},
			},
		},
		{
			name:   "speech without transcript ending inside the grace window cancels 3s after grace end",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(8164, prepared("c1")),
				at(8500, userStart),
				at(9000, userEnd),
				at(20000, tick),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 12664, DecisionCancel, "no transcript"}},
			},
		},
		{
			name:   "speech without transcript commits at the timeout under on_transcript_timeout commit",
			policy: bookingPolicy(onTranscriptTimeout(Commit)),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(8164, prepared("c1")),
				at(9000, userStart),
				at(10500, userEnd),
				at(13499, tick),
				at(20000, tick),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 13500, DecisionCommit, ""}},
			},
		},
		{
			// Case 6: after a cancel, a new request for the same slot is a new job.
			name:   "new request after a completed cancel is a new job that commits",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(5164, userStart),
				at(7500, said(stopText)),
				at(7500, userEnd),
				at(8164, prepared("c1")),
				at(8164, complete("c1", Cancelled, nil)),
				at(10000, userStart),
				at(11500, said("OK, book it after all")),
				at(11500, userEnd),
				at(11600, book("c2", "tomorrow 3pm")),
				at(15600, prepared("c2")),
				at(17100, tick),
				at(17100, complete("c2", Committed, committedR1)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 7500, DecisionCancel, stopText}, {"c2", 17100, DecisionCommit, ""}},
				responses: []wantResponse{
					{"c1", 8164, map[string]any{"status": "cancelled"}},
					{"c2", 17100, map[string]any{"status": "committed", "result": map[string]any{"reference": "R-1"}}},
				},
				notes: []wantNote{{"c1", 8164, DeliverNow, []string{"cancelled"}}},
			},
			extra: func(t *testing.T, h *harness) {
				r1, r2 := h.callResult("c1"), h.callResult("c2")
				if r2.Disposition != Execute || r2.JobID == r1.JobID {
					t.Errorf("c2: %+v, want execute in a new job (c1's is %s)", r2, r1.JobID)
				}
			},
		},
		{
			// Case 7: a call made under tool choice none.
			name:   "tool_choice none call is rejected at once",
			policy: bookingPolicy(),
			script: []timed{
				at(1000, ev(RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}, ToolChoiceNone: true})),
				at(20000, tick),
			},
			want: want{
				responses: []wantResponse{{"c1", 1000, map[string]any{"status": "rejected", "executed": false}}},
			},
			extra: func(t *testing.T, h *harness) {
				r := h.callResult("c1")
				if r.Disposition != Reject || r.JobID != "" {
					t.Errorf("c1: %+v, want reject without job", r)
				}
				if len(h.s.Jobs) != 0 {
					t.Errorf("%d jobs, want none", len(h.s.Jobs))
				}
				if msg, _ := h.responses[0].Payload["error"].(string); !strings.Contains(msg, "book_slot") {
					t.Errorf("error %q does not name the function", msg)
				}
			},
		},
		{
			// Case 8: unknown tools.
			name:   "unknown tool is rejected under RejectUnknown",
			policy: bookingPolicy(func(p *Policy) { p.RejectUnknown = true }),
			script: []timed{
				at(1000, ev(RegisterCall{CallID: "c1", Tool: "send_sms", Args: map[string]any{"to": "bob"}})),
			},
			want: want{
				responses: []wantResponse{{"c1", 1000, map[string]any{"status": "rejected", "executed": false}}},
			},
			extra: func(t *testing.T, h *harness) {
				if r := h.callResult("c1"); r.Disposition != Reject || r.JobID != "" {
					t.Errorf("c1: %+v, want reject without job", r)
				}
				if msg, _ := h.responses[0].Payload["error"].(string); !strings.Contains(msg, "send_sms") {
					t.Errorf("error %q does not name the function", msg)
				}
			},
		},
		{
			name: "disallowed tool is rejected",
			policy: bookingPolicy(func(p *Policy) {
				p.Tools["end_call"] = &Tool{Name: "end_call", SideEffect: true, Disallowed: true}
			}),
			script: []timed{
				at(1000, ev(RegisterCall{CallID: "c1", Tool: "end_call"})),
			},
			want: want{
				responses: []wantResponse{{"c1", 1000, map[string]any{"status": "rejected", "executed": false}}},
			},
			extra: func(t *testing.T, h *harness) {
				if r := h.callResult("c1"); r.Disposition != Reject || len(h.s.Jobs) != 0 {
					t.Errorf("c1: %+v with %d jobs, want reject without job", r, len(h.s.Jobs))
				}
			},
		},
		{
			name:   "unknown tool runs read-only by default",
			policy: bookingPolicy(),
			script: []timed{
				at(1000, ev(RegisterCall{CallID: "c1", Tool: "send_sms", Args: map[string]any{"to": "bob"}})),
				at(1200, complete("c1", Result, map[string]any{"sent": true})),
			},
			want: want{
				responses: []wantResponse{{"c1", 1200, map[string]any{"status": "ok", "result": map[string]any{"sent": true}}}},
			},
			extra: func(t *testing.T, h *harness) {
				if r := h.callResult("c1"); r.Disposition != Execute || r.SideEffect || r.JobID == "" {
					t.Errorf("c1: %+v, want execute, read-only, with a job", r)
				}
			},
		},
		{
			// Case 9: the server withdraws the id.
			name:   "withdrawn undecided call is skipped and its job cancelled",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(5000, withdrawn("c1")),
				at(8164, prepared("c1")),
				at(8164, complete("c1", Cancelled, nil)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 5000, DecisionCancel, "withdrawn"}},
				skips:     []wantSkip{{"c1", 5000, "withdrawn"}},
			},
		},
		{
			name:   "withdrawn after the commit decision: the note says it was already committed",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(8164, prepared("c1")),
				at(9664, prepared("c1")), // the parked Decide hands out the COMMIT
				at(9800, withdrawn("c1")),
				at(10000, complete("c1", Committed, committedR1)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 9664, DecisionCommit, ""}},
				skips:     []wantSkip{{"c1", 9800, "withdrawn"}},
				notes:     []wantNote{{"c1", 10000, DeliverNow, []string{"already committed", "R-1"}}},
			},
		},
		{
			// Case 10: the same call id twice.
			name:   "same call id twice is one call; a repeat after completion repeats the response",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(4500, book("c1", "tomorrow 3pm")),
				at(8164, prepared("c1")),
				at(10000, complete("c1", Committed, committedR1)),
				at(10500, book("c1", "tomorrow 3pm")),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 9664, DecisionCommit, ""}},
				responses: []wantResponse{
					{"c1", 10000, map[string]any{"status": "committed", "result": map[string]any{"reference": "R-1"}}},
					{"c1", 10500, map[string]any{"status": "committed", "result": map[string]any{"reference": "R-1"}}},
				},
			},
			extra: func(t *testing.T, h *harness) {
				rs := h.calls["c1"]
				if len(rs) != 3 || rs[0].Repeat || !rs[1].Repeat || !rs[2].Repeat {
					t.Fatalf("c1 answers %+v, want first not a repeat, the other two repeats", rs)
				}
				if rs[1].JobID != rs[0].JobID || rs[2].JobID != rs[0].JobID {
					t.Errorf("job ids %s %s %s, want one job", rs[0].JobID, rs[1].JobID, rs[2].JobID)
				}
				if len(h.s.Jobs) != 1 || len(h.s.Calls) != 1 || len(h.s.Jobs[0].CallIDs) != 1 {
					t.Errorf("%d jobs, %d calls, want one of each", len(h.s.Jobs), len(h.s.Calls))
				}
				if o := h.s.Call("c1").Outcome; o == nil || msOf(o.At) != 10000 {
					t.Errorf("c1 outcome %+v, want set once at 10000", o)
				}
				if a, b := h.responses[0].Payload, h.responses[1].Payload; !sameJSON(a, b) {
					t.Errorf("repeat response %v differs from %v", b, a)
				}
			},
		},
		{
			// Case 12: notes while the model speaks.
			name:   "a note while the model speaks is delivered when idle",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(5164, userStart),
				at(7500, said(stopText)),
				at(7500, userEnd),
				at(7900, modelStart),
				at(8164, prepared("c1")),
				at(8164, complete("c1", Cancelled, nil)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 7500, DecisionCancel, stopText}},
				responses: []wantResponse{{"c1", 8164, map[string]any{"status": "cancelled"}}},
				notes:     []wantNote{{"c1", 8164, DeliverWhenIdle, []string{"cancelled"}}},
			},
		},
		{
			name:   "interrupted within 1s of a now note does not abandon a BLOCKING call",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(5164, userStart),
				at(6000, said(stopText)),
				at(6000, userEnd),
				at(9000, bookBlocking("c2", "tomorrow 4pm")),
				at(9500, complete("c1", Cancelled, nil)), // note now at 9500
				at(10400, interrupted),                   // the note's doing
				at(13000, prepared("c2")),
				at(14500, tick),
				at(14500, complete("c2", Committed, committedR1)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 6000, DecisionCancel, stopText}, {"c2", 14500, DecisionCommit, ""}},
				responses: []wantResponse{
					{"c1", 9500, map[string]any{"status": "cancelled"}},
					{"c2", 14500, map[string]any{"status": "committed"}},
				},
				notes: []wantNote{{"c1", 9500, DeliverNow, []string{"cancelled"}}},
			},
		},
		{
			// The control for the case above: the same interruption 1.1 s after the note
			// is barge-in and abandons the call.
			name:   "interrupted more than 1s after a now note abandons a BLOCKING call",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(5164, userStart),
				at(6000, said(stopText)),
				at(6000, userEnd),
				at(9000, bookBlocking("c2", "tomorrow 4pm")),
				at(9500, complete("c1", Cancelled, nil)),
				at(10600, interrupted),
				at(13000, prepared("c2")),
				at(30000, tick),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 6000, DecisionCancel, stopText}, {"c2", 20600, DecisionCancel, "abandoned"}},
				responses: []wantResponse{{"c1", 9500, map[string]any{"status": "cancelled"}}},
				skips:     []wantSkip{{"c2", 10600, "abandoned"}},
				notes:     []wantNote{{"c1", 9500, DeliverNow, []string{"cancelled"}}},
			},
		},
		{
			// Case 15: a stop heard after the commit decision, before Complete.
			name:   "stop after the commit decision: the note says confirmed and offers to cancel",
			policy: bookingPolicy(),
			script: script(asked, []timed{
				at(4164, book("c1", "tomorrow 3pm")),
				at(8164, prepared("c1")),
				at(9664, prepared("c1")), // the parked Decide hands out the COMMIT
				at(10000, userStart),
				at(11000, said(stopText)),
				at(11000, userEnd),
				at(11200, complete("c1", Committed, committedR1)),
			}),
			want: want{
				decisions: []wantDecision{{"c1", 9664, DecisionCommit, ""}},
				responses: []wantResponse{{"c1", 11200, map[string]any{"status": "committed", "result": map[string]any{"reference": "R-1"}}}},
				notes:     []wantNote{{"c1", 11200, DeliverNow, []string{"confirmed", "R-1", "offer to cancel"}}},
			},
		},
		{
			// Not in the list: a transcript-less utterance (noise) long before a
			// call. The spec's trigger_lookback counts only "the utterance that ended this
			// soon before the call"; this one ended 30 s earlier, so it must not hold the
			// commit, let alone cancel it on a transcript timeout.
			name:   "stale transcript-less utterance long before the call does not hold it",
			policy: bookingPolicy(),
			script: []timed{
				at(1000, userStart),
				at(1500, userEnd),
				at(31500, book("c1", "tomorrow 3pm")),
				at(35500, prepared("c1")),
				at(40000, tick),
			},
			want: want{
				decisions: []wantDecision{{"c1", 37000, DecisionCommit, ""}},
			},
		},
		{
			// Not in the list: the stop was merged into the request, then the
			// user said something short before the call arrived. The spec counts "a stop
			// in the utterance that ended [trigger_lookback] before the call"; the
			// request-and-stop utterance ended 1 s before it, so the stop counts.
			name:   "stop in an earlier utterance that ended within the lookback cancels",
			policy: bookingPolicy(),
			script: []timed{
				at(500, userStart),
				at(2500, said("Book 3pm tomorrow. No wait, stop.")),
				at(2500, userEnd),
				at(2800, userStart),
				at(3300, said("Sorry.")),
				at(3300, userEnd),
				at(3500, book("c1", "tomorrow 3pm")),
				at(7500, prepared("c1")),
				at(9000, tick),
			},
			want: want{
				decisions: []wantDecision{{"c1", 3500, DecisionCancel, "No wait, stop."}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.policy)
			h.run(tc.script)
			h.check(tc.want)
			if tc.extra != nil {
				tc.extra(t, h)
			}
		})
	}
}

// Case 11: a call without an id gets one.
func TestEngineMintsCallIDs(t *testing.T) {
	h := newHarness(t, bookingPolicy())
	re := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	seen := map[string]bool{}
	for i, tool := range []string{"book_slot", "get_weather", "book_slot"} {
		slot := []string{"tomorrow 3pm", "", "tomorrow 4pm"}[i]
		out := h.step(1000*(i+1), RegisterCall{Tool: tool, Args: map[string]any{"slot": slot}})
		id := out.Call.CallID
		if !re.MatchString(id) {
			t.Errorf("minted id %q does not match %s", id, re)
		}
		if seen[id] {
			t.Errorf("minted id %q twice", id)
		}
		seen[id] = true
		if out.Call.Disposition != Execute || h.s.Call(id) == nil {
			t.Errorf("call %q: %+v, want execute and registered", id, out.Call)
		}
	}
}

// Case 13: out-of-order and invalid input is an error of the right kind, changes
// nothing and never panics.
func TestEngineErrors(t *testing.T) {
	h := newHarness(t, bookingPolicy())
	h.run(script(asked, []timed{
		at(4164, book("c1", "tomorrow 3pm")),
		at(4200, ev(RegisterCall{CallID: "w1", Tool: "get_weather", Args: map[string]any{"city": "Paris"}})),
		at(5000, userStart),
		at(5500, userEnd),
		at(5600, said("Sounds good.")),
	}))
	job := h.jobOf("c1")
	weather := h.jobOf("w1")
	const when = 5600 // the session's clock: no timer due, nothing may change

	cases := []struct {
		name  string
		ev    Event
		kind  Kind
		field string // FieldOf, and the start of the message
	}{
		{"Complete(Committed) before a commit decision", Complete{JobID: job, Outcome: Committed}, FailedPrecondition, "outcome"},
		{"Complete(Cancelled) before a cancel decision", Complete{JobID: job, Outcome: Cancelled}, FailedPrecondition, "outcome"},
		{"Complete(Result) on a two-phase job", Complete{JobID: job, Outcome: Result}, FailedPrecondition, "outcome"},
		{"Complete(Committed) on a read-only job", Complete{JobID: weather, Outcome: Committed}, FailedPrecondition, "outcome"},
		{"Complete with a bad outcome", Complete{JobID: job, Outcome: "done"}, Invalid, "outcome"},
		{"Decide on a read-only job", Decide{JobID: weather, Prepared: true}, FailedPrecondition, "job_id"},
		{"Decide on an unknown job", Decide{JobID: "job-404", Prepared: true}, NotFound, "job_id"},
		{"Complete on an unknown job", Complete{JobID: "job-404", Outcome: Cancelled}, NotFound, "job_id"},
		{"RegisterCall with a bad call_id", RegisterCall{CallID: "bad id!", Tool: "book_slot"}, Invalid, "call_id"},
		{"RegisterCall with an overlong call_id", RegisterCall{CallID: strings.Repeat("a", 129), Tool: "book_slot"}, Invalid, "call_id"},
		{"RegisterCall with no tool", RegisterCall{CallID: "c9"}, Invalid, "tool"},
		{"RegisterCall with a bad tool", RegisterCall{CallID: "c9", Tool: "book slot"}, Invalid, "tool"},
		{"RegisterCall with an overlong business key", RegisterCall{CallID: "c9", Tool: "book_slot", BusinessKey: strings.Repeat("k", MaxKeyBytes+1)}, Invalid, "business_key"},
		{"RegisterCall with a bad behavior", RegisterCall{CallID: "c9", Tool: "book_slot", Behavior: "SOMETIMES"}, Invalid, "behavior"},
		{"transcript over 16 KiB", Transcript{Text: strings.Repeat("a", MaxTextBytes+1)}, Invalid, "text"},
		{"empty user transcript", Transcript{Text: "  "}, Invalid, "text"},
		{"unknown speech kind", Speech{Kind: "cough"}, Invalid, "event"},
		{"cancellation without ids", ToolCallCancellation{}, Invalid, "call_ids"},
		{"cancellation with a bad id", ToolCallCancellation{CallIDs: []string{"c1", "bad id"}}, Invalid, "call_ids[1]"},
		{"nil event", nil, Invalid, "event"},
	}
	before, err := EncodeSession(h.s)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clone, err := DecodeSession(before)
			if err != nil {
				t.Fatal(err)
			}
			reenc, _ := EncodeSession(clone)
			var (
				out     Output
				stepErr error
			)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				out, stepErr = h.e.Step(clone, ms(when), tc.ev)
			}()
			if stepErr == nil {
				t.Fatalf("no error; output %+v", out)
			}
			if k := KindOf(stepErr); k != tc.kind {
				t.Errorf("kind %v, want %v (%v)", k, tc.kind, stepErr)
			}
			if f := FieldOf(stepErr); f != tc.field {
				t.Errorf("field %q, want %q (%v)", f, tc.field, stepErr)
			}
			if msg := MessageOf(stepErr); !strings.HasPrefix(msg, tc.field+": ") {
				t.Errorf("message %q does not start with %q", msg, tc.field+": ")
			}
			after, _ := EncodeSession(clone)
			if !bytes.Equal(reenc, after) {
				t.Errorf("session changed:\nbefore %s\nafter  %s", reenc, after)
			}
			if !out.Effects.Empty() || len(out.Decisions) != 0 {
				t.Errorf("effects on error: %+v", out)
			}
		})
	}

	// Later on the clock, a refused Complete moves the session's clock (Step's contract:
	// "s may have advanced its timers") and nothing else.
	t.Run("refused Complete later on changes nothing but the clock", func(t *testing.T) {
		clone, _ := DecodeSession(before)
		want, _ := EncodeSession(clone)
		if _, err := h.e.Step(clone, ms(7000), Complete{JobID: job, Outcome: Committed}); KindOf(err) != FailedPrecondition {
			t.Fatalf("Complete(Committed) before prepare: %v, want failed precondition", err)
		}
		clone.Now = ms(when)
		if got, _ := EncodeSession(clone); !bytes.Equal(got, want) {
			t.Errorf("session changed:\nbefore %s\nafter  %s", want, got)
		}
	})

	// The real session still works: the errors above did not touch it.
	h.step(8164, Decide{JobID: job, Prepared: true})
	h.step(9664, Tick{})
	if j := h.s.Job(job); j.Decision != DecisionCommit {
		t.Errorf("after the errors the job decided %q, want commit", j.Decision)
	}
	// And a completed job refuses another outcome.
	h.step(9700, Complete{JobID: job, Outcome: Committed})
	if _, err := h.try(9800, Complete{JobID: job, Outcome: Failed}); KindOf(err) != FailedPrecondition {
		t.Errorf("second Complete with another outcome: %v, want failed precondition", err)
	}
	// A closed session refuses calls, new or repeated (an agent retrying a registration
	// must not start a prepare for an id that is dead), and speech.
	h.step(10000, Close{})
	if _, err := h.try(10000, RegisterCall{CallID: "c9", Tool: "book_slot"}); KindOf(err) != FailedPrecondition {
		t.Errorf("RegisterCall after Close: %v, want failed precondition", err)
	}
	if _, err := h.try(10000, Speech{Kind: UserActivityStart}); KindOf(err) != FailedPrecondition {
		t.Errorf("Speech after Close: %v, want failed precondition", err)
	}
	if _, err := h.try(10000, RegisterCall{CallID: "c1", Tool: "book_slot"}); KindOf(err) != FailedPrecondition {
		t.Errorf("repeat after Close: %v, want failed precondition", err)
	}
}

func TestEngineCallLimit(t *testing.T) {
	h := newHarness(t, bookingPolicy())
	for i := 0; i < MaxCallsPerSession; i++ {
		h.step(i, RegisterCall{CallID: fmt.Sprintf("w%d", i), Tool: "get_weather"})
	}
	if _, err := h.try(MaxCallsPerSession, RegisterCall{CallID: "one-more", Tool: "get_weather"}); KindOf(err) != ResourceExhausted {
		t.Errorf("call %d: %v, want resource exhausted", MaxCallsPerSession+1, err)
	}
	if out, err := h.try(MaxCallsPerSession, RegisterCall{CallID: "w0", Tool: "get_weather"}); err != nil || !out.Call.Repeat {
		t.Errorf("repeat of a recorded id at the limit: %+v, %v; want the recorded answer", out.Call, err)
	}
}

// Case 14 (the engine half; keys_test.go has the keys): what business-key dedupe
// absorbs and what it does not.
func TestEngineDedupe(t *testing.T) {
	t.Run("reworded repeats of an open job are duplicates", func(t *testing.T) {
		h := newHarness(t, bookingPolicy())
		h.step(1000, book("c1", "tomorrow 3pm")(h))
		for i, slot := range []string{"tomorrow at 3pm", "Tomorrow at 3 P.M.", "3:00 p.m. tomorrow"} {
			id := []string{"c2", "c3", "c4"}[i]
			out := h.step(2000+i*100, book(id, slot)(h))
			if out.Call.Disposition != Duplicate || out.Call.DuplicateOf != "c1" || out.Call.JobID != h.jobOf("c1") {
				t.Errorf("%s (%q): %+v, want duplicate of c1", id, slot, out.Call)
			}
		}
		out := h.step(3000, book("c5", "tomorrow 4pm")(h))
		if out.Call.Disposition != Execute || out.Call.JobID == h.jobOf("c1") {
			t.Errorf("c5 (4pm): %+v, want a new job", out.Call)
		}
	})
	t.Run("a failed job does not absorb a repeat", func(t *testing.T) {
		h := newHarness(t, bookingPolicy())
		h.run([]timed{
			at(1000, book("c1", "tomorrow 3pm")),
			at(2000, complete("c1", Failed, nil)),
		})
		out := h.step(3000, book("c2", "tomorrow at 3pm")(h))
		if out.Call.Disposition != Execute || out.Call.JobID == h.jobOf("c1") {
			t.Errorf("c2 after c1 failed: %+v, want a new job", out.Call)
		}
		if !out.Effects.Empty() {
			t.Errorf("c2 answered at once with %+v; it must be executed", out.Effects)
		}
	})
	// Issue 13: the window limits repeats after the user has spoken again; a repeat with
	// no user turn since the job began is a duplicate however late (a model in a loop),
	// unless the tool says dedupe_until_user_speaks: false (DedupeWindowOnly).
	for _, tc := range []struct {
		after      int  // ms after c1's completion
		spoke      bool // the user spoke after the completion
		windowOnly bool
		disp       Disposition
	}{
		{29999, true, false, Duplicate}, {30000, true, false, Execute}, {45000, true, false, Execute},
		{45000, false, false, Duplicate}, {600000, false, false, Duplicate}, {45000, false, true, Execute},
	} {
		t.Run(fmt.Sprintf("repeat %d ms after completion (user spoke %v, window only %v) is %s", tc.after, tc.spoke, tc.windowOnly, tc.disp), func(t *testing.T) {
			h := newHarness(t, bookingPolicy(func(p *Policy) { p.Tools["book_slot"].DedupeWindowOnly = tc.windowOnly }))
			h.run([]timed{
				at(1000, book("c1", "tomorrow 3pm")),
				at(5000, prepared("c1")),
				at(7000, tick),
				at(7000, complete("c1", Committed, committedR1)),
			})
			if tc.spoke {
				h.run([]timed{at(7500, userStart), at(8000, userEnd), at(8100, said("Thanks. Book it again, please."))})
			}
			out := h.step(7000+tc.after, book("c2", "tomorrow at 3pm")(h))
			if out.Call.Disposition != tc.disp {
				t.Fatalf("c2 %d ms after completion: %+v, want %s", tc.after, out.Call, tc.disp)
			}
			switch tc.disp {
			case Duplicate:
				if len(out.Effects.Responses) != 1 || resultOf(out.Effects.Responses[0].Payload)["reference"] != "R-1" {
					t.Errorf("duplicate answered %+v, want c1's committed result", out.Effects)
				}
			case Execute:
				if out.Call.JobID == h.jobOf("c1") || !out.Effects.Empty() {
					t.Errorf("c2: %+v %+v, want a new job, unanswered", out.Call, out.Effects)
				}
			}
		})
	}
}

func sameJSON(a, b any) bool {
	x, err1 := jsonOf(a)
	y, err2 := jsonOf(b)
	return err1 == nil && err2 == nil && x == y
}
