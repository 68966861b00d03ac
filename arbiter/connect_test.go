package arbiter

import (
	"bytes"
	"strings"
	"testing"
)

// Resumed sessions: a conversation id scopes dedupe and runs across connections; a
// call issued on a connection that has since closed is not answered on the new one.

// TestReconnectBetweenCallAndCommit: the call dies with its connection (a skip, never a
// response), its job goes on, a re-issue on the new connection is deduplicated against
// it, and the outcome reaches the model as a status note when no live id is left.
func TestReconnectBetweenCallAndCommit(t *testing.T) {
	t.Run("no re-issue: the commit goes out as a note", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		sp.do(0, Connect{ConnectionID: "conn-A"})
		j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
		if c := sp.s.Call("c1"); c.Connection != "conn-A" {
			t.Fatalf("call %+v", c)
		}
		sp.do(2000, Decide{JobID: j, Prepared: true})
		out := sp.do(2500, Connect{ConnectionID: "conn-B"})
		if len(out.Effects.Skips) != 1 || out.Effects.Skips[0].CallID != "c1" || out.Effects.Skips[0].Reason != "connection_closed" || len(out.Effects.Responses) != 0 {
			t.Fatalf("reconnect: %+v", out.Effects)
		}
		if !out.Changed || sp.s.Connection != "conn-B" {
			t.Errorf("connection %q changed=%v", sp.s.Connection, out.Changed)
		}
		// The job goes on under the normal rules: commit after the grace window.
		if d := sp.do(3500, Decide{JobID: j, Prepared: true}).Decision; d.Decision != DecisionCommit {
			t.Fatalf("decision %+v", d)
		}
		done := sp.do(4000, Complete{JobID: j, Outcome: Committed, Result: map[string]any{"reference": "R-1"}})
		if len(done.Effects.Responses) != 0 || len(done.Effects.Skips) != 0 {
			t.Fatalf("the dead id is never answered: %+v", done.Effects)
		}
		noteWith(t, done, "the booking for tomorrow 3pm is confirmed (reference R-1)")
		// A re-issue after the commit, in the window: the result at once, no new job.
		again := sp.do(5000, RegisterCall{CallID: "c2", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow at 3pm"}})
		if again.Call.Disposition != Duplicate || again.Call.JobID != j {
			t.Fatalf("%+v", again.Call)
		}
		if r := onlyResponse(t, again); r.Payload["status"] != "committed" || r.Payload["duplicate_of"] != "c1" {
			t.Errorf("%+v", r)
		}
		if sp.s.Call("c2").Connection != "conn-B" {
			t.Errorf("%+v", sp.s.Call("c2"))
		}
	})
	t.Run("re-issued on the new connection before the commit", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		sp.do(0, Connect{ConnectionID: "conn-A"})
		j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
		sp.do(1500, Connect{ConnectionID: "conn-B"})
		re := sp.do(1600, RegisterCall{CallID: "c1b", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
		if re.Call.Disposition != Duplicate || re.Call.JobID != j || !re.Effects.Empty() {
			t.Fatalf("re-issue: %+v %+v", re.Call, re.Effects)
		}
		sp.do(2000, Decide{JobID: j, Prepared: true})
		sp.do(3500, Tick{})
		done := sp.do(3600, Complete{JobID: j, Outcome: Committed})
		if r := onlyResponse(t, done); r.CallID != "c1b" || r.Payload["status"] != "committed" {
			t.Errorf("%+v", r)
		}
		if len(done.Effects.Notes) != 0 {
			t.Errorf("the live re-issue was answered; no note: %+v", done.Effects.Notes)
		}
		if len(sp.s.Jobs) != 1 {
			t.Errorf("%d jobs", len(sp.s.Jobs))
		}
	})
	t.Run("read-only result after the reconnect: a note", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		sp.do(0, Connect{ConnectionID: "conn-A"})
		j := sp.do(1000, RegisterCall{CallID: "w1", Tool: "get_weather", Args: map[string]any{"city": "Lyon"}}).Call.JobID
		sp.do(1500, Connect{ConnectionID: "conn-B"})
		done := sp.do(2000, Complete{JobID: j, Outcome: Result, Result: map[string]any{"temp_c": 19.0}})
		if len(done.Effects.Responses) != 0 {
			t.Fatalf("%+v", done.Effects.Responses)
		}
		noteWith(t, done, "before the reconnect", `"temp_c":19`)
	})
	t.Run("a run spans connections; the confirmation re-issued is a repeat of its job", func(t *testing.T) {
		rs := newRunSteps(t, runPolicy())
		rs.do(0, Connect{ConnectionID: "conn-A"})
		_, run := rs.open(1000, photo("p1", "the beach photo"), "needs_confirmation")
		rs.do(1500, Connect{ConnectionID: "conn-B"})
		// The run, opened on A, is confirmed on B.
		yes := rs.do(2000, confirmAction("k1", map[string]any{"confirmed": true}))
		if yes.Call.Disposition != Execute || yes.Call.RunID != run {
			t.Fatalf("%+v", yes.Call)
		}
		job := yes.Call.JobID
		rs.do(2500, Connect{ConnectionID: "conn-C"}) // k1 dies
		re := rs.do(2600, confirmAction("k2", map[string]any{"run_id": run, "confirmed": true}))
		if re.Call.Disposition != Duplicate || re.Call.JobID != job || re.Call.RunID != run || re.Call.DuplicateOf != "k1" || !re.Effects.Empty() {
			t.Fatalf("re-issued yes: %+v %+v", re.Call, re.Effects)
		}
		rs.do(3000, Decide{JobID: job, Prepared: true})
		rs.do(4500, Tick{})
		done := rs.do(4600, Complete{JobID: job, Outcome: Committed})
		if r := onlyResponse(t, done); r.CallID != "k2" || r.Payload["status"] != "committed" {
			t.Errorf("%+v", r)
		}
		if len(rs.s.Jobs) != 1 {
			t.Errorf("%d jobs", len(rs.s.Jobs))
		}
		// A re-issued "no" to the confirmed run is an error; nothing changes.
		no := rs.do(5000, confirmAction("k3", map[string]any{"run_id": run, "confirmed": false}))
		if no.Call.Disposition != Reject || rs.s.Run(run).State != RunConfirmed {
			t.Errorf("%+v", no.Call)
		}
	})
}

// TestConnect: idempotent for the current id, FailedPrecondition on a closed session,
// and only pending calls of earlier connections die.
func TestConnect(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	first := sp.do(0, Connect{ConnectionID: "conn-A"})
	if !first.Changed || !first.Effects.Empty() {
		t.Errorf("first connect: %+v", first)
	}
	sp.do(1000, RegisterCall{CallID: "w1", Tool: "get_weather"})
	seq := sp.s.LogSeq
	before, _ := EncodeSession(sp.s)
	same := sp.do(1000, Connect{ConnectionID: "conn-A"})
	if same.Changed || !same.Effects.Empty() {
		t.Errorf("connect again with the current id: %+v", same)
	}
	if after, _ := EncodeSession(sp.s); !bytes.Equal(before, after) || sp.s.LogSeq != seq {
		t.Errorf("session changed")
	}
	if sp.s.Call("w1").Outcome != nil {
		t.Errorf("w1 died: %+v", sp.s.Call("w1").Outcome)
	}
	// An answered call stays answered; a pending one dies once.
	sp.do(1100, RegisterCall{CallID: "w2", Tool: "get_weather"})
	sp.do(1200, Complete{JobID: sp.s.Call("w2").JobID, Outcome: Result})
	out := sp.do(2000, Connect{ConnectionID: "conn-B"})
	if len(out.Effects.Skips) != 1 || out.Effects.Skips[0].CallID != "w1" {
		t.Errorf("%+v", out.Effects)
	}
	// A delayed Connect to the ended connection is refused and cuts nothing off.
	sp.do(2050, RegisterCall{CallID: "w3", Tool: "get_weather"})
	enc, _ := EncodeSession(sp.s)
	if _, err := sp.e.Step(sp.s, ms(2100), Connect{ConnectionID: "conn-A"}); KindOf(err) != FailedPrecondition || !strings.Contains(err.Error(), "connection_id") {
		t.Errorf("back to A: %v, want FailedPrecondition naming connection_id", err)
	}
	if after, _ := EncodeSession(sp.s); string(after) != string(enc) {
		t.Errorf("a refused Connect changed the session")
	}
	if sp.s.Call("w3").Outcome != nil {
		t.Errorf("w3 on the live connection died: %+v", sp.s.Call("w3").Outcome)
	}
	// The dead id, registered again, is the recorded skip with its seq.
	re := sp.do(2200, RegisterCall{CallID: "w1", Tool: "get_weather"})
	if !re.Call.Repeat || len(re.Effects.Skips) != 1 || re.Effects.Skips[0].Seq != out.Effects.Skips[0].Seq {
		t.Errorf("%+v %+v", re.Call, re.Effects)
	}
	sp.do(3000, Close{})
	if _, err := sp.e.Step(sp.s, ms(3000), Connect{ConnectionID: "conn-C"}); KindOf(err) != FailedPrecondition {
		t.Errorf("connect on a closed session: %v", err)
	}
	if _, err := sp.e.Step(sp.s, ms(3000), Connect{ConnectionID: "conn-A"}); KindOf(err) != FailedPrecondition {
		t.Errorf("connect on a closed session: %v", err)
	}
}

// nested returns leaf wrapped so that the result is n levels of objects deep: leaf
// itself is level n ({"a": {"a": ... leaf}}).
func nested(n int, leaf map[string]any) map[string]any {
	v := leaf
	for i := 1; i < n; i++ {
		v = map[string]any{"a": v}
	}
	return v
}

// nestedList returns n levels of lists around a number: [[...[1]...]].
func nestedList(n int) any {
	var v any = 1.0
	for i := 0; i < n; i++ {
		v = []any{v}
	}
	return v
}

// TestArgsDepthLimit: args and results of exactly MaxArgsDepth levels are accepted
// and stored whole; one level more is Invalid naming the field (TestNewEventErrors).
func TestArgsDepthLimit(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	args := nested(MaxArgsDepth, map[string]any{"slot": "tomorrow 4pm"})
	args["slot"] = "tomorrow 3pm"
	out := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: args})
	if out.Call == nil || out.Call.Disposition != Execute {
		t.Fatalf("args %d levels deep: %+v, want a job", MaxArgsDepth, out.Call)
	}
	if got := sp.s.Jobs[0].Args; !nestedDeeper(got, MaxArgsDepth-1) || nestedDeeper(got, MaxArgsDepth) {
		t.Fatalf("the stored args are not %d levels deep", MaxArgsDepth)
	}
	if _, err := sp.e.Step(sp.s, ms(1100), Progress{JobID: out.Call.JobID, Result: nested(MaxArgsDepth, map[string]any{"percent": 40.0})}); err != nil {
		t.Fatalf("progress %d levels deep: %v", MaxArgsDepth, err)
	}
	if _, err := sp.e.Step(sp.s, ms(1100), RegisterCall{CallID: "c2", Tool: "book_slot", Args: map[string]any{"slot": "friday 3pm", "x": nestedList(MaxArgsDepth - 1)}}); err != nil {
		t.Fatalf("a list %d levels deep in args: %v", MaxArgsDepth-1, err)
	}
}

