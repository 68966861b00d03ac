package arbiter

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Event ids: a retried event is recognised. The agent may name each Speech,
// Transcript, ToolCallCancellation and Progress with an id of its own (EventID, the
// API's event_id), so that a retry after an ambiguous failure (the first attempt was
// applied and its answer lost) does not apply it twice: two final pieces of one
// utterance, two withdrawals, two interim responses. The session keeps the ids of its
// latest KeepEventIDs such events; an event whose id it keeps is a repeat: Step changes
// nothing (no timer fires either), returns no effects and sets Output.Repeat. An event
// whose id it keeps for an event that said something else (another text, kind, call
// ids or result) is refused, FailedPrecondition naming event_id, and changes nothing. The
// effects of the first application are in the session's log, where Poll and Watch with
// after_seq find them. An id names one event among those of its kind: a speech event
// and a transcript piece may share an id without colliding. RegisterCall needs none:
// its call id is its event id (calls.go).

// KeepEventIDs is how many event ids a session keeps, the latest: 32. The clients
// deliver a session's events one at a time, in the order observed, and retry each
// until it lands before they send the next, so a retry can only repeat the latest event
// or, with a few concurrent senders (a receive loop, a progress reporter), one of the
// last few; 32 leaves a wide margin for those while costing each stored session at most
// 32 ids of 128 characters and their kind and 9-character fingerprint (about 5 KiB
// JSON-encoded; typical ids of 10 to 20 characters make it about 1 KiB), read and written by every RPC of the session. An id
// evicted since is taken as new: a retry that comes after more than 32 later events
// with ids is applied again.
const KeepEventIDs = 32

// identified is implemented by the events that may carry an event id.
type identified interface {
	// eventKey returns the id scoped by the event's kind ("transcript:e-17"), or ""
	// when the event carries none.
	eventKey() string
}

// The event keys carry a fingerprint of what the event says (not when it was observed:
// a retry has another age, nor its epoch), so that an id reused for another event is
// told from a retry (eventSeen).
func (ev Speech) eventKey() string {
	return eventKey("speech", ev.EventID, string(ev.Kind), ev.UtteranceID)
}

func (ev Transcript) eventKey() string {
	parts := []string{strconv.FormatBool(ev.Model), strconv.FormatBool(ev.Interim), ev.UtteranceID, ev.Text}
	if r := ev.Reading; r != nil {
		// Only when there is one: the key of a piece without a reading stays as it was.
		parts = append(parts, string(r.Intent), strconv.FormatFloat(r.Confidence, 'g', -1, 64), r.Source)
	}
	return eventKey("transcript", ev.EventID, parts...)
}

func (ev ToolCallCancellation) eventKey() string {
	return eventKey("cancellation", ev.EventID, strings.Join(ev.CallIDs, ","), string(ev.Reason))
}

func (ev Progress) eventKey() string {
	return eventKey("progress", ev.EventID, ev.JobID, canonicalJSON(ev.Result))
}

// eventKey is "KIND:ID#FINGERPRINT" (FINGERPRINT: 8 hex digits, FNV-1a of content), or
// "" for an empty id.
func eventKey(kind, id string, content ...string) string {
	if id == "" {
		return ""
	}
	return kind + ":" + id + "#" + fingerprint(content...)
}

// fingerprint is 8 hex digits of FNV-1a over parts, each ended by a NUL: enough to
// tell a retry (the same parts) from another event or call under a reused id, in few
// stored bytes (event keys, Call.ArgsDigest).
func fingerprint(parts ...string) string {
	h := fnv.New32a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

// eventScope is a key without its fingerprint ("transcript:e-17"); keys kept by
// earlier versions have none.
func eventScope(k string) string {
	if i := strings.LastIndexByte(k, '#'); i >= 0 {
		return k[:i]
	}
	return k
}

// keyOf is ev's event key, or "".
func keyOf(ev Event) string {
	if e, ok := ev.(identified); ok {
		return e.eventKey()
	}
	return ""
}

// checkEventID is nil for an empty id or one of the shape of a name (CheckName), else
// Invalid naming event_id.
func checkEventID(id string) error {
	if id == "" {
		return nil
	}
	return CheckName("event_id", id)
}

// eventSeen reports whether the session keeps event key k's id (seen), and if so
// whether the event kept under it said something else (reused): a retry says the
// same; an id reused for another event would be dropped as a "repeat" (a "stop" piece
// sent with the id of an earlier "Sounds good." piece, and the booking committed), so
// it is refused instead. A key kept without a fingerprint (an earlier version's)
// matches on its id alone.
func (s *Session) eventSeen(k string) (seen, reused bool) {
	scope := eventScope(k)
	for _, x := range s.EventIDs {
		if eventScope(x) == scope {
			return true, x != scope && x != k
		}
	}
	return false, false
}

// rememberEvent keeps event key k, dropping the oldest past KeepEventIDs.
func (st *step) rememberEvent(k string) {
	s := st.s
	s.EventIDs = append(s.EventIDs, k)
	if n := len(s.EventIDs) - KeepEventIDs; n > 0 {
		s.EventIDs = append([]string(nil), s.EventIDs[n:]...)
	}
	st.out.Changed = true
}

// eventKindOf and eventIDOf split a key ("transcript:e-17#0a1b2c3d") into its kind
// ("transcript") and id ("e-17").
func eventKindOf(k string) string {
	kind, _, _ := strings.Cut(k, ":")
	return kind
}

func eventIDOf(k string) string {
	_, id, _ := strings.Cut(eventScope(k), ":")
	return id
}
