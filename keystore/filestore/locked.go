package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// ErrLocked is matched by the error of an Open whose file another Store
// holds: one of this process (Open refuses at once, since the lock could
// never be released by waiting) or of another process (Open waits up to
// the open timeout first; the error then matches bbolt's ErrTimeout too).
// Share one *Store among every Client, guard and Deduper of a process; run
// a shared store for several processes.
var ErrLocked = errors.New("filestore: another Store holds this file; share one *Store")

// held is the files the Stores of this process hold, by identity rather
// than by name, so that another path to the same file is refused too.
var held struct {
	mu    sync.Mutex
	files []fs.FileInfo
}

// hold records that a Store of this process holds f, or returns an error
// matching ErrLocked if one already does. The returned function lets go.
func hold(f *os.File) (release func(), err error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	held.mu.Lock()
	defer held.mu.Unlock()
	for _, h := range held.files {
		if os.SameFile(h, fi) {
			return nil, fmt.Errorf("%w (a Store of this process has it open)", ErrLocked)
		}
	}
	held.files = append(held.files, fi)
	return func() {
		held.mu.Lock()
		defer held.mu.Unlock()
		for i, h := range held.files {
			if h == fi {
				held.files = append(held.files[:i], held.files[i+1:]...)
				return
			}
		}
	}, nil
}

// errLockedElsewhere is the error of a lock another process kept past the
// open timeout.
func errLockedElsewhere(cause error) error {
	return fmt.Errorf("%w (another process has held its lock for the whole open timeout): %w", ErrLocked, cause)
}
