package fakeprovider

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/internal/realtime"
	openaiwire "github.com/voicearbiter/arbiter/internal/realtime/openai"
	"github.com/voicearbiter/arbiter/replay"
)

func mustTrace(t *testing.T, text string) Trace {
	t.Helper()
	events, err := replay.ParseTrace(strings.NewReader(text), "t", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return Trace{Name: "t", Events: events}
}

// viewLines renders events as "t_ms event [field=value...]" lines for comparison.
func viewLines(events []replay.TraceEvent) string {
	var out []string
	for _, e := range events {
		s := fmt.Sprintf("%d %s", e.TMs, e.Event)
		if e.Behavior != "" {
			s += " behavior=" + e.Behavior
		}
		if e.Utterance != "" {
			s += " utterance=" + e.Utterance
		}
		if e.Reason != "" {
			s += " reason=" + e.Reason
		}
		if e.ResponseScheduling != nil {
			s += fmt.Sprintf(" response_scheduling=%v", *e.ResponseScheduling)
		}
		if e.ID != "" {
			s += " id=" + e.ID
		}
		out = append(out, s)
	}
	return strings.Join(out, "\n")
}

// rec builds a session record: each line is kind, conn, t_ms, trace line played (0:
// none) and the message (JSON, or "" for none).
func rec(proto string, lines ...string) *sessionRecord {
	s := &sessionRecord{num: 1, trace: "t", proto: proto}
	for _, l := range lines {
		var kind, by string
		var conn, line int
		var tms int64
		var msg string
		parts := strings.SplitN(l, " ", 5)
		kind = parts[0]
		fmt.Sscan(parts[1], &conn)
		fmt.Sscan(parts[2], &tms)
		fmt.Sscan(parts[3], &line)
		if len(parts) > 4 {
			msg = parts[4]
		}
		rl := RecordLine{TMs: tms, Session: 1, Conn: conn, Trace: "t", Proto: proto, Kind: kind, Line: line}
		if kind == KindClose {
			by = msg
			msg = ""
			rl.By = by
		}
		if msg != "" {
			rl.Msg = json.RawMessage(msg)
		}
		s.lines = append(s.lines, rl)
	}
	return s
}

const viewTrace = `{"t_ms": 0, "event": "session_start", "response_scheduling": true}
{"t_ms": 100, "event": "speech_start", "utterance": "u1"}
{"t_ms": 200, "event": "transcript", "text": "End the call.", "utterance": "u1"}
{"t_ms": 200, "event": "speech_end", "utterance": "u1"}
{"t_ms": 300, "event": "tool_call", "call_id": "c1", "tool": "end_call", "args": {}, "behavior": "NON_BLOCKING"}
{"t_ms": 400, "event": "turn_complete"}
{"t_ms": 500, "event": "interrupted"}
{"t_ms": 600, "event": "tool_call_cancellation", "call_ids": ["c1"], "reason": "provider_timeout"}
{"t_ms": 900, "event": "end"}
`

// TestWireViewOpenAI: the OpenAI view keeps what the wire carried: an `interrupted`
// with no response in progress (the fake sent nothing for line 7) is gone, a
// response the client cancelled after speech_started is an `interrupted` at its time,
// a reconnect the client made itself is a `connection`; no behavior, no response
// scheduling, no cancellation reason; utterance ids stay.
func TestWireViewOpenAI(t *testing.T) {
	tr := mustTrace(t, viewTrace)
	s := rec(ProtoOpenAI,
		"open 1 0 0",
		"server 1 100 2 "+`{"type":"input_audio_buffer.speech_started","item_id":"item_001"}`,
		"server 1 200 3 "+`{"type":"conversation.item.input_audio_transcription.completed","item_id":"item_001"}`,
		"server 1 200 4 "+`{"type":"input_audio_buffer.speech_stopped","item_id":"item_001"}`,
		"server 1 300 5 "+`{"type":"response.created","response":{"id":"resp_001"}}`,
		"server 1 400 6 "+`{"type":"response.done","response":{"status":"completed"}}`,
		"server 1 600 8 "+`{"type":"conversation.item.deleted","item_id":"item_002"}`,
		"close 1 650 0 client",
		"open 2 650 0",
		"client 2 700 0 "+`{"type":"response.create"}`,
		"server 2 700 0 "+`{"type":"response.created","response":{"id":"resp_002"}}`,
		"server 2 750 0 "+`{"type":"input_audio_buffer.speech_started","item_id":"item_009"}`,
		"client 2 760 0 "+`{"type":"response.cancel"}`,
		"server 2 760 0 "+`{"type":"response.done","response":{"status":"cancelled","status_details":{"type":"cancelled","reason":"client_cancelled"}}}`,
	)
	want := `0 session_start
100 speech_start utterance=u1
200 transcript utterance=u1
200 speech_end utterance=u1
300 tool_call
400 turn_complete
600 tool_call_cancellation
650 connection id=client-reconnect-2
760 interrupted
900 end`
	if got := viewLines(wireView(tr, s)); got != want {
		t.Errorf("OpenAI view:\n%s\nwant\n%s", got, want)
	}
}

// TestWireViewGemini: the Gemini view takes each call's behavior from its function's
// declaration in the setup of its connection (here NON_BLOCKING in the trace,
// declared BLOCKING), strips utterance ids and the cancellation's reason, keeps the
// response scheduling the trace asked for.
func TestWireViewGemini(t *testing.T) {
	tr := mustTrace(t, viewTrace)
	s := rec(ProtoGemini,
		"open 1 0 0",
		"client 1 0 0 "+`{"setup":{"model":"m","tools":[{"functionDeclarations":[{"name":"end_call"}]}]}}`,
		"server 1 100 2 "+`{"voiceActivity":{"type":"ACTIVITY_START"}}`,
		"server 1 200 3 "+`{"serverContent":{"inputTranscription":{"text":"End the call."}}}`,
		"server 1 200 4 "+`{"voiceActivity":{"type":"ACTIVITY_END"}}`,
		"server 1 300 5 "+`{"toolCall":{"functionCalls":[{"id":"c1","name":"end_call","args":{}}]}}`,
		"server 1 400 6 "+`{"serverContent":{"turnComplete":true}}`,
		"server 1 500 7 "+`{"serverContent":{"interrupted":true}}`,
		"server 1 600 8 "+`{"toolCallCancellation":{"ids":["c1"]}}`,
	)
	want := `0 session_start response_scheduling=true
100 speech_start
200 transcript
200 speech_end
300 tool_call behavior=BLOCKING
400 turn_complete
500 interrupted
600 tool_call_cancellation
900 end`
	if got := viewLines(wireView(tr, s)); got != want {
		t.Errorf("Gemini view:\n%s\nwant\n%s", got, want)
	}
}

// TestOpenAIBargeIn: the one rule for a cancelled OpenAI response.
func TestOpenAIBargeIn(t *testing.T) {
	for _, tc := range []struct {
		status, reason string
		speech, want   bool
	}{
		{"cancelled", "turn_detected", false, true},
		{"cancelled", "client_cancelled", true, true},
		{"cancelled", "client_cancelled", false, false},
		{"completed", "", true, false},
		{"incomplete", "max_output_tokens", true, false},
		{"failed", "", true, false},
	} {
		if got := OpenAIBargeIn(tc.status, tc.reason, tc.speech); got != tc.want {
			t.Errorf("OpenAIBargeIn(%q, %q, speech %v) = %v, want %v", tc.status, tc.reason, tc.speech, got, tc.want)
		}
	}
}

// TestRefusal: what a protocol cannot carry.
func TestRefusal(t *testing.T) {
	call := func(line int, extra string) string {
		return fmt.Sprintf(`{"t_ms": %d, "event": "tool_call", "call_id": "c%d", "tool": "book", "args": {}%s}`+"\n", line*100, line, extra)
	}
	cases := []struct {
		name, trace    string
		gemini, openai string
	}{
		{"plain", call(1, `, "behavior": "BLOCKING"`) + call(2, `, "behavior": "BLOCKING"`), "", ""},
		{"raw_args", call(1, `, "raw_args": "{slot: 3pm"`), "line 1: Gemini Live carries a function call's args as a JSON object", ""},
		{"two behaviors", call(1, `, "behavior": "BLOCKING"`) + call(2, `, "behavior": "NON_BLOCKING"`),
			`lines 1 and 2 call "book" BLOCKING and NON_BLOCKING: Gemini Live declares one behavior per function`, ""},
		{"no call id", `{"t_ms": 100, "event": "tool_call", "tool": "book", "args": {}}` + "\n",
			"line 1: a tool_call without call_id", "line 1: a tool_call without call_id"},
	}
	for _, tc := range cases {
		tr := mustTrace(t, tc.trace)
		for proto, want := range map[string]string{ProtoGemini: tc.gemini, ProtoOpenAI: tc.openai} {
			got := Refusal(proto, tr)
			if want == "" && got != "" || want != "" && !strings.HasPrefix(got, want) {
				t.Errorf("%s over %s: %q, want %q", tc.name, proto, got, want)
			}
		}
	}
}

// TestHeldOutputReadAsTheGuardReadsIt: a function_call_output's output is the result
// object only when the whole text is one JSON object (openaiwire.ReadOutput, the
// guard's reading); the checker read the first JSON value of the text, so an output
// with text after its object was a result to the checker and {"output": text} to the
// guard.
func TestHeldOutputReadAsTheGuardReadsIt(t *testing.T) {
	for out, want := range map[string]string{
		`{"status":"committed"}`:            `{"status":"committed"}`,
		`{"status":"committed"} and more`:   `{"output":"{\"status\":\"committed\"} and more"}`,
		`Booked for 3pm.`:                   `{"output":"Booked for 3pm."}`,
		`{"status":"ok","status_note":"x"}`: `{"status":"ok","status_note":"x"}`,
	} {
		items := openaiItems(&openaiwire.Item{Type: openaiwire.FunctionCallOutputType, CallID: "c1", Output: out}, 0, 1)
		if got := string(realtime.Marshal(items[0].payload)); got != want || items[0].callID != "c1" || !items[0].final {
			t.Errorf("output %q: payload %s, want %s", out, got, want)
		}
	}
}
