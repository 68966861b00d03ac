// Package replay plays recorded realtime voice sessions (the trace format of
// docs/trace-format.md) through the arbiter's gRPC API, acting as the agent and
// as a fake two-phase backend, and prints what the arbiter decided. In-process it runs
// on a virtual clock, so a replay is exact and takes milliseconds; against remote
// servers it runs in real time.
package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
)

// TraceEvent is one line of a trace. Fields not used by an event are zero.
type TraceEvent struct {
	// Line is the 1-based line number in the trace file.
	Line int `json:"-"`
	// TMs is milliseconds since session start.
	TMs   int64  `json:"t_ms"`
	Event string `json:"event"`
	// session_start
	PrepareMS    *int64                     `json:"prepare_ms,omitempty"`
	CommitResult map[string]any             `json:"commit_result,omitempty"`
	Backend      map[string]json.RawMessage `json:"backend,omitempty"`
	// ResponseScheduling, when true, tells the arbiter (ConfigureSession) that the
	// provider honours function-response scheduling, so interim responses and notes
	// riding on function responses are used.
	ResponseScheduling *bool `json:"response_scheduling,omitempty"`
	// Language, when set, is the session's language (BCP 47: "es", "fr-CA"), which
	// the replay gives the arbiter with ConfigureSession: intent phrases and `as:
	// datetime` keys are read in it.
	Language string `json:"language,omitempty"`
	// TimeZone, when set, is the session's IANA time zone ("Europe/Paris"), which the
	// replay gives the arbiter with ConfigureSession: `as: datetime` keys read relative
	// dates and times said without an offset in it.
	TimeZone string `json:"time_zone,omitempty"`
	// Policy names the tool-policy file a scenario runs under, relative to the trace
	// (a test extension: `arbiter replay` takes the policy from --tools).
	Policy string `json:"policy,omitempty"`
	// Tools is the tool policy the session was recorded under, in the tool-policy file
	// format as a JSON object (an exported session's: the server's policy for the
	// tools the session called); PolicyDigest is the digest (arbiter.Policy.Digest) of
	// the server's whole policy then. `arbiter replay --diff` replays under Tools.
	Tools        json.RawMessage `json:"tools,omitempty"`
	PolicyDigest string          `json:"policy_digest,omitempty"`
	// CreatedAt is when t_ms 0 was (RFC 3339): an exported session's start. A local
	// replay's virtual clock starts there instead of Epoch, so dates resolve as they
	// did ("tomorrow 3pm").
	CreatedAt string `json:"created_at,omitempty"`
	// transcript, model_transcript
	Text  string `json:"text,omitempty"`
	Final *bool  `json:"final,omitempty"`
	// Utterance is the model server's id of the user utterance a speech_start,
	// speech_end or transcript belongs to, when it gives one (OpenAI Realtime item_id).
	Utterance string `json:"utterance,omitempty"`
	// Reading is the agent's own reading of a final user transcript (its NLU or LLM),
	// which the replay sends with it (ReportTranscriptRequest.reading).
	Reading *Reading `json:"reading,omitempty"`
	// tool_call
	CallID     string         `json:"call_id,omitempty"`
	Tool       string         `json:"tool,omitempty"`
	Args       map[string]any `json:"args,omitempty"`
	Behavior   string         `json:"behavior,omitempty"`
	ToolChoice string         `json:"tool_choice,omitempty"`
	// RawArgs is the argument text of a tool_call the agent could not parse (the
	// call is rejected: RegisterCallRequest.raw_args); args is then ignored.
	RawArgs string `json:"raw_args,omitempty"`
	// BusinessKey is a tool_call's explicit business key (RegisterCallRequest
	// .business_key).
	BusinessKey string `json:"business_key,omitempty"`
	// A tool_call's Backend (the same key as session_start's, one tool's fields) is
	// the fake backend's behaviour for the job the call opens, over its tool's.
	// tool_call_cancellation
	CallIDs []string `json:"call_ids,omitempty"`
	// ref_decision (another implementation's output)
	Decision string `json:"decision,omitempty"`
	// Reason is a ref_decision's reason, or why a tool_call_cancellation's ids died:
	// withdrawn (the default) or provider_timeout.
	Reason string `json:"reason,omitempty"`
	// connection
	ID string `json:"id,omitempty"`
	// ref_call, ref_response, ref_skip, ref_note, ref_run (an exported session's own
	// outcomes): the disposition, the job, the run and its state, the payload, the
	// note's delivery.
	Disposition string         `json:"disposition,omitempty"`
	JobID       string         `json:"job_id,omitempty"`
	RunID       string         `json:"run_id,omitempty"`
	State       string         `json:"state,omitempty"`
	Payload     map[string]any `json:"payload,omitempty"`
	Deliver     string         `json:"deliver,omitempty"`
}

