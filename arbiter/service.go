package arbiter

import (
	"context"
	"time"
)

// Clock is the time source the Service runs the engine on. The engine itself never
// reads a clock; the Service asks this one once per step.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Service runs the engine against a store: load the session, step it, save it with a
// compare-and-set on its version, retrying a bounded number of times when another
// writer (another goroutine or replica) got there first. It holds no session state, so
// any number of Services on one shared store answer the same. Safe for concurrent use.
type Service struct {
	Engine *Engine
	Store  Store
	Clock  Clock
	// IdleTTL is how long a session lives after its last change. Zero means 1 hour.
	IdleTTL time.Duration
	// MaxWait caps Decide's long-poll. Zero means 30 s.
	MaxWait time.Duration
	// Retries bounds compare-and-set retries per request. Zero means 32; past it the
	// request fails with Conflict (gRPC ABORTED).
	Retries int
	// HistorySample is the fraction (0 to 1) of new sessions that record from their
	// first event (History.Record: the larger history bound, Engine.RecordBytes),
	// picked by a hash of the session key (Sampled), so every replica picks the same
	// ones. Zero means none: a session then records only once Configure asks.
	HistorySample float64
	// Calls, when set, indexes the calls the wire guard registers by call id
	// (IndexCall), so that FindCall finds their session. Nil: FindCall is NotFound.
	Calls CallIndex
}

// IndexCall records that callID belongs to the session key, for ttl (zero: the
// session's idle TTL; see CallIndex). Without Calls it does nothing. Errors:
// Unavailable.
func (sv *Service) IndexCall(ctx context.Context, key SessionKey, callID string, ttl time.Duration) error {
	if sv.Calls == nil {
		return nil
	}
	if ttl <= 0 {
		ttl = sv.idleTTL()
	}
	return sv.Calls.IndexCall(ctx, key.Tenant, callID, key.ID, ttl)
}

// FindCall returns the session of a call the wire guard registered, in tenant.
// Errors: Invalid naming call_id (malformed); NotFound naming call_id (no session of
// the tenant has it indexed: give session_id); Unavailable.
func (sv *Service) FindCall(ctx context.Context, tenant, callID string) (SessionKey, error) {
	if err := CheckName("call_id", callID); err != nil {
		return SessionKey{}, err
	}
	if sv.Calls == nil {
		return SessionKey{}, Fieldf(NotFound, "call_id", "call %q: no session is known by its call id here (only the wire guard's are): give session_id", callID)
	}
	id, err := sv.Calls.LookupCall(ctx, tenant, callID)
	if err != nil {
		return SessionKey{}, err
	}
	return SessionKey{Tenant: tenant, ID: id}, nil
}

func (sv *Service) idleTTL() time.Duration {
	if sv.IdleTTL > 0 {
		return sv.IdleTTL
	}
	return time.Hour
}

// takeBackTimeout bounds how long Decide tries to take back a COMMIT it recorded but
// did not hand out (takeBack).
const takeBackTimeout = 5 * time.Second

// takeBack steps ev, a COMMIT's record taken back, on a context of its own (the
// caller's may be over), retrying every 50 ms while the store is unavailable, for at
// most takeBackTimeout: the agent's events stuck behind the same store must not land
// after a COMMIT that never reached it. Errors: the last step's.
func (sv *Service) takeBack(ctx context.Context, key SessionKey, ev withholdAnswer, observe func(Output, *Session)) error {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), takeBackTimeout)
	defer cancel()
	for {
		out, s, err := sv.apply(tctx, key, ev, false, nil)
		if err == nil {
			if observe != nil && out.Changed {
				observe(out, s)
			}
			return nil
		}
		if KindOf(err) != Unavailable || tctx.Err() != nil {
			return err
		}
		select {
		case <-tctx.Done():
			return err
		case <-sv.Clock.After(50 * time.Millisecond):
		}
	}
}

// MaxDecideWait returns the cap on Decide's wait.
func (sv *Service) MaxDecideWait() time.Duration {
	if sv.MaxWait > 0 {
		return sv.MaxWait
	}
	return 30 * time.Second
}

