package boltdisk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// The start of a bbolt file as bbolt v1.x writes it (go.etcd.io/bbolt
// internal/common: Page, Meta), in the machine's byte order, which is little-endian
// on every platform the server is built for. Pages 0 and 1 are the two meta pages;
// bbolt uses the valid one with the higher transaction id.
const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	pageHeaderSize = 16 // id u64, flags u16, count u16, overflow u32
	// metaSize is the meta up to its checksum (magic, version, pageSize, flags: u32;
	// root bucket: root u64, sequence u64; freelist, pgid, txid: u64), which the
	// checksum (FNV-64a) covers.
	metaSize = 4*4 + 16 + 3*8
)

// boltMeta is what checkFile reads of a meta page.
type boltMeta struct {
	pageSize uint32
	pgid     uint64 // the high water mark: pages [0, pgid) hold the database
	txid     uint64
}

// readMeta reads and validates the meta page at off, or says what is wrong with it.
func readMeta(f *os.File, off int64) (boltMeta, error) {
	buf := make([]byte, pageHeaderSize+metaSize+8)
	if _, err := f.ReadAt(buf, off); err != nil {
		return boltMeta{}, fmt.Errorf("meta page at byte %d cannot be read: %v", off, err)
	}
	m := buf[pageHeaderSize:]
	le := binary.LittleEndian
	switch {
	case le.Uint32(m[0:4]) != boltMagic:
		return boltMeta{}, fmt.Errorf("meta page at byte %d: no bbolt marker", off)
	case le.Uint32(m[4:8]) != boltVersion:
		return boltMeta{}, fmt.Errorf("meta page at byte %d: bbolt format version %d, want %d", off, le.Uint32(m[4:8]), boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:metaSize])
	if h.Sum64() != le.Uint64(m[metaSize:]) {
		return boltMeta{}, fmt.Errorf("meta page at byte %d: checksum mismatch", off)
	}
	return boltMeta{pageSize: le.Uint32(m[8:12]), pgid: le.Uint64(m[16+16+8 : 16+16+16]), txid: le.Uint64(m[16+16+16 : 16+16+24])}, nil
}

// damaged is a fault checkFile or walk found in the file.
type damaged struct{ msg string }

func (d *damaged) Error() string { return d.msg }

func damage(format string, args ...any) error { return &damaged{fmt.Sprintf(format, args...)} }

// checkFile checks the file at path before bbolt maps it, because bbolt trusts its
// file: a page beyond the end of a truncated file is a SIGBUS when read through the
// map, and a damaged page a panic (some of them in goroutines of bbolt's own, where
// no recover can catch them). A missing file passes (Open creates it). It refuses,
// with an error naming the fault (a *damaged, or bolt.ErrInvalid for a file
// that is not a bbolt database at all):
//
//   - an empty file: a database always has its meta pages, so an empty file is a
//     write that was lost (or a file made by hand), never a new store;
//   - a file whose two meta pages are both unreadable or invalid (a torn or
//     overwritten start);
//   - a file shorter than the pages its newest valid meta says the database has
//     (truncated);
//
// A database whose pages do not all read back as a tree of buckets, keys and values
// is refused by walk, which Open runs next on a read-only bbolt handle.
//
// exists reports whether there is a file at path. torn is not empty when one meta page
// is invalid and the other valid: bbolt then opens the valid one. After a crash
// during a commit's meta write that is recovery (the commit never answered); damage
// to the start of the file looks the same and loses the last commit when the invalid
// page was the newer, so Open logs a warning (a refusal would stop every restart
// after such a crash).
func checkFile(path string) (exists bool, torn string, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, "", nil
	}
	if err != nil {
		return false, "", err // an *fs.PathError: "open PATH: ..."
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return true, "", fmt.Errorf("stat %s: %w", path, err)
	}
	size := fi.Size()
	if size == 0 {
		return true, "", damage("the file is empty (0 bytes): a database always has its meta pages, so its contents were lost (a write that never reached the disk, or a file truncated by hand); restore it from a backup, or remove it to start with no sessions")
	}
	m0, err0 := readMeta(f, 0)
	var m1 boltMeta
	var err1 error
	switch {
	case err0 == nil:
		m1, err1 = readMeta(f, int64(m0.pageSize))
	default:
		m1, err1 = readMeta(f, int64(os.Getpagesize()))
	}
	var m boltMeta
	switch {
	case err0 != nil && err1 != nil:
		if size < 2*pageHeaderSize+metaSize || errors.Is(err0, io.EOF) {
			return true, "", fmt.Errorf("%w: %v (the file is %d bytes: truncated, or not a database)", bolt.ErrInvalid, err0, size)
		}
		return true, "", fmt.Errorf("%w: %v; %v", bolt.ErrInvalid, err0, err1)
	case err0 != nil:
		m, torn = m1, err0.Error()
	case err1 != nil:
		m, torn = m0, err1.Error()
	case m1.txid > m0.txid:
		m = m1
	default:
		m = m0
	}
	if m.pageSize == 0 || m.pgid < 2 {
		return true, "", damage("meta page says page size %d and %d pages", m.pageSize, m.pgid)
	}
	if need := int64(m.pgid) * int64(m.pageSize); size < need {
		return true, "", damage("truncated: the file is %d bytes, its database has %d pages of %d bytes (%d bytes); restore it from a backup", size, m.pgid, m.pageSize, need)
	}
	return true, torn, nil
}

// walk reads every bucket, key and value of db in one read transaction, turning a
// panic or a memory fault inside bbolt (a damaged page) into an error. Only this
// goroutine reads (bbolt spawns none for a read transaction of a read-only DB).
func walk(db *bolt.DB) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = damage("a page does not read back (%v)", r)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return walkBucket(b)
		})
	})
}

func walkBucket(b *bolt.Bucket) error {
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			if sub := b.Bucket(k); sub != nil {
				return walkBucket(sub)
			}
			return nil
		}
		var sum byte
		for _, c := range v { // read every byte: a fault shows here, not later
			sum ^= c
		}
		_ = sum
		return nil
	})
}
