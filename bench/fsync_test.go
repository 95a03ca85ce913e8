package bench_test

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFsync is the floor of a durable write on this disk: write 128
// bytes to a small file and fsync it. The file store's figures are read
// against the one measured in the same run.
func BenchmarkFsync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "sync"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 128)
	b.ResetTimer()
	for i := range b.N {
		if _, err := f.WriteAt(buf, int64(i%64)*128); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}
