//go:build !unix

package filestore

import (
	"os"
	"time"
)

// lockFile does nothing where flock does not exist: bbolt takes its own
// lock when it opens the file, after checkFile has read it. Until then
// another process holding the file may be writing it, and checkFile may
// take a meta page it is rewriting for a damaged one.
func lockFile(f *os.File, timeout time.Duration) error { return nil }
