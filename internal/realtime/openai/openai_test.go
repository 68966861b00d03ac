package openai

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/internal/realtime"
)

func TestParseServer(t *testing.T) {
	ev, err := ParseServer([]byte(`{"type":"response.output_audio.delta","item_id":"i1","delta":"AAAA"}`))
	if err != nil || !ev.Audio || ev.ItemID != "i1" {
		t.Errorf("audio %+v %v", ev, err)
	}
	ev, _ = ParseServer([]byte(`{"type":"response.done","response":{"id":"r1","status":"cancelled","output":[{"id":"i2","type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]}}`))
	if ev.Response == nil || ev.Response.Status != "cancelled" || len(ev.Response.Output) != 1 || ev.Response.Output[0].CallID != "c1" {
		t.Errorf("response.done %+v", ev.Response)
	}
	ev, _ = ParseServer([]byte(`{"type":"conversation.item.added","previous_item_id":null,"item":{"id":"i3","type":"message","role":"user"}}`))
	if !ev.HasPreviousItemID || ev.PreviousItemID != "" || ev.Item.ID != "i3" {
		t.Errorf("item added %+v", ev)
	}
	ev, _ = ParseServer([]byte(`{"type":"conversation.item.input_audio_transcription.delta","item_id":"i4","delta":"sto"}`))
	if ev.Text != "sto" {
		t.Errorf("delta %+v", ev)
	}
	ev, _ = ParseServer([]byte(`{"type":"session.updated","session":{"id":"s","tool_choice":"none"}}`))
	if ev.ToolChoice != "none" || ev.SessionID != "s" {
		t.Errorf("session %+v", ev)
	}
	if _, err := ParseServer([]byte(`[]`)); err == nil {
		t.Error("an array parsed")
	}
}

func TestParseClient(t *testing.T) {
	ev, err := ParseClient([]byte(`{"type":"input_audio_buffer.append","audio":"AAAA"}`))
	if err != nil || ev.Type != InputAudioBufferAppend || ev.Obj != nil {
		t.Errorf("append %+v %v", ev, err)
	}
	ev, _ = ParseClient([]byte(`{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"say \"input_audio_buffer.append\""}]}}`))
	if ev.Type != ItemCreate || ev.Item.Type != "message" {
		t.Errorf("text naming the append event is not one: %+v", ev)
	}
	ev, _ = ParseClient([]byte(`{"type":"conversation.item.create","item":{"id":"x","type":"function_call_output","call_id":"c1","output":"hi"}}`))
	if ev.Item.CallID != "c1" || ev.Item.Output != "hi" || ev.Item.ID != "x" {
		t.Errorf("output %+v", ev.Item)
	}
	ev, _ = ParseClient([]byte(`{"type":"response.create","response":{"tool_choice":"none"}}`))
	if ev.ToolChoice != "none" {
		t.Errorf("%+v", ev)
	}
}

func TestBuild(t *testing.T) {
	if got := ReadOutput(`{"a":1}`); got["a"] != 1.0 {
		t.Errorf("%v", got)
	}
	if got := ReadOutput("plain"); got["output"] != "plain" {
		t.Errorf("%v", got)
	}
	if args, raw := ReadArguments("{bad"); args != nil || raw != "{bad" {
		t.Errorf("%v %q", args, raw)
	}
	if args, raw := ReadArguments(""); args == nil || raw != "" {
		t.Errorf("%v %q", args, raw)
	}
	b := string(FunctionCallOutput("e1", "arb_r_1", "c1", map[string]any{"status": "ok"}))
	if !strings.Contains(b, `"output":"{\"status\":\"ok\"}"`) || !strings.Contains(b, `"event_id":"e1"`) {
		t.Errorf("%s", b)
	}
	if e := Echo(true, "e", nil, Obj{"id": "x"}); len(e) != 1 || !strings.Contains(string(e[0]), ItemCreated) {
		t.Errorf("beta echo %s", e)
	}
	if e := Echo(false, "e", "p", Obj{"id": "x"}); len(e) != 2 || !strings.Contains(string(e[1]), ItemDone) {
		t.Errorf("GA echo %s", e)
	}
}

