package filestore

import (
	"bytes"
	"context"
	"fmt"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// ListOpen implements idempay.KeyStore: it returns up to limit open and
// pending records of the namespace that come strictly after the cursor in
// (CreatedAt, IntentID) order. It reads the index of open records, whose
// keys sort in that order, from the cursor on, so neither closed records
// nor the pages before the cursor cost it anything.
func (s *Store) ListOpen(ctx context.Context, namespace string, after idempay.Cursor, limit int) ([]idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("filestore: list open %q: limit %d is not positive", namespace, limit)
	}
	var out []idempay.Record
	// The index is in the file: what is written in memory goes there
	// first.
	err := s.flush()
	if err == nil {
		err = s.faultSafe(func() error {
			return s.db.View(func(tx *bolt.Tx) (err error) {
				out, err = listOpen(tx, namespace, after, limit)
				return err
			})
		})
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: list open %q: %w", namespace, err)
	}
	return out, nil
}

func listOpen(tx *bolt.Tx, namespace string, after idempay.Cursor, limit int) ([]idempay.Record, error) {
	prefix := nsPrefix(namespace)
	from := openKey(namespace, after.CreatedAt, after.ID)
	recs := tx.Bucket(bucketRecords)
	var out []idempay.Record
	c := tx.Bucket(bucketOpen).Cursor()
	k, _ := c.Seek(from)
	if bytes.Equal(k, from) {
		k, _ = c.Next() // strictly after the cursor
	}
	for ; k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, _ = c.Next() {
		r, err := openRecord(recs, namespace, k)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// openRecord returns the record that open index key k of the namespace
// names, after checking that the index tells the truth about it.
func openRecord(recs *bolt.Bucket, namespace string, k []byte) (idempay.Record, error) {
	ns, id, err := splitOpenKey(k)
	if err != nil {
		return idempay.Record{}, err
	}
	r, err := decodeEntry(recordKey(ns, id), recs.Get(recordKey(ns, id)))
	if err != nil {
		return idempay.Record{}, err
	}
	if ns != namespace || r.State.Closed() || !bytes.Equal(openKeyOf(r), k) {
		return idempay.Record{}, corrupt("the open index entry %q names record %q/%q, %s, created %v", k, ns, id, r.State, r.CreatedAt)
	}
	return r, nil
}
