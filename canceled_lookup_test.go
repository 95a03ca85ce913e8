package idempay_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/clients"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/stripe"
)

// failFirstClose fails the first close of a charge's record (its namespace
// has no "/": operations and the ledger live below it), as a store error
// would: the authorisation stays open in the store.
type failFirstClose struct {
	idempay.KeyStore
	failed atomic.Bool
}

func (s *failFirstClose) Resolve(ctx context.Context, res idempay.Resolution) error {
	if res.State.Closed() && !strings.Contains(res.Namespace, "/") && s.failed.CompareAndSwap(false, true) {
		return errors.New("store unavailable")
	}
	return s.KeyStore.Resolve(ctx, res)
}

// Rule: an authorisation that was cancelled moved no money, and Charge
// says so with ErrCanceled, however it learns it: from the record (see
// TestCancelledAuthorisation) or, once its key is past KeyRetention, from
// a lookup that finds the PaymentIntent canceled. Before, the lookup's
// answer was told as a decline (ErrDeclined, "payment_intent_canceled"):
// a caller would show the customer a refused card (simulator seed 301227).
func TestCancelledAuthorisationFoundByLookupIsCanceled(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	srv := stripetest.NewServer(stripetest.WithSettings(fakes.Settings{Clock: clock}))
	t.Cleanup(srv.Close)
	store := &failFirstClose{KeyStore: memstore.New(memstore.WithClock(clock))}
	c := clients.Stripe(t, srv, func(cfg *idempay.Config) { cfg.Store = store })
	ctx := context.Background()

	req := idempay.ChargeRequest{IntentID: "auth-1", Amount: 1200, Currency: "USD", Source: "pm_card_visa",
		Extra: map[string]string{stripe.ExtraCaptureMethod: "manual"}}
	_, err := c.Charge(ctx, req)
	require.Error(t, err)
	rec, err := c.Record(ctx, "auth-1")
	require.NoError(t, err)
	require.Equal(t, idempay.StateOpen, rec.State, "the authorisation's close was lost")
	_, err = c.Cancel(ctx, idempay.CancelRequest{CancelID: "cn-1", IntentID: "auth-1"})
	require.NoError(t, err)

	now.Add(int64(25 * time.Hour)) // past KeyRetention: settled by lookup, never resent
	_, err = c.Charge(ctx, req)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "no money moved: %v", err)
	assert.ErrorIs(t, err, idempay.ErrCanceled, "cancelled, not declined")
	assert.NotErrorIs(t, err, idempay.ErrDeclined, "nothing was declined")

	_, err = c.Charge(ctx, req)
	assert.ErrorIs(t, err, idempay.ErrCanceled, "and from the store afterwards")
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
}