// TestClientReadsWhatTheFakeActsOn: what the fake provider and its checker read of a
// client's events through this package: a message item's texts, session.update's
// session, response.create's metadata, the item a truncate names, and a session's
// transcription and declared tools.
func TestClientReadsWhatTheFakeActsOn(t *testing.T) {
	ev, _ := ParseClient([]byte(`{"type":"conversation.item.create","item":{"type":"message","role":"system","content":[{"type":"input_text","text":"a"},{"type":"input_audio","audio":"AAAA"},{"type":"input_text","text":"b"}]}}`))
	if ev.Item == nil || ev.Item.Role != "system" || strings.Join(ev.Item.Texts, "|") != "a|b" {
		t.Errorf("message texts %+v", ev.Item)
	}
	ev, _ = ParseClient([]byte(`{"type":"session.update","session":{"tool_choice":"required","tools":[{"type":"function","name":"f"},{"type":"mcp"},{"type":"function","name":"g"}]}}`))
	if ev.ToolChoice != "required" || strings.Join(ToolNames(ev.Session), ",") != "f,g" {
		t.Errorf("session.update %+v", ev)
	}
	ev, _ = ParseClient([]byte(`{"type":"response.create","response":{"metadata":{"k":"v"}}}`))
	if md, _ := ev.Metadata.(Obj); md["k"] != "v" {
		t.Errorf("response.create metadata %+v", ev.Metadata)
	}
	if ev, _ = ParseClient([]byte(`{"type":"response.create"}`)); ev.Metadata != nil || ev.ToolChoice != "" {
		t.Errorf("bare response.create %+v", ev)
	}
	if ev, _ = ParseClient([]byte(`{"type":"conversation.item.truncate","item_id":"i1","content_index":0,"audio_end_ms":300}`)); ev.ItemID != "i1" {
		t.Errorf("truncate %+v", ev)
	}
	for _, c := range []struct {
		session string
		beta    bool
		want    bool
	}{
		{`{"audio":{"input":{"transcription":{"model":"whisper-1"}}}}`, false, true},
		{`{"audio":{"input":{"transcription":null}}}`, false, false},
		{`{"input_audio_transcription":{"model":"whisper-1"}}`, true, true},
		{`{"input_audio_transcription":null}`, true, false},
		{`{"input_audio_transcription":{"model":"whisper-1"}}`, false, false}, // a beta name on a GA session
	} {
		m, _ := realtime.DecodeObject([]byte(c.session))
		if got := InputTranscription(m, c.beta); got != c.want {
			t.Errorf("%s (beta %v): transcription %v", c.session, c.beta, got)
		}
	}
}

// TestResponseReason: response.done's status_details.reason, which decides whether a
// cancelled response was cut off by barge-in (BargeIn).
func TestResponseReason(t *testing.T) {
	for msg, want := range map[string]string{
		`{"type":"response.done","response":{"status":"cancelled","status_details":{"type":"cancelled","reason":"turn_detected"}}}`: "turn_detected",
		`{"type":"response.done","response":{"status":"completed","status_details":null}}`:                                          "",
		`{"type":"response.done","response":{"status":"cancelled","status_details":{"reason":7}}}`:                                  "",
	} {
		ev, err := ParseServer([]byte(msg))
		if err != nil || ev.Response == nil || ev.Response.Reason != want {
			t.Errorf("%s: %+v %v, want reason %q", msg, ev.Response, err, want)
		}
	}
}

