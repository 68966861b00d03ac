package speech

// Pluggable intent (issue 25, item 8): an agent may report its own reading of a user
// utterance (its NLU, or an LLM asked about it) with a confidence, and the policy says
// how it is fused with the built-in reading (Fuse). Whatever the policy says, a clear
// built-in stop stops: a stop phrase heard in the user's own words is never argued
// away by another reader.

// AgentReading is an agent's own reading of a user utterance: what it means for the
// pending action, how sure the reader is, and which reader it was. (Reading, the
// built-in reader's result, is another thing: intent.go.)
type AgentReading struct {
	// Intent is one of IntentStop, IntentGoAhead, IntentAmend, IntentOther and
	// IntentUnclear.
	Intent Intent `json:"intent"`
	// Confidence is the reader's, from 0 to 1.
	Confidence float64 `json:"confidence"`
	// Source names the reader ("nlu-v3", "gpt-4o-mini"), for the history; may be empty.
	Source string `json:"source,omitempty"`
}

// AgentReadingIntent reports whether in is an intent an agent may report
// (AgentReading.Intent).
func AgentReadingIntent(in Intent) bool {
	switch in {
	case IntentStop, IntentGoAhead, IntentAmend, IntentOther, IntentUnclear:
		return true
	}
	return false
}

// FuseMode says how an agent's reading is fused with the built-in one.
type FuseMode string

// The fuse modes.
const (
	// FuseCautious (the default): the more cautious of the two readings decides
	// (stop, then amend, then unclear, then other, then go-ahead): an agent's reading
	// can hold, ask or cancel where the built-in reader heard nothing, never release
	// what the built-in reader holds.
	FuseCautious FuseMode = "cautious"
	// FusePrefer: the agent's reading decides (its NLU knows the domain), except that a
	// clear built-in stop always stops.
	FusePrefer FuseMode = "prefer"
	// FuseIgnore: the agent's reading is kept in the history and decides nothing.
	FuseIgnore FuseMode = "ignore"
)

// FusePolicy is how an agent's reading is fused (Policy.AgentIntent).
type FusePolicy struct {
	// Mode is how; zero means FuseCautious.
	Mode FuseMode
	// MinConfidence is the confidence a reading needs to count, 0 to 1. Below it a
	// reading of stop counts as unclear (a doubt the reader had: ask the user), and any
	// other reading counts for nothing. Zero means DefaultMinConfidence.
	MinConfidence float64
}

// DefaultMinConfidence is FusePolicy.MinConfidence when the policy leaves it out.
const DefaultMinConfidence = 0.7

// caution ranks intents from the least cautious to the most: what the cautious fuse
// keeps of two readings.
var caution = map[Intent]int{IntentGoAhead: 0, IntentUnknown: 1, IntentOther: 1, IntentUnclear: 2, IntentAmend: 3, IntentStop: 4}

// Fuse returns the intent of an utterance for a pending action from the built-in
// reading builtin and the agent's reading r (nil: none), under p:
//
//   - builtin is a stop: stop, whatever the agent read and whatever p says;
//   - no reading, FuseIgnore, or a reading that is not one of the five: builtin;
//   - a reading below p's MinConfidence: a stop counts as unclear, anything else as
//     no reading;
//   - FuseCautious: the more cautious of builtin and the reading (stop, amend,
//     unclear, other, go-ahead; unknown ranks as other, and a tie keeps builtin);
//   - FusePrefer: the reading.
//
// Pure; the table of every pair is TestFuse.
func Fuse(builtin Intent, r *AgentReading, p FusePolicy) Intent {
	if builtin == IntentStop || r == nil || p.Mode == FuseIgnore || !AgentReadingIntent(r.Intent) {
		return builtin
	}
	min := p.MinConfidence
	if min <= 0 {
		min = DefaultMinConfidence
	}
	agent := r.Intent
	if !(r.Confidence >= min) { // NaN is below every bound
		if agent != IntentStop {
			return builtin
		}
		agent = IntentUnclear // a doubtful stop: ask
		if p.Mode == FusePrefer && caution[builtin] > caution[agent] {
			return builtin // an amendment heard in the user's words stands
		}
	}
	if p.Mode == FusePrefer {
		return agent
	}
	if caution[agent] > caution[builtin] {
		return agent
	}
	return builtin
}
