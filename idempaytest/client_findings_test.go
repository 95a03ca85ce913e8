package idempaytest_test

import (
	"net/http"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Behaviours of the Client that once disagreed with its own
// documentation; fixed, and kept as tests on the kit's FakeCharger, which
// is a Client.

// APIError.Status is documented as the HTTP status of the answer (200 for
// a decline carried in a 200). A decline found by a lookup (a pending
// charge settled by the next Charge, or by Settle) carried Status 0; it
// carries the lookup's status now, as the fake's FailPending does (402).
func TestClientLookupDeclineKeepsItsStatus(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("o").Pending().FailPending("authentication_failed")
	_, err := fake.Charge(ctx, idempaytest.Request("o", 100))
	require.ErrorIs(t, err, idempay.ErrPending)
	_, err = fake.Charge(ctx, idempaytest.Request("o", 100))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusPaymentRequired, apiErr.Status, "the lookup answered 402")
}

// Client.Charge documents that a caller who switches on OutcomeOf alone is
// right, and that on OutcomePending "Charge returns the pending *Charge
// (AuthorizeURL, ...) and an error matching ErrPending". A call with other
// parameters while an attempt is pending gets ErrAttemptOpen with outcome
// pending (its chain matches ErrPending too) but a nil *Charge
// made code written from the doc, such as
//
//	case idempay.OutcomePending:
//		redirect(ch.AuthorizeURL)
//
// dereference nil. Both now carry the open attempt's pending charge.
func TestClientPendingAttemptOpenCarriesTheCharge(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("o").PendingWith(idempay.Charge{ID: "ch_p"})
	_, err := fake.Charge(ctx, idempaytest.Request("o", 100))
	require.ErrorIs(t, err, idempay.ErrPending)
	ch, err := fake.Charge(ctx, idempaytest.Request("o", 200))
	require.ErrorIs(t, err, idempay.ErrAttemptOpen)
	require.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	require.NotNil(t, ch, "OutcomePending comes with the pending charge")
	assert.Equal(t, "ch_p", ch.ID)
}
