package policyfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/arbiter/speech"
)

func TestLoadBooking(t *testing.T) {
	path := filepath.Join("..", "testdata", "tools", "booking.yaml")
	p, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	wantDefaults := arbiter.Timings{
		Grace:               1500 * time.Millisecond,
		TranscriptTimeout:   3 * time.Second,
		OnTranscriptTimeout: arbiter.Cancel,
		DedupeWindow:        30 * time.Second,
		TriggerLookback:     2 * time.Second,
		AbandonWait:         10 * time.Second, // not in the file: the built-in default
		OnAbandon:           arbiter.Cancel,
		MaxPending:          time.Minute,     // not in the file: the built-in default
		RunTimeout:          time.Minute,     // not in the file: the built-in default
		MaxHold:             5 * time.Second, // not in the file: the built-in default
		OnUnclear:           arbiter.Ask,     // not in the file: the built-in default
		ContinuationWait:    2 * time.Second, // not in the file: the built-in default
	}
	if p.Defaults != wantDefaults {
		t.Errorf("Defaults = %+v, want %+v", p.Defaults, wantDefaults)
	}
	if p.RejectUnknown {
		t.Errorf("RejectUnknown = true, want false")
	}
	if !reflect.DeepEqual(p.StopPhrases, arbiter.DefaultStopPhrases) {
		t.Errorf("StopPhrases = %q, want the defaults", p.StopPhrases)
	}
	if len(p.Tools) != 1 {
		t.Fatalf("Tools has %d entries, want 1: %v", len(p.Tools), p.Tools)
	}
	got := p.Tools["book_slot"]
	want := &arbiter.Tool{
		Name:       "book_slot",
		SideEffect: true,
		Behavior:   arbiter.NonBlocking,
		Key:        []arbiter.KeyArg{{Arg: "slot", As: arbiter.KeyDatetime}},
		Describe:   "the booking for {slot}",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Tools[book_slot] = %+v, want %+v", got, want)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"empty", ""},
		{"comments only", "# nothing here\n\n# still nothing\n"},
		{"document marker", "---\n"},
		{"null document", "~\n"},
		{"null sections", "defaults:\ntools:\nstop_phrases:\n"},
		{"empty sections", "defaults: {}\ntools: []\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(tc.src), "empty.yaml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if p.Defaults != arbiter.DefaultTimings {
				t.Errorf("Defaults = %+v, want %+v", p.Defaults, arbiter.DefaultTimings)
			}
			if p.Tools == nil || len(p.Tools) != 0 {
				t.Errorf("Tools = %#v, want an empty map", p.Tools)
			}
			if p.RejectUnknown {
				t.Errorf("RejectUnknown = true, want false")
			}
			if !reflect.DeepEqual(p.StopPhrases, arbiter.DefaultStopPhrases) {
				t.Errorf("StopPhrases = %q, want the defaults", p.StopPhrases)
			}
		})
	}
}

func TestParseAllFields(t *testing.T) {
	src := `defaults:
  grace: 300ms
  transcript_timeout: 4s
  on_transcript_timeout: commit
  dedupe_window: 1m
  trigger_lookback: 2.5s
  abandon_wait: &wait 7s
  on_abandon: commit
  on_unclear: cancel
  unknown_tools: reject
stop_phrases: ["halt", "hang on"]
agent_intent: {use: prefer, min_confidence: 0.85}
tools:
  - name: book_slot
    side_effect: true
    behavior: BLOCKING
    key:
      - arg: slot
        as: datetime
      - arg: party
        as: number
      - arg: name
      - {arg: ref, as: exact}
    describe: "the booking for {slot}"
    allowed: true
    hold: false
    grace: 2s
    transcript_timeout: 5s
    on_transcript_timeout: cancel
    dedupe_window: 10s
    trigger_lookback: 1s
    abandon_wait: *wait
    on_abandon: cancel
    on_unclear: commit
    continuation: false
    continuation_wait: 1s
  - name: end_call
    allowed: false
  - {name: get_weather, side_effect: false, behavior: NON_BLOCKING, key: [{arg: city, as: text}]}
`
	p, err := Parse([]byte(src), "all.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	wantDefaults := arbiter.Timings{
		Grace:               300 * time.Millisecond,
		TranscriptTimeout:   4 * time.Second,
		OnTranscriptTimeout: arbiter.Commit,
		DedupeWindow:        time.Minute,
		TriggerLookback:     2500 * time.Millisecond,
		AbandonWait:         7 * time.Second,
		OnAbandon:           arbiter.Commit,
		MaxPending:          time.Minute,
		RunTimeout:          time.Minute,
		MaxHold:             5 * time.Second,
		OnUnclear:           arbiter.CancelUnclear,
		ContinuationWait:    2 * time.Second,
	}
	if p.Defaults != wantDefaults {
		t.Errorf("Defaults = %+v, want %+v", p.Defaults, wantDefaults)
	}
	if !p.RejectUnknown {
		t.Errorf("RejectUnknown = false, want true")
	}
	if want := []string{"halt", "hang on"}; !reflect.DeepEqual(p.StopPhrases, want) {
		t.Errorf("StopPhrases = %q, want %q", p.StopPhrases, want)
	}
	if want := (speech.FusePolicy{Mode: speech.FusePrefer, MinConfidence: 0.85}); p.AgentIntent != want {
		t.Errorf("AgentIntent = %+v, want %+v", p.AgentIntent, want)
	}
	want := map[string]*arbiter.Tool{
		"book_slot": {
			Name:       "book_slot",
			SideEffect: true,
			Behavior:   arbiter.Blocking,
			Key: []arbiter.KeyArg{
				{Arg: "slot", As: arbiter.KeyDatetime},
				{Arg: "party", As: arbiter.KeyNumber},
				{Arg: "name"},
				{Arg: "ref", As: arbiter.KeyExact},
			},
			Describe:     "the booking for {slot}",
			NoHold:       true,
			Continuation: arbiter.ContinuationOff,
			Timings: arbiter.Timings{
				Grace:               2 * time.Second,
				TranscriptTimeout:   5 * time.Second,
				OnTranscriptTimeout: arbiter.Cancel,
				DedupeWindow:        10 * time.Second,
				TriggerLookback:     time.Second,
				AbandonWait:         7 * time.Second,
				OnAbandon:           arbiter.Cancel,
				OnUnclear:           arbiter.CommitUnclear,
				ContinuationWait:    time.Second,
			},
		},
		"end_call": {Name: "end_call", Disallowed: true},
		"get_weather": {
			Name:     "get_weather",
			Behavior: arbiter.NonBlocking,
			Key:      []arbiter.KeyArg{{Arg: "city", As: arbiter.KeyText}},
		},
	}
	if !reflect.DeepEqual(p.Tools, want) {
		for name, w := range want {
			if g := p.Tools[name]; !reflect.DeepEqual(g, w) {
				t.Errorf("Tools[%s] = %+v, want %+v", name, g, w)
			}
		}
		t.Errorf("Tools has %d entries, want %d", len(p.Tools), len(want))
	}
}

