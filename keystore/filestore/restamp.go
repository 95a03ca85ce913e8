package filestore

import (
	"time"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// restamp brings every instant of the file that is later than base, the
// host's clock at an Open that found the file ahead of it, back to base or
// before, so that no age reads negative and no lease outlasts its grant.
// The earlier Open whose clock wrote them was fast (or this one is slow):
// either way when those records truly happened is known only to lie
// between floor, the latest instant of the file not after base, and base.
// So each instant takes the bound that keeps every rule safe:
//
//   - CreatedAt becomes floor: the key's age reads as long as it can be,
//     never younger (an old key is settled by lookup, never resent blind);
//   - ClosedAt and UpdatedAt become base: a closed age reads as short as it
//     can be, so Expire never deletes early;
//   - LeaseUntil keeps the length granted (LeaseUntil − UpdatedAt) from base.
//
// It returns how many records it rewrote, and floor.
func restamp(tx *bolt.Tx, base time.Time) (n int, floor time.Time, err error) {
	recs := tx.Bucket(bucketRecords)
	var ahead [][]byte
	err = recs.ForEach(func(k, v []byte) error {
		r, err := decodeEntry(k, v)
		if err != nil {
			return err
		}
		if t := latest(time.Time{}, r); t.After(base) {
			ahead = append(ahead, append([]byte(nil), k...))
		}
		for _, t := range []time.Time{r.CreatedAt, r.UpdatedAt, r.ClosedAt} {
			if !t.After(base) && t.After(floor) {
				floor = t
			}
		}
		return nil
	})
	if err != nil {
		return 0, floor, err
	}
	if floor.IsZero() {
		floor = time.Unix(0, 0).UTC()
	}
	for _, k := range ahead {
		cur, err := decodeEntry(k, recs.Get(k))
		if err != nil {
			return n, floor, err
		}
		next := restamped(cur, base, floor)
		if err := recs.Put(k, encodeRecord(next)); err != nil {
			return n, floor, err
		}
		if err := reindex(tx, cur, next, true); err != nil {
			return n, floor, err
		}
		n++
	}
	return n, floor, nil
}

// restamped is r with its instants after base brought back (see restamp).
func restamped(r idempay.Record, base, floor time.Time) idempay.Record {
	if r.LeaseUntil.After(base) {
		r.LeaseUntil = base.Add(max(r.LeaseUntil.Sub(r.UpdatedAt), 0))
	}
	if r.CreatedAt.After(base) {
		r.CreatedAt = floor
	}
	if r.UpdatedAt.After(base) {
		r.UpdatedAt = base
	}
	if r.ClosedAt.After(base) {
		r.ClosedAt = base
	}
	return r
}