// Apply steps the session named by key with ev and stores the result. With create set,
// a missing session is created (RegisterCall, ReportSpeech, ReportTranscript);
// otherwise it is NotFound. It returns the engine's output and the session as stored.
// The event's own fields are checked first (Validate), before the store is read, so
// bad input is Invalid whether or not the session exists. Errors: those of
// Engine.Step and Store; Conflict after Retries lost races.
//
// On a Store that is a CachedLoader a transition reads the local copy (no round trip)
// and only the compare-and-set goes to the store; a step of a cached copy that
// changes nothing or fails stands only once CachedLoader.Current confirmed the copy in
// this call (one small read), and is otherwise done again on a fresh Load. A session
// the store holds no copy of (CachedLoader.Uncached) is, when create is set, stepped
// as a new one and saved at version 0 without a read; a Conflict there hands the
// retry the stored record.
func (sv *Service) Apply(ctx context.Context, key SessionKey, ev Event, create bool) (Output, *Session, error) {
	return sv.apply(ctx, key, ev, create, nil)
}

// apply is Apply; stands, when not nil, is asked about a read-only answer (no error,
// nothing changed) stepped from a cached copy before Current is: true lets it stand
// without that read. Decide's caller vouches that such an answer is one the store
// held during the request (see Decide).
func (sv *Service) apply(ctx context.Context, key SessionKey, ev Event, create bool, stands func(*Session, Output) bool) (Output, *Session, error) {
	if err := Validate(ev); err != nil {
		return Output{}, nil, err
	}
	retries := sv.Retries
	if retries <= 0 {
		retries = 32
	}
	var lastErr error
	cl, _ := sv.Store.(CachedLoader)
	for attempt := 0; attempt < retries; attempt++ {
		var (
			s      *Session
			cached bool
			err    error
		)
		// blind: no copy of the session here and none read: step a new one, and let
		// Save's compare-and-set say whether the store has one (see
		// CachedLoader.Uncached).
		blind := cl != nil && create && attempt == 0 && cl.Uncached(key)
		switch {
		case blind: // nothing to read: a new session below
		case cl != nil:
			s, cached, err = cl.LoadCached(ctx, key)
		default:
			s, err = sv.Store.Load(ctx, key)
		}
		if err != nil && (KindOf(err) != NotFound || !create) {
			return Output{}, nil, err
		}
		// The step's time is taken once the state is read: a read that waited for a
		// stalled store shows as timers stepped late (Job.LateCommit).
		now := sv.Clock.Now()
		if blind || err != nil { // err: NotFound, and create is set
			s = NewSession(key, now)
			if Sampled(key, sv.HistorySample) {
				s.History = &History{Record: true}
			}
		}
		version := s.Version
		out, err := sv.Engine.stepValid(s, now, ev) // validated above
		if blind && (err != nil || !out.Changed) {
			// What a new session answers without storing anything stands only if
			// there is no stored one: read it.
			attempt--
			cl = nil
			continue
		}
		if cached && err == nil && !out.Changed && stands != nil && stands(s, out) {
			s.Version = version
			return out, s, nil
		}
		if cached && (err != nil || !out.Changed) {
			// An error or a read-only answer from a copy that may be stale (the job
			// it names may be another replica's newer one): it stands only if the
			// store still holds that copy, else answer from the store.
			s.Version = version
			current, cerr := cl.Current(ctx, s)
			if cerr != nil {
				return Output{}, nil, cerr
			}
			if !current {
				cl = nil
				attempt--
				continue
			}
		}
		if err != nil {
			return out, nil, err
		}
		if !out.Changed {
			return out, s, nil
		}
		err = sv.Store.Save(ctx, s, sv.idleTTL())
		if err == nil {
			return out, s, nil
		}
		if KindOf(err) != Conflict {
			// The write failed, or its fate is unknown (Unavailable): the output and
			// the session as stepped go back with the error for the caller to clean up
			// after (Decide takes back an answer it may have stored); never stored.
			return out, s, err
		}
		lastErr = err
	}
	return Output{}, nil, Wrap(Conflict, lastErr, "session %q: too many concurrent writers, retry", key.ID)
}