// TestParseStopPhrasesEmptyList (issue 13 follow-up): an explicitly empty stop list
// would turn every stop off ("Actually, stop. Don't book it." committed); the file is
// refused, naming the field and its line. Left out or null, the built-in phrases
// apply.
func TestParseStopPhrasesEmptyList(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"stop_phrases: []\n", "stops.yaml:1: stop_phrases: is empty, which would turn every stop off"},
		{"tools:\n  - name: book_slot\n    side_effect: true\nstop_phrases: []\n", "stops.yaml:4: stop_phrases: is empty"},
		{"languages:\n  es:\n    stop: []\n", "stops.yaml:3: languages.es.stop: is empty"},
		{"languages:\n  it:\n    amend: [invece]\n", "stops.yaml:2: languages.it.stop: required"},
		{"tools:\n  - name: book_slot\n    stop_phrases: []\n", "stops.yaml:3: tools[0].stop_phrases: unknown field"},
	} {
		_, err := Parse([]byte(tc.in), "stops.yaml")
		if err == nil || !strings.HasPrefix(arbiter.MessageOf(err), tc.want) {
			t.Errorf("Parse(%q): %v, want %q...", tc.in, err, tc.want)
		}
		if err != nil && arbiter.KindOf(err) != arbiter.Invalid {
			t.Errorf("Parse(%q): kind %v, want Invalid", tc.in, arbiter.KindOf(err))
		}
	}
	for _, in := range []string{"", "stop_phrases:\n", "languages:\n  es:\n    amend: [mejor]\n"} {
		p, err := Parse([]byte(in), "stops.yaml")
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if !reflect.DeepEqual(p.StopPhrases, arbiter.DefaultStopPhrases) {
			t.Errorf("Parse(%q): StopPhrases = %q, want the defaults", in, p.StopPhrases)
		}
	}
}

// booking is a valid policy that the error cases below break one line of. Its lines:
//
//	1 defaults:
//	2   grace: 1.5s
//	3   unknown_tools: pass
//	4 tools:
//	5   - name: book_slot
//	6     side_effect: true
//	7     behavior: NON_BLOCKING
//	8     key:
//	9       - arg: slot
//	10        as: datetime
//	11    describe: "the booking for {slot}"
//	12  - name: get_weather
const booking = `defaults:
  grace: 1.5s
  unknown_tools: pass
tools:
  - name: book_slot
    side_effect: true
    behavior: NON_BLOCKING
    key:
      - arg: slot
        as: datetime
    describe: "the booking for {slot}"
  - name: get_weather
`

// edit returns booking with line n (1-based) replaced by repl, which may be several
// lines or none.
func edit(t *testing.T, n int, repl string) string {
	t.Helper()
	lines := strings.Split(booking, "\n")
	if n < 1 || n > len(lines)-1 {
		t.Fatalf("edit: no line %d", n)
	}
	var out []string
	out = append(out, lines[:n-1]...)
	if repl != "" {
		out = append(out, strings.Split(repl, "\n")...)
	}
	out = append(out, lines[n:]...)
	return strings.Join(out, "\n")
}

