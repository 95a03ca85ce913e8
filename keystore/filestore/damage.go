package filestore

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// ErrCorrupt is matched (errors.Is) by the errors of a store file that is
// damaged: Open finds it shorter than its own header says, or empty, or with
// a bad header page, a damaged page or an undecodable record; or bbolt
// stops on a damaged page later. The error says what was found and what to
// do: restore the file from a backup, and never delete it or start an empty
// store in its place, since it holds the keys of intents that may have been
// charged. The store never repairs or resets a damaged file by itself.
var ErrCorrupt = errors.New("filestore: store file damaged")

// advice is what every damage error tells the operator.
const advice = "restore the file from a backup; do not delete it or open an empty store in its place: " +
	"it holds the keys of intents that may have been charged, and new keys would charge them again"

// corruptError is a damage found in the file; it matches ErrCorrupt.
type corruptError struct {
	detail string
	// fatal: bbolt itself stopped (a panic or a memory fault), so its
	// view of the file can no longer be trusted; see Store.faultSafe.
	fatal bool
}

func (e *corruptError) Error() string {
	return ErrCorrupt.Error() + ": " + e.detail + " (" + advice + ")"
}

func (e *corruptError) Is(target error) bool { return target == ErrCorrupt }

// corrupt returns a corruptError with the formatted detail.
func corrupt(format string, args ...any) error {
	return &corruptError{detail: fmt.Sprintf(format, args...)}
}

// recoverFault runs fn, which reaches the file through bbolt's memory map, and
// turns a panic of bbolt (its assertions on a damaged page) or a memory
// fault (SIGBUS on a page past the end of a truncated file) into a fatal
// corruptError. Faults are recoverable only on the goroutine that sets
// debug.SetPanicOnFault, so fn must not hand the file to another goroutine.
func recoverFault(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = &corruptError{detail: stopped(p), fatal: true}
		}
	}()
	return fn()
}

// stopped describes what recover returned.
func stopped(p any) string {
	if f, ok := p.(interface{ Addr() uintptr }); ok {
		return fmt.Sprintf("bbolt read memory it could not (address %#x): the file may be shorter than bbolt expects (%v)", f.Addr(), p)
	}
	return fmt.Sprintf("bbolt stopped on a damaged page: %v", p)
}

// isFatal reports whether err says that bbolt stopped on a damaged page.
func isFatal(err error) bool {
	var c *corruptError
	return errors.As(err, &c) && c.fatal
}

// faultSafe runs fn under guard. Once bbolt has stopped on a damaged page,
// the Store refuses every later call with that error: writing on through a
// damaged tree could lose records that are still intact.
func (s *Store) faultSafe(fn func() error) error {
	if p := s.broken.Load(); p != nil {
		return *p
	}
	err := recoverFault(fn)
	if isFatal(err) {
		s.broken.CompareAndSwap(nil, &err)
	}
	return err
}
