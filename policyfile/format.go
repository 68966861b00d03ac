package policyfile

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// file is the tool-policy file as written (docs/trace-format.md, "Tool policy file"):
// each struct below is one mapping of the format, its fields the keys (by their yaml
// tags), decoded strictly (a key not listed is an error). A field left out or null
// stays zero; file.policy converts it all into an arbiter.Policy, field by field.
type file struct {
	Defaults     defaults             `yaml:"defaults"`
	Tools        []*tool              `yaml:"tools"` // nil: a null item
	StopPhrases  []text               `yaml:"stop_phrases"`
	AmendPhrases []text               `yaml:"amend_phrases"`
	Languages    map[string]*language `yaml:"languages"` // nil: a language set to null, no phrases
	AgentIntent  agentIntent          `yaml:"agent_intent"`
}

// agentIntent is arbiter.Policy.AgentIntent (speech.FusePolicy).
type agentIntent struct {
	Use           text     `yaml:"use"` // cautious, prefer or ignore; left out: cautious
	MinConfidence fraction `yaml:"min_confidence"`
}

type defaults struct {
	Timings      timings `yaml:",inline"`
	UnknownTools text    `yaml:"unknown_tools"` // pass or reject
}

// timings are the fields of arbiter.Timings, in defaults or on a tool.
type timings struct {
	Grace               duration `yaml:"grace"`
	TranscriptTimeout   duration `yaml:"transcript_timeout"`
	OnTranscriptTimeout text     `yaml:"on_transcript_timeout"`
	DedupeWindow        duration `yaml:"dedupe_window"`
	TriggerLookback     duration `yaml:"trigger_lookback"`
	AbandonWait         duration `yaml:"abandon_wait"`
	OnAbandon           text     `yaml:"on_abandon"`
	MaxPending          duration `yaml:"max_pending"`
	RunTimeout          duration `yaml:"run_timeout"`
	MaxHold             duration `yaml:"max_hold"`
	OnUnclear           text     `yaml:"on_unclear"`
	ContinuationWait    duration `yaml:"continuation_wait"`
}

type tool struct {
	Name       text      `yaml:"name"`
	SideEffect boolean   `yaml:"side_effect"`
	Behavior   text      `yaml:"behavior"`
	Key        []*keyArg `yaml:"key"` // nil: a null item
	Describe   text      `yaml:"describe"`
	Claims     []text    `yaml:"claims"`  // left out: derived (nil); [] none
	Allowed    boolean   `yaml:"allowed"` // left out: true
	Hold       boolean   `yaml:"hold"`    // left out: true
	// DedupeUntilUserSpeaks left out: true (arbiter.Tool.DedupeWindowOnly false).
	DedupeUntilUserSpeaks boolean `yaml:"dedupe_until_user_speaks"`
	Confirm               boolean `yaml:"confirm"`
	ConfirmTool           text    `yaml:"confirm_tool"`
	Steps                 []*step `yaml:"steps"` // nil: a null item
	MaxAsks               count   `yaml:"max_asks"`
	// Continuation true: arbiter.ContinuationReplace, false: ContinuationOff; left out:
	// the default (replace for a side-effecting tool with key args).
	Continuation boolean `yaml:"continuation"`
	Timings      timings `yaml:",inline"`
}

type keyArg struct {
	Arg      text    `yaml:"arg"`
	As       text    `yaml:"as"`
	Optional boolean `yaml:"optional"` // left out: false (the argument is required)
}

type step struct {
	Arg          text    `yaml:"arg"`
	Ask          text    `yaml:"ask"`
	WithPrevious boolean `yaml:"with_previous"`
}

type language struct {
	Stop       []text `yaml:"stop"`
	Soft       []text `yaml:"soft"`
	Amend      []text `yaml:"amend"`
	WeakAmend  []text `yaml:"weak_amend"`
	NotStop    []text `yaml:"not_stop"`
	Correct    []text `yaml:"correct"`
	Bare       []text `yaml:"bare"`
	Refuse     []text `yaml:"refuse"`
	GoAhead    []text `yaml:"go_ahead"`
	Neutral    []text `yaml:"neutral"`
	Hedge      []text `yaml:"hedge"`
	ElseCues   []text `yaml:"else_cues"`
	ActionCues []text `yaml:"action_cues"`
	UndoCues   []text `yaml:"undo_cues"`
}