func TestParseBookingIsValid(t *testing.T) {
	if _, err := Parse([]byte(booking), "booking.yaml"); err != nil {
		t.Fatalf("the base policy of the error cases does not parse: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		// line and repl edit booking (line 0: src is the whole file).
		line int
		repl string
		src  string
		// wantLine is the line the message must start with ("booking.yaml:LINE: ");
		// 0 means no line.
		wantLine int
		// want are substrings of the message: the field, the problem.
		want []string
	}{
		{name: "unknown top-level field", line: 4, repl: "tool:\n  - name: x\ntools:", wantLine: 4,
			want: []string{"tool: unknown field"}},
		{name: "unknown defaults field", line: 3, repl: "  gracee: 2s", wantLine: 3,
			want: []string{"defaults.gracee: unknown field"}},
		{name: "unknown tool field", line: 11, repl: "    descibe: the booking", wantLine: 11,
			want: []string{"tools[0].descibe: unknown field"}},
		{name: "unknown key field", line: 10, repl: "        as: datetime\n        format: iso", wantLine: 11,
			want: []string{"tools[0].key[0].format: unknown field"}},
		{name: "bad as", line: 10, repl: "        as: date", wantLine: 10,
			want: []string{`tools[0].key[0].as: "date" is not text, datetime, number or exact`}},
		{name: "bad duration", line: 2, repl: "  grace: soon", wantLine: 2,
			want: []string{`defaults.grace: "soon" is not a duration`}},
		{name: "bad tool duration", line: 12, repl: "  - name: get_weather\n    dedupe_window: 5 s", wantLine: 13,
			want: []string{`tools[1].dedupe_window: "5 s" is not a duration`}},
		{name: "bare integer", line: 2, repl: "  grace: 2", wantLine: 2,
			want: []string{"defaults.grace: 2 has no unit", `"2s"`}},
		{name: "bare float", line: 7, repl: "    transcript_timeout: 1.5", wantLine: 7,
			want: []string{"tools[0].transcript_timeout: 1.5 has no unit", `"1.5s"`}},
		{name: "quoted bare number", line: 2, repl: `  trigger_lookback: "3"`, wantLine: 2,
			want: []string{`defaults.trigger_lookback: "3" has no unit`}},
		{name: "negative duration", line: 2, repl: "  abandon_wait: -2s", wantLine: 2,
			want: []string{`defaults.abandon_wait: "-2s" is negative`}},
		{name: "negative tool duration", line: 11, repl: "    grace: -100ms", wantLine: 11,
			want: []string{`tools[0].grace: "-100ms" is negative`}},
		{name: "zero duration", line: 2, repl: "  grace: 0s", wantLine: 2,
			want: []string{`defaults.grace: "0s" is zero`}},
		{name: "duration of wrong type", line: 2, repl: "  grace: [1s]", wantLine: 2,
			want: []string{"defaults.grace: must be a duration", "not a list"}},
		{name: "duplicate tool", line: 12, repl: "  - name: book_slot", wantLine: 12,
			want: []string{`tools[1].name: "book_slot" is defined twice, first on line 5`}},
		{name: "bad behavior", line: 7, repl: "    behavior: blocking", wantLine: 7,
			want: []string{`tools[0].behavior: "blocking" is not BLOCKING or NON_BLOCKING`}},
		// issue 25: continuation, continuation_wait, agent_intent.
		{name: "continuation not a boolean", line: 11, repl: "    describe: x\n    continuation: replace", wantLine: 12,
			want: []string{"tools[0].continuation: must be true or false, not a string"}},
		{name: "negative continuation_wait", line: 2, repl: "  continuation_wait: -1s", wantLine: 2,
			want: []string{`defaults.continuation_wait: "-1s" is negative`}},
		{name: "agent_intent use", line: 4, repl: "agent_intent:\n  use: trust\ntools:", wantLine: 5,
			want: []string{`agent_intent.use: "trust" is not cautious, prefer or ignore`}},
		{name: "agent_intent min_confidence over 1", line: 4, repl: "agent_intent:\n  min_confidence: 1.5\ntools:", wantLine: 5,
			want: []string{"agent_intent.min_confidence: 1.5 is not between 0 and 1"}},
		{name: "agent_intent min_confidence zero", line: 4, repl: "agent_intent:\n  min_confidence: 0\ntools:", wantLine: 5,
			want: []string{"agent_intent.min_confidence: 0 is not supported"}},
		{name: "agent_intent min_confidence a string", line: 4, repl: "agent_intent:\n  min_confidence: high\ntools:", wantLine: 5,
			want: []string{"agent_intent.min_confidence: must be a number from 0 to 1, not a string"}},
		{name: "unknown_tools maybe", line: 3, repl: "  unknown_tools: maybe", wantLine: 3,
			want: []string{`defaults.unknown_tools: "maybe" is not pass or reject`}},
		{name: "bad on_abandon", line: 3, repl: "  on_abandon: retry", wantLine: 3,
			want: []string{`defaults.on_abandon: "retry" is not cancel or commit`}},
		{name: "bad on_unclear", line: 3, repl: "  on_unclear: guess", wantLine: 3,
			want: []string{`defaults.on_unclear: "guess" is not ask, cancel or commit`}},
		{name: "bad tool on_unclear", line: 12, repl: "  - name: get_weather\n    on_unclear: stop", wantLine: 13,
			want: []string{`tools[1].on_unclear: "stop" is not ask, cancel or commit`}},
		{name: "bad on_transcript_timeout", line: 12, repl: "  - name: get_weather\n    on_transcript_timeout: 1", wantLine: 13,
			want: []string{"tools[1].on_transcript_timeout: must be a string, not a number"}},
		{name: "max_pending without a unit", line: 2, repl: "  max_pending: 20", wantLine: 2,
			want: []string{"defaults.max_pending: 20 has no unit"}},
		{name: "run_timeout at top level", line: 4, repl: "run_timeout: 60s\ntools:", wantLine: 4,
			want: []string{"run_timeout: unknown field"}},
		{name: "string where a list belongs", line: 8, repl: "    key: slot", wantLine: 8,
			want: []string{"tools[0].key: must be a list, not a string"}},
		{name: "mapping where the tools list belongs", src: "defaults:\n  grace: 2s\ntools:\n  book_slot:\n    side_effect: true\n", wantLine: 4,
			want: []string{"tools: must be a list, not a mapping"}},
		{name: "string where a mapping belongs", src: "tools: []\ndefaults: fast\n", wantLine: 2,
			want: []string{"defaults: must be a mapping, not a string"}},
		{name: "string where a bool belongs", line: 6, repl: "    side_effect: yes", wantLine: 6,
			want: []string{"tools[0].side_effect: must be true or false, not a string"}},
		{name: "bad allowed", line: 6, repl: "    allowed: 0", wantLine: 6,
			want: []string{"tools[0].allowed: must be true or false, not a number"}},
		{name: "number where a string belongs", line: 11, repl: "    describe: 42", wantLine: 11,
			want: []string{"tools[0].describe: must be a string, not a number"}},
		{name: "tool without a name", line: 12, repl: "  - side_effect: false", wantLine: 12,
			want: []string{"tools[1].name: required"}},
		{name: "tool with an empty name", line: 12, repl: `  - name: ""`, wantLine: 12,
			want: []string{"tools[1].name: required"}},
		{name: "null tool", line: 12, repl: "  -", wantLine: 12,
			want: []string{"tools[1]: must be a mapping"}},
		{name: "invalid tool name (from Validate)", line: 12, repl: "  - name: get weather", wantLine: 12,
			want: []string{"tools[1].name: must be 1-128 characters"}},
		{name: "key without arg", line: 10, repl: "        as: datetime\n      - as: text", wantLine: 11,
			want: []string{"tools[0].key[1].arg: required"}},
		{name: "key arg twice", line: 10, repl: "        as: datetime\n      - arg: slot", wantLine: 11,
			want: []string{`tools[0].key[1].arg: "slot" is listed twice, first on line 9`}},
		{name: "stop phrase without words", line: 4, repl: "stop_phrases:\n  - stop\n  - '?!'\ntools:", wantLine: 6,
			want: []string{`stop_phrases[1]: "?!" has no words`}},
		{name: "stop phrases not a list", line: 4, repl: "stop_phrases: stop\ntools:", wantLine: 4,
			want: []string{"stop_phrases: must be a list, not a string"}},
		{name: "duplicate mapping key (syntax)", line: 3, repl: "  grace: 2s", wantLine: 3,
			want: []string{`"grace" already defined`}},
		{name: "syntax error", src: "defaults:\n  grace: 1s\ntools: [\n", wantLine: 3,
			want: []string{"not found"}},
		{name: "top level not a mapping", src: "# policy\n- name: book_slot\n", wantLine: 2,
			want: []string{"must be a mapping"}},
		{name: "two documents", src: "defaults:\n  grace: 1s\n---\ntools: []\n", wantLine: 4,
			want: []string{"second YAML document"}},
		{name: "tag", line: 2, repl: "  grace: !!str 1s", wantLine: 2,
			want: []string{"defaults.grace: YAML tags"}},
		{name: "undefined alias", line: 2, repl: "  grace: *g", wantLine: 2,
			want: []string{"defaults.grace: alias *g"}},
		{name: "merge key", line: 12, repl: "  - name: get_weather\n    <<: {grace: 1s}", wantLine: 13,
			want: []string{"tools[1].<<: merge keys are not supported"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			if src == "" {
				src = edit(t, tc.line, tc.repl)
			}
			p, err := Parse([]byte(src), "booking.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded (%+v), want an error; input:\n%s", p, src)
			}
			if p != nil {
				t.Errorf("Parse returned a policy with its error")
			}
			if k := arbiter.KindOf(err); k != arbiter.Invalid {
				t.Errorf("kind = %v, want invalid (error %q)", k, err)
			}
			msg := arbiter.MessageOf(err)
			prefix := "booking.yaml: "
			if tc.wantLine > 0 {
				prefix = fmt.Sprintf("booking.yaml:%d: ", tc.wantLine)
			}
			if !strings.HasPrefix(msg, prefix) {
				t.Errorf("message %q does not start with %q; input:\n%s", msg, prefix, src)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestParseRuns(t *testing.T) {
	src := `defaults:
  max_pending: 20s
  run_timeout: 45s
tools:
  - name: book_table
    side_effect: true
    key: [{arg: time, as: datetime}]
    confirm: true
    confirm_tool: confirm_booking
    max_asks: 3
    run_timeout: 90s
    max_pending: 2m
    steps:
      - arg: party_size
        ask: "How many people?"
      - {arg: name, ask: "Under what name?", with_previous: true}
      - arg: phone
        ask: "A phone number?"
        with_previous: false
    describe: "the table for {time}"
  - name: take_photo
    side_effect: true
    confirm: true
  - name: order_taxi
    side_effect: true
    steps:
      - arg: address
        ask: Where to?
  - name: get_weather
    confirm: false
    steps: []
    max_asks:
    confirm_tool:
`
	p, err := Parse([]byte(src), "runs.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if p.Defaults.RunTimeout != 45*time.Second || p.Defaults.MaxPending != 20*time.Second {
		t.Errorf("Defaults: run_timeout %v, max_pending %v, want 45s, 20s", p.Defaults.RunTimeout, p.Defaults.MaxPending)
	}
	want := map[string]*arbiter.Tool{
		"book_table": {
			Name:        "book_table",
			SideEffect:  true,
			Key:         []arbiter.KeyArg{{Arg: "time", As: arbiter.KeyDatetime}},
			Describe:    "the table for {time}",
			Confirm:     true,
			ConfirmTool: "confirm_booking",
			MaxAsks:     3,
			Steps: []arbiter.Step{
				{Arg: "party_size", Ask: "How many people?"},
				{Arg: "name", Ask: "Under what name?", WithPrevious: true},
				{Arg: "phone", Ask: "A phone number?"},
			},
			Timings: arbiter.Timings{RunTimeout: 90 * time.Second, MaxPending: 2 * time.Minute},
		},
		"take_photo": {Name: "take_photo", SideEffect: true, Confirm: true},
		"order_taxi": {
			Name:       "order_taxi",
			SideEffect: true,
			Steps:      []arbiter.Step{{Arg: "address", Ask: "Where to?"}},
		},
		"get_weather": {Name: "get_weather"},
	}
	for name, w := range want {
		if g := p.Tools[name]; !reflect.DeepEqual(g, w) {
			t.Errorf("Tools[%s] = %+v, want %+v", name, g, w)
		}
	}
	if len(p.Tools) != len(want) {
		t.Errorf("Tools has %d entries, want %d", len(p.Tools), len(want))
	}
	for name, want := range map[string]bool{"confirm_booking": true, "confirm_action": true, "book_table": false} {
		if got := p.IsConfirmTool(name); got != want {
			t.Errorf("IsConfirmTool(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestLoadRunsExample(t *testing.T) {
	path := filepath.Join("..", "testdata", "scenarios", "runs.yaml")
	p, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	if p.Defaults.MaxPending != 20*time.Second || p.Defaults.RunTimeout != 30*time.Second {
		t.Errorf("Defaults: max_pending %v, run_timeout %v, want 20s, 30s", p.Defaults.MaxPending, p.Defaults.RunTimeout)
	}
	photo, table, weather := p.Tools["take_photo"], p.Tools["book_table"], p.Tools["get_weather"]
	if photo == nil || table == nil || weather == nil || len(p.Tools) != 3 {
		t.Fatalf("Tools = %v, want take_photo, book_table and get_weather", p.Tools)
	}
	if !photo.SideEffect || !photo.Confirm || photo.ConfirmTool != "confirm_action" || photo.Describe != "the photo" {
		t.Errorf("take_photo = %+v", photo)
	}
	wantSteps := []arbiter.Step{
		{Arg: "party_size", Ask: "How many people is the table for?"},
		{Arg: "name", Ask: "And what name should the booking be under?", WithPrevious: true},
	}
	if !table.SideEffect || !table.Confirm || table.Describe != "the table for {time}" ||
		!reflect.DeepEqual(table.Key, []arbiter.KeyArg{{Arg: "time", As: arbiter.KeyDatetime}}) ||
		!reflect.DeepEqual(table.Steps, wantSteps) {
		t.Errorf("book_table = %+v", table)
	}
	if weather.SideEffect || weather.Confirm || len(weather.Steps) != 0 {
		t.Errorf("get_weather = %+v", weather)
	}
}

// TestParseRunErrors breaks the confirm-then-act fields of a valid policy. Its lines:
//
//	1 defaults:
//	2   run_timeout: 30s
//	3 tools:
//	4   - name: book_table
//	5     side_effect: true
//	6     confirm: true
//	7     confirm_tool: confirm_booking
//	8     max_asks: 2
//	9     steps:
//	10      - arg: party_size
//	11        ask: How many people?
//	12      - arg: name
//	13        ask: Under what name?
//	14        with_previous: true
//	15  - name: get_weather
func TestParseRunErrors(t *testing.T) {
	const base = `defaults:
  run_timeout: 30s
tools:
  - name: book_table
    side_effect: true
    confirm: true
    confirm_tool: confirm_booking
    max_asks: 2
    steps:
      - arg: party_size
        ask: How many people?
      - arg: name
        ask: Under what name?
        with_previous: true
  - name: get_weather
`
	if _, err := Parse([]byte(base), "runs.yaml"); err != nil {
		t.Fatalf("the base policy does not parse: %v", err)
	}
	for _, tc := range []struct {
		name     string
		line     int // the first line of base that repl replaces
		drop     int // how many more lines it replaces
		repl     string
		wantLine int
		want     string
	}{
		{"confirm not a bool", 6, 0, `    confirm: "yes"`, 6, "tools[0].confirm: must be true or false, not a string"},
		{"confirm a number", 6, 0, "    confirm: 1", 6, "tools[0].confirm: must be true or false, not a number"},
		{"confirm_tool not a string", 7, 0, "    confirm_tool: [a, b]", 7, "tools[0].confirm_tool: must be a string, not a list"},
		{"confirm_tool empty", 7, 0, `    confirm_tool: ""`, 7, "tools[0].confirm_tool: empty (leave the field out for the default, confirm_action)"},
		{"confirm_tool invalid name (from Validate)", 7, 0, "    confirm_tool: confirm booking", 7,
			`tools[0].confirm_tool: "confirm booking" must be 1-128 characters`},
		{"confirm_tool is another tool", 7, 0, "    confirm_tool: get_weather", 7,
			`tools[0].confirm_tool: "get_weather" is the tool on line 15; a confirmation tool must not be a tool of its own`},
		{"confirm_tool is a later tool's name", 15, 0, "  - name: confirm_booking", 7,
			`tools[0].confirm_tool: "confirm_booking" is the tool on line 15`},
		{"confirm_tool is the tool itself (from Validate)", 7, 0, "    confirm_tool: book_table", 7,
			`tools[0].confirm_tool: "book_table" is the tool on line 4; a confirmation tool must not be a tool of its own`},
		{"default confirm_tool is a tool", 7, 0, "", 4,
			`tools[0].confirm_tool: left out, it is "confirm_action", which is the tool on line 14`},
		{"confirm_tool without a run (from Validate)", 15, 0, "  - name: get_weather\n    confirm: false\n    confirm_tool: confirm_weather", 17,
			"tools[1].confirm_tool: set, but the tool has neither confirm nor steps"},
		{"max_asks zero", 8, 0, "    max_asks: 0", 8, "tools[0].max_asks: 0 is not supported: a question is asked at least once"},
		{"max_asks negative", 8, 0, "    max_asks: -1", 8, "tools[0].max_asks: -1 is negative: give 1 or more (leave the field out for the default, 2)"},
		{"max_asks a string", 8, 0, `    max_asks: "2"`, 8, "tools[0].max_asks: must be a whole number such as 2, not a string"},
		{"max_asks a float", 8, 0, "    max_asks: 2.5", 8, "tools[0].max_asks: 2.5 is not a whole number"},
		{"max_asks huge", 8, 0, "    max_asks: 9999999999", 8, "tools[0].max_asks: 9999999999 is too large"},
		{"steps a number", 9, 5, "    steps: 3", 9, "tools[0].steps: must be a list, not a number"},
		{"steps a mapping", 9, 5, "    steps: {arg: x, ask: y}", 9, "tools[0].steps: must be a list, not a mapping"},
		{"step a string", 10, 0, "      - party_size\n      - arg: size", 10, "tools[0].steps[0]: must be a mapping, not a string"},
		{"step null", 10, 0, "      -\n      - arg: size", 10, "tools[0].steps[0]: must be a mapping with an arg and an ask, not null"},
		{"step with a misspelled key", 10, 0, "      - question: x", 10, "tools[0].steps[0].question: unknown field"},
		{"step missing arg", 12, 1, "      - ask: Under what name?", 12, "tools[0].steps[1].arg: required"},
		{"step empty arg", 12, 0, `      - arg: ""`, 12, "tools[0].steps[1].arg: required"},
		{"step missing ask", 11, 0, "", 10, "tools[0].steps[0].ask: required"},
		{"step blank ask", 13, 0, `        ask: "  "`, 13, "tools[0].steps[1].ask: required"},
		{"step unknown key", 14, 0, "        with_previous: true\n        optional: true", 15, "tools[0].steps[1].optional: unknown field"},
		{"step arg not a string", 12, 0, "      - arg: 7", 12, "tools[0].steps[1].arg: must be a string, not a number"},
		{"step ask not a string", 13, 0, "        ask: [a]", 13, "tools[0].steps[1].ask: must be a string, not a list"},
		{"with_previous not a bool", 14, 0, "        with_previous: yes", 14, "tools[0].steps[1].with_previous: must be true or false, not a string"},
		{"duplicate step arg", 12, 0, "      - arg: party_size", 12, `tools[0].steps[1].arg: "party_size" is asked twice, first on line 10`},
		{"first step with_previous (from Validate)", 11, 0, "        ask: How many people?\n        with_previous: true", 12,
			"tools[0].steps[0].with_previous: the first step has no step before it"},
		{"reserved step arg (from Validate)", 12, 0, "      - arg: run_id", 12,
			`tools[0].steps[1].arg: "run_id" is reserved by the confirmation tool`},
		{"run_timeout without a unit", 2, 0, "  run_timeout: 30", 2, "defaults.run_timeout: 30 has no unit"},
		{"run_timeout negative", 2, 0, "  run_timeout: -5s", 2, `defaults.run_timeout: "-5s" is negative`},
		{"run_timeout zero", 2, 0, "  run_timeout: 0s", 2, `defaults.run_timeout: "0s" is zero`},
		{"run_timeout not a duration", 2, 0, "  run_timeout: [30s]", 2, "defaults.run_timeout: must be a duration"},
		{"tool run_timeout negative", 8, 0, "    run_timeout: -1m", 8, `tools[0].run_timeout: "-1m" is negative`},
		{"tool run_timeout bad", 8, 0, "    run_timeout: soon", 8, `tools[0].run_timeout: "soon" is not a duration`},
		{"confirm in defaults", 2, 0, "  confirm: true", 2, "defaults.confirm: unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := strings.Split(base, "\n")
			var out []string
			out = append(out, lines[:tc.line-1]...)
			if tc.repl != "" {
				out = append(out, strings.Split(tc.repl, "\n")...)
			}
			out = append(out, lines[tc.line+tc.drop:]...)
			src := strings.Join(out, "\n")
			if tc.name == "default confirm_tool is a tool" {
				src = strings.Replace(src, "  - name: get_weather", "  - name: confirm_action", 1)
			}
			p, err := Parse([]byte(src), "runs.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded (%+v), want an error; input:\n%s", p, src)
			}
			if k := arbiter.KindOf(err); k != arbiter.Invalid {
				t.Errorf("kind = %v, want invalid (error %q)", k, err)
			}
			want := fmt.Sprintf("runs.yaml:%d: %s", tc.wantLine, tc.want)
			if msg := arbiter.MessageOf(err); !strings.HasPrefix(msg, want) {
				t.Errorf("message %q does not start with %q; input:\n%s", msg, want, src)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.yaml")
	_, err := Load(path)
	if err == nil {
		t.Fatal("Load of a missing file succeeded")
	}
	if k := arbiter.KindOf(err); k != arbiter.Invalid {
		t.Errorf("kind = %v, want invalid", k)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %q does not wrap fs.ErrNotExist", err)
	}
	if !strings.Contains(arbiter.MessageOf(err), path) {
		t.Errorf("message %q does not name %s", arbiter.MessageOf(err), path)
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(path, []byte("defaults:\n  grace: 1.5s\n  grace_period: 2s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if want := path + ":3: defaults.grace_period: unknown field"; arbiter.MessageOf(err) != want {
		t.Errorf("message = %q, want %q", arbiter.MessageOf(err), want)
	}
}

func TestParsePhrases(t *testing.T) {
	p, err := Parse([]byte(`amend_phrases: ["make it", "instead"]
languages:
  it:
    stop: [fermati, "non farlo"]
    amend: [invece]
    bare: ["no"]
`), "phrases.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !reflect.DeepEqual(p.AmendPhrases, []string{"make it", "instead"}) {
		t.Errorf("AmendPhrases = %q", p.AmendPhrases)
	}
	it := p.Phrases("it-IT")
	// Every language takes the English "stop" (issue 25).
	if !reflect.DeepEqual(it.Stop, []string{"fermati", "non farlo", "stop"}) || !reflect.DeepEqual(it.Amend, []string{"invece"}) {
		t.Errorf("languages.it = %+v", it)
	}
	if !reflect.DeepEqual(p.Languages["it"].Stop, []string{"fermati", "non farlo"}) {
		t.Errorf("languages.it.stop = %q: Phrases must not change the policy's list", p.Languages["it"].Stop)
	}
	for _, said := range []string{"Fermati!", "Stop!"} {
		if got, _ := speech.Classify(said, it); got != speech.IntentStop {
			t.Errorf("Classify(%q) with the file's Italian phrases: %s", said, got)
		}
	}
	if !reflect.DeepEqual(it.Bare, []string{"no"}) {
		t.Errorf("languages.it.bare = %q", it.Bare)
	}
	if got, _ := speech.Classify("No!", it); got != speech.IntentStop {
		t.Errorf("Classify(No!) with the file's Italian bare words: %s", got)
	}
	if got, _ := speech.Classify("No problema", it); got != speech.IntentOther {
		t.Errorf("Classify(No problema) with the file's Italian bare words: %s", got)
	}
	for _, tc := range []struct{ in, want string }{
		{"languages:\n  Spanish:\n    stop: [para]\n", "x.yaml:2: languages.Spanish: \"Spanish\" is not a primary language subtag"},
		{"languages:\n  es:\n    stopp: [para]\n", "x.yaml:3: languages.es.stopp: unknown field"},
		{"amend_phrases: [\"...\"]\n", "x.yaml:1: amend_phrases[0]: \"...\" has no words"},
		{"languages:\n  es:\n    bare: [\"¡!\"]\n", "x.yaml:3: languages.es.bare[0]"},
		{"languages:\n  es:\n    stop: para\n", "x.yaml:3: languages.es.stop"},
	} {
		_, err := Parse([]byte(tc.in), "x.yaml")
		if err == nil || !strings.HasPrefix(arbiter.MessageOf(err), tc.want) {
			t.Errorf("Parse(%q): %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestParseIssue13Fields: max_hold (defaults and per tool), a key argument marked
// optional, and dedupe_until_user_speaks: false.
func TestParseIssue13Fields(t *testing.T) {
	p, err := Parse([]byte(`
defaults:
  max_hold: 4s
tools:
  - name: send_sms
    side_effect: true
    key:
      - {arg: to}
      - {arg: note, optional: true}
    dedupe_until_user_speaks: false
    max_hold: 2s
`), "issue13.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tool := p.Tools["send_sms"]
	if p.Defaults.MaxHold != 4*time.Second || tool.Timings.MaxHold != 2*time.Second {
		t.Errorf("max_hold: defaults %v, tool %v, want 4s and 2s", p.Defaults.MaxHold, tool.Timings.MaxHold)
	}
	if len(tool.Key) != 2 || tool.Key[0].Optional || !tool.Key[1].Optional {
		t.Errorf("key: %+v, want to required and note optional", tool.Key)
	}
	if !tool.DedupeWindowOnly {
		t.Errorf("dedupe_until_user_speaks: false did not set DedupeWindowOnly")
	}
	if _, err := Parse([]byte("defaults:\n  max_hold: 0s\n"), "zero.yaml"); err == nil {
		t.Errorf("max_hold: 0s accepted; a zero duration is refused (leave it out for the default)")
	}
}

// TestParseClaims: a tool's claims list is its claim verbs; left out they are derived
// (nil), an empty list is none; the rules of Validate apply, with the file's lines.
func TestParseClaims(t *testing.T) {
	const base = `tools:
  - name: send_sms
    side_effect: true
    claims: [sent, delivered]
  - name: cancel_order
    side_effect: true
  - name: end_call
    side_effect: true
    claims: []
  - name: get_weather
`
	p, err := Parse([]byte(base), "claims.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := p.Tools["send_sms"].Claims; !reflect.DeepEqual(got, []string{"sent", "delivered"}) {
		t.Errorf("send_sms claims %q", got)
	}
	if got := p.Tools["cancel_order"].Claims; got != nil {
		t.Errorf("cancel_order claims %q, want nil (derived)", got)
	}
	if got := p.Tools["cancel_order"].Vocabulary().Done; !reflect.DeepEqual(got, []string{"cancelled", "canceled", "called off"}) {
		t.Errorf("cancel_order's derived verbs %q", got)
	}
	if got := p.Tools["end_call"].Claims; got == nil || len(got) != 0 {
		t.Errorf("end_call claims %#v, want an empty list", got)
	}
	for _, tc := range []struct {
		name     string
		line     int // the line of base that repl replaces
		repl     string
		wantLine int
		want     string
	}{
		{"not a list", 4, "    claims: sent", 4, "tools[0].claims: must be a list, not a string"},
		{"a number", 4, "    claims: [sent, 3]", 4, "tools[0].claims[1]: must be a string, not a number"},
		{"null item", 4, "    claims: [sent, null]", 4, "tools[0].claims[1]: must be a string, not null"},
		{"no words (from Validate)", 4, `    claims: [sent, " "]`, 4, `tools[0].claims[1]: " " has no words`},
		{"a function word (from Validate)", 4, "    claims: [sent, is]", 4, `tools[0].claims[1]: "is" is a word the claim reader reads as something else`},
		{"listed twice (from Validate)", 4, "    claims: [sent, Sent]", 4, `tools[0].claims[1]: "Sent" is listed twice, first on line 4`},
		{"read-only tool (from Validate)", 10, "  - name: get_weather\n    claims: [fetched]", 11, "tools[3].claims: set, but the tool is read-only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := strings.Split(base, "\n")
			src := strings.Join(append(append(append([]string{}, lines[:tc.line-1]...), tc.repl), lines[tc.line:]...), "\n")
			_, err := Parse([]byte(src), "claims.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded, want an error; input:\n%s", src)
			}
			if k := arbiter.KindOf(err); k != arbiter.Invalid {
				t.Errorf("kind = %v, want invalid (error %q)", k, err)
			}
			want := fmt.Sprintf("claims.yaml:%d: %s", tc.wantLine, tc.want)
			if msg := arbiter.MessageOf(err); !strings.HasPrefix(msg, want) {
				t.Errorf("message %q does not start with %q; input:\n%s", msg, want, src)
			}
		})
	}
}
