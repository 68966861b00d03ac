package arbiter

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/voicearbiter/arbiter/arbiter/speech"
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
	// KeyDatetime resolves natural-language dates ("tomorrow at 3pm"; in a Spanish,
	// French or German session its wordings too: "mañana a las 3pm") against the
	// session's start to a minute ("2026-10-02T15:00"), or to a day ("2026-10-02") when it
	// names no time of day; a text the date rules do not read whole (every word but
	// fillers such as "at" and "please": "tomorrow at 3", "next week") falls back to
	// KeyText (dateparse.go).
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

// OnUnclear is what an unclear reply does to a pending job (questions.go).
type OnUnclear string

// The three answers to an unclear reply.
const (
	// Ask holds the commit and has the model ask the user one short question about the
	// pending action; the next utterance decides.
	Ask OnUnclear = "ask"
	// CancelUnclear cancels the job (fail closed, no question).
	CancelUnclear OnUnclear = "cancel"
	// CommitUnclear reads the reply as no stop (the hold ends as for any other words).
	CommitUnclear OnUnclear = "commit"
)

// KeyArg is one argument of a business key.
type KeyArg struct {
	// Arg is the argument name in the call's args.
	Arg string
	// As is its normalisation; zero means KeyText.
	As KeyAs
	// Optional lets a call of a side-effecting tool leave the argument out. By default
	// a key argument is required: a call missing it (absent, null, empty, NaN, or a
	// placeholder such as "undefined") is rejected with an error response naming it,
	// never a job and never a dedupe entry (issue 13: a provider's malformed arguments
	// turned into {} by the agent made every such call one key and booked it).
	Optional bool
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
	// Claims are the verbs, past tense, that claim the tool's side effect happened
	// ("sent", "delivered" for send_sms): the claim check reads what the model says
	// about the tool's jobs with them (Vocabulary). Nil means derived from the name and
	// Describe where they name a built-in side effect (sent, paid, ordered, cancelled,
	// booked, scheduled, added, submitted; speech.VocabularyFor); an empty list means
	// none (only the generic verbs: "it's done", "it went through"). Side-effecting
	// tools only.
	Claims []string
	// Disallowed rejects every call of this tool (answered at once, not executed).
	Disallowed bool
	// NoHold turns the hold on user speech off for this tool: a due commit is then
	// released at the end of the grace window even while an utterance is open. An
	// abandoned BLOCKING call is held all the same.
	NoHold bool
	// DedupeWindowOnly limits business-key dedupe of a finished job to DedupeWindow
	// even while the user has not spoken since the job was created. By default
	// (false) a repeat with no user utterance since the job began is a duplicate
	// however long ago it completed: a model stuck in a loop (one report: hangup called
	// 337 times in 2 min 28 s) would otherwise execute again each time the window ran
	// out. The window then limits only repeats after the user has spoken again.
	DedupeWindowOnly bool
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
	// Continuation says whether a call of this tool that continues an earlier one
	// (the whole request after the half-told one) replaces it (continuation.go). Zero
	// means ContinuationReplace for a side-effecting tool with key args, and
	// ContinuationOff otherwise; read-only tools never replace.
	Continuation ContinuationMode
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

// Vocabulary returns the words the claim check reads a model turn about this tool's
// side effect with: Claims, or, when nil, those speech.VocabularyFor derives from the
// name and Describe. Pure; the caller owns the result.
func (t *Tool) Vocabulary() speech.Vocabulary {
	return speech.VocabularyFor(t.Claims, t.Name, t.Describe)
}

// runs reports whether calls of this tool open a run.
func (t *Tool) runs() bool { return t.Confirm || len(t.Steps) > 0 }

// asksFor reports whether the tool's run asks for arg as one of its steps.
func (t *Tool) asksFor(arg string) bool {
	for _, s := range t.Steps {
		if s.Arg == arg {
			return true
		}
	}
	return false
}

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
	// MaxHold bounds how long user speech may hold a commit, counted from when the
	// commit came due (the end of the grace window). Voice-activity end is lost in
	// practice (noise, the echo of the model's own audio, a client that gates mic
	// frames while a BLOCKING call is pending), and then a held BLOCKING call is dead
	// air. Past it the hold ends as a transcript timeout does: the job is cancelled
	// (on_transcript_timeout: commit releases it instead). Default 5 s: the third seed
	// measured a 2.2 s stop utterance and its transcript 1.3 s after the audio ended, so
	// a stop that begins as the commit comes due is read within 3.5 s; 5 s leaves 1.5 s
	// of margin and keeps the dead air of a lost voice-activity end to seconds, not the
	// 60 s of max_pending.
	MaxHold time.Duration
	// RunTimeout is how long a confirm-then-act run may stay open without being
	// resolved; then it expires, nothing is executed, and a note says so. Default 60 s.
	RunTimeout time.Duration
	// OnUnclear is what a user reply the intent reader finds unclear does to a pending
	// job (a bare "No." when nothing says what it refuses, a hedge: speech.Read):
	// Ask (the default) holds the commit and has the model ask the user whether they
	// still want it, and the next utterance decides, a question left unanswered past
	// MaxHold (after the model asked it) ending as OnTranscriptTimeout says; CancelUnclear
	// cancels the job; CommitUnclear lets it commit (as for any other words). Issue 25:
	// a bare "No." that answered "anything else?" cancelled a booking.
	OnUnclear OnUnclear
	// ContinuationWait is how long after the end of a user utterance that went on past
	// a job's call the job's commit waits for the model's call of the whole request, for
	// a tool that continues (Tool.Continues, continuation.go). Default 2 s, the
	// trigger lookback: a call that late still answers that utterance.
	ContinuationWait time.Duration
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
	MaxHold:             5 * time.Second,
	OnUnclear:           Ask,
	ContinuationWait:    2 * time.Second,
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
	// StopPhrases replace the English stop phrases; nil means DefaultStopPhrases. An
	// empty list is refused by Validate: it would turn every stop off.
	StopPhrases []string
	// AmendPhrases replace the English amend markers; nil means the defaults.
	AmendPhrases []string
	// Languages replace the phrase sets of those languages (keys: BCP 47 primary
	// subtags such as "es"); languages not listed keep speech.DefaultPhrases. A set's
	// Stop left nil takes the language's built-in stop phrases (Validate fills it; a
	// language with none must list them); an empty Stop is refused.
	Languages map[string]speech.Phrases
	// AgentIntent says how an agent's own reading of an utterance (Transcript.Reading:
	// its NLU or LLM, with a confidence) is fused with the built-in reader's
	// (speech.Fuse); the zero value is cautious with a confidence bound of 0.7. A clear
	// built-in stop always stops.
	AgentIntent speech.FusePolicy

	// digest is Digest's value, set by Validate.
	digest string
}

