package twoc2p_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 9: once an intent is paid, a charge of it with other parameters
// (another amount, description or return URL, a double-click with a new
// frontend key) is answered by that success from the store, with no
// request to 2C2P: no token request, no inquiry.
func TestTwoC2PPaidIntentAnswersEveryLaterChargeWithItsSuccess(t *testing.T) {
	store := memstore.New()
	srv, url := tc2pServe(t, tc2pFake{}, store, tc2pSameInvoice)
	c := tc2pClient(t, url, store)
	ctx := context.Background()
	ch, err := c.Charge(ctx, tc2pOrder("ORDER1"))
	requirePending(t, ch, err)
	require.NoError(t, srv.Pay("ORDER1"))
	paid, err := c.Charge(ctx, tc2pOrder("ORDER1"))
	require.NoError(t, err)
	require.Equal(t, idempay.StateSucceeded, paid.State)
	before := srv.Stats()

	mod := func(f func(*idempay.ChargeRequest)) idempay.ChargeRequest {
		r := tc2pOrder("ORDER1")
		f(&r)
		return r
	}
	for name, tc := range map[string]struct {
		req    idempay.ChargeRequest
		differ bool
	}{
		"another amount":      {mod(func(r *idempay.ChargeRequest) { r.Amount = 99900 }), true},
		"another description": {mod(func(r *idempay.ChargeRequest) { r.Description = "Order ORDER1, again" }), true},
		"a return URL":        {mod(func(r *idempay.ChargeRequest) { r.ReturnURL = "https://shop.example/back" }), true},
		"a user field":        {mod(func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"userDefined1": "x"} }), true},
		"a new caller key":    {mod(func(r *idempay.ChargeRequest) { r.Key = "frontend-key-after-paid" }), false},
		"the same request":    {tc2pOrder("ORDER1"), false},
	} {
		ch, err := c.Charge(ctx, tc.req)
		require.NoError(t, err, name)
		assert.Equal(t, paid.ID, ch.ID, name)
		assert.Equal(t, idempay.StateSucceeded, ch.State, name)
		assert.Equal(t, idempay.ReplayFromStore, ch.ReplayedFrom, name)
		assert.Equal(t, tc.differ, ch.ParamsDiffer, name)
		assert.Zero(t, ch.Requests, name)
	}
	assert.Equal(t, before, srv.Stats(), "no token request, no inquiry")
	assert.Equal(t, 1, srv.Len())
	require.NoError(t, srv.CheckInvoices())
}

// Issue 9: the customer's card is declined on 2C2P's page, and the order
// is charged again (attempt 2: a 2C2P request carries no card, so the new
// attempt is told apart by its other parameters; here a user field): two
// attempts, two keys, two invoice numbers, one payment. Attempt 2 has an
// invoice of its own (idempay.TwoC2PAttemptInvoiceNo): with attempt 1's,
// 2C2P would answer 9015 and the inquiry attempt 1's key, and attempt 2
// would stay unknown for ever, blocking every later attempt.
func TestTwoC2PDeclineThenAnotherCardIsASecondAttempt(t *testing.T) {
	store := memstore.New()
	srv, url := tc2pServe(t, tc2pFake{}, store, tc2pIntentOf)
	c := tc2pClient(t, url, store)
	ctx := context.Background()
	ch, err := c.Charge(ctx, tc2pOrder("ORDER1"))
	requirePending(t, ch, err)
	require.NoError(t, srv.Decline("ORDER1", "4051"))
	_, err = c.Charge(ctx, tc2pOrder("ORDER1"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	require.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))

	second := tc2pOrder("ORDER1")
	second.Extra = map[string]string{"userDefined1": "attempt-2"}
	ch, err = c.Charge(ctx, second)
	rec, lerr := c.Record(ctx, "ORDER1")
	require.NoError(t, lerr)
	assert.Equal(t, 2, rec.Attempt, "the other parameters began attempt 2")
	assert.NotEqual(t, rec.History[0].Key, rec.Key, "with a new key")
	require.NoError(t, srv.CheckInvoices(), "one key never opened two transactions")
	assert.Zero(t, paidTransactions(srv), "nothing is paid")

	// Attempt 2 opens a payment of its own, under its own invoice.
	requirePending(t, ch, err)
	inv2 := tc2pAttemptInvoice(t, "ORDER1", 2, false)
	txn, ok := srv.Transaction(inv2)
	require.True(t, ok, "attempt 2's invoice %s", inv2)
	assert.Equal(t, rec.Key, txn.IdempotencyID)
	assert.Equal(t, txn.PaymentToken, ch.ID)
	assert.Equal(t, twoc2ptest.AwaitingPayment, txn.State)
	assert.Zero(t, srv.Stats().Existing, "no token request met an existing invoice (9015)")

	// The customer pays it, and the intent is paid once.
	require.NoError(t, srv.Pay(inv2))
	done, err := c.Charge(ctx, second)
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, done.State)
	assert.Equal(t, 2, done.Attempt)
	assert.Empty(t, txn.TranRef, "the pending copy had no tranRef yet")
	paidTxn, _ := srv.Transaction(inv2)
	assert.Equal(t, paidTxn.TranRef, done.ID)
	keys := map[string]bool{}
	for inv, ks := range srv.Stats().Token.Keys {
		assert.Len(t, ks, 1, "invoice %s carried one key", inv)
		for _, k := range ks {
			keys[k] = true
		}
	}
	assert.Len(t, keys, 2, "two attempts, two keys")
	assert.Len(t, srv.Stats().Token.Keys, 2, "two invoices")
	assert.Equal(t, 2, srv.Len())
	first, _ := srv.Transaction("ORDER1")
	assert.Equal(t, twoc2ptest.Declined, first.State, "attempt 1 stays declined")
	assert.Equal(t, 1, paidTransactions(srv), "one payment")
	require.NoError(t, srv.CheckInvoices())

	// A charge of the paid intent with other parameters (a third card, a
	// double-click with its own key) is answered by the success from the
	// store: no token request, no inquiry.
	before := srv.Stats()
	third := tc2pOrder("ORDER1")
	third.Extra = map[string]string{"userDefined1": "attempt-3"}
	for _, req := range []idempay.ChargeRequest{third, second, tc2pOrder("ORDER1")} {
		again, err := c.Charge(ctx, req)
		require.NoError(t, err)
		assert.Equal(t, done.ID, again.ID)
		assert.Equal(t, idempay.StateSucceeded, again.State)
		assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
		assert.Equal(t, 2, again.Attempt)
	}
	assert.Equal(t, before, srv.Stats(), "no request")
	rec, err = c.Record(ctx, "ORDER1")
	require.NoError(t, err)
	assert.Equal(t, 2, rec.Attempt, "no third attempt")
}

