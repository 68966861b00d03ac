package arbiter

// The session's own life: its options (Configure), the connections to the model
// server it runs over (Connect), and its end (Close).

// Configure sets a session's options (creating it if needed). Idempotent.
type Configure struct {
	// Language is the session's language (BCP 47, e.g. "en", "es-MX"; at most 35
	// characters); empty keeps it.
	Language string
	// TimeZone is the session's IANA time zone name ("Europe/Paris", "UTC"; at most
	// MaxTimeZoneBytes): relative dates ("tomorrow") and times said without an offset
	// ("3pm", "2026-11-05T09:30") in `as: datetime` keys are read in it (zones.go).
	// Empty keeps it (UTC when never set). Set it before the session's first call: a
	// job keeps the key it was given. Invalid naming time_zone when the arbiter does
	// not know the zone.
	TimeZone string
	// ResponseScheduling says the provider honours function-response scheduling.
	ResponseScheduling bool
	// Record, when set, makes the session record from now on: its history keeps up
	// to Engine.RecordBytes (enough to export it) instead of Engine.HistoryBytes.
	// False leaves recording as it is: it is never turned off.
	Record bool
	// Epoch, when not empty, is the session lifetime the agent knows (from Connect):
	// another one is refused (DataLoss), so a lost session is never started again
	// silently by this event.
	Epoch string
}

func (ev Configure) validate() error {
	if err := checkEpochShape(ev.Epoch); err != nil {
		return err
	}
	if len(ev.Language) > 35 || (ev.Language != "" && !validName(ev.Language)) {
		return Fieldf(Invalid, "language", "%q is not a BCP 47 language tag", Clip(ev.Language))
	}
	return CheckTimeZone("time_zone", ev.TimeZone)
}

func (ev Configure) check(st *step) error {
	if err := checkEpoch(st.s, ev.Epoch); err != nil {
		return err
	}
	return notClosed(st.s)
}

func (ev Configure) apply(st *step) error {
	if ev.Language != "" {
		st.s.Language = ev.Language
	}
	if ev.TimeZone != "" {
		st.s.TimeZone = ev.TimeZone
	}
	st.s.ResponseScheduling = ev.ResponseScheduling
	if ev.Record {
		if st.s.History == nil {
			st.s.History = &History{Partial: st.s.Version != 0}
		}
		st.s.History.Record, st.hist = true, true
	}
	st.out.Changed = true
	return nil
}

// Connect reports that the events after it arrive on a new connection of the same
// conversation (Gemini Live session resumption, a reconnect). Calls still pending
// from an earlier connection can no longer be answered by function response: they are
// marked dead ("connection_closed"), their jobs go on, and each job's outcome goes out
// as a status note instead; a re-issue on the new connection is deduplicated against
// it. Connecting again with the current id changes nothing.
type Connect struct {
	// ConnectionID names the new connection; required.
	ConnectionID string
	// Epoch, when not empty, is the session lifetime the agent knew (from an earlier
	// Connect). If the session no longer has it (its store lost it), the agent goes on
	// in the session's current epoch, and Output.Connect says ConnectLost: the outcome
	// of every call it made in the old one is unknown.
	Epoch string
}

// ConnectState says what a Connect found.
type ConnectState string

// The states Connect reports.
const (
	// ConnectNew: the session did not exist; it starts now.
	ConnectNew ConnectState = "new"
	// ConnectResumed: the session goes on (the epoch the agent named, if any, is its).
	ConnectResumed ConnectState = "resumed"
	// ConnectLost: the agent named an epoch the session no longer has: its store lost
	// it. The session (new, or a later lifetime) goes on in its own epoch; nothing of
	// the lost one is known.
	ConnectLost ConnectState = "lost"
)

// ConnectResult is Connect's answer.
type ConnectResult struct {
	// Epoch is the session's epoch: name it in later requests.
	Epoch string
	State ConnectState
}

func (ev Connect) validate() error {
	if err := checkEpochShape(ev.Epoch); err != nil {
		return err
	}
	return CheckName("connection_id", ev.ConnectionID)
}

func (ev Connect) check(st *step) error {
	s := st.s
	if err := notClosed(s); err != nil {
		return err
	}
	for _, id := range s.PastConnections {
		if id == ev.ConnectionID {
			// A delayed retry of an old Connect must not cut off the live
			// connection's calls.
			return Fieldf(FailedPrecondition, "connection_id", "connection %q of session %q has already ended; each new connection needs a new id", Clip(id), s.Key.ID)
		}
	}
	return nil
}

// apply switches the session to the new connection: calls still pending from earlier
// connections die (their jobs go on; their outcomes go out as notes).
func (ev Connect) apply(st *step) error {
	s := st.s
	st.out.Connect = &ConnectResult{Epoch: s.Epoch, State: ConnectResumed}
	switch {
	case ev.Epoch != "" && ev.Epoch != s.Epoch:
		st.out.Connect.State = ConnectLost
	case s.Version == 0:
		st.out.Connect.State = ConnectNew
	}
	if s.Connection == ev.ConnectionID {
		return nil
	}
	for _, c := range s.Calls {
		if c.Outcome == nil && c.Connection != ev.ConnectionID {
			st.kill(c, SkipConnectionClosed)
		}
	}
	if s.Connection != "" {
		s.PastConnections = append(s.PastConnections, s.Connection)
		if n := len(s.PastConnections) - keepConnections; n > 0 {
			s.PastConnections = s.PastConnections[n:]
		}
	}
	s.Connection = ev.ConnectionID
	st.out.Changed = true
	return nil
}

// lostOnReconnect reports whether a call of j died with its connection.
func (st *step) lostOnReconnect(j *Job) bool {
	for _, id := range j.CallIDs {
		if c := st.s.call(id); c != nil && c.Outcome != nil && c.Outcome.Dead && c.Outcome.Reason == SkipConnectionClosed {
			return true
		}
	}
	return false
}

// Close closes the session: undecided jobs are cancelled (fail closed), every call id
// still unanswered is marked dead, and open runs are cancelled. Idempotent.
type Close struct{}

func (Close) validate() error   { return nil }
func (Close) check(*step) error { return nil }

func (Close) apply(st *step) error {
	s := st.s
	if s.Closed {
		return nil
	}
	s.Closed = true
	st.out.Changed = true
	for _, j := range s.Jobs {
		if j.SideEffect && j.Decision == Undecided {
			st.decideJob(j, DecisionCancel, CauseClosed, reasonClosed)
		}
	}
	for _, c := range s.Calls {
		st.kill(c, SkipSessionClosed)
	}
	for _, r := range s.Runs {
		if r.State == RunOpened {
			st.endRun(nil, r, RunCancelled, reasonRunClosed, st.e.Policy.lookup(r.Tool))
		}
	}
	return nil
}
