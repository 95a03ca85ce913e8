package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/storetest"
)

// TestCrashStoreConformance: a crash model is a KeyStore like any other
// until it crashes.
func TestCrashStoreConformance(t *testing.T) {
	for _, m := range crashModels {
		t.Run(m, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) idempay.KeyStore {
				return newCrashStore(m, time.Now, func() time.Duration { return 0 })
			})
		})
	}
}

// crashRig is a crash model on a clock the test moves.
type crashRig struct {
	now time.Time
	s   *crashStore
}

func newCrashRig(model string) *crashRig {
	r := &crashRig{now: epoch}
	r.s = newCrashStore(model, func() time.Time { return r.now }, func() time.Duration { return 0 })
	return r
}

func (r *crashRig) reserve(t *testing.T, intent string) {
	t.Helper()
	_, err := r.s.Reserve(context.Background(), idempay.ReserveRequest{Namespace: "ns", ID: intent, Attempt: 1,
		Key: "k-" + intent, Fingerprint: "fp", Owner: "o", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *crashRig) close(t *testing.T, intent string, durable bool) {
	t.Helper()
	err := r.s.Resolve(context.Background(), idempay.Resolution{Namespace: "ns", ID: intent, Key: "k-" + intent,
		State: idempay.StateFailed, Durable: durable})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *crashRig) state(t *testing.T, intent string) string {
	t.Helper()
	rec, err := r.s.Load(context.Background(), "ns", intent)
	if errors.Is(err, idempay.ErrNotFound) {
		return "none"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(rec.State)
}

// TestCrashModels: each model loses what its server may lose, and nothing
// else.
func TestCrashModels(t *testing.T) {
	t.Run("pg loses a close made without a flush", func(t *testing.T) {
		r := newCrashRig(modelPG)
		r.reserve(t, "a")
		r.close(t, "a", false)
		if lost := r.s.crash(); len(lost) != 1 || r.state(t, "a") != "open" {
			t.Fatalf("after the crash: %s, lost %v; want open, the close lost", r.state(t, "a"), lost)
		}
	})
	t.Run("pg keeps a durable close and what it flushed", func(t *testing.T) {
		r := newCrashRig(modelPG)
		r.reserve(t, "a")
		r.close(t, "a", false)
		r.reserve(t, "b")
		r.close(t, "b", true) // its flush takes a's close with it: one WAL
		r.reserve(t, "c")
		r.close(t, "c", false)
		r.s.crash()
		if a, b, c := r.state(t, "a"), r.state(t, "b"), r.state(t, "c"); a != "failed" || b != "failed" || c != "open" {
			t.Fatalf("after the crash a=%s b=%s c=%s; want failed failed open", a, b, c)
		}
	})
	t.Run("pg's WAL writer flushes within its window", func(t *testing.T) {
		r := newCrashRig(modelPG)
		r.reserve(t, "a")
		r.close(t, "a", false)
		r.now = r.now.Add(walWindow)
		if lost := r.s.crash(); len(lost) != 0 || r.state(t, "a") != "failed" {
			t.Fatalf("after the window: %s, lost %v; want failed, nothing lost", r.state(t, "a"), lost)
		}
	})
	t.Run("redis keeps what WAITAOF waited for, loses the rest", func(t *testing.T) {
		r := newCrashRig(modelRedis)
		r.reserve(t, "a")
		r.close(t, "a", false)
		r.s.crash()
		if r.state(t, "a") != "open" {
			t.Fatalf("after the crash: %s; want open", r.state(t, "a"))
		}
		r.close(t, "a", false)
		r.now = r.now.Add(fsyncWindow)
		r.s.crash()
		if r.state(t, "a") != "failed" {
			t.Fatalf("after the fsync: %s; want failed", r.state(t, "a"))
		}
	})
	t.Run("redis without persistence loses everything", func(t *testing.T) {
		r := newCrashRig(modelVolatile)
		r.reserve(t, "a")
		r.close(t, "a", true)
		r.now = r.now.Add(time.Hour)
		r.s.crash()
		if r.state(t, "a") != "none" {
			t.Fatalf("after the restart: %s; want no record", r.state(t, "a"))
		}
	})
	t.Run("a replay stamps each write at its own instant", func(t *testing.T) {
		r := newCrashRig(modelPG)
		r.reserve(t, "a")
		before, _ := r.s.Load(context.Background(), "ns", "a")
		r.now = r.now.Add(time.Hour)
		r.s.crash()
		after, _ := r.s.Load(context.Background(), "ns", "a")
		if !after.CreatedAt.Equal(before.CreatedAt) || !after.LeaseUntil.Equal(before.LeaseUntil) {
			t.Fatalf("replayed record %v/%v, want %v/%v", after.CreatedAt, after.LeaseUntil, before.CreatedAt, before.LeaseUntil)
		}
	})
}