// Phrases returns the intent phrases for a session language: the policy's set for it,
// else the built-in one, else English. Every language but English takes the English
// stop phrase "stop" (issue 25: a user says it in any language); the policy's English
// stop phrases are its to choose. Read-only; safe for concurrent use.
func (p *Policy) Phrases(lang string) speech.Phrases {
	lang = strings.ToLower(lang)
	if i := strings.IndexAny(lang, "-_"); i > 0 {
		lang = lang[:i]
	}
	if ph, ok := p.Languages[lang]; ok {
		if lang != "en" && !slices.Contains(ph.Stop, "stop") {
			ph.Stop = append(slices.Clip(ph.Stop), "stop")
		}
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

// Validate checks the policy and fills its defaults: zero fields of Defaults take
// DefaultTimings, a tool with no Name takes its key in Tools, nil StopPhrases take
// DefaultStopPhrases. It is the one place the rules of a policy live, for a policy
// built in Go and one read from a file (package policyfile) alike. A zero value is
// never an error: it means the default.
//
// It returns nil or a *FieldError (kind Invalid) for the first field at fault, tools
// taken in the order of their names: a negative duration; an enum value out of range
// (Behavior, KeyArg.As, OnTranscriptTimeout, OnAbandon, OnUnclear); a nil tool, a tool without a
// name, with a Name other than its key in Tools, or one that is not 1-128 characters
// from [A-Za-z0-9_.:-]; a key arg without a name or listed twice; a negative MaxAsks;
// ConfirmTool or MaxAsks on a tool with neither Confirm nor Steps; a confirmation
// tool (ConfirmTool, DefaultConfirmTool when zero) with such an invalid name, or that
// is a tool of the policy itself; a step without an arg or an ask (blank), a step arg
// asked twice or reserved by the confirmation tool (run_id, confirmed, answer),
// WithPrevious on the first step; Claims on a read-only tool, a claim verb listed
// twice or that speech.CheckClaimVerb refuses (no words, a word such as "is" or
// "not"); a stop or amend phrase without words
// (speech.Words); StopPhrases empty but not nil (stop_phrases: [] would turn every
// stop off); a language that is not a primary subtag (2-8 characters, lower case, no
// "-", "_" or space), a language's Stop empty, or nil for a language with no built-in
// set, or a phrase of it without words; AgentIntent's mode not cautious, prefer or
// ignore, or its MinConfidence outside 0 to 1.
func (p *Policy) Validate() error {
	p.Defaults = p.Defaults.inherit(DefaultTimings)
	if err := p.Defaults.validate("defaults"); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(p.Tools)) {
		if err := p.Tools[name].validate(p, name); err != nil {
			return err
		}
	}
	if p.StopPhrases == nil {
		p.StopPhrases = DefaultStopPhrases
	}
	if len(p.StopPhrases) == 0 {
		return &FieldError{Path: []any{"stop_phrases"}, Problem: noStopsProblem}
	}
	if err := validatePhrases(p.StopPhrases, "stop_phrases"); err != nil {
		return err
	}
	if err := validatePhrases(p.AmendPhrases, "amend_phrases"); err != nil {
		return err
	}
	for _, lang := range slices.Sorted(maps.Keys(p.Languages)) {
		ph, err := validateLanguage(lang, p.Languages[lang])
		if err != nil {
			return err
		}
		p.Languages[lang] = ph
	}
	switch p.AgentIntent.Mode {
	case "", speech.FuseCautious, speech.FusePrefer, speech.FuseIgnore:
	default:
		return &FieldError{Path: []any{"agent_intent", "use"}, Value: strconv.Quote(string(p.AgentIntent.Mode)), Problem: "is not cautious, prefer or ignore"}
	}
	if c := p.AgentIntent.MinConfidence; !(c >= 0 && c <= 1) {
		return &FieldError{Path: []any{"agent_intent", "min_confidence"}, Value: strconv.FormatFloat(c, 'g', -1, 64), Problem: "is not between 0 and 1"}
	}
	p.digest = p.computeDigest()
	return nil
}

// field returns the path of a field below at (a new slice: at is not changed).
func field(at []any, more ...any) []any { return append(slices.Clip(at), more...) }

// validate checks one timings block at the path at ("defaults", or a tool's).
func (t Timings) validate(at ...any) error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"grace", t.Grace}, {"transcript_timeout", t.TranscriptTimeout}, {"dedupe_window", t.DedupeWindow},
		{"trigger_lookback", t.TriggerLookback}, {"abandon_wait", t.AbandonWait}, {"max_pending", t.MaxPending},
		{"run_timeout", t.RunTimeout}, {"max_hold", t.MaxHold}, {"continuation_wait", t.ContinuationWait}} {
		if d.v < 0 {
			return &FieldError{Path: field(at, d.name), Value: strconv.Quote(d.v.String()), Problem: "is negative"}
		}
	}
	for _, o := range []struct {
		name string
		v    OnTimeout
	}{{"on_transcript_timeout", t.OnTranscriptTimeout}, {"on_abandon", t.OnAbandon}} {
		if o.v != "" && o.v != Cancel && o.v != Commit {
			return &FieldError{Path: field(at, o.name), Value: strconv.Quote(string(o.v)), Problem: "is not cancel or commit"}
		}
	}
	switch t.OnUnclear {
	case "", Ask, CancelUnclear, CommitUnclear:
	default:
		return &FieldError{Path: field(at, "on_unclear"), Value: strconv.Quote(string(t.OnUnclear)), Problem: "is not ask, cancel or commit"}
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
	if t.MaxHold == 0 {
		t.MaxHold = d.MaxHold
	}
	if t.OnUnclear == "" {
		t.OnUnclear = d.OnUnclear
	}
	if t.ContinuationWait == 0 {
		t.ContinuationWait = d.ContinuationWait
	}
	return t
}

