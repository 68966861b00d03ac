package arbiter

import (
	"context"
	"time"
)

// Store persists sessions. Every implementation (store/memory, store/redisstore) must
// pass the conformance suite in store/storetest. Implementations are safe for
// concurrent use by many goroutines and, for shared stores, many processes.
//
// A session is one record: the encoded Session plus its version. Writers serialise on
// the version (compare-and-set), so two replicas that step the same session at the
// same instant cannot both win: the loser reloads and steps again.
type Store interface {
	// Load returns a copy of the session, owned by the caller, with Version set to the
	// stored version. Errors: NotFound when the session does not exist or expired;
	// Unavailable when the store cannot be read.
	Load(ctx context.Context, key SessionKey) (*Session, error)

	// Save stores s if the stored version still equals s.Version (0: the session must
	// not exist yet), sets s.Version to the new version and resets the session's idle
	// TTL to ttl (0: keep it forever). Errors: Conflict when another writer got there
	// first (nothing written); Unavailable when the store cannot be written (whether
	// it was written is then unknown: reload before deciding anything).
	Save(ctx context.Context, s *Session, ttl time.Duration) error

	// Watch returns a channel that receives a value after each successful Save of the
	// session by any writer (buffered, coalescing: one value may stand for several
	// saves), and a function that stops the watch and must be called. Used to wake
	// Decide long-polls. Errors: Unavailable.
	Watch(ctx context.Context, key SessionKey) (<-chan struct{}, func(), error)

	// Ping reports whether the store is reachable (nil) or not (Unavailable).
	Ping(ctx context.Context) error

	// Close releases the store's resources.
	Close() error
}

// CachedLoader is implemented by a Store that keeps a local copy of the sessions it
// serves (store/redisstore with Options.CacheSessions), to save the read of a
// transition. Service.Apply steps a cached copy and relies on Save's compare-and-set
// to refuse a stale one (Conflict; the store then holds the current record, so the
// retry needs no read); a step of a cached copy that changes nothing or fails is
// answered only once Current says the copy is what the store holds, otherwise from a
// fresh Load. Safe for concurrent use.
type CachedLoader interface {
	// LoadCached returns the local copy, owned by the caller, with cached set and
	// without asking the store, so it may be stale (another replica saved since);
	// without one it is Load (cached false). Errors: as Load's.
	LoadCached(ctx context.Context, key SessionKey) (s *Session, cached bool, err error)
	// Current reports whether the store still holds s as loaded: its Version, in its
	// lifetime (a session started again under the same id after it expired may reach
	// the same version). One small read. Errors: Unavailable.
	Current(ctx context.Context, s *Session) (bool, error)
	// Uncached reports, without asking the store, that it keeps local copies and
	// holds none of key: a transition that may create the session (Apply with create)
	// then steps a new session and saves it at version 0 instead of reading first.
	// If the store does hold a record, that Save is a Conflict that leaves the record
	// in the local copy, so the retry steps it with no read: a session this replica
	// has not seen costs one round trip when it is new and two when it is not, as a
	// Load would. False for a store without local copies.
	Uncached(key SessionKey) bool
}

// CallIndex finds the session a call id belongs to, for the calls the wire guard
// (package guard) registers: their tools report by call id alone (DecideRequest and
// CompleteRequest with call_id and no session_id), since a framework hands a tool the
// call's id and nothing about the session. Entries are scoped by tenant and expire
// like sessions. A call id indexed for two sessions is ambiguous (some providers' ids
// are short: "call_92436") and found for neither: a tool's report must then name its
// session, never land in another conversation. Implementations: store/memory (this
// process only: a restart forgets them, and a tool's report for a call made before it
// then needs its session id), store/redisstore (shared by every replica). Safe for
// concurrent use.
type CallIndex interface {
	// IndexCall records that callID, in tenant, belongs to session id, for ttl (0:
	// as long as the index lives); the same again extends it; another session's
	// makes the call id ambiguous (for ttl). Errors: Unavailable.
	IndexCall(ctx context.Context, tenant, callID, id string, ttl time.Duration) error
	// LookupCall returns the session id IndexCall recorded for callID in tenant.
	// Errors: NotFound naming call_id; FailedPrecondition naming call_id when it is
	// ambiguous; Unavailable.
	LookupCall(ctx context.Context, tenant, callID string) (string, error)
}

// AmbiguousCall is the error of LookupCall for a call id indexed for more than one
// session.
func AmbiguousCall(callID string) error {
	return Fieldf(FailedPrecondition, "call_id", "call %q is the id of calls in more than one session: give session_id", callID)
}
