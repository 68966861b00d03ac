// Package boltdisk keeps the embedded store's sessions in one bbolt database file
// (go.etcd.io/bbolt): the memory.Disk under `arbiter serve --state-file`. Every
// write is committed and synced (fdatasync) before it returns. Concurrent writes are
// group-committed: the writes that arrive while a commit is syncing queue up, and the
// first of them, once that commit is done, commits them all in one transaction (as
// LevelDB's writers do). A lone writer commits in its own goroutine at once: one
// transaction, no hand-off to another goroutine and no timer (bbolt's DB.Batch waits
// up to 10 ms for company).
//
// The file holds two buckets: "meta", whose key "format" names the layout
// ("arbiter-memory-store/bolt-v1"; Open refuses any other), and "sessions", one key
// per session:
//
//	key:   uvarint(len(tenant)) tenant id
//	value: 0x01 | version (8 bytes, big-endian) | expiry (8 bytes, big-endian Unix
//	       nanoseconds on the store's clock; 0: never) | the session as
//	       sessioncodec.Encode wrote it (its own first byte names its format: 0x02
//	       S2-compressed protobuf; 0x01 protobuf and JSON, starting '{', as earlier
//	       versions wrote it, are read too)
//
// Open converts a JSON snapshot (the state file of earlier versions) found at the
// path into a database once, keeping the snapshot as PATH.bak.
package boltdisk

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/memory"
)

// Format names the file's layout, stored under meta/format.
const Format = "arbiter-memory-store/bolt-v1"

var (
	metaBucket     = []byte("meta")
	sessionsBucket = []byte("sessions")
	formatKey      = []byte("format")
)

// recordV1 is the first byte of a session value in Format.
const recordV1 = 1

// Options configures Open. The zero value is the default for each field.
type Options struct {
	// LockTimeout is how long Open waits for another process to let go of the file
	// (bbolt holds an exclusive lock on it while open). Zero means 5 seconds.
	LockTimeout time.Duration
	// MaxBatch is the most writes one commit carries; more wait for the next. Zero
	// means 1024.
	MaxBatch int
	// Log receives the line saying a JSON snapshot was converted. Nil means
	// slog.Default().
	Log *slog.Logger
}

// Disk is a memory.Disk on a bbolt file. It is safe for concurrent use.
type Disk struct {
	db       *bolt.DB
	path     string
	maxBatch int

	mu     sync.Mutex
	queue  []*op      // waiting for the commit under way to finish
	leader bool       // a writer is committing; a non-empty queue always has one
	idle   *sync.Cond // signalled when leader turns false
	closed bool

	failed  atomic.Bool // the last commit failed
	commits atomic.Uint64
	puts    atomic.Uint64
	deletes atomic.Uint64
}

// op is one write: a Put (val set) or a DeleteExpired (keys), or neither (a probe:
// an empty commit).
type op struct {
	key  []byte
	val  []byte
	keys []arbiter.SessionKey
	now  time.Time
	res  chan result // buffered 1
}

// result is what a queued writer hears: its write's outcome, or that it is to
// commit the queue.
type result struct {
	err  error
	lead bool
}

// ErrClosed is the error of a write to a closed Disk.
var ErrClosed = errors.New("boltdisk: closed")

// Open opens (creating it if missing, mode 0600) the database at path. A JSON
// snapshot at path is converted first (see the package doc). Errors name the file:
// it cannot be opened or created, another process holds it past LockTimeout, it is
// neither an arbiter database nor a snapshot, or the snapshot is refused (as
// memory.ReadSnapshot refuses it; the file is then left as it was). An existing file
// is checked before bbolt opens it for writing (see checkFile and walk): an empty
// file (its contents lost: a database always has its meta pages), a truncated one
// (shorter than the pages its meta page counts) or one with a page that does not
// read back is refused as damaged, naming the fault, and left as it was; bbolt's
// panics and faults on such a file are caught and reported the same way, never a
// crash and never an empty store in its place.
func Open(path string, opts Options) (*Disk, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 5 * time.Second
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 1024
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	snapshot, err := isSnapshot(path)
	if err != nil {
		return nil, err
	}
	if snapshot {
		if err := convert(path, opts); err != nil {
			return nil, err
		}
	}
	db, err := openDB(path, opts)
	if err != nil {
		return nil, err
	}
	return newDisk(db, path, opts.MaxBatch), nil
}

