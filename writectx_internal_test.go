package idempay

import (
	"context"
	"errors"
	"testing"
	"time"
)

type writeCtxKey struct{}

// TestWriteCtxKeepsTheContextRules: the lazily timed write context carries
// the caller's values and none of its cancellation, and its Err agrees with
// Done whichever is asked first, as context.WithTimeout's would.
func TestWriteCtxKeepsTheContextRules(t *testing.T) {
	parent, cancelParent := context.WithCancelCause(context.WithValue(context.Background(), writeCtxKey{}, "v"))
	cancelParent(errors.New("the caller gave up"))

	w := detachedWrite(parent, time.Hour)
	if w.Value(writeCtxKey{}) != "v" {
		t.Fatalf("Value = %v, want the caller's", w.Value(writeCtxKey{}))
	}
	if err := w.Err(); err != nil {
		t.Fatalf("Err = %v under a cancelled caller, want nil: a write is detached", err)
	}
	if err := context.Cause(w); err != nil {
		t.Fatalf("Cause = %v, want nil: the caller's cause is not the write's", err)
	}
	if d, ok := w.Deadline(); !ok || time.Until(d) < 59*time.Minute {
		t.Fatalf("Deadline = %v, %t; want about an hour from now", d, ok)
	}
	w.cancel()
	if !errors.Is(w.Err(), context.Canceled) {
		t.Fatalf("Err after cancel = %v, want Canceled", w.Err())
	}
	select {
	case <-w.Done():
	default:
		t.Fatal("Done asked for after cancel is not closed")
	}

	// Done first: the timer context answers, and cancel closes it.
	w = detachedWrite(parent, time.Hour)
	done := w.Done()
	if w.Err() != nil {
		t.Fatalf("Err = %v before the deadline", w.Err())
	}
	w.cancel()
	<-done
	if !errors.Is(w.Err(), context.Canceled) {
		t.Fatalf("Err = %v, want Canceled", w.Err())
	}
}

// TestWriteCtxDeadline: past its deadline the context is over with
// DeadlineExceeded, asked before or after Done, and a cancel afterwards
// keeps that error.
func TestWriteCtxDeadline(t *testing.T) {
	w := detachedWrite(context.Background(), -time.Second) // already past
	if !errors.Is(w.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v, want DeadlineExceeded", w.Err())
	}
	w.cancel()
	if !errors.Is(w.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err after cancel = %v, want DeadlineExceeded kept", w.Err())
	}
	<-w.Done() // closed from the start
	if !errors.Is(w.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err after Done = %v, want DeadlineExceeded", w.Err())
	}

	w = detachedWrite(context.Background(), 20*time.Millisecond)
	defer w.cancel()
	<-w.Done() // the timer closes it: no sleep, the channel is the signal
	if !errors.Is(w.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v, want DeadlineExceeded", w.Err())
	}
}
