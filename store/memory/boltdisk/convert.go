package boltdisk

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/voicearbiter/arbiter/store/memory"
)

// convert turns the JSON snapshot at path (what --state-file held before it was a
// database) into a database at path, keeping the snapshot as path.bak. The steps
// leave at every instant either the snapshot or the database at path, never
// neither: the database is built beside it (path.convert, synced), the snapshot is
// copied to path.bak (synced), and only then is the database renamed over path (and
// the directory synced). A crash before the rename converts again at the next start.
// The snapshot is read with memory.ReadSnapshot: one that it refuses is an error
// naming path, and nothing is written.
func convert(path string, opts Options) error {
	start := time.Now()
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	recs, err := memory.ReadSnapshot(bufio.NewReaderSize(f, 64<<10))
	_ = f.Close()
	if err != nil {
		return fmt.Errorf("read session state %s: %w", path, err)
	}
	tmp, bak := path+".convert", path+".bak"
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("convert %s: %w", path, err)
	}
	db, err := openDB(tmp, opts)
	if err != nil {
		return fmt.Errorf("convert %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(sessionsBucket)
		for _, r := range recs {
			if err := b.Put(encodeKey(r.Key), encodeValue(r)); err != nil {
				return fmt.Errorf("session %q: %w", r.Key.String(), err)
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = copyFile(path, bak)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("convert %s: %w", path, err)
	}
	opts.Log.Info("state file converted from a JSON snapshot to a database", "state_file", path,
		"sessions", len(recs), "snapshot_kept_as", bak, "took", time.Since(start).Round(time.Microsecond))
	return nil
}

// copyFile copies src to dst (mode 0600, replacing it) through a synced temporary
// file renamed over dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(out.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(out.Name())
	}
	return err
}

// syncDir makes the renames in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
