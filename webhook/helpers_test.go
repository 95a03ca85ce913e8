package webhook_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/webhook"
	"github.com/stretchr/testify/require"
)

// epoch is the fixed "now" of most tests: 2026-01-01T00:00:00Z.
var epoch = time.Unix(1767225600, 0)

const (
	stripeSecret  idempay.Secret = "whsec_idempay_vector_secret"
	stripeRotated idempay.Secret = "whsec_idempay_vector_rotated"
	omiseSecret   idempay.Secret = "aWRlbXBheSBvbWlzZSB2ZWN0b3Iga2V5LCAzMiBiISE="
	omiseRotated  idempay.Secret = "aWRlbXBheSBvbWlzZSByb3RhdGVkIGtleSAzMiBiISE="
)

// newClock is a clock the test moves by hand, reading epoch.
func newClock() *fakes.Clock { return fakes.NewClock(epoch) }

// flakyStore is a KeyStore whose Resolve fails while failResolve is set:
// what a process sees when the store goes away between the handler and the
// write that records it, or when the process dies right there.
type flakyStore struct {
	idempay.KeyStore
	failResolve atomic.Bool
}

var errStoreDown = errors.New("store down")

func (s *flakyStore) Resolve(ctx context.Context, res idempay.Resolution) error {
	if s.failResolve.Load() {
		return errStoreDown
	}
	return s.KeyStore.Resolve(ctx, res)
}

// newDeduper is a Deduper on store with the test clock and a short lease.
func newDeduper(t *testing.T, store idempay.KeyStore, clk *fakes.Clock, opts ...webhook.DeduperOption) *webhook.Deduper {
	t.Helper()
	if store == nil {
		store = memstore.New(memstore.WithClock(clk.Now))
	}
	opts = append([]webhook.DeduperOption{webhook.WithClock(clk.Now), webhook.WithLease(time.Minute)}, opts...)
	d, err := webhook.NewDeduper(store, "stripe", "acct_test", opts...)
	require.NoError(t, err)
	return d
}

// counter is a handler that counts its runs and returns the error in err.
type counter struct {
	runs atomic.Int32
	err  error
}

func (c *counter) fn(context.Context) error {
	c.runs.Add(1)
	return c.err
}

// recv takes the next value from ch, or fails the test after 5 seconds, so
// that a regression that blocks a delivery fails fast instead of hanging.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("no answer within 5s")
		panic("unreachable")
	}
}
