package filestore

import (
	"time"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// verify reads the whole file once when it is opened, so that damage is
// found at Open rather than in the middle of a charge: every record is
// decoded, every index entry read, the indexes counted against the records
// (as bbolt leaves them, they always agree) and then bbolt's own check run
// (pages referenced twice, freed and in use, or lost). It must run under
// recoverFault: it touches every page on the calling goroutine first, where a
// fault is recoverable, before bbolt's check reads them on its own one.
// It returns the latest instant stamped in any record (see clock).
//
// It costs a read of the file: BenchmarkOpen opens a file of a million
// records (840 MB as bbolt fills it) in 0.7 to 2 s on a busy shared 2-core
// machine with the file in the page cache, a tenth of that for 100,000;
// plus the reading from disk when it is not cached.
func verify(tx *bolt.Tx) (last time.Time, err error) {
	format, err := readFormat(tx)
	if err != nil || format == 0 {
		return last, err
	}
	var open, closed int
	err = tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
		ns, id, err := splitRecordKey(k)
		if err != nil {
			return err
		}
		r, err := skimRecord(ns, id, v)
		if err != nil {
			return err
		}
		if r.State.Closed() {
			closed++
		} else {
			open++
		}
		last = latest(last, r)
		return nil
	})
	if err != nil {
		return last, err
	}
	if n := countKeys(tx.Bucket(bucketOpen)); n != open {
		return last, corrupt("the open index has %d entries for %d open records", n, open)
	}
	if n := countKeys(tx.Bucket(bucketClosed)); n != closed {
		return last, corrupt("the closed index has %d entries for %d closed records", n, closed)
	}
	countKeys(tx.Bucket(bucketMeta))
	return last, boltCheck(tx)
}

// latest is the later of t and the instants r was stamped at.
func latest(t time.Time, r idempay.Record) time.Time {
	for _, u := range []time.Time{r.CreatedAt, r.UpdatedAt, r.ClosedAt} {
		if u.After(t) {
			t = u
		}
	}
	return t
}

// countKeys reads every entry of b and counts them; a nested bucket, which
// the store never makes, is counted twice so that the counts disagree.
func countKeys(b *bolt.Bucket) int {
	n := 0
	b.ForEach(func(_, v []byte) error {
		n++
		if v == nil {
			n++
		}
		return nil
	})
	return n
}

// boltCheck runs bbolt's consistency check. It reads all of the check's
// errors, since the check's goroutine reads the file until it has sent
// them all, and must be done before the transaction ends.
func boltCheck(tx *bolt.Tx) error {
	var first error
	n := 0
	for err := range tx.Check() {
		if first == nil {
			first = err
		}
		n++
	}
	if first != nil {
		return corrupt("bbolt's check found %d errors, the first: %v", n, first)
	}
	return nil
}
