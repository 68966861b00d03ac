package arbiter_test

import (
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
)

// TestOutputHolds: a step reports each hold on a job's commit as it begins and ends,
// the end with how long it lasted on the session clock: an utterance over a prepared
// job, and an abandoned BLOCKING call.
func TestOutputHolds(t *testing.T) {
	p := &arbiter.Policy{Tools: map[string]*arbiter.Tool{"book_slot": {Name: "book_slot", SideEffect: true}}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	e := &arbiter.Engine{Policy: p}
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	step := func(s *arbiter.Session, ms int, ev arbiter.Event) arbiter.Output {
		t.Helper()
		out, err := e.Step(s, at(ms), ev)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	holds := func(out arbiter.Output) []arbiter.HoldChange {
		for i := range out.Holds {
			out.Holds[i].At = time.Time{} // compared apart
		}
		return out.Holds
	}

	s := arbiter.NewSession(arbiter.SessionKey{ID: "u"}, at(0))
	job := step(s, 0, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot"}).Call.JobID
	step(s, 100, arbiter.Decide{JobID: job, Prepared: true})
	out := step(s, 500, arbiter.Speech{Kind: arbiter.UserActivityStart})
	if got := holds(out); len(got) != 1 || got[0] != (arbiter.HoldChange{JobID: job, Tool: "book_slot", Utterance: 1}) {
		t.Fatalf("speech start: holds %+v", got)
	}
	if len(step(s, 1000, arbiter.Speech{Kind: arbiter.UserActivityEnd}).Holds) != 0 {
		t.Fatal("the hold ended before the transcript came")
	}
	out = step(s, 2500, arbiter.Transcript{Text: "Thanks."})
	if got := holds(out); len(got) != 1 || got[0] != (arbiter.HoldChange{JobID: job, Tool: "book_slot", Utterance: 1, End: true, Held: 2 * time.Second}) {
		t.Fatalf("transcript: holds %+v", got)
	}
	if len(out.Decisions) != 1 || out.Decisions[0].Decision != arbiter.DecisionCommit || out.Decisions[0].Tool != "book_slot" {
		t.Fatalf("transcript: decisions %+v", out.Decisions)
	}

	s = arbiter.NewSession(arbiter.SessionKey{ID: "a"}, at(0))
	job = step(s, 0, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Behavior: arbiter.Blocking}).Call.JobID
	step(s, 200, arbiter.Speech{Kind: arbiter.UserActivityStart})
	out = step(s, 300, arbiter.Speech{Kind: arbiter.Interrupted})
	if got := holds(out); len(got) != 1 || got[0] != (arbiter.HoldChange{JobID: job, Tool: "book_slot"}) {
		t.Fatalf("interrupted: holds %+v", got)
	}
	out = step(s, 60_000, arbiter.Tick{}) // the abandon wait runs out: cancelled
	if got := holds(out); len(got) != 1 || !got[0].End || got[0].Utterance != 0 || got[0].Held <= 0 {
		t.Fatalf("abandon wait: holds %+v", got)
	}
	if len(out.Decisions) != 1 || out.Decisions[0].Cause != arbiter.CauseAbandoned {
		t.Fatalf("abandon wait: decisions %+v", out.Decisions)
	}
}