// openDB opens the bbolt file at path and checks (or, in a new file, writes) its
// format.
func openDB(path string, opts Options) (db *bolt.DB, err error) {
	exists, torn, err := checkFile(path)
	if err != nil {
		return nil, describe(path, opts, err)
	}
	if torn != "" {
		opts.Log.Warn("state file: one of its two meta pages is invalid, so it opens at the other, the commit before: after a crash during a commit (that commit never answered) this is recovery; otherwise the file's start was damaged and its last commit is gone: restore the file from a backup",
			"state_file", path, "fault", torn)
	}
	if exists {
		// Read every page once, read-only and in this goroutine, before bbolt opens
		// the file for writing: that open rebuilds the free list by walking the pages
		// in a goroutine of its own, where a damaged page would be a panic no recover
		// catches.
		ro, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout, ReadOnly: true})
		if err != nil {
			return nil, describe(path, opts, err)
		}
		err = walk(ro)
		_ = ro.Close()
		if err != nil {
			return nil, describe(path, opts, err)
		}
	}
	defer func() {
		// bbolt panics on pages it does not expect; walk read them all, so this is
		// a last resort (a page damaged between the two opens).
		if r := recover(); r != nil {
			if db != nil {
				_ = db.Close()
			}
			db, err = nil, describe(path, opts, damage("bbolt: %v", r))
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{
		Timeout: opts.LockTimeout,
		// The freelist is rebuilt at open instead of written at every commit (what
		// etcd does): fewer pages per commit.
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if err != nil {
		return nil, describe(path, opts, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(metaBucket)
		if meta == nil {
			empty := true
			_ = tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
			if !empty {
				return errors.New("a bbolt database of something else (no meta bucket)")
			}
			return initDB(tx)
		}
		if f := meta.Get(formatKey); string(f) != Format {
			return fmt.Errorf("database format %q, want %q", f, Format)
		}
		if tx.Bucket(sessionsBucket) == nil {
			return errors.New("no sessions bucket")
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return db, nil
}

// describe is the error Open returns for err, met opening the file at path: it names
// the file and the fault.
func describe(path string, opts Options, err error) error {
	var d *damaged
	switch {
	case errors.Is(err, bolt.ErrTimeout):
		return fmt.Errorf("%s: another process has it open (waited %v for its lock)", path, opts.LockTimeout)
	case errors.As(err, &d):
		return fmt.Errorf("%s: refused, the session database is damaged: %v", path, err)
	case errors.Is(err, bolt.ErrInvalid), errors.Is(err, bolt.ErrVersionMismatch), errors.Is(err, bolt.ErrChecksum):
		return fmt.Errorf("%s: neither a session database nor a JSON session snapshot: %v", path, err)
	}
	if errors.As(err, new(*fs.PathError)) {
		return err // names the file and the operation already ("open PATH: permission denied")
	}
	return fmt.Errorf("open %s: %w", path, err)
}

func newDisk(db *bolt.DB, path string, maxBatch int) *Disk {
	d := &Disk{db: db, path: path, maxBatch: maxBatch}
	d.idle = sync.NewCond(&d.mu)
	return d
}

// initDB writes the buckets and format of a new file.
func initDB(tx *bolt.Tx) error {
	meta, err := tx.CreateBucket(metaBucket)
	if err != nil {
		return err
	}
	if err := meta.Put(formatKey, []byte(Format)); err != nil {
		return err
	}
	_, err = tx.CreateBucket(sessionsBucket)
	return err
}

// Put implements memory.Disk.
func (d *Disk) Put(r memory.Record) error {
	return d.submit(&op{key: encodeKey(r.Key), val: encodeValue(r)})
}

// DeleteExpired implements memory.Disk.
func (d *Disk) DeleteExpired(keys []arbiter.SessionKey, now time.Time) error {
	return d.submit(&op{keys: keys, now: now})
}

// Ping implements memory.Disk: nil while the last commit succeeded, ErrClosed once
// closed; after a failed commit it commits an empty transaction (two syncs) to see
// whether the file can be written again, waiting at most until ctx ends.
func (d *Disk) Ping(ctx context.Context) error {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if !d.failed.Load() {
		return nil
	}
	res := make(chan error, 1)
	go func() { res <- d.submit(&op{}) }()
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%s: a test write did not finish: %w", d.path, ctx.Err())
	}
}

// submit writes o and returns once it is committed. With no commit under way the
// caller commits at once; otherwise it queues and waits to hear either its outcome
// or that it leads the next commit (of everything queued by then).
func (d *Disk) submit(o *op) error {
	o.res = make(chan result, 1)
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	d.queue = append(d.queue, o)
	if d.leader {
		d.mu.Unlock()
		if r := <-o.res; !r.lead {
			return r.err
		}
		d.mu.Lock()
	}
	d.leader = true
	d.commitQueueLocked()
	return (<-o.res).err
}

// commitQueueLocked commits the front of the queue (o's own op first among them), at
// most maxBatch ops, then hands the lead to the first op still queued, or lets it go.
// Called with d.mu held, by the leader; returns with it released.
func (d *Disk) commitQueueLocked() {
	n := min(len(d.queue), d.maxBatch)
	batch := d.queue[:n:n]
	d.queue = d.queue[n:]
	d.mu.Unlock()
	d.commit(batch)
	d.mu.Lock()
	d.handOffLocked()
	d.mu.Unlock()
}

// handOffLocked makes the first queued op's writer the leader, or, with none queued,
// ends the lead.
func (d *Disk) handOffLocked() {
	if len(d.queue) > 0 {
		d.queue[0].res <- result{lead: true}
		return
	}
	d.leader = false
	d.idle.Broadcast()
}

// commit writes batch in one transaction and answers each op: the commit's error,
// else the op's own (a write refused by bbolt, which leaves the rest alone).
func (d *Disk) commit(batch []*op) {
	errs := make([]error, len(batch))
	err := d.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(sessionsBucket)
		for i, o := range batch {
			errs[i] = apply(b, o)
		}
		return nil
	})
	d.commits.Add(1)
	d.failed.Store(err != nil)
	for i, o := range batch {
		if err != nil {
			errs[i] = fmt.Errorf("%s: commit: %w", d.path, err)
		}
		switch {
		case errs[i] != nil:
		case o.val != nil:
			d.puts.Add(1)
		case len(o.keys) > 0:
			d.deletes.Add(1)
		}
		o.res <- result{err: errs[i]}
	}
}

// apply does one op inside the transaction.
func apply(b *bolt.Bucket, o *op) error {
	if o.val != nil {
		return b.Put(o.key, o.val)
	}
	for _, k := range o.keys {
		kb := encodeKey(k)
		v := b.Get(kb)
		if v == nil {
			continue
		}
		_, expires, _, err := decodeValue(v)
		if err != nil || expires.IsZero() || o.now.Before(expires) {
			continue // a live record (a new lifetime), or one Open will report
		}
		if err := b.Delete(kb); err != nil {
			return err
		}
	}
	return nil
}

// Records implements memory.Disk, in key order.
func (d *Disk) Records(fn func(memory.Record) error) error {
	return d.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(sessionsBucket).ForEach(func(k, v []byte) error {
			key, err := decodeKey(k)
			if err != nil {
				return fmt.Errorf("%s: record %q: %v", d.path, k, err)
			}
			version, expires, session, err := decodeValue(v)
			if err != nil {
				return fmt.Errorf("%s: session %q: %v", d.path, key.String(), err)
			}
			return fn(memory.Record{Key: key, Version: version, Expires: expires, Session: bytes.Clone(session)})
		})
	})
}