// validate checks the tool listed under name in p.Tools, filling its Name.
func (t *Tool) validate(p *Policy, name string) error {
	at := []any{"tools", Entry(name)}
	if t == nil {
		return &FieldError{Path: at, Problem: "is nil"}
	}
	if t.Name == "" {
		t.Name = name
	}
	switch {
	case t.Name == "":
		return &FieldError{Path: field(at, "name"), Problem: "required"}
	case t.Name != name:
		return &FieldError{Path: field(at, "name"), Value: strconv.Quote(t.Name),
			Problem: fmt.Sprintf("is not the tool's key in Tools, %q", name)}
	case !validName(t.Name):
		return &FieldError{Path: field(at, "name"), Problem: "must be 1-128 characters from [A-Za-z0-9_.:-]"}
	}
	switch t.Behavior {
	case BehaviorUnspecified, Blocking, NonBlocking:
	default:
		return &FieldError{Path: field(at, "behavior"), Value: strconv.Quote(string(t.Behavior)),
			Problem: "is not BLOCKING or NON_BLOCKING"}
	}
	if err := t.validateKey(at); err != nil {
		return err
	}
	switch t.Continuation {
	case "", ContinuationReplace, ContinuationOff:
	default:
		return &FieldError{Path: field(at, "continuation"), Value: strconv.Quote(string(t.Continuation)),
			Problem: "is not replace or off"}
	}
	if err := t.validateClaims(at); err != nil {
		return err
	}
	if err := t.Timings.validate(at...); err != nil {
		return err
	}
	return t.validateRun(p, at)
}

