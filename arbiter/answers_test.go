package arbiter

import (
	"testing"
)

// Jobs named by call id (Decide, Complete: the tool helper's way), and the agent's own
// answers as the wire guard reads them (ToolAnswer).

func TestJobByCallID(t *testing.T) {
	slot := map[string]any{"slot": "tomorrow 3pm"}
	t.Run("decide and complete by call id", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		j := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: slot}).Call.JobID
		out := sp.do(10, Decide{CallID: "c1"})
		if out.Decision.JobID != j || out.Decision.Decision != Undecided || !out.Changed || !sp.s.Job(j).Asked {
			t.Fatalf("first Decide by call id: %+v changed=%v asked=%v", out.Decision, out.Changed, sp.s.Job(j).Asked)
		}
		if again := sp.do(20, Decide{CallID: "c1"}); again.Changed {
			t.Errorf("a second Decide by call id changes nothing: %+v", again)
		}
		sp.do(100, Decide{CallID: "c1", Prepared: true})
		if d := sp.do(1700, Decide{CallID: "c1", JobID: j, Prepared: true}).Decision; d.Decision != DecisionCommit {
			t.Fatalf("decision %+v", d)
		}
		done := sp.do(1800, Complete{CallID: "c1", Outcome: Committed, Result: map[string]any{"reference": "R-1"}})
		if r := onlyResponse(t, done); r.CallID != "c1" || r.Payload["status"] != "committed" {
			t.Errorf("%+v", r)
		}
		// The history names the job, whichever way the request did.
		var prepared, complete string
		for _, e := range sp.s.History.Entries {
			if e.Prepared != nil {
				prepared = e.Prepared.Job
			}
			if e.Complete != nil {
				complete = e.Complete.Job
			}
		}
		if prepared != j || complete != j {
			t.Errorf("history names prepared %q, complete %q; want %q", prepared, complete, j)
		}
	})
	t.Run("refused", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		j := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: slot}).Call.JobID
		sp.do(10, RegisterCall{CallID: "c2", Tool: "book_slot", Args: slot})                       // duplicate
		sp.do(20, RegisterCall{CallID: "c3", Tool: "book_slot", Args: slot, ToolChoiceNone: true}) // rejected
		for _, c := range []struct {
			ev    Event
			kind  Kind
			field string
		}{
			{Decide{}, Invalid, "job_id"},
			{Decide{CallID: "bad id"}, Invalid, "call_id"},
			{Decide{CallID: "nope"}, NotFound, "call_id"},
			{Decide{CallID: "c2"}, FailedPrecondition, "call_id"},
			{Complete{CallID: "c2", Outcome: Failed}, FailedPrecondition, "call_id"},
			{Decide{CallID: "c3"}, FailedPrecondition, "call_id"},
			{Decide{CallID: "c1", JobID: "job-9"}, FailedPrecondition, "call_id"},
			{Complete{CallID: "c1", Outcome: Committed}, FailedPrecondition, "outcome"},
		} {
			if _, err := sp.e.Step(sp.s, ms(30), c.ev); KindOf(err) != c.kind || FieldOf(err) != c.field {
				t.Errorf("%+v: %v, want %v naming %s", c.ev, err, c.kind, c.field)
			}
		}
		if sp.s.Job(j).Asked {
			t.Errorf("a refused Decide marked the job asked")
		}
	})
}