// Get returns the session as of now: timers due by now have fired (in the returned
// copy; nothing is stored). Errors: NotFound, Unavailable.
func (sv *Service) Get(ctx context.Context, key SessionKey) (*Session, error) {
	s, err := sv.Store.Load(ctx, key)
	if err != nil {
		return nil, err
	}
	if _, err := sv.Engine.Step(s, sv.Clock.Now(), Tick{}); err != nil {
		return nil, err
	}
	return s, nil
}

// Decide asks for a job's decision and waits up to wait (capped at MaxDecideWait) for
// one: it returns at once with COMMIT or CANCEL (while prepared is false a COMMIT can
// only come once another Decide reported the prepare). Its steps are a live agent's
// (Decide.Live): a commit decided late, after an outage, is withheld for DeliveryWait
// first (see Decide; not for an agent that declares the delivery contract, which
// DecideBy takes as Decide.Delivered), and the step that hands out a COMMIT stores
// that it did before it is returned. It wakes when any writer
// saves the session (Store.Watch) and when the session's next timer is due, so the
// decision arrives within a store round trip of the event that makes it. When the wait
// runs out the result is Undecided with what the job waits for. observe, when not
// nil, sees the output of every step Decide stores (the prepare it recorded, the
// decisions its timers made, for logs and metrics), each once. Errors: NotFound,
// FailedPrecondition (read-only job), Unavailable, and ctx's error.
//
// On a CachedLoader, a wake-up makes Decide step the cached copy (which a store such
// as store/redisstore has just refreshed from the wake-up message, without a read): a
// final answer found there (CANCEL or COMMIT) is confirmed by Current
// before it is returned (one small read that compares the version and the record's
// content: a message is only as trustworthy as the channel it came through, and what
// Decide answers must be what the store holds), and a copy whose job is still
// undecided only sets the next wait, with no read, when it is of the lifetime
// (CreatedAt) of the session this Decide last had from the store, at that version or
// a later one. The Undecided answer at the end of the wait is stepped from a copy
// Current confirmed, or from a Load, as in Apply, and a decision the step makes still
// goes through Save's compare-and-set.
func (sv *Service) Decide(ctx context.Context, key SessionKey, jobID string, prepared bool, wait time.Duration, observe func(Output, *Session)) (DecisionResult, error) {
	return sv.DecideBy(ctx, key, Decide{JobID: jobID, Prepared: prepared}, wait, observe)
}