// validateKey checks the tool's key args; at is the tool's path.
func (t *Tool) validateKey(at []any) error {
	first := map[string]int{}
	for i, k := range t.Key {
		switch k.As {
		case "", KeyText, KeyDatetime, KeyNumber, KeyExact:
		default:
			return &FieldError{Path: field(at, "key", i, "as"), Value: strconv.Quote(string(k.As)),
				Problem: "is not text, datetime, number or exact"}
		}
		if k.Arg == "" {
			return &FieldError{Path: field(at, "key", i, "arg"), Problem: "required"}
		}
		if j, dup := first[k.Arg]; dup {
			return &FieldError{Path: field(at, "key", i, "arg"), Value: strconv.Quote(k.Arg),
				Problem: "is listed twice, first {other}", Other: field(at, "key", j, "arg")}
		}
		first[k.Arg] = i
	}
	return nil
}

// validateClaims checks the tool's claim verbs; at is the tool's path.
func (t *Tool) validateClaims(at []any) error {
	if t.Claims != nil && !t.SideEffect {
		return &FieldError{Path: field(at, "claims"), Problem: "set, but the tool is read-only (side_effect is false): nothing it does can be claimed"}
	}
	first := map[string]int{}
	for i, c := range t.Claims {
		if err := speech.CheckClaimVerb(c); err != nil {
			return &FieldError{Path: field(at, "claims", i), Value: strconv.Quote(c), Problem: err.Error()}
		}
		norm := strings.Join(strings.Fields(strings.ToLower(c)), " ")
		if j, dup := first[norm]; dup {
			return &FieldError{Path: field(at, "claims", i), Value: strconv.Quote(c),
				Problem: "is listed twice, first {other}", Other: field(at, "claims", j)}
		}
		first[norm] = i
	}
	return nil
}

// validateRun checks the tool's confirm-then-act fields; at is the tool's path.
func (t *Tool) validateRun(p *Policy, at []any) error {
	if t.MaxAsks < 0 {
		return &FieldError{Path: field(at, "max_asks"), Value: strconv.Itoa(t.MaxAsks),
			Problem: fmt.Sprintf("is negative: give 1 or more (leave the field out for the default, %d)", DefaultMaxAsks)}
	}
	if !t.runs() {
		if t.ConfirmTool != "" {
			return &FieldError{Path: field(at, "confirm_tool"), Problem: "set, but the tool has neither confirm nor steps"}
		}
		if t.MaxAsks != 0 {
			return &FieldError{Path: field(at, "max_asks"), Problem: "set, but the tool has neither confirm nor steps"}
		}
		return nil
	}
	ct := t.confirmTool()
	if !validName(ct) {
		return &FieldError{Path: field(at, "confirm_tool"), Value: strconv.Quote(ct),
			Problem: "must be 1-128 characters from [A-Za-z0-9_.:-]"}
	}
	if _, clash := p.Tools[ct]; clash {
		// A confirmation tool is answered by the arbiter, never executed.
		err := &FieldError{Path: field(at, "confirm_tool"), Value: strconv.Quote(ct),
			Problem: "is the tool {other}; a confirmation tool must not be a tool of its own",
			Other:   []any{"tools", Entry(ct)}}
		if t.ConfirmTool == "" {
			err.Value = ""
			err.Problem = fmt.Sprintf("left out, it is %q, which is the tool {other}; "+
				"a confirmation tool must not be a tool of its own: set confirm_tool to another name", ct)
		}
		return err
	}
	return t.validateSteps(at)
}

