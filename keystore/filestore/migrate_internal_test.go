package filestore

import (
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestMigrate1Idempotent runs the migration twice on the format 1 file, as
// a second Open after a failed one would: the second run finds the first's
// result and leaves it as it was.
func TestMigrate1Idempotent(t *testing.T) {
	b, err := os.ReadFile("testdata/format1.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "keys.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var first, second []string
	err = db.Update(func(tx *bolt.Tx) error {
		if err := migrate1(tx); err != nil {
			return err
		}
		first = keysOf(tx.Bucket(bucketClosed))
		if err := migrate1(tx); err != nil {
			return err
		}
		second = keysOf(tx.Bucket(bucketClosed))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 42 || len(first) != len(second) {
		t.Fatalf("closed index after one migration: %d entries, after two: %d; want 42 both times", len(first), len(second))
	}
	for i := range first {
		if first[i] != second[i] {
			t.Errorf("entry %d: %x after one migration, %x after two", i, first[i], second[i])
		}
	}
}

func keysOf(b *bolt.Bucket) []string {
	var keys []string
	b.ForEach(func(k, _ []byte) error {
		keys = append(keys, string(k))
		return nil
	})
	return keys
}
