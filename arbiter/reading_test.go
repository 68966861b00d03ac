package arbiter

import (
	"math"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// TestAgentReading: issue 25, item 8. The agent's own reading of an utterance, fused
// with the built-in one as the policy says; before, there was no way to give one.
func TestAgentReading(t *testing.T) {
	read := func(in speech.Intent, c float64) *speech.AgentReading {
		return &speech.AgentReading{Intent: in, Confidence: c, Source: "nlu"}
	}
	cases := []struct {
		name     string
		mode     speech.FuseMode
		said     string
		reading  *speech.AgentReading
		decision Decision // of the pending booking once the utterance settled and time passed
		cause    Cause
	}{
		{"no reading, no stop", "", "You know what, let's leave it for now.", nil, DecisionCommit, ""},
		{"the agent hears a stop", "", "You know what, let's leave it for now.", read(speech.IntentStop, 0.9), DecisionCancel, CauseStop},
		{"the agent hears a change", "", "Saturday would suit me better.", read(speech.IntentAmend, 0.9), DecisionCancel, CauseAmend},
		{"a doubtful change counts for nothing", "", "Saturday would suit me better.", read(speech.IntentAmend, 0.5), DecisionCommit, ""},
		{"cautious keeps the built-in amendment", "", "Let's do Saturday then.", read(speech.IntentGoAhead, 0.99), DecisionCancel, CauseAmend},
		{"prefer takes the agent's go-ahead", speech.FusePrefer, "Let's do Saturday then.", read(speech.IntentGoAhead, 0.99), DecisionCommit, ""},
		{"a built-in stop stops, prefer or not", speech.FusePrefer, "Stop, don't book it.", read(speech.IntentGoAhead, 1), DecisionCancel, CauseStop},
		{"ignore", speech.FuseIgnore, "You know what, let's leave it for now.", read(speech.IntentStop, 1), DecisionCommit, ""},
		// Unclear asks (on_unclear: ask); nobody answers here, so the question expires
		// and the job is cancelled (on_transcript_timeout: cancel).
		{"a doubtful stop asks", "", "Well, I was thinking about next week too.", read(speech.IntentStop, 0.5), DecisionCancel, CauseUnanswered},
		{"the agent's unclear asks", "", "Well, I was thinking about next week too.", read(speech.IntentUnclear, 0.9), DecisionCancel, CauseUnanswered},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := bookingPolicy(func(p *Policy) { p.AgentIntent.Mode = c.mode })
			h := newHarness(t, p)
			h.step(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "saturday 3pm"}})
			h.step(100, Decide{JobID: h.jobOf("c1"), Prepared: true})
			h.step(500, Speech{Kind: UserActivityStart})
			h.step(1200, Transcript{Text: c.said, Reading: c.reading})
			h.step(1200, Speech{Kind: UserActivityEnd})
			h.step(10000, Tick{})
			j := h.s.Job(h.jobOf("c1"))
			if j.Decision != c.decision || j.Cause != c.cause {
				t.Fatalf("decision %s cause %q (%s), want %s %q", j.Decision, j.Cause, j.Reason, c.decision, c.cause)
			}
			if c.reading != nil && h.s.Utterances[0].Reading == nil {
				t.Errorf("the utterance does not keep the reading")
			}
			// A cancel the agent's reading decided names the reader.
			if byAgent := strings.Contains(j.Reason, "(read by nlu"); (j.Cause == CauseStop || j.Cause == CauseAmend) && byAgent != (h.s.Utterances[0].ReadBy != "") {
				t.Errorf("reason %q, read by %q", j.Reason, h.s.Utterances[0].ReadBy)
			}
		})
	}
}

// TestAgentReadingRefused: a malformed reading is refused naming its field, and a
// retry of a piece with another reading is another event (its event id reused).
func TestAgentReadingRefused(t *testing.T) {
	for _, c := range []struct {
		ev    Transcript
		field string
	}{
		{Transcript{Text: "no", Interim: true, Reading: &speech.AgentReading{Intent: speech.IntentStop, Confidence: 1}}, "reading"},
		{Transcript{Text: "done", Model: true, Reading: &speech.AgentReading{Intent: speech.IntentStop, Confidence: 1}}, "reading"},
		{Transcript{Text: "no", Reading: &speech.AgentReading{Intent: "maybe", Confidence: 1}}, "reading.intent"},
		{Transcript{Text: "no", Reading: &speech.AgentReading{Intent: speech.IntentUnknown, Confidence: 1}}, "reading.intent"},
		{Transcript{Text: "no", Reading: &speech.AgentReading{Intent: speech.IntentStop, Confidence: 1.5}}, "reading.confidence"},
		{Transcript{Text: "no", Reading: &speech.AgentReading{Intent: speech.IntentStop, Confidence: math.NaN()}}, "reading.confidence"},
		{Transcript{Text: "no", Reading: &speech.AgentReading{Intent: speech.IntentStop, Confidence: 1, Source: "my nlu"}}, "reading.source"},
	} {
		sp := newStepper(t, bookingPolicy())
		if _, err := sp.e.Step(sp.s, ms(0), c.ev); KindOf(err) != Invalid || FieldOf(err) != c.field {
			t.Errorf("%+v: %v, want invalid naming %s", c.ev.Reading, err, c.field)
		}
	}
	sp := newStepper(t, bookingPolicy())
	first := Transcript{Text: "leave it", EventID: "e1", Reading: &speech.AgentReading{Intent: speech.IntentStop, Confidence: 0.9}}
	sp.do(0, first)
	if out := sp.do(10, first); !out.Repeat {
		t.Errorf("the same piece with the same reading is a repeat")
	}
	other := first
	other.Reading = &speech.AgentReading{Intent: speech.IntentOther, Confidence: 0.9}
	if _, err := sp.e.Step(sp.s, ms(20), other); KindOf(err) != FailedPrecondition || FieldOf(err) != "event_id" {
		t.Errorf("the same event id with another reading: %v, want failed precondition naming event_id", err)
	}
}
