package fakeprovider

import (
	"fmt"
	"sort"
	"strings"

	openaiwire "github.com/voicearbiter/arbiter/internal/realtime/openai"
	"github.com/voicearbiter/arbiter/replay"
)

// This file is the fake provider's protocol knowledge that the checker shares (a wire
// guard will too): what each protocol can carry of a trace (Refusal), the one rule for
// an OpenAI function call cut off by barge-in (OpenAIBargeIn), and what the agent of a
// played session could see of its trace (wireView: the trace as the wire carried it,
// which the checker replays for its reference). It reads record lines and trace events
// only; the translators (gemini.go, openai.go) write the messages it reads.

// Refusal returns why tr cannot be played over proto (ProtoGemini, ProtoOpenAI), or ""
// when it can. The reasons are the protocol's (a field its messages have no room
// for), never a harness's:
//   - a tool_call without call_id: Gemini Live (FunctionCall.id) and OpenAI Realtime
//     (call_id) always name their calls, and a response is matched to its call by it;
//   - Gemini: a tool_call with raw_args: functionCalls[].args is a JSON object, so
//     arguments an agent could not read never come over Gemini Live;
//   - Gemini: a tool called both BLOCKING and NON_BLOCKING: the behavior belongs to the
//     function's declaration (FunctionDeclaration.behavior, one per setup).
//
// The fake refuses such a session (docs/fake-provider.md: a `refused` record line, close
// 1008 with the reason) and the checker lists it as skipped, with the reason.
func Refusal(proto string, tr Trace) string {
	behaviors := map[string]replay.TraceEvent{}
	for _, ev := range tr.Events {
		if ev.Event != "tool_call" {
			continue
		}
		if ev.CallID == "" {
			return fmt.Sprintf("line %d: a tool_call without call_id: Gemini Live and OpenAI Realtime function calls always carry their id", ev.Line)
		}
		if proto != ProtoGemini {
			continue
		}
		if ev.RawArgs != "" {
			return fmt.Sprintf("line %d: Gemini Live carries a function call's args as a JSON object (functionCalls[].args): unreadable arguments (raw_args) cannot be sent", ev.Line)
		}
		if ev.Behavior == "" {
			continue
		}
		if first, ok := behaviors[ev.Tool]; ok && first.Behavior != ev.Behavior {
			return fmt.Sprintf("lines %d and %d call %q %s and %s: Gemini Live declares one behavior per function (FunctionDeclaration.behavior)",
				first.Line, ev.Line, ev.Tool, first.Behavior, ev.Behavior)
		}
		behaviors[ev.Tool] = ev
	}
	return ""
}

// OpenAIBargeIn is the rule for an OpenAI Realtime response that ends `cancelled`:
// whether it was cut off by barge-in (reported as `interrupted`, as Gemini Live's
// serverContent.interrupted). The rule, and where it comes from, is
// internal/realtime/openai's BargeIn, which the wire guard applies too; the checker
// replays `interrupted` where it says the wire had one, and the adapters
// (clients/node/src/openai.ts, clients/python/arbiter_client/realtime.py) apply it on
// the events they feed.
func OpenAIBargeIn(status, reason string, speechDuring bool) bool {
	return openaiwire.BargeIn(status, reason, speechDuring)
}

// wireFacts is what a session's record says about how its trace went over the wire.
type wireFacts struct {
	proto string
	// played maps each trace line the fake sent something for to the connection it
	// went on (a line that sent nothing, such as an OpenAI `interrupted` with no response
	// in progress or a transcript the client did not ask for, is absent).
	played map[int]int
	// declared: Gemini, each connection's setup, tool name -> behavior.
	declared map[int]map[string]string
	// synthetic are events the wire had that no trace line made: an `interrupted` for
	// each OpenAI response the client cancelled for the user's speech, and a
	// `connection` for each connection that follows one the client closed itself.
	synthetic []replay.TraceEvent
}

