package filestore

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// BenchmarkOpen measures Open, which reads the whole file once (verify),
// on files of closed records as the sweep leaves them (a week of charges):
//
//	go test -run '^$' -bench Open -benchtime 5x ./keystore/filestore
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "keys.db")
			fillFile(b, path, n)
			b.ResetTimer()
			for range b.N {
				s, err := Open(path, WithSweepInterval(0))
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			if fi, err := os.Stat(path); err == nil {
				b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
			}
		})
	}
}

// fillFile writes a store file of n succeeded records directly with bbolt,
// in large transactions, in the store's layout.
func fillFile(b *testing.B, path string, n int) {
	s, err := Open(path, WithSweepInterval(0))
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; {
		err := db.Update(func(tx *bolt.Tx) error {
			for end := min(i+50_000, n); i < end; i++ {
				r := idempay.Record{Namespace: "stripe:acct_1", ID: fmt.Sprintf("order-%09d", i), Attempt: 1,
					Key: fmt.Sprintf("%036d", i), Fingerprint: fmt.Sprintf("%064d", i), State: idempay.StateSucceeded,
					CreatedAt: at, UpdatedAt: at, ClosedAt: at, Creator: "web-1/0123456789abcdef", ProviderRef: "pi_3MtwBwLkdIwHu7ix28a3tqPa",
					Result: []byte(`{"id":"pi_3MtwBwLkdIwHu7ix28a3tqPa","status":"succeeded","amount":1000}`)}
				k := recordKey(r.Namespace, r.ID)
				if err := tx.Bucket(bucketRecords).Put(k, encodeRecord(r)); err != nil {
					return err
				}
				if err := tx.Bucket(bucketClosed).Put(closedKeyOf(r), nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
