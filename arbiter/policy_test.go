package arbiter

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// TestValidateFills checks what Validate fills in a policy built in Go: zero is the
// default everywhere, never an error.
func TestValidateFills(t *testing.T) {
	p := &Policy{Tools: map[string]*Tool{"book_slot": {SideEffect: true, Confirm: true}}}
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if p.Defaults != DefaultTimings {
		t.Errorf("Defaults = %+v, want DefaultTimings", p.Defaults)
	}
	if got := p.Tools["book_slot"]; got.Name != "book_slot" || got.Timings != (Timings{}) || got.MaxAsks != 0 || got.ConfirmTool != "" {
		t.Errorf("tool = %+v, want its Name filled and the rest left zero (inherited at lookup)", got)
	}
	if !reflect.DeepEqual(p.StopPhrases, DefaultStopPhrases) {
		t.Errorf("StopPhrases = %q, want DefaultStopPhrases", p.StopPhrases)
	}
	// A language set that leaves its stop phrases out keeps the built-in ones.
	q := &Policy{Languages: map[string]speech.Phrases{"es": {Amend: []string{"mejor"}}}}
	if err := q.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if es := q.Phrases("es"); !reflect.DeepEqual(es.Stop, speech.DefaultPhrases["es"].Stop) || !reflect.DeepEqual(es.Amend, []string{"mejor"}) {
		t.Errorf("languages.es = %+v, want the built-in Spanish stops and the policy's amend", es)
	}
}

