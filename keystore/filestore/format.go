package filestore

import (
	"errors"
	"fmt"
	"time"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// ErrFormat is returned, wrapped, by Open when the file is a bbolt database
// that this package did not create, or that a newer version of it wrote in a
// format this version cannot read.
var ErrFormat = errors.New("filestore: unknown file format")

// File formats: the layout of buckets and keys, stored in the meta bucket.
// Record encodings carry their own format byte (see codec.go).
const (
	// fileFormat1 keyed the closed index by CreatedAt. Open migrates it.
	fileFormat1 byte = 1
	// fileFormat keys the closed index by ClosedAt.
	fileFormat byte = 2
)

var (
	bucketRecords = []byte("records")
	bucketOpen    = []byte("open")
	bucketClosed  = []byte("closed")
	bucketMeta    = []byte("meta")
	metaFormat    = []byte("format")
	// metaClosedBy is written by Close and deleted by Open: its presence
	// at Open says that the last holder closed the store rather than died
	// (see prepare).
	metaClosedBy = []byte("closed-by-holder")
)

// readFormat returns the file format of the file, 0 for a bbolt file with
// no buckets at all (a file whose creation stopped before its first
// transaction: it cannot hold a record), or an error matching ErrFormat.
func readFormat(tx *bolt.Tx) (byte, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		// A file with buckets but no meta bucket belongs to someone
		// else: writing ours into it would mix two programs' data.
		return 0, tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			return fmt.Errorf("%w: unexpected bucket %q", ErrFormat, name)
		})
	}
	v := meta.Get(metaFormat)
	if len(v) != 1 || (v[0] != fileFormat1 && v[0] != fileFormat) {
		return 0, fmt.Errorf("%w: version %v, this version reads %d and %d", ErrFormat, v, fileFormat1, fileFormat)
	}
	for _, name := range [][]byte{bucketRecords, bucketOpen, bucketClosed} {
		if tx.Bucket(name) == nil {
			return 0, corrupt("bucket %q is missing", name)
		}
	}
	return v[0], nil
}

// newFile creates the buckets of a new file, in the current format.
func newFile(tx *bolt.Tx) error {
	meta, err := tx.CreateBucket(bucketMeta)
	if err != nil {
		return err
	}
	if err := meta.Put(metaFormat, []byte{fileFormat}); err != nil {
		return err
	}
	for _, name := range [][]byte{bucketRecords, bucketOpen, bucketClosed} {
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	return nil
}

// prepare is the write transaction of Open, on a file verify has read: it
// creates the buckets of a file that has none, migrates a file of format 1,
// and voids every lease in the file unless the last holder closed the
// store (see voidLeases). It reports how many leases it voided.
func prepare(tx *bolt.Tx) (voided int, err error) {
	format, err := readFormat(tx)
	switch {
	case err != nil:
		return 0, err
	case format == 0:
		return 0, newFile(tx)
	case format == fileFormat1:
		if err := migrate1(tx); err != nil {
			return 0, fmt.Errorf("migrating from file format 1: %w", err)
		}
	}
	meta := tx.Bucket(bucketMeta)
	closed := meta.Get(metaClosedBy) != nil
	if err := meta.Delete(metaClosedBy); err != nil {
		return 0, err
	}
	if closed {
		return 0, nil
	}
	return voidLeases(tx)
}

// markClosed is the last write of Close.
func (s *Store) markClosed(tx *bolt.Tx) error {
	if s.host != nil {
		if err := writeLastSeen(tx, s.now()); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketMeta).Put(metaClosedBy, []byte{1})
}

// migrate1 turns a file of format 1 into format 2, in the transaction that
// opens it: the closed index, keyed by CreatedAt in format 1, is rebuilt
// from the records, keyed by ClosedAt (which decodeRecord reads from a
// format 1 record's UpdatedAt). Records keep their format 1 encoding until
// they are next written, and the open index is the same in both formats.
// If the transaction fails, nothing has changed and the next Open migrates
// again; run twice, it gives the same file.
func migrate1(tx *bolt.Tx) error {
	if err := tx.DeleteBucket(bucketClosed); err != nil {
		return err
	}
	closed, err := tx.CreateBucket(bucketClosed)
	if err != nil {
		return err
	}
	err = tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
		r, err := decodeEntry(k, v)
		if err != nil || !r.State.Closed() {
			return err
		}
		return closed.Put(closedKeyOf(r), nil)
	})
	if err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(metaFormat, []byte{fileFormat})
}

// voidLeases clears the lease of every open and pending record. Open holds
// the file's exclusive lock, which no process can hold while another does,
// so every earlier holder has released the file; when it did so without
// Close (killed, crashed, or the machine stopped) its flights are dead, and
// the intents they held can be resumed at once instead of after their
// leases run out. After a Close the process may live on, with flights still
// sending after their store was closed (a Client closed after its store),
// so prepare keeps the leases then: they run out on their own.
func voidLeases(tx *bolt.Tx) (int, error) {
	recs := tx.Bucket(bucketRecords)
	n := 0
	c := tx.Bucket(bucketOpen).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		ns, id, err := splitOpenKey(k)
		if err != nil {
			return n, err
		}
		rk := recordKey(ns, id)
		r, err := decodeEntry(rk, recs.Get(rk))
		if err != nil {
			return n, err
		}
		if r.LeaseOwner == "" && r.LeaseUntil.IsZero() {
			continue
		}
		r.LeaseOwner, r.LeaseUntil = "", time.Time{}
		if err := recs.Put(rk, encodeRecord(r)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// decodeEntry decodes the record stored under record key k; v nil means the
// key names no record, which an index entry never should.
func decodeEntry(k, v []byte) (idempay.Record, error) {
	ns, id, err := splitRecordKey(k)
	if err != nil {
		return idempay.Record{}, err
	}
	if v == nil {
		return idempay.Record{}, corrupt("an index names record %q/%q, which is missing", ns, id)
	}
	return decodeRecord(ns, id, v)
}
