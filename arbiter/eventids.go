package arbiter

// Event ids: a retried event is recognised. The agent may name each Speech,
// Transcript, ToolCallCancellation and Progress with an id of its own (EventID, the
// API's event_id), so that a retry after an ambiguous failure (the first attempt was
// applied and its answer lost) does not apply it twice: two final pieces of one
// utterance, two withdrawals, two interim responses. The session keeps the ids of its
// latest KeepEventIDs such events; an event whose id it keeps is a repeat: Step changes
// nothing (no timer fires either), returns no effects and sets Output.Repeat. The
// effects of the first application are in the session's log, where Poll and Watch with
// after_seq find them. An id names one event among those of its kind: a speech event
// and a transcript piece may share an id without colliding. RegisterCall needs none:
// its call id is its event id (calls.go).

// KeepEventIDs is how many event ids a session keeps, the latest: 32. The clients
// deliver a session's events one at a time, in the order observed, and retry each
// until it lands before they send the next, so a retry can only repeat the latest event
// or, with a few concurrent senders (a receive loop, a progress reporter), one of the
// last few; 32 leaves a wide margin for those while costing each stored session at most
// 32 ids of 128 characters (about 4.5 KiB JSON-encoded; typical ids of 10 to 20
// characters make it under 1 KiB), read and written by every RPC of the session. An id
// evicted since is taken as new: a retry that comes after more than 32 later events
// with ids is applied again.
const KeepEventIDs = 32

// identified is implemented by the events that may carry an event id.
type identified interface {
	// eventKey returns the id scoped by the event's kind ("transcript:e-17"), or ""
	// when the event carries none.
	eventKey() string
}

func (ev Speech) eventKey() string               { return eventKey("speech", ev.EventID) }
func (ev Transcript) eventKey() string           { return eventKey("transcript", ev.EventID) }
func (ev ToolCallCancellation) eventKey() string { return eventKey("cancellation", ev.EventID) }
func (ev Progress) eventKey() string             { return eventKey("progress", ev.EventID) }

func eventKey(kind, id string) string {
	if id == "" {
		return ""
	}
	return kind + ":" + id
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

// seenEvent reports whether the session keeps event key k.
func (s *Session) seenEvent(k string) bool {
	for _, x := range s.EventIDs {
		if x == k {
			return true
		}
	}
	return false
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