// Reading is a transcript line's `reading`: the agent's own reading of the utterance.
type Reading struct {
	Intent     string  `json:"intent"`
	Confidence float64 `json:"confidence"`
	Source     string  `json:"source,omitempty"`
}

// known are the events the format names.
var known = map[string]bool{
	"session_start": true, "speech_start": true, "speech_end": true, "transcript": true,
	"interrupted": true, "tool_call": true, "tool_call_cancellation": true,
	"model_audio_start": true, "model_transcript": true, "generation_complete": true,
	"turn_complete": true, "end": true, "connection": true,
}

func isTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// ReadTraceFile opens the trace file at path and parses it with ParseTrace (named by
// its path). Errors: the file's, or ParseTrace's.
func ReadTraceFile(path string, warn io.Writer) ([]TraceEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTrace(f, path, warn)
}

// ParseTrace reads a trace. A malformed line (not a JSON object, no integer t_ms, no
// event, t_ms decreasing, a tool_call without tool, a connection without id) is an
// error naming its line number, and so is any line but a `ref_*` one after `end`: the
// session is closed there, and what follows would replay as nothing (issue 25: such a
// trace replayed silently, exit 0). Events the format does not name are skipped with a
// warning on warn; `ref_*` lines are kept (tests compare against them) but never
// played.
func ParseTrace(r io.Reader, name string, warn io.Writer) ([]TraceEvent, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var out []TraceEvent
	var last int64
	end := 0 // the line of `end`, once read
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			return nil, fmt.Errorf("%s:%d: not a JSON object: %v", name, n, err)
		}
		var ev TraceEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		ev.Line = n
		if _, ok := raw["t_ms"]; !ok {
			return nil, fmt.Errorf("%s:%d: t_ms: required", name, n)
		}
		if ev.Event == "" {
			return nil, fmt.Errorf("%s:%d: event: required", name, n)
		}
		if ev.TMs < 0 || ev.TMs < last {
			return nil, fmt.Errorf("%s:%d: t_ms: %d is before the previous line's %d (times must not decrease)", name, n, ev.TMs, last)
		}
		last = ev.TMs
		switch {
		case strings.HasPrefix(ev.Event, "ref_"):
		case end > 0:
			return nil, fmt.Errorf("%s:%d: %s after end (line %d): the session closes at end, so nothing after it can be played; cut the trace there, or move end to the last line", name, n, ev.Event, end)
		case !known[ev.Event]:
			fmt.Fprintf(warn, "%s:%d: warning: unknown event %q skipped\n", name, n, ev.Event)
			continue
		case ev.Event == "tool_call" && ev.Tool == "":
			return nil, fmt.Errorf("%s:%d: tool: required for tool_call", name, n)
		case ev.Event == "tool_call" && ev.Behavior != "" && ev.Behavior != "BLOCKING" && ev.Behavior != "NON_BLOCKING":
			return nil, fmt.Errorf("%s:%d: behavior: %q is not BLOCKING or NON_BLOCKING", name, n, ev.Behavior)
		case ev.Event == "tool_call" && ev.ToolChoice != "" && ev.ToolChoice != "auto" && ev.ToolChoice != "none":
			return nil, fmt.Errorf("%s:%d: tool_choice: %q is not auto or none", name, n, ev.ToolChoice)
		case ev.Event == "session_start" && ev.CreatedAt != "" && !isTime(ev.CreatedAt):
			return nil, fmt.Errorf("%s:%d: created_at: %q is not an RFC 3339 time", name, n, ev.CreatedAt)
		case ev.Event == "session_start" && arbiter.CheckTimeZone("time_zone", ev.TimeZone) != nil:
			return nil, fmt.Errorf("%s:%d: %v", name, n, arbiter.CheckTimeZone("time_zone", ev.TimeZone))
		case ev.Reading != nil && (ev.Event != "transcript" || (ev.Final != nil && !*ev.Final)):
			return nil, fmt.Errorf("%s:%d: reading: only a final transcript carries the agent's reading", name, n)
		case ev.Event == "connection" && ev.ID == "":
			return nil, fmt.Errorf("%s:%d: id: required for connection", name, n)
		case ev.Event == "tool_call_cancellation" && len(ev.CallIDs) == 0:
			return nil, fmt.Errorf("%s:%d: call_ids: required for tool_call_cancellation", name, n)
		case ev.Event == "tool_call_cancellation" && ev.Reason != "" && ev.Reason != "withdrawn" && ev.Reason != "provider_timeout":
			return nil, fmt.Errorf("%s:%d: reason: %q is not withdrawn or provider_timeout", name, n, ev.Reason)
		}
		if ev.Event == "end" {
			end = n
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}
