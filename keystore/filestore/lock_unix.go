//go:build unix

package filestore

import (
	"errors"
	"os"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// lockFile takes the exclusive flock that bbolt takes, on f itself, so that
// checkFile reads a file no other process is writing. bbolt's own lock on
// the same open file then succeeds at once. It waits up to timeout (zero:
// for ever) for another holder and then fails with an error matching
// ErrLocked and bbolt's ErrTimeout.
func lockFile(f *os.File, timeout time.Duration) error {
	start := time.Now()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return err
		case timeout != 0 && time.Since(start) >= timeout:
			return errLockedElsewhere(bolt.ErrTimeout)
		}
		time.Sleep(lockRetry)
	}
}

// lockRetry is how often lockFile tries again, as bbolt does.
const lockRetry = 50 * time.Millisecond