// DecideBy is Decide for the job ev names: by job id, or by call id (see Decide, the
// event), with ev.Delivered set when the agent declares the delivery contract (a late
// commit is then handed out at once, and a COMMIT whose record the store kept late is
// not taken back; one whose caller has gone still is). Errors: those of Decide, and
// of the event's job reference (jobRef).
func (sv *Service) DecideBy(ctx context.Context, key SessionKey, ev Decide, wait time.Duration, observe func(Output, *Session)) (DecisionResult, error) {
	if wait > sv.MaxDecideWait() {
		wait = sv.MaxDecideWait()
	}
	deadline := sv.Clock.Now().Add(wait)
	var (
		changes <-chan struct{}
		stop    = func() {}
	)
	if wait > 0 {
		ch, cancel, err := sv.Store.Watch(ctx, key)
		if err != nil {
			return DecisionResult{}, err
		}
		changes, stop = ch, cancel
	}
	defer stop()
	ev.Live = true // a live agent's: a late commit is withheld from it first (see Decide)
	// held: the lifetime and version of the session the last step had from the store
	// (loaded, confirmed current, saved, or standing by the rule above). interim: the
	// last step's copy stood unconfirmed with an answer that is not final, good only
	// to wait on; confirm: the next step's copy must be confirmed (the wait is over).
	var (
		held, interim, confirm bool
		created                time.Time
		version                uint64
	)
	stands := func(s *Session, out Output) bool {
		if !held || confirm || out.Decision == nil || !s.CreatedAt.Equal(created) || s.Version < version {
			return false
		}
		if d := out.Decision.Decision; d == DecisionCancel || d == DecisionCommit {
			// A final answer is given only from a copy the store confirmed (Current
			// compares the version and the record's content): never from one a
			// wake-up message alone brought, however final it looks, since what
			// the Decide answers must be what the store holds.
			return false
		}
		interim = true
		return true
	}
	for {
		interim = false
		out, s, err := sv.apply(ctx, key, ev, false, stands)
		if err != nil {
			if s != nil && len(out.Answered) > 0 && KindOf(err) == Unavailable {
				// The store may have kept the COMMIT's record although the write
				// failed; it never went out. Take it back once the store answers.
				j := s.Job(out.Answered[0])
				_ = sv.takeBack(ctx, key, withholdAnswer{JobID: j.ID, Answered: j.AnsweredAt, Withhold: !ev.Delivered}, observe)
			}
			return DecisionResult{}, err
		}
		held, created, version = true, s.CreatedAt, s.Version
		if observe != nil && out.Changed {
			observe(out, s)
		}
		d := *out.Decision
		if j := s.Job(d.JobID); d.Decision == DecisionCommit && len(out.Answered) > 0 && j != nil {
			// The COMMIT this step recorded as handed out does not go out when the
			// caller has gone (it aborted the call: an event of its is undelivered), or
			// when the store took longer than LateTimer to keep the record (frozen,
			// failing over: the agent's events observed meanwhile may be stuck behind
			// it; then it is withheld, see Decide) and the agent does not declare the
			// delivery contract (Decide.Delivered: such an agent aborts this call when
			// an event it observes meanwhile is stuck, so a late record alone, as
			// under CPU load, says nothing). It is taken back, on a context of its own
			// (the caller's may be over), and decided again with what arrives.
			late := !ev.Delivered && sv.Clock.Now().Sub(j.AnsweredAt) > LateTimer
			gone := ctx.Err() != nil
			if late || gone {
				err := sv.takeBack(ctx, key, withholdAnswer{JobID: j.ID, Answered: j.AnsweredAt, Withhold: late}, observe)
				switch {
				case gone:
					return DecisionResult{}, ctx.Err()
				case err != nil:
					return DecisionResult{}, err
				}
				continue
			}
		}
		if d.Decision == DecisionCancel || d.Decision == DecisionCommit {
			return d, nil
		}
		now := sv.Clock.Now()
		if !now.Before(deadline) {
			if interim {
				confirm = true // an Undecided answer comes from a confirmed copy
				continue
			}
			return d, nil
		}
		next := deadline
		if due, ok := sv.Engine.NextTimer(s); ok && due.Before(next) {
			next = due
		}
		d0 := next.Sub(now)
		if d0 < time.Millisecond {
			d0 = time.Millisecond
		}
		select {
		case <-changes:
		case <-sv.Clock.After(d0):
		case <-ctx.Done():
			return DecisionResult{}, ctx.Err()
		}
	}
}

// Watch streams the session's effects after sequence number after to send, in order,
// each once, as they become due: it steps the session's timers when they fall due (a
// Tick, stored like any event, so a deadline answer is made and logged once, by
// whichever replica gets there first) and wakes on every save by any writer
// (Store.Watch). It returns nil when the session has closed and every effect was
// sent, or when the session expires; ctx's error when ctx ends; the error send
// returns. observe, when not nil, sees the output of every timer step Watch stores
// (the decisions it made, for logs and metrics). Errors at the start: NotFound (no
// such session), FailedPrecondition (after is beyond the last effect, or older than
// the log keeps), Unavailable.
func (sv *Service) Watch(ctx context.Context, key SessionKey, after uint64, send func([]LogEntry) error, observe func(Output, *Session)) error {
	changes, stop, err := sv.Store.Watch(ctx, key)
	if err != nil {
		return err
	}
	defer stop()
	first := true
	for {
		out, s, err := sv.Apply(ctx, key, Tick{}, false)
		if err != nil {
			if !first && KindOf(err) == NotFound {
				return nil // expired
			}
			return err
		}
		if observe != nil && out.Changed {
			observe(out, s)
		}
		first = false
		entries, err := s.LogAfter(after)
		if err != nil {
			return err
		}
		if len(entries) > 0 {
			if err := send(entries); err != nil {
				return err
			}
			after = entries[len(entries)-1].Seq
		}
		if s.Closed {
			return nil
		}
		var timer <-chan time.Time
		if due, ok := sv.Engine.NextTimer(s); ok {
			d := due.Sub(sv.Clock.Now())
			if d < time.Millisecond {
				d = time.Millisecond
			}
			timer = sv.Clock.After(d)
		}
		select {
		case <-changes:
		case <-timer:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
