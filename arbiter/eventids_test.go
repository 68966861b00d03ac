package arbiter

import (
	"fmt"
	"strings"
	"testing"
)

// TestEventIDs: a final transcript piece retried with its event id is not joined to
// its utterance twice; the session keeps the latest KeepEventIDs ids, so one evicted
// by that many later events is taken as new; and a malformed id is Invalid naming
// event_id. (The goldens' engine/event_ids.txt shows the rest.)
func TestEventIDs(t *testing.T) {
	h := newHarness(t, bookingPolicy())
	h.step(0, Speech{Kind: UserActivityStart})
	h.step(100, Transcript{Text: "Book it for tomorrow,", EventID: "t1"})
	if out := h.step(150, Transcript{Text: "Book it for tomorrow,", EventID: "t1"}); !out.Repeat || out.Changed {
		t.Fatalf("the retried piece: %+v, want a repeat that changes nothing", out)
	}
	h.step(200, Transcript{Text: "at three.", EventID: "t2"})
	if got := h.s.Utterances[0].Text; got != "Book it for tomorrow, at three." {
		t.Fatalf("utterance text %q: a retried piece was joined twice", got)
	}
	// Without an id a piece is applied each time (what the retries did before ids).
	h.step(250, Transcript{Text: "at three."})
	if got := h.s.Utterances[0].Text; got != "Book it for tomorrow, at three. at three." {
		t.Fatalf("utterance text %q", got)
	}

	for i := 0; i < KeepEventIDs-1; i++ {
		h.step(300+i, Speech{Kind: ModelOutputStart, EventID: fmt.Sprintf("m%d", i)})
	}
	if len(h.s.EventIDs) != KeepEventIDs {
		t.Fatalf("%d event ids kept, want %d", len(h.s.EventIDs), KeepEventIDs)
	}
	if out := h.step(400, Transcript{Text: "at three.", EventID: "t2"}); !out.Repeat {
		t.Fatalf("t2, the oldest id kept: %+v, want a repeat", out)
	}
	h.step(401, Speech{Kind: ModelOutputStart, EventID: "one-more"}) // evicts t1
	if out := h.step(402, Transcript{Text: "Book it for tomorrow,", EventID: "t1"}); out.Repeat {
		t.Fatalf("t1 after %d later ids: a repeat, want it applied as new", KeepEventIDs)
	}
	if len(h.s.EventIDs) != KeepEventIDs || eventScope(h.s.EventIDs[KeepEventIDs-1]) != "transcript:t1" {
		t.Fatalf("event ids %v: want the latest %d, t1 last", h.s.EventIDs, KeepEventIDs)
	}

	// An id reused for another event is refused and changes nothing: dropped as a
	// repeat, the stop would be lost and the booking committed (a fresh user's find).
	before := h.s.Utterances[len(h.s.Utterances)-1].Text
	if _, err := h.try(410, Transcript{Text: "Actually, stop, don't book it.", EventID: "t1"}); KindOf(err) != FailedPrecondition || FieldOf(err) != "event_id" {
		t.Fatalf("t1 reused for another text: %v, want failed precondition naming event_id", err)
	}
	if got := h.s.Utterances[len(h.s.Utterances)-1].Text; got != before {
		t.Fatalf("the refused piece changed the utterance: %q -> %q", before, got)
	}
	if _, err := h.try(411, Speech{Kind: ModelTurnComplete, EventID: "one-more"}); KindOf(err) != FailedPrecondition || FieldOf(err) != "event_id" {
		t.Fatalf("a speech id reused for another kind: %v, want failed precondition naming event_id", err)
	}
	// A key an earlier version kept, without a fingerprint, matches on its id alone.
	h.s.EventIDs[0] = eventScope(h.s.EventIDs[0])
	if out, err := h.try(412, Speech{Kind: ModelTurnComplete, EventID: eventIDOf(h.s.EventIDs[0])}); err != nil || !out.Repeat {
		t.Fatalf("an id kept without a fingerprint: %+v %v, want a repeat", out, err)
	}

	for _, ev := range []Event{
		Speech{Kind: UserActivityEnd, EventID: "a b"},
		Transcript{Text: "x", EventID: strings.Repeat("e", 129)},
		ToolCallCancellation{CallIDs: []string{"c1"}, EventID: "é"},
		Progress{JobID: "job-1", EventID: "a/b"},
	} {
		if _, err := h.try(500, ev); KindOf(err) != Invalid || FieldOf(err) != "event_id" {
			t.Errorf("%T with a malformed event id: %v, want invalid naming event_id", ev, err)
		}
	}
}
