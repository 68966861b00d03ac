package arbiter

import (
	"github.com/voicearbiter/arbiter/arbiter/speech"

	"fmt"
	"strings"
	"time"
)

// Behavior is a function call's scheduling mode (Gemini Live's FunctionDeclaration
// behavior). Only BLOCKING calls are abandoned by `interrupted`.
type Behavior string

// The scheduling modes. The zero value means "not given".
const (
	BehaviorUnspecified Behavior = ""
	Blocking            Behavior = "BLOCKING"
	NonBlocking         Behavior = "NON_BLOCKING"
)

// KeyAs says how one argument of a business key is normalised.
type KeyAs string

// The key normalisations of the tool-policy format (docs/trace-format.md).
const (
	// KeyText trims, case-folds and collapses white space.
	KeyText KeyAs = "text"
	// KeyDatetime resolves natural-language dates ("tomorrow at 3pm") against the
	// call's time to a minute ("2026-10-02T15:00"); unparseable text falls back to
	// KeyText.
	KeyDatetime KeyAs = "datetime"
	// KeyNumber parses a number and prints it canonically ("3.0" and "3" agree);
	// unparseable values fall back to KeyText.
	KeyNumber KeyAs = "number"
	// KeyExact uses the argument's JSON encoding unchanged.
	KeyExact KeyAs = "exact"
)

// OnTimeout is what happens to a held job when its wait runs out.
type OnTimeout string

// The two endings of a hold that ran out.
const (
	Cancel OnTimeout = "cancel"
	Commit OnTimeout = "commit"
)

// KeyArg is one argument of a business key.
type KeyArg struct {
	// Arg is the argument name in the call's args.
	Arg string
	// As is its normalisation; zero means KeyText.
	As KeyAs
}

// Tool is one tool's policy.
type Tool struct {
	// Name is the function name the model calls.
	Name string
	// SideEffect makes the tool two-phase: prepare, then commit or cancel as the
	// arbiter decides. False means read-only: executed at once, never held.
	SideEffect bool
	// Behavior is used when a call does not say; zero means NON_BLOCKING.
	Behavior Behavior
	// Key lists the args that identify a request and how to normalise each. Empty
	// means the whole args object, exactly.
	Key []KeyArg
	// Describe is the words for status notes; "{arg}" is replaced with the call's own
	// wording of that arg. Zero means "the <name> request".
	Describe string
	// Disallowed rejects every call of this tool (answered at once, not executed).
	Disallowed bool
	// NoHold turns the hold on user speech off for this tool: a due commit is then
	// released at the end of the grace window even while an utterance is open. An
	// abandoned BLOCKING call is held all the same.
	NoHold bool
	// Timings overrides the defaults for this tool; zero fields inherit them.
	Timings Timings
	// Confirm makes the tool confirm-then-act (the first seed's ToolRun): its first call
	// opens a run and is answered at once with a function response telling the model
	// what to ask and to call ConfirmTool next; nothing executes until the user says
	// yes. The second seed measured tool-call adherence going from 52% to 84% once this
	// state moved out of the prompt into code.
	Confirm bool
	// ConfirmTool is the generic confirmation tool the model calls to answer a run's
	// question (args: run_id, confirmed true or false, and each step's arg). Zero means
	// DefaultConfirmTool. Several tools may share one.
	ConfirmTool string
	// Steps are questions asked before the request runs, in order; each fills one
	// argument of the request from the answer. A tool with Steps opens a run even
	// without Confirm (and then runs once the last step is answered).
	Steps []Step
	// MaxAsks is how many times one question (a step, or the confirmation) may be
	// asked in all: an unclear answer asks again until then, and the next unclear
	// answer cancels the run. Zero means DefaultMaxAsks (2: ask, then once more).
	MaxAsks int
}

// Step is one question of a run.
type Step struct {
	// Arg is the request argument the answer fills (the confirmation call carries it
	// under this name, or as "answer").
	Arg string
	// Ask is the question, in words the model can say.
	Ask string
	// WithPrevious asks this question in the same prompt as the step before it ("ask
	// two at a time and the other at a different time").
	WithPrevious bool
}

