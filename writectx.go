package idempay

import (
	"context"
	"sync"
	"time"
)

// A store write (a record's close, a release, the journal) runs detached
// from its caller, bounded by the write timeout. context.WithTimeout arms
// a runtime timer for it at once and allocates five times; most writes end
// in microseconds, and a store that never waits on Done (the memory store,
// an unsynced file-store write) never needs the timer. writeCtx arms it
// only when Done is first asked for; until then Err reads the clock.

// writeCtx carries its parent's values, none of its cancellation, and a
// deadline of its own.
type writeCtx struct {
	values   context.Context // context.WithoutCancel of the caller's
	deadline time.Time

	mu    sync.Mutex
	inner context.Context // made by Done: values under the deadline
	stop  context.CancelFunc
	err   error // set by cancel before any Done: what Err says from then on
}

// detachedWrite returns a context with ctx's values that nothing but
// timeout (or its cancel, to call when the write is done) ends. It is
// not a (ctx, cancel) pair: a method value would cost one more allocation.
func detachedWrite(ctx context.Context, timeout time.Duration) *writeCtx {
	return &writeCtx{values: context.WithoutCancel(ctx), deadline: time.Now().Add(timeout)}
}

func (w *writeCtx) Deadline() (time.Time, bool) { return w.deadline, true }

func (w *writeCtx) Value(key any) any { return w.values.Value(key) }

// Done makes the timer-backed context on first use; one made after the
// deadline or the cancel is closed from the start.
func (w *writeCtx) Done() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inner == nil {
		w.inner, w.stop = context.WithDeadline(w.values, w.deadline)
		if w.err == context.Canceled {
			w.stop()
		}
	}
	return w.inner.Done()
}

// Err agrees with Done: once Done was asked for, Done's context answers;
// before, the same rules read from the clock and the cancel.
func (w *writeCtx) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.inner != nil:
		return w.inner.Err()
	case w.err != nil:
		return w.err
	case !time.Now().Before(w.deadline):
		return context.DeadlineExceeded
	}
	return nil
}

// cancel ends the write's context; a deadline that passed first keeps
// its error, as a timer context's would.
func (w *writeCtx) cancel() {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.inner != nil:
		w.stop()
	case w.err != nil:
	case time.Now().Before(w.deadline):
		w.err = context.Canceled
	default:
		w.err = context.DeadlineExceeded
	}
}
