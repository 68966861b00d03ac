package speech

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// TestFuse: issue 25, item 8. How an agent's reading (its NLU or LLM) is fused with the
// built-in one, case by case.
func TestFuse(t *testing.T) {
	sure := func(in Intent) *AgentReading { return &AgentReading{Intent: in, Confidence: 0.9, Source: "nlu"} }
	unsure := func(in Intent) *AgentReading { return &AgentReading{Intent: in, Confidence: 0.4} }
	cautious, prefer, ignore := FusePolicy{}, FusePolicy{Mode: FusePrefer}, FusePolicy{Mode: FuseIgnore}
	for _, c := range []struct {
		name    string
		builtin Intent
		r       *AgentReading
		p       FusePolicy
		want    Intent
	}{
		// A clear built-in stop always stops.
		{"built-in stop, agent go-ahead, prefer", IntentStop, sure(IntentGoAhead), prefer, IntentStop},
		{"built-in stop, agent other, cautious", IntentStop, sure(IntentOther), cautious, IntentStop},
		// The agent heard what the phrase lists miss ("I'd rather you didn't").
		{"agent stop over other, cautious", IntentOther, sure(IntentStop), cautious, IntentStop},
		{"agent stop over go-ahead, prefer", IntentGoAhead, sure(IntentStop), prefer, IntentStop},
		{"agent amend over other", IntentOther, sure(IntentAmend), cautious, IntentAmend},
		{"agent unclear over other: ask", IntentOther, sure(IntentUnclear), cautious, IntentUnclear},
		{"agent unclear over unknown", IntentUnknown, sure(IntentUnclear), cautious, IntentUnclear},
		// Cautious never releases what the built-in reader holds or changes.
		{"built-in unclear, agent go-ahead, cautious", IntentUnclear, sure(IntentGoAhead), cautious, IntentUnclear},
		{"built-in amend, agent other, cautious", IntentAmend, sure(IntentOther), cautious, IntentAmend},
		{"built-in amend, agent unclear, cautious", IntentAmend, sure(IntentUnclear), cautious, IntentAmend},
		{"built-in other, agent go-ahead, cautious", IntentOther, sure(IntentGoAhead), cautious, IntentOther},
		// Prefer trusts the agent.
		{"built-in unclear, agent go-ahead, prefer", IntentUnclear, sure(IntentGoAhead), prefer, IntentGoAhead},
		{"built-in amend, agent other, prefer", IntentAmend, sure(IntentOther), prefer, IntentOther},
		{"built-in other, agent go-ahead, prefer", IntentOther, sure(IntentGoAhead), prefer, IntentGoAhead},
		// Below the confidence bound: a stop is a doubt (ask), anything else nothing.
		{"unsure stop over other: ask", IntentOther, unsure(IntentStop), cautious, IntentUnclear},
		{"unsure stop over go-ahead, prefer: ask", IntentGoAhead, unsure(IntentStop), prefer, IntentUnclear},
		{"unsure stop under amend, prefer", IntentAmend, unsure(IntentStop), prefer, IntentAmend},
		{"unsure stop under amend, cautious", IntentAmend, unsure(IntentStop), cautious, IntentAmend},
		{"unsure go-ahead over unclear, prefer", IntentUnclear, unsure(IntentGoAhead), prefer, IntentUnclear},
		{"unsure amend over other", IntentOther, unsure(IntentAmend), cautious, IntentOther},
		{"at the bound", IntentOther, &AgentReading{Intent: IntentStop, Confidence: DefaultMinConfidence}, cautious, IntentStop},
		{"a policy's own bound", IntentOther, &AgentReading{Intent: IntentStop, Confidence: 0.5}, FusePolicy{MinConfidence: 0.5}, IntentStop},
		// Nothing to fuse.
		{"no reading", IntentOther, nil, cautious, IntentOther},
		{"ignore", IntentOther, sure(IntentStop), ignore, IntentOther},
		{"not a reading's intent", IntentOther, sure(IntentUnknown), prefer, IntentOther},
	} {
		if got := Fuse(c.builtin, c.r, c.p); got != c.want {
			t.Errorf("%s: Fuse(%s, %+v, %+v) = %s, want %s", c.name, c.builtin, c.r, c.p, got, c.want)
		}
	}
}

// TestFuseProperties: over every built-in reading, agent reading, confidence and mode,
// a built-in stop stops; ignore is the built-in reading; cautious is never less
// cautious than the built-in reading and is one of the two readings (or unclear, from
// a doubtful stop).
func TestFuseProperties(t *testing.T) {
	intents := []Intent{IntentStop, IntentGoAhead, IntentAmend, IntentOther, IntentUnclear, IntentUnknown}
	rapid.Check(t, func(t *rapid.T) {
		builtin := rapid.SampledFrom(intents).Draw(t, "builtin")
		r := &AgentReading{Intent: rapid.SampledFrom(intents).Draw(t, "agent"), Confidence: rapid.Float64Range(0, 1).Draw(t, "confidence")}
		mode := rapid.SampledFrom([]FuseMode{"", FuseCautious, FusePrefer, FuseIgnore}).Draw(t, "mode")
		got := Fuse(builtin, r, FusePolicy{Mode: mode})
		switch {
		case builtin == IntentStop && got != IntentStop:
			t.Fatalf("a built-in stop fused to %s", got)
		case mode == FuseIgnore && got != builtin:
			t.Fatalf("ignore gave %s for built-in %s", got, builtin)
		case mode != FusePrefer && caution[got] < caution[builtin]:
			t.Fatalf("cautious gave %s, less cautious than built-in %s", got, builtin)
		case got != builtin && got != r.Intent && got != IntentUnclear:
			t.Fatalf("fused to %s from %s and %s", got, builtin, r.Intent)
		}
	})
	if got := Fuse(IntentOther, &AgentReading{Intent: IntentStop, Confidence: math.NaN()}, FusePolicy{}); got != IntentUnclear {
		t.Errorf("a NaN confidence counts as below the bound: %s", got)
	}
}
