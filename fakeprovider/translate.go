package fakeprovider

import (
	"fmt"

	"github.com/voicearbiter/arbiter/replay"
)

// translator turns one connection's trace events and client messages into the server
// messages of its protocol. It is pure (no clock, no socket) and used by one goroutine,
// the session loop's.
type translator interface {
	// greet returns what the server sends once the connection is set up (Gemini:
	// setupComplete; OpenAI: session.created); the session's clock starts after it.
	greet() step
	// event translates one trace event that goes on the wire (every event but
	// session_start, connection, end and ref_*).
	event(ev replay.TraceEvent) step
	// client handles one client message (recorded already) and returns the replies.
	client(msg []byte) step
	// goAway returns what the server sends before it closes the connection for a
	// `connection` line of the trace (the client is to reconnect).
	goAway() step
}

// holder is implemented by a translator whose protocol cannot carry some event in the
// session's current state, until the client has done its part.
type holder interface {
	// hold says why ev cannot be sent yet ("" when it can): the session's clock pauses
	// at ev until the client's next messages make it sendable, or maxHold passes.
	hold(ev replay.TraceEvent) string
}

// step is what one input makes the server do.
type step struct {
	// msgs are sent in order, each as one WebSocket message.
	msgs []any
	// warnings go to the record (KindWarning) and the log.
	warnings []string
}

func (s *step) send(m ...any) { s.msgs = append(s.msgs, m...) }
func (s *step) warn(format string, a ...any) {
	s.warnings = append(s.warnings, fmt.Sprintf(format, a...))
}
func (s *step) merge(o step) {
	s.msgs = append(s.msgs, o.msgs...)
	s.warnings = append(s.warnings, o.warnings...)
}
func (s *step) warnOnce(seen map[string]bool, key, format string, a ...any) {
	if !seen[key] {
		seen[key] = true
		s.warn(format, a...)
	}
}

// wireEvent reports whether a trace event is played as server messages (the others
// are the session's own: session_start, connection, end, and ref_* lines).
func wireEvent(ev string) bool {
	switch ev {
	case "speech_start", "speech_end", "transcript", "interrupted", "tool_call", "tool_call_cancellation",
		"model_audio_start", "model_transcript", "generation_complete", "turn_complete":
		return true
	}
	return false
}

// isFinal is a transcript event's finality (default true).
func isFinal(ev replay.TraceEvent) bool { return ev.Final == nil || *ev.Final }