// The scalar types take exactly one kind of YAML node each and convert nothing (a
// number is not a string). The decoder does not call them for null: the field stays
// zero, "left out". Their errors are *nodeError.

// text is a string: plain, quoted or a block scalar.
type text struct {
	s   string
	set bool
}

func (t *text) UnmarshalYAML(n ast.Node) error {
	switch n := n.(type) {
	case *ast.StringNode:
		t.s = n.Value
	case *ast.LiteralNode:
		t.s = n.Value.Value
	default:
		return mistyped(n, "a string")
	}
	t.set = true
	return nil
}

// boolean is true or false.
type boolean struct {
	b, set bool
}

func (b *boolean) UnmarshalYAML(n ast.Node) error {
	v, ok := n.(*ast.BoolNode)
	if !ok {
		return mistyped(n, "true or false")
	}
	b.b, b.set = v.Value, true
	return nil
}

// fraction is a number from 0 to 1, written as a YAML number ("0.7", "1"). Zero is
// refused: in arbiter.Policy zero means the default, which the file says by leaving
// the field out. A number outside 0 to 1 is decoded, for Policy.Validate to refuse.
type fraction struct {
	f float64
}

func (f *fraction) UnmarshalYAML(n ast.Node) error {
	switch v := n.(type) {
	case *ast.FloatNode:
		f.f = v.Value
	case *ast.IntegerNode:
		switch i := v.Value.(type) {
		case int64:
			f.f = float64(i)
		case uint64:
			f.f = float64(i)
		}
	default:
		return mistyped(n, "a number from 0 to 1")
	}
	if f.f == 0 {
		return nodeErrorf(n, "0 is not supported: leave the field out for the default (%v), or give a small number such as 0.01 to count every reading", speech.DefaultMinConfidence)
	}
	return nil
}

// duration is a time.Duration written as a string with a unit that
// time.ParseDuration takes ("1.5s", "300ms", "2m"); a bare number has no unit and is
// refused. Zero is refused too: in arbiter.Timings zero means the default, which the
// file says by leaving the field out. A negative duration is decoded, for
// Policy.Validate to refuse.
type duration struct {
	d time.Duration
}

func (d *duration) UnmarshalYAML(n ast.Node) error {
	switch v := n.(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		s := n.GetToken().Value
		return nodeErrorf(n, "%s has no unit: give a duration such as \"%ss\" or \"%sms\"", s, s, s)
	case *ast.StringNode:
		if _, err := strconv.ParseFloat(v.Value, 64); err == nil {
			return nodeErrorf(n, "%q has no unit: give a duration such as \"%ss\" or \"%sms\"", v.Value, v.Value, v.Value)
		}
		x, err := time.ParseDuration(v.Value)
		if err != nil {
			return nodeErrorf(n, "%q is not a duration such as \"1.5s\" or \"300ms\"", v.Value)
		}
		if x == 0 {
			return nodeErrorf(n, "%q is zero, which is not supported (leave the field out for the default)", v.Value)
		}
		d.d = x
		return nil
	default:
		return mistyped(n, `a duration such as "1.5s"`)
	}
}

// count is max_asks: a whole number that fits in 32 bits. Zero is refused (in
// arbiter.Tool zero means the default); a negative count is decoded, for
// Policy.Validate to refuse.
type count struct {
	n int
}

func (c *count) UnmarshalYAML(n ast.Node) error {
	switch v := n.(type) {
	case *ast.IntegerNode:
		var x int64
		switch i := v.Value.(type) {
		case int64:
			x = i
		case uint64:
			x = math.MaxInt64
			if i < math.MaxInt64 {
				x = int64(i)
			}
		}
		switch {
		case x == 0:
			return nodeErrorf(n, "0 is not supported: a question is asked at least once; give 1 or more "+
				"(leave the field out for the default, %d)", arbiter.DefaultMaxAsks)
		case x > math.MaxInt32:
			return nodeErrorf(n, "%s is too large", v.Token.Value)
		case x < 0:
			x = max(x, math.MinInt32) // negative all the same: Validate refuses it
		}
		c.n = int(x)
		return nil
	case *ast.FloatNode:
		return nodeErrorf(n, "%s is not a whole number", v.Token.Value)
	default:
		return mistyped(n, "a whole number such as 2")
	}
}