// Stats counts what the Disk did since Open.
type Stats struct {
	// Commits is how many transactions were committed (or failed to); each successful
	// one synced the file twice (data pages, then the meta page).
	Commits uint64
	// Puts and Deletes are how many Put and DeleteExpired calls were committed.
	Puts, Deletes uint64
}

// Stats returns the counts so far. Safe for concurrent use.
func (d *Disk) Stats() Stats {
	return Stats{Commits: d.commits.Load(), Puts: d.puts.Load(), Deletes: d.deletes.Load()}
}

// Path returns the file's path.
func (d *Disk) Path() string { return d.path }

// Close implements memory.Disk: it waits for the writes under way and queued, then
// closes the file. Later writes fail with ErrClosed. Idempotent.
func (d *Disk) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	for d.leader {
		d.idle.Wait()
	}
	d.mu.Unlock()
	return d.db.Close()
}

// encodeKey is a session's key in the sessions bucket: the tenant's length, the
// tenant, the id.
func encodeKey(k arbiter.SessionKey) []byte {
	b := binary.AppendUvarint(make([]byte, 0, 1+len(k.Tenant)+len(k.ID)), uint64(len(k.Tenant)))
	return append(append(b, k.Tenant...), k.ID...)
}

func decodeKey(b []byte) (arbiter.SessionKey, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return arbiter.SessionKey{}, errors.New("malformed key")
	}
	return arbiter.SessionKey{Tenant: string(b[w : w+int(n)]), ID: string(b[w+int(n):])}, nil
}

// valueHeader is the length of a value before the session: format, version, expiry.
const valueHeader = 1 + 8 + 8

func encodeValue(r memory.Record) []byte {
	v := make([]byte, valueHeader, valueHeader+len(r.Session))
	v[0] = recordV1
	binary.BigEndian.PutUint64(v[1:9], r.Version)
	if !r.Expires.IsZero() {
		binary.BigEndian.PutUint64(v[9:17], uint64(r.Expires.UnixNano()))
	}
	return append(v, r.Session...)
}

// decodeValue returns a value's version, expiry and session (which aliases v).
func decodeValue(v []byte) (uint64, time.Time, []byte, error) {
	if len(v) < valueHeader {
		return 0, time.Time{}, nil, fmt.Errorf("record of %d bytes, shorter than its header", len(v))
	}
	if v[0] != recordV1 {
		return 0, time.Time{}, nil, fmt.Errorf("record format %d, want %d", v[0], recordV1)
	}
	var expires time.Time
	if ns := binary.BigEndian.Uint64(v[9:17]); ns != 0 {
		expires = time.Unix(0, int64(ns)).UTC()
	}
	return binary.BigEndian.Uint64(v[1:9]), expires, v[valueHeader:], nil
}

// isSnapshot reports whether the file at path is a JSON snapshot: its first byte
// other than white space is '{' (a bbolt file starts with a binary page header). A
// missing file is not.
func isSnapshot(path string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err // an *fs.PathError: "open PATH: ..."
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, err := f.Read(buf)
	if n == 0 && err != nil {
		return false, nil // empty: bbolt initialises it
	}
	t := bytes.TrimLeft(buf[:n], " \t\r\n")
	return len(t) > 0 && t[0] == '{', nil
}