// TestBargeIn: the one rule for a cancelled OpenAI response.
func TestBargeIn(t *testing.T) {
	for _, tc := range []struct {
		status, reason string
		speech, want   bool
	}{
		{"cancelled", "turn_detected", false, true},
		{"cancelled", "client_cancelled", true, true},
		{"cancelled", "client_cancelled", false, false},
		{"cancelled", "", true, false},
		{"completed", "", true, false},
		{"incomplete", "max_output_tokens", true, false},
		{"failed", "", true, false},
	} {
		if got := BargeIn(tc.status, tc.reason, tc.speech); got != tc.want {
			t.Errorf("BargeIn(%q, %q, speech %v) = %v, want %v", tc.status, tc.reason, tc.speech, got, tc.want)
		}
	}
}

// FunctionCalls: every server event that names a model's function call says which
// (item, call id), and its name and final arguments where it carries them.
func TestFunctionCalls(t *testing.T) {
	for _, tc := range []struct {
		ev   string
		want []FunctionCall
	}{
		{`{"type":"response.output_item.added","item":{"id":"i1","type":"function_call","status":"in_progress","call_id":"c1","name":"f","arguments":""}}`,
			[]FunctionCall{{ItemID: "i1", CallID: "c1", Model: true, Name: "f"}}},
		{`{"type":"conversation.item.added","item":{"id":"i1","type":"function_call","call_id":"c1","name":"f"}}`,
			[]FunctionCall{{ItemID: "i1", CallID: "c1", Name: "f"}}},
		{`{"type":"conversation.item.created","item":{"id":"i1","type":"function_call","status":"completed","call_id":"c1","name":"f","arguments":"{}"}}`,
			[]FunctionCall{{ItemID: "i1", CallID: "c1", Name: "f", Arguments: "{}", Complete: true}}},
		{`{"type":"response.function_call_arguments.delta","item_id":"i1","call_id":"c1","delta":"{"}`,
			[]FunctionCall{{ItemID: "i1", CallID: "c1", Model: true}}},
		{`{"type":"response.function_call_arguments.done","item_id":"i1","call_id":"c1","arguments":"{\"a\":1}"}`,
			[]FunctionCall{{ItemID: "i1", CallID: "c1", Model: true, Arguments: `{"a":1}`, Complete: true}}},
		{`{"type":"response.output_item.done","item":{"id":"i1","type":"function_call","status":"completed","call_id":"c1","name":"f","arguments":"{}"}}`,
			[]FunctionCall{{ItemID: "i1", CallID: "c1", Model: true, Name: "f", Arguments: "{}", Complete: true}}},
		{`{"type":"conversation.item.done","item":{"id":"i1","type":"function_call","call_id":"c1","name":"f","arguments":"{}"}}`,
			[]FunctionCall{{ItemID: "i1", CallID: "c1", Name: "f", Arguments: "{}", Complete: true}}},
		{`{"type":"response.done","response":{"id":"r1","status":"completed","output":[{"id":"m1","type":"message"},` +
			`{"id":"i1","type":"function_call","status":"completed","call_id":"c1","name":"f","arguments":"{}"},` +
			`{"id":"i2","type":"function_call","status":"in_progress","call_id":"c2","name":"g"},{"id":"i3","type":"function_call"}]}}`,
			[]FunctionCall{{ItemID: "i1", CallID: "c1", Model: true, Name: "f", Arguments: "{}", Complete: true}, {ItemID: "i2", CallID: "c2", Model: true, Name: "g"}}},
		{`{"type":"response.output_item.added","item":{"id":"m1","type":"message"}}`, nil},
		{`{"type":"response.function_call_arguments.done","item_id":"i1","arguments":"{}"}`, nil}, // no call id
		{`{"type":"conversation.item.retrieved","item":{"id":"i1","type":"function_call","call_id":"c1","name":"f"}}`, nil},
		{`{"type":"response.done","response":null}`, nil},
	} {
		ev, err := ParseServer([]byte(tc.ev))
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.FunctionCalls(); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.ev, got, tc.want)
		}
	}
}