// TestNewEventErrors: bad input to the new events is Invalid naming the field, and
// changes nothing.
func TestNewEventErrors(t *testing.T) {
	rs := newRunSteps(t, runPolicy())
	rs.do(0, Connect{ConnectionID: "conn-A"})
	rs.open(1000, photo("p1", "x"), "needs_confirmation")
	job := rs.do(1100, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
	cases := []struct {
		name  string
		ev    Event
		kind  Kind
		field string
	}{
		{"Connect without an id", Connect{}, Invalid, "connection_id"},
		{"Connect with a bad id", Connect{ConnectionID: "conn B"}, Invalid, "connection_id"},
		{"Connect with an overlong id", Connect{ConnectionID: strings.Repeat("c", 129)}, Invalid, "connection_id"},
		{"Complete with a bad outcome", Complete{JobID: job, Outcome: "maybe"}, Invalid, "outcome"},
		{"Progress with an unencodable result", Progress{JobID: job, Result: map[string]any{"c": make(chan int)}}, Invalid, "result"},
		{"Progress of no job", Progress{JobID: "job-404"}, NotFound, "job_id"},
		{"confirmation with unencodable args", RegisterCall{CallID: "k1", Tool: "confirm_action", Args: map[string]any{"confirmed": make(chan int)}}, Invalid, "args"},
		{"confirmation with overlong args", RegisterCall{CallID: "k1", Tool: "confirm_action", Args: map[string]any{"answer": strings.Repeat("a", MaxArgsBytes)}}, Invalid, "args"},
		{"confirmation with a bad call id", RegisterCall{CallID: "k 1", Tool: "confirm_action"}, Invalid, "call_id"},
		// Issue 13 follow-ups, round 2: args or a result nested deeper than
		// MaxArgsDepth, which the clients could not decode when echoed.
		{"call with args nested 200 levels", RegisterCall{CallID: "d1", Tool: "book_slot", Args: nested(200, map[string]any{"slot": "tomorrow 4pm"})}, Invalid, "args"},
		{"call with args nested 17 levels", RegisterCall{CallID: "d1", Tool: "book_slot", Args: nested(17, map[string]any{"slot": "tomorrow 4pm"})}, Invalid, "args"},
		{"call with a list nested 17 levels", RegisterCall{CallID: "d1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 4pm", "x": nestedList(16)}}, Invalid, "args"},
		{"confirmation with args nested 17 levels", RegisterCall{CallID: "k1", Tool: "confirm_action", Args: nested(17, map[string]any{"confirmed": true})}, Invalid, "args"},
		{"Progress with a result nested 40 levels", Progress{JobID: job, Result: nested(40, map[string]any{"percent": 40.0})}, Invalid, "result"},
		{"Configure with a bad language", Configure{Language: "en us"}, Invalid, "language"},
		{"Complete(unknown) before a decision", Complete{JobID: job, Outcome: Unknown}, FailedPrecondition, "outcome"},
	}
	before, _ := EncodeSession(rs.s)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := DecodeSession(before)
			want, _ := EncodeSession(s)
			out, err := rs.e.Step(s, ms(1100), tc.ev)
			if KindOf(err) != tc.kind || !strings.Contains(MessageOf(err), tc.field) {
				t.Fatalf("%v (kind %v), want %v naming %q", err, KindOf(err), tc.kind, tc.field)
			}
			if got, _ := EncodeSession(s); !bytes.Equal(got, want) {
				t.Errorf("session changed:\n%s\n%s", want, got)
			}
			if !out.Effects.Empty() || len(out.Decisions) != 0 {
				t.Errorf("effects on error: %+v", out)
			}
		})
	}
}