// nodeError is an error of decoding the node: the message follows the node's path.
type nodeError struct {
	node ast.Node
	msg  string
}

func (e *nodeError) Error() string { return e.msg }

func nodeErrorf(n ast.Node, format string, args ...any) error {
	return &nodeError{node: n, msg: fmt.Sprintf(format, args...)}
}

func mistyped(n ast.Node, want string) error {
	return nodeErrorf(n, "must be %s, not %s", want, kind(n.Type()))
}

// policy converts the decoded file into a Policy, not yet validated, and returns the
// name of each tool by its index in the file. Its errors are *arbiter.FieldError with
// paths of the file (tools by index), for the rules of the format that a Policy cannot
// express: a null list item, unknown_tools other than pass or reject, an empty
// confirm_tool (zero means the default), and a tool name given twice (Tools is a map).
// A second tool without a name is dropped: Validate reports the first.
func (f *file) policy() (*arbiter.Policy, []string, error) {
	p := &arbiter.Policy{Defaults: f.Defaults.Timings.timings(),
		AgentIntent: speech.FusePolicy{Mode: speech.FuseMode(f.AgentIntent.Use.s), MinConfidence: f.AgentIntent.MinConfidence.f}}
	switch u := f.Defaults.UnknownTools; {
	case u.s == "reject":
		p.RejectUnknown = true
	case u.set && u.s != "pass":
		return nil, nil, &arbiter.FieldError{Path: []any{"defaults", "unknown_tools"}, Value: strconv.Quote(u.s),
			Problem: "is not pass or reject"}
	}
	names, err := f.tools(p)
	if err != nil {
		return nil, nil, err
	}
	if p.StopPhrases, err = phrases(f.StopPhrases, "stop_phrases"); err != nil {
		return nil, nil, err
	}
	if p.AmendPhrases, err = phrases(f.AmendPhrases, "amend_phrases"); err != nil {
		return nil, nil, err
	}
	if f.Languages != nil {
		p.Languages = make(map[string]speech.Phrases, len(f.Languages))
	}
	for _, lang := range slices.Sorted(maps.Keys(f.Languages)) {
		if p.Languages[lang], err = f.Languages[lang].phrases(lang); err != nil {
			return nil, nil, err
		}
	}
	return p, names, nil
}

// tools converts the tools into p.Tools and returns their names by index.
func (f *file) tools(p *arbiter.Policy) ([]string, error) {
	p.Tools = make(map[string]*arbiter.Tool, len(f.Tools))
	names := make([]string, len(f.Tools))
	for i, ft := range f.Tools {
		t, err := ft.tool(i)
		if err != nil {
			return nil, err
		}
		names[i] = t.Name
		if j := slices.Index(names[:i], t.Name); j >= 0 {
			if t.Name == "" {
				continue
			}
			return nil, &arbiter.FieldError{Path: []any{"tools", i, "name"}, Value: strconv.Quote(t.Name),
				Problem: "is defined twice, first {other}", Other: []any{"tools", j, "name"}}
		}
		p.Tools[t.Name] = t
	}
	return names, nil
}

func (t timings) timings() arbiter.Timings {
	return arbiter.Timings{
		Grace:               t.Grace.d,
		TranscriptTimeout:   t.TranscriptTimeout.d,
		OnTranscriptTimeout: arbiter.OnTimeout(t.OnTranscriptTimeout.s),
		DedupeWindow:        t.DedupeWindow.d,
		TriggerLookback:     t.TriggerLookback.d,
		AbandonWait:         t.AbandonWait.d,
		OnAbandon:           arbiter.OnTimeout(t.OnAbandon.s),
		MaxPending:          t.MaxPending.d,
		RunTimeout:          t.RunTimeout.d,
		MaxHold:             t.MaxHold.d,
		OnUnclear:           arbiter.OnUnclear(t.OnUnclear.s),
		ContinuationWait:    t.ContinuationWait.d,
	}
}