// Defaults for runs.
const (
	// DefaultConfirmTool is the confirmation tool's name when a policy does not set one.
	DefaultConfirmTool = "confirm_action"
	// DefaultMaxAsks: a question is asked at most twice.
	DefaultMaxAsks = 2
)

// runs reports whether calls of this tool open a run.
func (t *Tool) runs() bool { return t.Confirm || len(t.Steps) > 0 }

// confirmTool returns the tool's confirmation tool name.
func (t *Tool) confirmTool() string {
	if t.ConfirmTool == "" {
		return DefaultConfirmTool
	}
	return t.ConfirmTool
}

func (t *Tool) maxAsks() int {
	if t.MaxAsks <= 0 {
		return DefaultMaxAsks
	}
	return t.MaxAsks
}

// Timings are the policy's durations and endings. In Policy.Defaults a zero field
// means the built-in default (DefaultTimings); in Tool.Timings it means "inherit".
type Timings struct {
	// Grace is how long after prepare finished a commit waits for user speech.
	// Default 1.5 s: the third seed's grace window.
	Grace time.Duration
	// TranscriptTimeout is how long an utterance may hold a due commit for its
	// transcript, counted from the later of the moment the commit became due and the
	// end of the utterance's voice activity. Default 3 s: the third seed measured the
	// transcript 1.26 to 1.31 s after the audio ended, in one chunk with ACTIVITY_END.
	TranscriptTimeout time.Duration
	// OnTranscriptTimeout is what a timed-out hold does; default Cancel (fail closed).
	OnTranscriptTimeout OnTimeout
	// DedupeWindow is how long a business key keeps absorbing repeats after its job
	// completed (an open job absorbs them all its life). Default 30 s (third seed).
	DedupeWindow time.Duration
	// TriggerLookback: the utterance that ended this soon before a call (or was still
	// open) is the call's triggering utterance and is checked for a stop too (a stop
	// merged into the request). Default 2 s.
	TriggerLookback time.Duration
	// AbandonWait is how long after `interrupted` dropped a BLOCKING call a re-issue may
	// revive its job. Default 10 s; re-issues in the recorded sessions came 3.3 to 3.7 s
	// after `interrupted`.
	AbandonWait time.Duration
	// OnAbandon is what an abandoned job that no re-issue revived does; default Cancel
	// (the server dropped the call: executing it would act on a request the model
	// withdrew).
	OnAbandon OnTimeout
	// MaxPending is the longest a live call id may wait for its outcome: at its
	// deadline it is answered with a timeout error response saying nothing was
	// executed (its job, if undecided, is cancelled), or that the outcome is unknown if
	// a commit had started. A result that comes later never answers the id again; it is
	// reported in a note. Default 60 s: every call id gets exactly one response even
	// when the agent never reports back (the first seed: an unanswered id wedges the
	// session).
	MaxPending time.Duration
	// RunTimeout is how long a confirm-then-act run may stay open without being
	// resolved; then it expires, nothing is executed, and a note says so. Default 60 s.
	RunTimeout time.Duration
}

// DefaultTimings are the built-in defaults, from the spec's tool-policy format.
var DefaultTimings = Timings{
	Grace:               1500 * time.Millisecond,
	TranscriptTimeout:   3 * time.Second,
	OnTranscriptTimeout: Cancel,
	DedupeWindow:        30 * time.Second,
	TriggerLookback:     2 * time.Second,
	AbandonWait:         10 * time.Second,
	OnAbandon:           Cancel,
	MaxPending:          60 * time.Second,
	RunTimeout:          60 * time.Second,
}

// DefaultStopPhrases are the built-in English stop phrases (speech.DefaultPhrases["en"].Stop),
// matched on word boundaries, case- and apostrophe-insensitively ("dont" and "don’t"
// match "don't"). The third seed's list: stop, cancel, don't, wait "and a few others";
// "wait" and "hold on" are soft stops (an amendment in the same utterance wins).
var DefaultStopPhrases = speech.DefaultPhrases["en"].Stop