func TestToolAnswer(t *testing.T) {
	slot := map[string]any{"slot": "tomorrow 3pm"}
	t.Run("read-only: the answer is the result", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		sp.do(0, RegisterCall{CallID: "w1", Tool: "get_weather", Args: map[string]any{"city": "Lyon"}})
		out := sp.do(500, ToolAnswer{CallID: "w1", Payload: map[string]any{"output": "sunny"}})
		a := out.Answer
		if a.Verdict != AnswerSend || a.Response.Payload["status"] != "ok" || a.Response.Payload["result"].(map[string]any)["output"] != "sunny" {
			t.Fatalf("%+v %+v", a, a.Response)
		}
		if r := onlyResponse(t, out); r.Seq != a.Response.Seq || r.Seq == 0 {
			t.Errorf("the response is handed out once, logged: %+v vs %+v", r, a.Response)
		}
		// A second answer for the id: the same response, nothing new.
		again := sp.do(600, ToolAnswer{CallID: "w1", Payload: map[string]any{"output": "rain"}})
		if again.Answer.Verdict != AnswerSend || again.Answer.Response.Seq != a.Response.Seq || !again.Effects.Empty() || again.Changed {
			t.Errorf("second answer: %+v %+v changed=%v", again.Answer, again.Effects, again.Changed)
		}
	})
	t.Run("side effect with a helper: the framework's answer waits for the job", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: slot})
		sp.do(10, Decide{CallID: "c1"})
		// Barge-in on a NON_BLOCKING call: the framework answers "CANCELLED" itself.
		out := sp.do(500, ToolAnswer{CallID: "c1", Payload: map[string]any{"output": "CANCELLED"}})
		if out.Answer.Verdict != AnswerWait || !out.Effects.Empty() {
			t.Fatalf("%+v %+v", out.Answer, out.Effects)
		}
		sp.do(600, Decide{CallID: "c1", Prepared: true})
		sp.do(2200, Decide{CallID: "c1", Prepared: true})
		done := sp.do(2300, Complete{CallID: "c1", Outcome: Committed, Result: map[string]any{"reference": "R-1"}})
		r := onlyResponse(t, done)
		after := sp.do(2400, ToolAnswer{CallID: "c1", Payload: map[string]any{"output": "booked"}})
		if after.Answer.Verdict != AnswerSend || after.Answer.Response.Seq != r.Seq || after.Answer.Response.Payload["status"] != "committed" {
			t.Errorf("after Complete: %+v", after.Answer)
		}
	})
	t.Run("side effect without a helper: the tool's own word, duplicates answered with it", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		j := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: slot}).Call.JobID
		dup := sp.do(100, RegisterCall{CallID: "c2", Tool: "book_slot", Args: slot})
		if dup.Call.Disposition != Duplicate {
			t.Fatalf("%+v", dup.Call)
		}
		out := sp.do(400, ToolAnswer{CallID: "c1", Payload: map[string]any{"output": "booked R-7"}})
		if out.Answer.Verdict != AnswerSend || out.Answer.Response.Payload["status"] != "ok" {
			t.Fatalf("%+v", out.Answer)
		}
		if len(out.Effects.Responses) != 2 || out.Effects.Responses[1].CallID != "c2" || out.Effects.Responses[1].Payload["duplicate_of"] != "c1" {
			t.Errorf("the duplicate is answered with the tool's answer: %+v", out.Effects.Responses)
		}
		job := sp.s.Job(j)
		if !job.Unguarded || job.Outcome != Result || job.Decision != DecisionCommit || job.Reason != reasonUnguarded {
			t.Errorf("job %+v", job)
		}
		// A later repeat is answered with it too, never executed.
		if re := sp.do(900, RegisterCall{CallID: "c3", Tool: "book_slot", Args: slot}); re.Call.Disposition != Duplicate || onlyResponse(t, re).Payload["status"] != "ok" {
			t.Errorf("%+v %+v", re.Call, re.Effects)
		}
	})
	t.Run("without a helper, after a stop: the note says it ran anyway", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: slot})
		sp.say(200, 900, "Actually, stop.")
		out := sp.do(1500, ToolAnswer{CallID: "c1", Payload: map[string]any{"output": "booked R-7"}})
		noteWith(t, out, "was to be cancelled", "ran without waiting", "booked R-7")
	})
	t.Run("dead and foreign ids are dropped; the job still learns what its tool did", func(t *testing.T) {
		p := bookingPolicy()
		sp := newStepper(t, p)
		j := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: slot, Behavior: Blocking}).Call.JobID
		sp.do(200, Speech{Kind: UserActivityStart})
		if skips := sp.do(250, Speech{Kind: Interrupted}).Effects.Skips; len(skips) != 1 {
			t.Fatalf("abandon: %+v", skips)
		}
		out := sp.do(400, ToolAnswer{CallID: "c1", Payload: map[string]any{"output": "booked"}})
		if out.Answer.Verdict != AnswerDrop || out.Answer.Reason != string(SkipAbandoned) || len(out.Effects.Responses) != 0 {
			t.Errorf("%+v %+v", out.Answer, out.Effects)
		}
		if job := sp.s.Job(j); job.Outcome != Result || !job.Unguarded {
			t.Errorf("job %+v", job)
		}
		if a := sp.do(500, ToolAnswer{CallID: "nope", Payload: nil}).Answer; a.Verdict != AnswerDrop || a.Reason != DropUnknownCall {
			t.Errorf("%+v", a)
		}
		sp.do(600, RegisterCall{CallID: "r1", Tool: "book_slot", Args: slot, ToolChoiceNone: true})
		if a := sp.do(700, ToolAnswer{CallID: "r1"}).Answer; a.Verdict != AnswerDrop || a.Reason != DropNotExecuted {
			t.Errorf("an answer to a rejected call: %+v", a)
		}
	})
}

// TestToolAnswerOverLimit: issue 25, item 5, for the agent's own answer as the wire
// guard reads it. An answer over 64 KiB was refused (INVALID_ARGUMENT naming result)
// and the call went unanswered; now it answers the call, its payload left out as a
// Complete's result is (result_omitted).
func TestToolAnswerOverLimit(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	sp.do(0, RegisterCall{CallID: "w1", Tool: "get_weather", Args: map[string]any{"city": "Lyon"}})
	out := sp.do(500, ToolAnswer{CallID: "w1", Payload: bigResult(70 << 10)})
	r := onlyResponse(t, out)
	om, _ := r.Payload[keyResultOmitted].(map[string]any)
	if out.Answer.Verdict != AnswerSend || r.Payload["status"] != "ok" || om["reason"] != ResultTooLarge {
		t.Fatalf("%+v %+v: want the call answered ok with result_omitted", out.Answer, r.Payload)
	}
}