// tool converts tools[i]; ft is nil for a null item.
func (ft *tool) tool(i int) (*arbiter.Tool, error) {
	at := []any{"tools", i}
	if ft == nil {
		return nil, &arbiter.FieldError{Path: at, Problem: "must be a mapping with a name, not null"}
	}
	if ft.ConfirmTool.set && ft.ConfirmTool.s == "" {
		return nil, &arbiter.FieldError{Path: append(at, "confirm_tool"),
			Problem: "empty (leave the field out for the default, " + arbiter.DefaultConfirmTool + ")"}
	}
	t := &arbiter.Tool{
		Name:             ft.Name.s,
		SideEffect:       ft.SideEffect.b,
		Behavior:         arbiter.Behavior(ft.Behavior.s),
		Describe:         ft.Describe.s,
		Disallowed:       ft.Allowed.set && !ft.Allowed.b,
		NoHold:           ft.Hold.set && !ft.Hold.b,
		DedupeWindowOnly: ft.DedupeUntilUserSpeaks.set && !ft.DedupeUntilUserSpeaks.b,
		Timings:          ft.Timings.timings(),
		Confirm:          ft.Confirm.b,
		ConfirmTool:      ft.ConfirmTool.s,
		MaxAsks:          ft.MaxAsks.n,
	}
	switch {
	case ft.Continuation.set && ft.Continuation.b:
		t.Continuation = arbiter.ContinuationReplace
	case ft.Continuation.set:
		t.Continuation = arbiter.ContinuationOff
	}
	var err error
	if t.Claims, err = phrases(ft.Claims, "tools", i, "claims"); err != nil {
		return nil, err
	}
	for j, k := range ft.Key {
		if k == nil {
			return nil, &arbiter.FieldError{Path: []any{"tools", i, "key", j}, Problem: "must be a mapping with an arg, not null"}
		}
		t.Key = append(t.Key, arbiter.KeyArg{Arg: k.Arg.s, As: arbiter.KeyAs(k.As.s), Optional: k.Optional.b})
	}
	for j, st := range ft.Steps {
		if st == nil {
			return nil, &arbiter.FieldError{Path: []any{"tools", i, "steps", j},
				Problem: "must be a mapping with an arg and an ask, not null"}
		}
		t.Steps = append(t.Steps, arbiter.Step{Arg: st.Arg.s, Ask: st.Ask.s, WithPrevious: st.WithPrevious.b})
	}
	return t, nil
}

// phrases converts a list of phrases at the path at: nil (left out) stays nil, an
// empty list is empty and not nil.
func phrases(list []text, at ...any) ([]string, error) {
	if list == nil {
		return nil, nil
	}
	out := make([]string, 0, len(list))
	for i, s := range list {
		if !s.set {
			return nil, &arbiter.FieldError{Path: append(at, i), Problem: "must be a string, not null"}
		}
		out = append(out, s.s)
	}
	return out, nil
}

// phrases converts languages[lang]; l is nil for null (no phrases).
func (l *language) phrases(lang string) (speech.Phrases, error) {
	var ph speech.Phrases
	if l == nil {
		return ph, nil
	}
	var err error
	for _, list := range []struct {
		name string
		in   []text
		out  *[]string
	}{{"stop", l.Stop, &ph.Stop}, {"soft", l.Soft, &ph.Soft}, {"amend", l.Amend, &ph.Amend}, {"weak_amend", l.WeakAmend, &ph.WeakAmend},
		{"not_stop", l.NotStop, &ph.NotStop}, {"correct", l.Correct, &ph.Correct}, {"bare", l.Bare, &ph.Bare},
		{"refuse", l.Refuse, &ph.Refuse}, {"go_ahead", l.GoAhead, &ph.GoAhead}, {"neutral", l.Neutral, &ph.Neutral},
		{"hedge", l.Hedge, &ph.Hedge}, {"else_cues", l.ElseCues, &ph.ElseCues}, {"action_cues", l.ActionCues, &ph.ActionCues},
		{"undo_cues", l.UndoCues, &ph.UndoCues}} {
		if *list.out, err = phrases(list.in, "languages", lang, list.name); err != nil {
			return ph, err
		}
	}
	return ph, nil
}