// Policy is the tool policy a session runs under. It is read-only once built: share
// one Policy between sessions and goroutines freely.
type Policy struct {
	// Defaults apply to every tool; zero fields take DefaultTimings.
	Defaults Timings
	// Tools by name.
	Tools map[string]*Tool
	// RejectUnknown rejects calls for tools not listed; false passes them through as
	// read-only.
	RejectUnknown bool
	// StopPhrases replace the English stop phrases; nil means DefaultStopPhrases.
	StopPhrases []string
	// AmendPhrases replace the English amend markers; nil means the defaults.
	AmendPhrases []string
	// Languages replace the phrase sets of those languages (keys: BCP 47 primary
	// subtags such as "es"); languages not listed keep speech.DefaultPhrases.
	Languages map[string]speech.Phrases
}

// Phrases returns the intent phrases for a session language: the policy's set for it,
// else the built-in one, else English. Read-only; safe for concurrent use.
func (p *Policy) Phrases(lang string) speech.Phrases {
	lang = strings.ToLower(lang)
	if i := strings.IndexAny(lang, "-_"); i > 0 {
		lang = lang[:i]
	}
	if ph, ok := p.Languages[lang]; ok {
		return ph
	}
	ph, ok := speech.DefaultPhrases[lang]
	if !ok {
		lang, ph = speech.DefaultLanguage, speech.DefaultPhrases[speech.DefaultLanguage]
	}
	if lang == "en" {
		if p.StopPhrases != nil {
			ph.Stop = p.StopPhrases
		}
		if p.AmendPhrases != nil {
			ph.Amend = p.AmendPhrases
		}
	}
	return ph
}

// Validate checks the policy and fills defaults: it returns an Invalid error naming the
// tool and field at fault.
func (p *Policy) Validate() error {
	p.Defaults = p.Defaults.inherit(DefaultTimings)
	if err := p.Defaults.validate("defaults"); err != nil {
		return err
	}
	for name, t := range p.Tools {
		if t.Name == "" {
			t.Name = name
		}
		if name != t.Name {
			return Errorf(Invalid, "tools: entry %q has name %q", name, t.Name)
		}
		if !validName(t.Name) {
			return Errorf(Invalid, "tools[%s].name: must be 1-128 characters from [A-Za-z0-9_.:-]", t.Name)
		}
		switch t.Behavior {
		case BehaviorUnspecified, Blocking, NonBlocking:
		default:
			return Errorf(Invalid, "tools[%s].behavior: %q is not BLOCKING or NON_BLOCKING", t.Name, t.Behavior)
		}
		for i, k := range t.Key {
			if k.Arg == "" {
				return Errorf(Invalid, "tools[%s].key[%d].arg: required", t.Name, i)
			}
			switch k.As {
			case "", KeyText, KeyDatetime, KeyNumber, KeyExact:
			default:
				return Errorf(Invalid, "tools[%s].key[%d].as: %q is not text, datetime, number or exact", t.Name, i, k.As)
			}
		}
		if err := t.Timings.validate(fmt.Sprintf("tools[%s]", t.Name)); err != nil {
			return err
		}
		if err := t.validateRun(p); err != nil {
			return err
		}
	}
	if p.StopPhrases == nil {
		p.StopPhrases = DefaultStopPhrases
	}
	for i, s := range p.StopPhrases {
		if len(speech.Words(s)) == 0 {
			return Errorf(Invalid, "stop_phrases[%d]: %q has no words", i, s)
		}
	}
	for i, s := range p.AmendPhrases {
		if len(speech.Words(s)) == 0 {
			return Errorf(Invalid, "amend_phrases[%d]: %q has no words", i, s)
		}
	}
	return nil
}

func (t Timings) validate(where string) error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"grace", t.Grace}, {"transcript_timeout", t.TranscriptTimeout}, {"dedupe_window", t.DedupeWindow},
		{"trigger_lookback", t.TriggerLookback}, {"abandon_wait", t.AbandonWait}, {"max_pending", t.MaxPending},
		{"run_timeout", t.RunTimeout}} {
		if d.v < 0 {
			return Errorf(Invalid, "%s.%s: %v is negative", where, d.name, d.v)
		}
	}
	for _, o := range []struct {
		name string
		v    OnTimeout
	}{{"on_transcript_timeout", t.OnTranscriptTimeout}, {"on_abandon", t.OnAbandon}} {
		if o.v != "" && o.v != Cancel && o.v != Commit {
			return Errorf(Invalid, "%s.%s: %q is not cancel or commit", where, o.name, o.v)
		}
	}
	return nil
}

