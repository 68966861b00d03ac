package memory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/sessioncodec"
)

// snapshotFormat names the snapshot's format; Restore refuses any other. A change that
// older binaries could not read takes a new name.
const snapshotFormat = "arbiter-memory-store/v1"

// snapshotHeader is the snapshot document without its sessions, which Snapshot
// streams one by one.
type snapshotHeader struct {
	Format  string    `json:"format"`
	Written time.Time `json:"written"`
}

// snapshotFile is the whole snapshot document as Restore reads it:
//
//	{"format": "arbiter-memory-store/v1", "written": RFC 3339 time,
//	 "sessions": [{"key": {"tenant": ..., "id": ...}, "version": N,
//	               "expires": RFC 3339 time (absent: never), "session": {...}}, ...]}
type snapshotFile struct {
	snapshotHeader
	Sessions *[]snapshotRecord `json:"sessions"`
}

// snapshotRecord is one stored session: its key, its compare-and-set version, when
// its idle TTL runs out (an absolute time on the store's clock, nil: never) and the
// session as JSON (sessioncodec.JSON: the format of arbiter.EncodeSession, embedded as
// is), whatever format the store keeps it in.
type snapshotRecord struct {
	Key     arbiter.SessionKey `json:"key"`
	Version uint64             `json:"version"`
	Expires *time.Time         `json:"expires,omitempty"`
	Session json.RawMessage    `json:"session"`
}

// Snapshot writes every live session to w as one JSON document (format
// "arbiter-memory-store/v1": each session's key, version, absolute expiry on the
// store's clock, and encoded state), sorted by key, and returns how many it wrote.
// Sessions already expired by the store's clock are left out. The sessions are taken
// at one instant (the store's lock is held only to collect them, not while writing),
// so concurrent Saves are either wholly in the snapshot or not at all. Errors are w's.
// Safe for concurrent use.
func (m *Store) Snapshot(w io.Writer) (int, error) {
	m.mu.Lock()
	now := m.now()
	recs := make([]snapshotRecord, 0, len(m.sessions))
	for k, r := range m.sessions {
		if m.expired(r) {
			continue
		}
		sr := snapshotRecord{Key: k, Version: r.version, Session: r.data} // records are never mutated
		if !r.expires.IsZero() {
			e := r.expires
			sr.Expires = &e
		}
		recs = append(recs, sr)
	}
	m.mu.Unlock()
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i].Key, recs[j].Key
		if a.Tenant != b.Tenant {
			return a.Tenant < b.Tenant
		}
		return a.ID < b.ID
	})

	bw := bufio.NewWriterSize(w, 64<<10)
	head, err := json.Marshal(snapshotHeader{Format: snapshotFormat, Written: now})
	if err != nil {
		return 0, err
	}
	bw.Write(head[:len(head)-1]) // without its closing brace; bufio keeps the first error for Flush
	bw.WriteString(`,"sessions":[`)
	for i, sr := range recs {
		js, err := sessioncodec.JSON(sr.Session)
		if err != nil {
			return 0, fmt.Errorf("encode session %q: %w", sr.Key.String(), err)
		}
		sr.Session = js
		b, err := json.Marshal(sr)
		if err != nil {
			return 0, fmt.Errorf("encode session %q: %w", sr.Key.String(), err)
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n")
		bw.Write(b)
	}
	bw.WriteString("\n]}\n")
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	return len(recs), nil
}

// ReadSnapshot reads a document that Snapshot wrote and returns its sessions in the
// order they were written, expired ones included (each has its absolute expiry). It
// is all or nothing: a document that is not valid JSON, has another format, or holds
// a session twice, one that does not decode, whose key differs from its record's, or
// that fails arbiter.Session.Check (a call naming a job that does not exist, a gap in
// the effect log, ...) returns no sessions and an error saying what is wrong and in
// which session.
func ReadSnapshot(r io.Reader) ([]Record, error) {
	var f snapshotFile
	dec := json.NewDecoder(r)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a session snapshot: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a session snapshot: data after the document")
	}
	if f.Format != snapshotFormat {
		return nil, fmt.Errorf("snapshot format %q, want %q", f.Format, snapshotFormat)
	}
	if f.Sessions == nil {
		return nil, errors.New("not a session snapshot: no sessions list")
	}
	recs := make([]Record, 0, len(*f.Sessions))
	seen := make(map[arbiter.SessionKey]bool, len(*f.Sessions))
	for i, sr := range *f.Sessions {
		if sr.Key.ID == "" {
			return nil, fmt.Errorf("session %d: no key id", i+1)
		}
		if seen[sr.Key] {
			return nil, fmt.Errorf("session %q: twice in the snapshot", sr.Key.String())
		}
		seen[sr.Key] = true
		r := Record{Key: sr.Key, Version: sr.Version, Session: bytes.Clone(sr.Session)}
		if sr.Expires != nil {
			r.Expires = *sr.Expires
		}
		if err := checkRecord(r); err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// Restore reads a document that Snapshot wrote (see ReadSnapshot, whose errors it
// returns, restoring nothing) and adds its sessions to the store, each with its
// version (so compare-and-set goes on from where it was) and its absolute expiry; a
// session already stored under the same key is replaced, others stay. Sessions
// already expired by the store's clock are skipped. It returns how many sessions it
// restored. MaxSessions is not applied: every live session in the document is
// restored, and new sessions are refused until the count falls below the limit.
// Watchers of a restored session are woken. A store on a Disk refuses to restore
// (memory would hold what the disk does not): import into the disk instead
// (boltdisk.Open converts a snapshot file). Safe for concurrent use; meant for
// start-up, before the store serves.
func (m *Store) Restore(r io.Reader) (int, error) {
	if m.disk != nil {
		return 0, errors.New("restore: the store is on a disk; import the snapshot into the disk instead")
	}
	recs, err := ReadSnapshot(r)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, sr := range recs {
		nr := &record{data: sr.Session, version: sr.Version, expires: sr.Expires}
		if m.expired(nr) {
			continue
		}
		m.storeLocked(sr.Key, nr)
		n++
	}
	return n, nil
}