// A lost answer on attempt 2 is settled by Payment Inquiry on attempt 2's
// invoice, never by attempt 1's decline: whether the lost request opened
// the payment (fakes.Post: the inquiry finds it pending) or never reached
// 2C2P (fakes.Pre: the inquiry proves it absent, and the request is sent
// again under the same invoice and key).
func TestTwoC2PLostAnswerOnAttemptTwoSettlesByItsOwnInvoice(t *testing.T) {
	for name, fault := range map[string]fakes.Fault{"opened, answer lost": fakes.Post, "never arrived": fakes.Pre} {
		t.Run(name, func(t *testing.T) {
			store := memstore.New()
			var mu sync.Mutex
			var inquiries []string
			cfg := tc2pFake{hook: func(info twoc2ptest.RequestInfo) {
				if info.Endpoint == twoc2ptest.Inquiry {
					mu.Lock()
					inquiries = append(inquiries, info.InvoiceNo)
					mu.Unlock()
				}
			}}
			srv, url := tc2pServe(t, cfg, store, tc2pIntentOf)
			c := tc2pClient(t, url, store)
			ctx := context.Background()
			ch, err := c.Charge(ctx, tc2pOrder("ORDER1"))
			requirePending(t, ch, err)
			require.NoError(t, srv.Decline("ORDER1", "4051"))
			_, err = c.Charge(ctx, tc2pOrder("ORDER1"))
			require.ErrorIs(t, err, idempay.ErrDeclined)

			inv2 := tc2pAttemptInvoice(t, "ORDER1", 2, false)
			srv.Fail(inv2, fault)
			mu.Lock()
			inquiries = nil
			mu.Unlock()
			second := tc2pOrder("ORDER1")
			second.Amount = 99900 // another card, another basket
			ch, err = c.Charge(ctx, second)
			requirePending(t, ch, err, "attempt 2 is pending, not attempt 1's decline")
			rec, err := c.Record(ctx, "ORDER1")
			require.NoError(t, err)
			assert.Equal(t, 2, rec.Attempt)
			assert.Equal(t, idempay.StatePending, rec.State)
			txn, ok := srv.Transaction(inv2)
			require.True(t, ok)
			assert.Equal(t, rec.Key, txn.IdempotencyID)
			mu.Lock()
			asked := slices.Clone(inquiries)
			mu.Unlock()
			require.NotEmpty(t, asked, "the lost answer was asked about")
			for _, inv := range asked {
				assert.Equal(t, inv2, inv, "only attempt 2's invoice is asked about")
			}
			if fault == fakes.Post {
				assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
				assert.Equal(t, inv2, ch.ID, "found by inquiry: the invoice names the charge")
				assert.Equal(t, 2, srv.Stats().Token.Requests, "found: not sent again")
			} else {
				assert.Equal(t, txn.PaymentToken, ch.ID, "sent again under the same invoice, answered")
				assert.Equal(t, 3, srv.Stats().Token.Requests, "proved absent: sent again")
			}
			assert.Zero(t, srv.Stats().Existing, "no token request met an existing invoice (9015)")

			require.NoError(t, srv.Pay(inv2))
			done, err := c.Charge(ctx, second)
			require.NoError(t, err)
			assert.Equal(t, idempay.StateSucceeded, done.State)
			assert.Equal(t, 2, done.Attempt)
			assert.Equal(t, 1, paidTransactions(srv))
			require.NoError(t, srv.CheckInvoices())
		})
	}
}

// tc2pIntentOf reads the intent of any attempt's invoiceNo back, for the
// store check of tc2pServe.
func tc2pIntentOf(invoiceNo string) string {
	id, _ := idempay.TwoC2PIntentOfInvoiceNo(invoiceNo)
	return id
}

// tc2pAttemptInvoice is the invoiceNo of attempt n of id.
func tc2pAttemptInvoice(t *testing.T, id string, n int, qr bool) string {
	t.Helper()
	inv, err := idempay.TwoC2PAttemptInvoiceNo(id, n, qr)
	require.NoError(t, err)
	return inv
}

func paidTransactions(srv *twoc2ptest.Server) int {
	n := 0
	for _, txn := range srv.Transactions() {
		if txn.State == twoc2ptest.Paid {
			n++
		}
	}
	return n
}