// readFacts reads a session's record lines (in record order).
func readFacts(s *sessionRecord) wireFacts {
	f := wireFacts{proto: s.proto, played: map[int]int{}, declared: map[int]map[string]string{}}
	var prevClose *RecordLine
	first := true
	// OpenAI: the response in progress on each connection, and whether the user's
	// speech started during it.
	type resp struct{ open, speech bool }
	responses := map[int]*resp{}
	for i := range s.lines {
		l := &s.lines[i]
		switch l.Kind {
		case KindOpen:
			if !first && prevClose != nil && prevClose.By == "client" {
				f.synthetic = append(f.synthetic, replay.TraceEvent{TMs: l.TMs, Event: "connection", ID: fmt.Sprintf("client-reconnect-%d", l.Conn)})
			}
			first = false
		case KindClose:
			prevClose = l
		case KindClient:
			if s.proto == ProtoGemini && f.declared[l.Conn] == nil {
				if setup, ok := parseGeminiSetup(l.Msg); ok {
					f.declared[l.Conn] = setup.Behaviors
				}
			}
		case KindServer:
			if l.Line > 0 {
				if _, ok := f.played[l.Line]; !ok {
					f.played[l.Line] = l.Conn
				}
			}
			if s.proto != ProtoOpenAI {
				continue
			}
			ev, err := openaiwire.ParseServer(l.Msg)
			if err != nil {
				continue
			}
			r := responses[l.Conn]
			if r == nil {
				r = &resp{}
				responses[l.Conn] = r
			}
			switch ev.Type {
			case openaiwire.ResponseCreated:
				*r = resp{open: true}
			case openaiwire.SpeechStarted:
				r.speech = r.speech || r.open
			case openaiwire.ResponseDone:
				var status, reason string
				if ev.Response != nil {
					status, reason = ev.Response.Status, ev.Response.Reason
				}
				if l.Line == 0 && OpenAIBargeIn(status, reason, r.speech) {
					// Not a trace line's doing (those are played lines): the client's cancel.
					f.synthetic = append(f.synthetic, replay.TraceEvent{TMs: l.TMs, Event: "interrupted"})
				}
				*r = resp{}
			}
		}
	}
	return f
}

// wireView returns the events of tr as the agent of session s could see and report
// them over its protocol, for the checker's reference replay (docs/fake-provider.md,
// "The checker"):
//   - a wire event is kept only if the fake sent something for it (an OpenAI
//     `interrupted` with no response in progress, a `generation_complete` with none, a
//     transcript the session did not ask for: the agent heard nothing);
//   - events the wire had and the trace did not are added at their time: an
//     `interrupted` for each OpenAI response the client cancelled for the user's speech
//     (OpenAIBargeIn), a `connection` for each reconnect the client made itself;
//   - a tool_call_cancellation says only that its calls were withdrawn (neither
//     protocol carries a reason such as provider_timeout);
//   - Gemini: a call's behavior is its function's declaration in the setup of the
//     connection it came on (Gemini's default BLOCKING when the declaration has none;
//     the trace's when the function was not declared); no utterance ids (Gemini's
//     voice activity and transcripts name no utterance);
//   - OpenAI: no behavior (an OpenAI call carries none: the tool policy decides), no
//     response scheduling (OpenAI has neither scheduling nor interim responses);
//     utterance ids stay (the fake names each utterance's item as the trace names it).
func wireView(tr Trace, s *sessionRecord) []replay.TraceEvent {
	f := readFacts(s)
	out := make([]replay.TraceEvent, 0, len(tr.Events)+len(f.synthetic))
	for _, ev := range tr.Events {
		switch {
		case ev.Event == "session_start":
			if f.proto == ProtoOpenAI {
				ev.ResponseScheduling = nil
			}
		case wireEvent(ev.Event):
			conn, ok := f.played[ev.Line]
			if !ok {
				continue
			}
			if ev.Event == "tool_call_cancellation" {
				ev.Reason = ""
			}
			if f.proto == ProtoOpenAI {
				if ev.Event == "tool_call" {
					ev.Behavior = ""
				}
				break
			}
			ev.Utterance = ""
			if ev.Event == "tool_call" {
				if b, ok := f.declared[conn][ev.Tool]; ok {
					ev.Behavior = b
				}
			}
		}
		out = append(out, ev)
	}
	return insertByTime(out, f.synthetic)
}

// insertByTime inserts extra (each with its TMs) into events: each after the events at
// or before its time, and before `end`.
func insertByTime(events, extra []replay.TraceEvent) []replay.TraceEvent {
	if len(extra) == 0 {
		return events
	}
	sort.SliceStable(extra, func(i, j int) bool { return extra[i].TMs < extra[j].TMs })
	out := make([]replay.TraceEvent, 0, len(events)+len(extra))
	i := 0
	for _, ev := range events {
		for i < len(extra) && (extra[i].TMs < ev.TMs || ev.Event == "end") {
			out = append(out, extra[i])
			i++
		}
		out = append(out, ev)
	}
	return append(out, extra[i:]...)
}

// refusedReason is the reason a refused session's record line gives, or "".
func refusedReason(s *sessionRecord) string {
	for _, l := range s.lines {
		if l.Kind == KindRefused {
			return l.Text
		}
	}
	return ""
}

// systemNote reports whether a text the agent sent reads as a status note.
func systemNote(text string) bool {
	return strings.Contains(strings.ToLower(text), "system note")
}