// validateSteps checks the tool's steps; at is the tool's path.
func (t *Tool) validateSteps(at []any) error {
	first := map[string]int{}
	for i, st := range t.Steps {
		arg := field(at, "steps", i, "arg")
		j, dup := first[st.Arg]
		switch {
		case st.Arg == "":
			return &FieldError{Path: arg, Problem: "required"}
		case strings.TrimSpace(st.Ask) == "":
			return &FieldError{Path: field(at, "steps", i, "ask"), Problem: "required"}
		case dup:
			return &FieldError{Path: arg, Value: strconv.Quote(st.Arg), Problem: "is asked twice, first {other}",
				Other: field(at, "steps", j, "arg")}
		case st.Arg == "run_id" || st.Arg == "confirmed" || st.Arg == "answer":
			return &FieldError{Path: arg, Value: strconv.Quote(st.Arg), Problem: "is reserved by the confirmation tool"}
		case i == 0 && st.WithPrevious:
			return &FieldError{Path: field(at, "steps", 0, "with_previous"), Problem: "the first step has no step before it"}
		}
		first[st.Arg] = i
	}
	return nil
}

// validatePhrases checks a list of intent phrases at the path at: each has words.
func validatePhrases(list []string, at ...any) error {
	for i, s := range list {
		if len(speech.Words(s)) == 0 {
			return &FieldError{Path: field(at, i), Value: strconv.Quote(s), Problem: "has no words"}
		}
	}
	return nil
}

// noStopsProblem is the problem of a stop phrase list that is empty: it would not
// change the stop phrases, it would turn every stop off (issue 13 follow-up: a policy
// with `stop_phrases: []` let "Actually, stop. Don't book it." commit).
const noStopsProblem = "is empty, which would turn every stop off: list the stop phrases, or leave the field out for the built-in ones"

// validateLanguage checks the phrase set of one language of Policy.Languages and
// returns it with a Stop list left out (nil) taken from the built-in set of the
// language; a language with no built-in set must list its stop phrases.
func validateLanguage(lang string, ph speech.Phrases) (speech.Phrases, error) {
	at := []any{"languages", Entry(lang)}
	if len(lang) < 2 || len(lang) > 8 || strings.ToLower(lang) != lang || strings.ContainsAny(lang, "-_ ") {
		return ph, &FieldError{Path: at, Value: strconv.Quote(lang), Problem: "is not a primary language subtag (like es, fr, de)"}
	}
	if ph.Stop == nil {
		builtin, ok := speech.DefaultPhrases[lang]
		if !ok {
			return ph, &FieldError{Path: field(at, "stop"), Problem: "required: " + lang + " has no built-in stop phrases, and a language without them never stops"}
		}
		ph.Stop = builtin.Stop
	}
	if len(ph.Stop) == 0 {
		return ph, &FieldError{Path: field(at, "stop"), Problem: noStopsProblem}
	}
	for _, l := range []struct {
		name string
		list []string
	}{{"stop", ph.Stop}, {"soft", ph.Soft}, {"amend", ph.Amend}, {"weak_amend", ph.WeakAmend},
		{"not_stop", ph.NotStop}, {"correct", ph.Correct}, {"bare", ph.Bare}, {"refuse", ph.Refuse},
		{"go_ahead", ph.GoAhead}, {"neutral", ph.Neutral}, {"hedge", ph.Hedge}, {"else_cues", ph.ElseCues},
		{"action_cues", ph.ActionCues}, {"undo_cues", ph.UndoCues}} {
		if err := validatePhrases(l.list, field(at, l.name)...); err != nil {
			return ph, err
		}
	}
	return ph, nil
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

// TimingsOf returns the timings a call of the named function runs under: its tool's,
// the policy's defaults filling what it leaves out, the built-in defaults the rest
// (an unknown tool gets the defaults). Read-only; safe for concurrent use.
func (p *Policy) TimingsOf(name string) Timings { return p.lookup(name).timings }