// TestValidateErrors checks each rule of Validate: the error is a *FieldError of
// kind Invalid, with the path as elements and the message Error renders from it.
func TestValidateErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Policy)
		path []any
		msg  string
	}{
		{"negative default", func(p *Policy) { p.Defaults.AbandonWait = -2 * time.Second },
			[]any{"defaults", "abandon_wait"}, `defaults.abandon_wait: "-2s" is negative`},
		{"negative tool timing", func(p *Policy) { p.Tools["book_slot"].Timings.RunTimeout = -time.Minute },
			[]any{"tools", Entry("book_slot"), "run_timeout"}, `tools[book_slot].run_timeout: "-1m0s" is negative`},
		{"bad on_abandon", func(p *Policy) { p.Defaults.OnAbandon = "retry" },
			[]any{"defaults", "on_abandon"}, `defaults.on_abandon: "retry" is not cancel or commit`},
		{"bad on_unclear", func(p *Policy) { p.Defaults.OnUnclear = "guess" },
			[]any{"defaults", "on_unclear"}, `defaults.on_unclear: "guess" is not ask, cancel or commit`},
		{"bad tool on_unclear", func(p *Policy) { p.Tools["book_slot"].Timings.OnUnclear = "stop" },
			[]any{"tools", Entry("book_slot"), "on_unclear"}, `tools[book_slot].on_unclear: "stop" is not ask, cancel or commit`},
		{"language refuse without words", func(p *Policy) {
			p.Languages = map[string]speech.Phrases{"it": {Stop: []string{"basta"}, Refuse: []string{"no", "?!"}}}
		}, []any{"languages", Entry("it"), "refuse", 1}, `languages[it].refuse[1]: "?!" has no words`},
		{"nil tool", func(p *Policy) { p.Tools["x"] = nil },
			[]any{"tools", Entry("x")}, "tools[x]: is nil"},
		{"tool without a name", func(p *Policy) { p.Tools[""] = &Tool{} },
			[]any{"tools", Entry(""), "name"}, "tools[].name: required"},
		{"name not its key", func(p *Policy) { p.Tools["x"] = &Tool{Name: "y"} },
			[]any{"tools", Entry("x"), "name"}, `tools[x].name: "y" is not the tool's key in Tools, "x"`},
		{"invalid name", func(p *Policy) { p.Tools["get weather"] = &Tool{} },
			[]any{"tools", Entry("get weather"), "name"}, "tools[get weather].name: must be 1-128 characters from [A-Za-z0-9_.:-]"},
		{"bad behavior", func(p *Policy) { p.Tools["book_slot"].Behavior = "blocking" },
			[]any{"tools", Entry("book_slot"), "behavior"}, `tools[book_slot].behavior: "blocking" is not BLOCKING or NON_BLOCKING`},
		{"bad as", func(p *Policy) { p.Tools["book_slot"].Key[0].As = "date" },
			[]any{"tools", Entry("book_slot"), "key", 0, "as"}, `tools[book_slot].key[0].as: "date" is not text, datetime, number or exact`},
		{"key without arg", func(p *Policy) { p.Tools["book_slot"].Key = append(p.Tools["book_slot"].Key, KeyArg{}) },
			[]any{"tools", Entry("book_slot"), "key", 1, "arg"}, "tools[book_slot].key[1].arg: required"},
		{"key arg twice", func(p *Policy) { p.Tools["book_slot"].Key = append(p.Tools["book_slot"].Key, KeyArg{Arg: "slot"}) },
			[]any{"tools", Entry("book_slot"), "key", 1, "arg"},
			`tools[book_slot].key[1].arg: "slot" is listed twice, first at tools[book_slot].key[0].arg`},
		{"negative max_asks", func(p *Policy) { p.Tools["book_slot"].MaxAsks = -1 },
			[]any{"tools", Entry("book_slot"), "max_asks"},
			"tools[book_slot].max_asks: -1 is negative: give 1 or more (leave the field out for the default, 2)"},
		{"max_asks without a run", func(p *Policy) { p.Tools["book_slot"].MaxAsks = 3 },
			[]any{"tools", Entry("book_slot"), "max_asks"}, "tools[book_slot].max_asks: set, but the tool has neither confirm nor steps"},
		{"confirm_tool without a run", func(p *Policy) { p.Tools["book_slot"].ConfirmTool = "ok" },
			[]any{"tools", Entry("book_slot"), "confirm_tool"}, "tools[book_slot].confirm_tool: set, but the tool has neither confirm nor steps"},
		{"invalid confirm_tool", func(p *Policy) { p.Tools["book_slot"].Confirm, p.Tools["book_slot"].ConfirmTool = true, "o k" },
			[]any{"tools", Entry("book_slot"), "confirm_tool"}, `tools[book_slot].confirm_tool: "o k" must be 1-128 characters from [A-Za-z0-9_.:-]`},
		{"confirm_tool is a tool", func(p *Policy) { p.Tools["book_slot"].Confirm, p.Tools["book_slot"].ConfirmTool = true, "get_weather" },
			[]any{"tools", Entry("book_slot"), "confirm_tool"},
			`tools[book_slot].confirm_tool: "get_weather" is the tool at tools[get_weather]; a confirmation tool must not be a tool of its own`},
		{"default confirm_tool is a tool", func(p *Policy) {
			p.Tools["book_slot"].Confirm = true
			p.Tools[DefaultConfirmTool] = &Tool{}
		}, []any{"tools", Entry("book_slot"), "confirm_tool"},
			`tools[book_slot].confirm_tool: left out, it is "confirm_action", which is the tool at tools[confirm_action]; ` +
				"a confirmation tool must not be a tool of its own: set confirm_tool to another name"},
		{"step without arg", steps(Step{Ask: "How many?"}),
			[]any{"tools", Entry("book_slot"), "steps", 0, "arg"}, "tools[book_slot].steps[0].arg: required"},
		{"step with a blank ask", steps(Step{Arg: "n", Ask: " "}),
			[]any{"tools", Entry("book_slot"), "steps", 0, "ask"}, "tools[book_slot].steps[0].ask: required"},
		{"step arg twice", steps(Step{Arg: "n", Ask: "a?"}, Step{Arg: "n", Ask: "b?"}),
			[]any{"tools", Entry("book_slot"), "steps", 1, "arg"},
			`tools[book_slot].steps[1].arg: "n" is asked twice, first at tools[book_slot].steps[0].arg`},
		{"reserved step arg", steps(Step{Arg: "confirmed", Ask: "a?"}),
			[]any{"tools", Entry("book_slot"), "steps", 0, "arg"}, `tools[book_slot].steps[0].arg: "confirmed" is reserved by the confirmation tool`},
		{"first step with_previous", steps(Step{Arg: "n", Ask: "a?", WithPrevious: true}),
			[]any{"tools", Entry("book_slot"), "steps", 0, "with_previous"},
			"tools[book_slot].steps[0].with_previous: the first step has no step before it"},
		{"stop phrase without words", func(p *Policy) { p.StopPhrases = []string{"stop", "?!"} },
			[]any{"stop_phrases", 1}, `stop_phrases[1]: "?!" has no words`},
		{"amend phrase without words", func(p *Policy) { p.AmendPhrases = []string{"..."} },
			[]any{"amend_phrases", 0}, `amend_phrases[0]: "..." has no words`},
		{"language not a subtag", func(p *Policy) { p.Languages = map[string]speech.Phrases{"it-IT": {}} },
			[]any{"languages", Entry("it-IT")}, `languages[it-IT]: "it-IT" is not a primary language subtag (like es, fr, de)`},
		{"language phrase without words", func(p *Policy) {
			p.Languages = map[string]speech.Phrases{"it": {Stop: []string{"fermati"}, WeakAmend: []string{"-"}}}
		},
			[]any{"languages", Entry("it"), "weak_amend", 0}, `languages[it].weak_amend[0]: "-" has no words`},
		// An empty stop list turns every stop off (issue 13 follow-up): refused.
		{"stop phrases empty", func(p *Policy) { p.StopPhrases = []string{} },
			[]any{"stop_phrases"}, "stop_phrases: " + noStopsProblem},
		{"language stop phrases empty", func(p *Policy) {
			p.Languages = map[string]speech.Phrases{"es": {Stop: []string{}, Amend: []string{"mejor"}}}
		},
			[]any{"languages", Entry("es"), "stop"}, "languages[es].stop: " + noStopsProblem},
		{"language with no built-in stops and none listed", func(p *Policy) { p.Languages = map[string]speech.Phrases{"it": {Amend: []string{"invece"}}} },
			[]any{"languages", Entry("it"), "stop"}, "languages[it].stop: required: it has no built-in stop phrases, and a language without them never stops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Policy{Tools: map[string]*Tool{
				"book_slot":   {SideEffect: true, Key: []KeyArg{{Arg: "slot", As: KeyDatetime}}},
				"get_weather": {},
			}}
			tc.mod(p)
			err := p.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate = %v, want a *FieldError", err)
			}
			if !reflect.DeepEqual(fe.Path, tc.path) {
				t.Errorf("Path = %#v, want %#v", fe.Path, tc.path)
			}
			if err.Error() != tc.msg || MessageOf(err) != tc.msg {
				t.Errorf("Error() = %q, MessageOf = %q, want %q", err.Error(), MessageOf(err), tc.msg)
			}
			if k := KindOf(err); k != Invalid {
				t.Errorf("KindOf = %v, want invalid", k)
			}
			if f := FieldOf(err); f != FieldPath(tc.path) {
				t.Errorf("FieldOf = %q, want %q", f, FieldPath(tc.path))
			}
		})
	}
}

// steps gives book_slot these steps and confirm.
func steps(s ...Step) func(*Policy) {
	return func(p *Policy) { p.Tools["book_slot"].Confirm, p.Tools["book_slot"].Steps = true, s }
}

// TestValidateReportsToolsInNameOrder: with several tools at fault, the error is
// about the first by name, whatever the map's order.
func TestValidateReportsToolsInNameOrder(t *testing.T) {
	for range 20 {
		p := &Policy{Tools: map[string]*Tool{"c": {Behavior: "x"}, "a": {Behavior: "x"}, "b": {Behavior: "x"}}}
		if msg := MessageOf(p.Validate()); msg != `tools[a].behavior: "x" is not BLOCKING or NON_BLOCKING` {
			t.Fatalf("Validate: %s, want the error about tool a", msg)
		}
	}
}
