package idempaytest_test

import (
	"net/http"
	"os"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Behaviours of the Client found while writing the parity tests that
// disagree with its own documentation. Each test shows one and is skipped
// until the root package is fixed; set IDEMPAYTEST_FINDINGS=1 to run them.

func skipFinding(t *testing.T, finding string) {
	t.Helper()
	if os.Getenv("IDEMPAYTEST_FINDINGS") == "" {
		t.Skip("client bug: " + finding)
	}
}

// APIError.Status is documented as the HTTP status of the answer (200 for
// a decline carried in a 200). A decline found by a lookup (a pending
// charge settled by the next Charge, or by Settle) carries Status 0: the
// lookup's verdict is completed without its response (settle.go,
// concludeLookup calls f.complete(&v, nil, nil)). A fresh decline carries
// 402. The fake's FailPending answers 402, as its Decline does; the parity
// case "pending, then declined" masks Status until this is fixed.
func TestClientLookupDeclineKeepsItsStatus(t *testing.T) {
	t.Parallel()
	skipFinding(t, "a decline found by lookup has APIError.Status 0 instead of the lookup's HTTP status (settle.go concludeLookup)")
	s := mockSide(idempaytest.PendingResponder("ch_p"), idempaytest.DeclineResponder("authentication_failed"))(t)
	_, err := s.c.Charge(ctx, idempaytest.Request("o", 100))
	require.ErrorIs(t, err, idempay.ErrPending)
	_, err = s.c.Charge(ctx, idempaytest.Request("o", 100))
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
// (reserve.go, unclaimed): code written from the doc, such as
//
//	case idempay.OutcomePending:
//		redirect(ch.AuthorizeURL)
//
// dereferences nil. The fake does as the Client does (a nil charge), so a
// consumer's test meets the same trap; if the Client comes to return the
// pending charge here, the parity case "pending, answered from the store
// while nothing settles it; other parameters refused" will say the fake
// must follow.
func TestClientPendingAttemptOpenCarriesTheCharge(t *testing.T) {
	t.Parallel()
	skipFinding(t, "ErrAttemptOpen on a pending attempt has OutcomePending but a nil *Charge, against Charge's doc (reserve.go unclaimed)")
	s := mockSide(idempaytest.PendingResponder("ch_p"), httpmock.NewStringResponder(http.StatusNotFound, ""))(t)
	_, err := s.c.Charge(ctx, idempaytest.Request("o", 100))
	require.ErrorIs(t, err, idempay.ErrPending)
	ch, err := s.c.Charge(ctx, idempaytest.Request("o", 200))
	require.ErrorIs(t, err, idempay.ErrAttemptOpen)
	require.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	require.NotNil(t, ch, "OutcomePending comes with the pending charge")
	assert.Equal(t, "ch_p", ch.ID)
}
