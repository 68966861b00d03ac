package arbiter

import (
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// modelSays is one model turn: output start, its transcription, turn complete.
func (sp *stepper) modelSays(start, end int, text string) {
	sp.do(start, Speech{Kind: ModelOutputStart})
	sp.do(start+10, Transcript{Model: true, Text: text})
	sp.do(end, Speech{Kind: ModelTurnComplete})
}

// TestUnclearReplyAsks (issue 25, pattern 1): a bare "No." with nothing asked holds
// the booking and the model is told to ask; its immediate re-issue of the booking joins
// the pending job (not answered "cancelled"); "Yes." to the question commits, and the
// history shows the question's hold from the reply to the answer. Before, "No." was a
// stop: the booking and the re-issue were answered "cancelled".
func TestUnclearReplyAsks(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	sp.do(0, Configure{Record: true})
	job := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
	sp.do(100, Decide{JobID: job, Prepared: true})
	out := sp.say(800, 1400, "No.")
	if out.Intent != speech.IntentUnclear || len(out.Cancelled) != 0 || len(out.Effects.Notes) != 1 {
		t.Fatalf("No.: intent %s, cancelled %v, notes %+v; want unclear, none cancelled, one note", out.Intent, out.Cancelled, out.Effects.Notes)
	}
	if n := out.Effects.Notes[0].Text; !strings.Contains(n, `"Do you still want the booking for tomorrow 3pm?"`) || !strings.Contains(n, "Nothing has been done yet") {
		t.Errorf("note %q", n)
	}
	if d := sp.do(3000, Decide{JobID: job}).Decision; d.Decision != Undecided || d.Reason != pendingAsked {
		t.Fatalf("after the unclear reply: %+v, want pending (asked)", d)
	}
	re := sp.do(3100, RegisterCall{CallID: "c2", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow at 3pm"}})
	if re.Call.Disposition != Duplicate || re.Call.JobID != job || len(re.Effects.Responses) != 0 {
		t.Fatalf("re-issue: %+v, responses %+v; want a duplicate of %s waiting for its outcome", re.Call, re.Effects.Responses, job)
	}
	sp.modelSays(3200, 5000, "Do you still want the booking for tomorrow at 3pm?")
	if out := sp.say(5500, 6000, "Yes, please."); out.Intent != speech.IntentGoAhead {
		t.Fatalf("answer: intent %s", out.Intent)
	}
	d := sp.do(6100, Decide{JobID: job}).Decision
	if d.Decision != DecisionCommit || !strings.Contains(d.Reason, `they said "Yes, please."`) {
		t.Fatalf("after yes: %+v", d)
	}
	h := historyLines(sp.s)
	if !strings.Contains(h, "800 #0 hold "+job+" utt=1\n") || strings.Contains(h, "1400 #0 unhold") {
		t.Errorf("history: utterance 1 should hold from its start, through its reply, to the answer:\n%s", h)
	}
	if !strings.Contains(h, "6000 #1 unhold "+job+" utt=1\n") {
		t.Errorf("history: the question's hold should end with the answer at 6000:\n%s", h)
	}
}

// TestEchoNeitherHoldsNorStops (issue 25, pattern 2): the model's "Please hold on
// while I book that for you." coming back as input transcription is its echo: no stop,
// and its voice activity, still open, holds the commit no more; the history says why
// its words were discarded. Before, "hold on" was a soft stop and cancelled the booking.
func TestEchoNeitherHoldsNorStops(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	job := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
	sp.do(100, Decide{JobID: job, Prepared: true})
	sp.do(200, Speech{Kind: ModelOutputStart})
	sp.do(250, Transcript{Model: true, Text: "Please hold on while I book that for you."})
	sp.do(900, Speech{Kind: UserActivityStart})
	out := sp.do(1500, Transcript{Text: "hold on while I book that for you"})
	if len(out.Cancelled) != 0 || out.Intent != speech.IntentUnknown {
		t.Fatalf("echo: intent %s, cancelled %v", out.Intent, out.Cancelled)
	}
	if d := sp.do(1700, Decide{JobID: job}).Decision; d.Decision != DecisionCommit {
		t.Fatalf("echo held or stopped the booking: %+v", d)
	}
	if h := historyLines(sp.s); !strings.Contains(h, `discarded="8 words repeat what the model said within the last 10s: its echo, not the user's"`) {
		t.Errorf("history does not say why the echo was discarded:\n%s", h)
	}
	if u := sp.s.Utterances[len(sp.s.Utterances)-1]; !u.Echo || !u.settled() {
		t.Errorf("echo utterance: %+v", u)
	}
}

// TestRequestWordsAreNotAStop (issue 25, pattern 4): "Stop Making Sense", the show the
// call's arguments name, in the utterance that triggered the call, stops nothing, with
// the call before or after the transcript; before, the booking was cancelled the moment
// the call arrived (or its transcript did).
func TestRequestWordsAreNotAStop(t *testing.T) {
	p := bookingPolicy(func(p *Policy) {
		p.Tools["book_show"] = &Tool{Name: "book_show", SideEffect: true, Describe: "the tickets for {show}"}
	})
	for _, callFirst := range []bool{false, true} {
		sp := newStepper(t, p)
		sp.do(0, Speech{Kind: UserActivityStart})
		sp.do(1000, Speech{Kind: UserActivityEnd})
		args := map[string]any{"show": "Stop Making Sense", "tickets": 2.0}
		var job string
		if callFirst {
			job = sp.do(1050, RegisterCall{CallID: "c1", Tool: "book_show", Args: args}).Call.JobID
		}
		sp.do(1100, Transcript{Text: "Two tickets for Stop Making Sense on Friday, please."})
		if !callFirst {
			job = sp.do(1300, RegisterCall{CallID: "c1", Tool: "book_show", Args: args}).Call.JobID
		}
		sp.do(1400, Decide{JobID: job, Prepared: true})
		if d := sp.do(3000, Decide{JobID: job}).Decision; d.Decision != DecisionCommit {
			t.Errorf("call first %v: %+v, want commit", callFirst, d)
		}
	}
}
