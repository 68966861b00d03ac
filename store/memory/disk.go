package memory

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/sessioncodec"
)

// Disk keeps a Store's sessions on stable storage, so that a Store opened on it
// again (Open) has every session whose Save returned. store/memory/boltdisk is the
// one `arbiter serve --state-file` uses. Implementations are safe for concurrent use;
// concurrent writes may share one sync (group commit).
type Disk interface {
	// Put stores r under r.Key, replacing the record stored there, and returns once it
	// is on stable storage (nil) or could not be written (an error: whether it was
	// written is then unknown). The Store hands each key's writes over one at a time.
	// Put does not keep r.Session after it returns.
	Put(r Record) error

	// DeleteExpired deletes the record of each of keys whose stored expiry is not after
	// now; a key stored again since with a later expiry (a new lifetime of the
	// session), or not stored, is left alone. It returns once the deletions are on
	// stable storage. With no keys it still writes (an empty commit), which tells
	// whether the disk can be written at all.
	DeleteExpired(keys []arbiter.SessionKey, now time.Time) error

	// Records calls fn with every stored record, in no particular order, until fn
	// returns an error, which Records returns. fn owns the record it is given. Errors
	// of its own: the disk cannot be read, or holds a record it cannot decode (naming
	// its key).
	Records(fn func(Record) error) error

	// Ping reports whether the disk can be written (nil) or not (an error saying why);
	// it may write to find out, waiting at most until ctx ends.
	Ping(ctx context.Context) error

	// Close writes what was handed over and not written yet, then releases the disk.
	// Later calls fail.
	Close() error
}

// Record is one stored session as a Disk keeps it.
type Record struct {
	Key arbiter.SessionKey
	// Version is the session's compare-and-set version, 1 or more.
	Version uint64
	// Expires is when the session's idle TTL runs out, on the Store's clock; zero:
	// never.
	Expires time.Time
	// Session is the session as sessioncodec.Encode wrote it (or, written by an
	// earlier version, as JSON: sessioncodec.Decode reads both).
	Session []byte
}

// Open returns a Store holding every session on disk, each with its version and
// expiry, that writes each Save to disk before the Save returns (see Store.Save).
// now is the clock used for idle TTLs (nil: time.Now). Records already expired by
// now are skipped and deleted from disk. A record whose session does not decode, has
// a version of 0, is of another session than its key, or fails
// arbiter.Session.Check refuses the whole disk: Open returns an error naming the
// session and the fault and writes nothing. Open also writes once (the deletion of
// expired records, or an empty commit), so a disk that cannot be written fails here,
// not at the first Save. MaxSessions is not applied to what is loaded.
//
// The Store owns disk from a successful Open on: its Close closes it. On error the
// caller still owns it.
func Open(disk Disk, now func() time.Time) (*Store, error) {
	m := newStore(now)
	m.disk = disk
	var expired []arbiter.SessionKey
	err := disk.Records(func(r Record) error {
		nr := &record{data: r.Session, version: r.Version, expires: r.Expires}
		if m.expired(nr) {
			expired = append(expired, r.Key)
			return nil
		}
		if _, dup := m.sessions[r.Key]; dup {
			return fmt.Errorf("session %q: stored twice", r.Key.String())
		}
		if err := checkRecord(r); err != nil {
			return err
		}
		m.sessions[r.Key] = nr
		m.expiries.set(r.Key, nr.expires)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := disk.DeleteExpired(expired, m.now()); err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	go m.janitor()
	return m, nil
}

// checkRecord checks a record read from a file or a disk before it is stored: a
// session that decodes, is the session its key names, has a version, and holds
// together (arbiter.Session.Check). Errors name the session and the fault.
func checkRecord(r Record) error {
	if r.Key.ID == "" {
		return errors.New("a session with no id")
	}
	if r.Version == 0 {
		return fmt.Errorf("session %q: version 0 (a stored session has version 1 or more)", r.Key.String())
	}
	s, err := sessioncodec.Decode(r.Session)
	if err != nil {
		return fmt.Errorf("session %q: %v", r.Key.String(), err)
	}
	if s.Key != r.Key {
		return fmt.Errorf("session %q: its state is of session %q", r.Key.String(), s.Key.String())
	}
	if err := s.Check(); err != nil {
		// It decodes but does not hold together (a call naming no job would make a
		// later Complete panic): refuse it, naming the fault.
		return errors.New(arbiter.MessageOf(err))
	}
	return nil
}
