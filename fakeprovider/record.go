package fakeprovider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Protocols a connection speaks (RecordLine.Proto).
const (
	ProtoGemini = "gemini"
	ProtoOpenAI = "openai"
)

// Kinds of record lines (RecordLine.Kind).
const (
	// KindOpen: a connection was accepted and given a session (Path, Variant).
	KindOpen = "open"
	// KindClient: a message the client sent (Msg), at the session time it arrived.
	KindClient = "client"
	// KindServer: a message the fake sent (Msg), with the trace line it plays (Line,
	// Event; 0 and "" for greetings and replies to client messages).
	KindServer = "server"
	// KindWarning: something about the session a checker or a person should know
	// (Text): a transcript the client did not ask for, a behavior the client declared
	// differently from the trace, a client message that was not JSON.
	KindWarning = "warning"
	// KindRefused: the session's trace cannot be played over the connection's protocol
	// (Text: why, Refusal's reason); the connection is then closed with 1008.
	KindRefused = "refused"
	// KindClose: the connection closed (Code, Reason, By; End when the trace's end
	// was played, Resume when the session waits for another connection).
	KindClose = "close"
)

// RecordLine is one line of a record (--record FILE, JSON lines). Every line has the
// session's time, session and connection numbers, trace and protocol; the other
// fields belong to its kind.
type RecordLine struct {
	// TMs is milliseconds of session time: since the session's start (setupComplete /
	// session.created on its first connection), the time between a connection's close
	// and the next one's start left out. Messages before the start count as 0.
	TMs int64 `json:"t_ms"`
	// Session numbers the sessions (one per trace played) from 1, in the order they
	// started; Conn numbers the connections the server accepted from 1.
	Session int    `json:"session"`
	Conn    int    `json:"conn"`
	Trace   string `json:"trace"`
	Proto   string `json:"proto"`
	Kind    string `json:"kind"`

	// Msg is the message, as JSON. Long base64 audio strings in it are replaced by
	// "<elided N chars>" unless the server keeps audio.
	Msg json.RawMessage `json:"msg,omitempty"`
	// Line and Event name the trace line a server message plays.
	Line  int    `json:"line,omitempty"`
	Event string `json:"event,omitempty"`

	// Path, Variant (OpenAI: "ga" or "beta") and Model: an open line's request.
	Path    string `json:"path,omitempty"`
	Variant string `json:"variant,omitempty"`
	Model   string `json:"model,omitempty"`

	// Code, Reason and By ("server" or "client"): a close line's close.
	Code   int    `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
	// End is true on the close after the trace's end was played.
	End bool `json:"end,omitempty"`
	// Resume is true when the session waits for its next connection (a `connection`
	// line in the trace, or the client went away before the end).
	Resume bool `json:"resume,omitempty"`

	// Text is a warning line's text.
	Text string `json:"text,omitempty"`
}

// recorder writes record lines; safe for concurrent use. A nil recorder writes
// nothing.
type recorder struct {
	mu        sync.Mutex
	w         io.Writer
	keepAudio bool
	err       error
	// last is each connection's last t_ms written (by session and connection): a
	// line is never written with an earlier one. A due event played late (a loaded
	// machine fires its timer after its time) carries its trace time, while the
	// lines written meanwhile (a client message, a hold's warning) carry the clock's:
	// the event's line takes the later of the two.
	last map[[2]int]int64
}

func newRecorder(w io.Writer, keepAudio bool) *recorder {
	if w == nil {
		return nil
	}
	return &recorder{w: w, keepAudio: keepAudio}
}

// write writes l as one JSON line; the first write error is kept (Err) and later
// lines are dropped.
func (r *recorder) write(l RecordLine) {
	if r == nil {
		return
	}
	if !r.keepAudio && l.Msg != nil {
		l.Msg = elideAudio(l.Msg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	k := [2]int{l.Session, l.Conn}
	if last, ok := r.last[k]; ok && l.TMs < last {
		l.TMs = last
	}
	if r.last == nil {
		r.last = map[[2]int]int64{}
	}
	r.last[k] = l.TMs
	b, err := marshal(l)
	if err == nil {
		_, err = r.w.Write(append(b, '\n'))
	}
	r.err = err
}

// marshal is json.Marshal without HTML escaping ("<elided>", "&" stay as they are).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Err returns the first write error.
func (r *recorder) Err() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// elideMin is the shortest base64 string elideAudio replaces.
const elideMin = 256

// audioKeys are the keys whose long base64 values are audio: Gemini's Blob.data,
// OpenAI's input_audio_buffer.append audio and the audio deltas.
var audioKeys = map[string]bool{"data": true, "audio": true, "delta": true}

// elideAudio returns msg with every long base64 string under an audio key replaced by
// "<elided N chars>"; msg itself when it has none or is not JSON.
func elideAudio(msg json.RawMessage) json.RawMessage {
	if len(msg) < elideMin {
		return msg
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(msg))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return msg
	}
	if !elide(v) {
		return msg
	}
	b, err := marshal(v)
	if err != nil {
		return msg
	}
	return b
}

// elide replaces audio strings in v in place; it reports whether it replaced any.
func elide(v any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && audioKeys[k] && len(s) >= elideMin && isBase64(s) {
				x[k] = fmt.Sprintf("<elided %d chars>", len(s))
				changed = true
				continue
			}
			changed = elide(e) || changed
		}
	case []any:
		for _, e := range x {
			changed = elide(e) || changed
		}
	}
	return changed
}

func isBase64(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ReadRecord parses a record (JSON lines). Errors name the line: not a JSON object, no
// kind or session.
func ReadRecord(r io.Reader, name string) ([]RecordLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	var out []RecordLine
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var l RecordLine
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, fmt.Errorf("%s:%d: not a record line: %v", name, n, err)
		}
		if l.Kind == "" || l.Session <= 0 {
			return nil, fmt.Errorf("%s:%d: not a record line: kind and session are required", name, n)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}