// inherit returns t with every zero field taken from d.
func (t Timings) inherit(d Timings) Timings {
	if t.Grace == 0 {
		t.Grace = d.Grace
	}
	if t.TranscriptTimeout == 0 {
		t.TranscriptTimeout = d.TranscriptTimeout
	}
	if t.OnTranscriptTimeout == "" {
		t.OnTranscriptTimeout = d.OnTranscriptTimeout
	}
	if t.DedupeWindow == 0 {
		t.DedupeWindow = d.DedupeWindow
	}
	if t.TriggerLookback == 0 {
		t.TriggerLookback = d.TriggerLookback
	}
	if t.AbandonWait == 0 {
		t.AbandonWait = d.AbandonWait
	}
	if t.OnAbandon == "" {
		t.OnAbandon = d.OnAbandon
	}
	if t.MaxPending == 0 {
		t.MaxPending = d.MaxPending
	}
	if t.RunTimeout == 0 {
		t.RunTimeout = d.RunTimeout
	}
	return t
}

// validateRun checks a tool's confirm-then-act fields.
func (t *Tool) validateRun(p *Policy) error {
	if t.MaxAsks < 0 {
		return Errorf(Invalid, "tools[%s].max_asks: %d is negative", t.Name, t.MaxAsks)
	}
	if t.ConfirmTool != "" && !t.runs() {
		return Errorf(Invalid, "tools[%s].confirm_tool: set, but the tool has neither confirm nor steps", t.Name)
	}
	if t.MaxAsks != 0 && !t.runs() {
		return Errorf(Invalid, "tools[%s].max_asks: set, but the tool has neither confirm nor steps", t.Name)
	}
	if !t.runs() {
		return nil
	}
	ct := t.confirmTool()
	if !validName(ct) {
		return Errorf(Invalid, "tools[%s].confirm_tool: %q must be 1-128 characters from [A-Za-z0-9_.:-]", t.Name, ct)
	}
	if _, ok := p.Tools[ct]; ok {
		return Errorf(Invalid, "tools[%s].confirm_tool: %q is a tool of its own in this policy; a confirmation tool must not be", t.Name, ct)
	}
	seen := map[string]bool{}
	for i, st := range t.Steps {
		switch {
		case st.Arg == "":
			return Errorf(Invalid, "tools[%s].steps[%d].arg: required", t.Name, i)
		case strings.TrimSpace(st.Ask) == "":
			return Errorf(Invalid, "tools[%s].steps[%d].ask: required", t.Name, i)
		case seen[st.Arg]:
			return Errorf(Invalid, "tools[%s].steps[%d].arg: %q is asked twice", t.Name, i, st.Arg)
		case st.Arg == "run_id" || st.Arg == "confirmed" || st.Arg == "answer":
			return Errorf(Invalid, "tools[%s].steps[%d].arg: %q is reserved by the confirmation tool", t.Name, i, st.Arg)
		case i == 0 && st.WithPrevious:
			return Errorf(Invalid, "tools[%s].steps[0].with_previous: the first step has no step before it", t.Name)
		}
		seen[st.Arg] = true
	}
	return nil
}

// IsConfirmTool reports whether name is the confirmation tool of some tool in the
// policy. Read-only; safe for concurrent use.
func (p *Policy) IsConfirmTool(name string) bool {
	for _, t := range p.Tools {
		if t.runs() && t.confirmTool() == name {
			return true
		}
	}
	return false
}

// toolPolicy is the resolved policy for one call: the tool's entry (or a read-only
// pass-through for an unknown tool) and its effective timings.
type toolPolicy struct {
	tool    *Tool
	known   bool
	timings Timings
}

func (p *Policy) lookup(name string) toolPolicy {
	defaults := p.Defaults.inherit(DefaultTimings)
	if t, ok := p.Tools[name]; ok {
		return toolPolicy{tool: t, known: true, timings: t.Timings.inherit(defaults)}
	}
	return toolPolicy{tool: &Tool{Name: name}, timings: defaults}
}
