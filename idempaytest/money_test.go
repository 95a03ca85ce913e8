package idempaytest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/require"
)

// A refund through the kit's client: made once, whatever the lost answers,
// and the books say so.
func TestServerRefunds(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	client := idempaytest.NewClient(t, srv)
	ctx := context.Background()
	_, err := client.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.NoError(t, err)
	srv.Fail("refund-1", idempaytest.Post) // refunded, the answer lost
	op, err := client.Refund(ctx, idempay.RefundRequest{RefundID: "refund-1", IntentID: "order-1", Amount: 500, Currency: "JPY"})
	require.NoError(t, err)
	require.Equal(t, "refund-1", op.OpID)
	require.Equal(t, 1, srv.Refunds("refund-1"))
	require.Equal(t, int64(500), srv.Refunded("order-1"))
	require.Equal(t, 2, srv.OpRequests("refund-1"), "the lost answer, then the replay")
	require.NoError(t, srv.CheckMoney())
	require.Len(t, srv.Ledger().Ops(), 1)
}

// A second client with a store of its own charges the order again, and a
// refund resent under a new key (what a client that lost its key does) is
// made again: CheckMoney reports both.
func TestServerCheckMoney(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	ctx := context.Background()
	var first *idempay.Client
	for i := range 2 {
		c, err := idempay.New(idempay.Config{BaseURL: srv.URL, HTTPClient: srv.Client(), Store: memstore.New(),
			Provider: idempay.OwnAPI{LookupPath: idempaytest.ChargePath, OpLookup: true}})
		require.NoError(t, err)
		_, err = c.Charge(ctx, idempaytest.Request("order-1", 1500))
		require.NoError(t, err)
		if i == 0 {
			first = c
		}
	}
	_, err := first.Refund(ctx, idempay.RefundRequest{RefundID: "refund-1", IntentID: "order-1", Amount: 100, Currency: "JPY"})
	require.NoError(t, err)
	r, _ := http.NewRequest(http.MethodPost, srv.URL+idempaytest.RefundPath,
		strings.NewReader(`{"refund_id":"refund-1","order_id":"order-1","amount":100,"currency":"JPY"}`))
	r.Header.Set("Idempotency-Key", "a-new-key")
	resp, err := srv.Client().Do(r)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	var me *fakes.MoneyError
	require.True(t, errors.As(srv.CheckMoney(), &me))
	require.True(t, me.Has(fakes.ChargedTwice))
	require.True(t, me.Has(fakes.RefundedTwice))
	require.Error(t, srv.CheckNoDuplicates())
}

// The classic consumer bug: a refund whose outcome is unknown, retried
// under a new refund ID. Both refunds were made, 1,000 for the 500 meant;
// the books alone see nothing wrong (1,000 is within the 1,500 charged),
// but a test that says what it meant sees it.
func TestCheckMoneySeesARefundRetriedUnderANewID(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	ctx := context.Background()
	c, err := idempay.New(idempay.Config{BaseURL: srv.URL, HTTPClient: srv.Client(), Store: memstore.New(),
		Provider: idempay.OwnAPI{LookupPath: idempaytest.ChargePath, OpLookup: true},
		Retry:    idempay.RetryPolicy{MaxAttempts: 1}})
	require.NoError(t, err)
	_, err = c.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.NoError(t, err)
	srv.IntendRefund("order-1", 500)

	srv.Fail("refund-1", idempaytest.Post) // refunded, the answer lost
	_, err = c.Refund(ctx, idempay.RefundRequest{RefundID: "refund-1", IntentID: "order-1", Amount: 500, Currency: "JPY"})
	require.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err), "%v", err)
	_, err = c.Refund(ctx, idempay.RefundRequest{RefundID: "refund-2", IntentID: "order-1", Amount: 500, Currency: "JPY"})
	require.NoError(t, err, "the consumer's bug: a new refund ID for a refund it does not know the end of")

	var me *fakes.MoneyError
	require.True(t, errors.As(srv.CheckMoney(), &me), "CheckMoney sees the bug")
	require.True(t, me.Has(fakes.RefundedBeyondIntent), "%v", me)
	require.False(t, me.Has(fakes.RefundedBeyondCharge))
	require.Contains(t, me.Error(), "1000")
}

// A consumer that resumes the unknown refund under its own ID refunds what
// it meant, and CheckMoney says so.
func TestCheckMoneyPassesARefundResumedUnderItsID(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	client := idempaytest.NewClient(t, srv)
	ctx := context.Background()
	_, err := client.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.NoError(t, err)
	srv.IntendRefund("order-1", 500)
	srv.Fail("refund-1", idempaytest.Post)
	_, err = client.Refund(ctx, idempay.RefundRequest{RefundID: "refund-1", IntentID: "order-1", Amount: 500, Currency: "JPY"})
	require.NoError(t, err)
	require.NoError(t, srv.CheckMoney())
}
