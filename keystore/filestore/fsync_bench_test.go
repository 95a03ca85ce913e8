package filestore_test

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFsync measures the floor of a durable write on this disk: one
// small write and fdatasync of a file, in place (size unchanged) and
// appended (the size changes, as a log's would). Run it in the same run as
// the store's benchmarks, since an fsync's cost varies with the disk's load:
//
//	go test -run '^$' -bench 'Fsync|ReserveResolve' ./keystore/filestore
func BenchmarkFsync(b *testing.B) {
	for _, mode := range []string{"in-place", "append"} {
		b.Run("mode="+mode, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "sync"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 256)
			var off int64
			for b.Loop() {
				if _, err := f.WriteAt(buf, off); err != nil {
					b.Fatal(err)
				}
				if mode == "append" {
					off += int64(len(buf))
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
