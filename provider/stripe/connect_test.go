package stripe_test

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connectFake is a fake Stripe that records the Stripe-Account header of
// every POST, by intent or operation ID.
type connectFake struct {
	*stripetest.Server
	mu      sync.Mutex
	account map[string][]string
}

func newConnectFake(t *testing.T) *connectFake {
	f := &connectFake{account: map[string][]string{}}
	f.Server = stripetest.NewServer(stripetest.WithAPIKey(secret), stripetest.WithTest(t), stripetest.WithHook(func(in stripetest.RequestInfo) {
		f.mu.Lock()
		defer f.mu.Unlock()
		id := in.Intent
		if in.Op != "" {
			id = in.Op + ":" + in.OpID
		}
		f.account[id] = append(f.account[id], in.Account)
	}))
	return f
}

func (f *connectFake) sentAs(id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.account[id]
}

func connectClient(t *testing.T, f *connectFake, store idempay.KeyStore, p stripe.Provider, account string) *idempay.Client {
	t.Helper()
	c, err := idempay.New(idempay.Config{BaseURL: f.URL, Credentials: secret, Store: store, Retry: fastRetry(),
		Provider: p, Account: account})
	require.NoError(t, err)
	return c
}

// A Client for one connected account (Provider.Account) sends
// Stripe-Account on every request, charges, operations and lookups alike,
// and its namespace names the account: the platform's records and another
// account's are never its own.
func TestConnectPerClient(t *testing.T) {
	f := newConnectFake(t)
	store := memstore.New()
	c := connectClient(t, f, store, stripe.Provider{Account: "acct_A"}, "acct_A")
	assert.Equal(t, "stripe:acct_A", c.Namespace())
	ctx := context.Background()

	ch, err := c.Charge(ctx, order("o1", "pm_card_visa"))
	require.NoError(t, err)
	_, err = c.Refund(ctx, refundOf("rf-1", "o1", 500))
	require.NoError(t, err)
	auth := order("o2", "pm_card_visa")
	auth.Extra = map[string]string{stripe.ExtraCaptureMethod: "manual"}
	_, err = c.Charge(ctx, auth)
	require.ErrorIs(t, err, idempay.ErrAuthorized)
	_, err = c.Capture(ctx, idempay.CaptureRequest{CaptureID: "cp-2", IntentID: "o2", Currency: "JPY"})
	require.NoError(t, err)

	// A refund whose answer is lost is answered by Stripe's replay under
	// its key, on the account.
	f.Fail("rf-3", fakes.Post)
	_, err = c.Refund(ctx, refundOf("rf-3", "o1", 100))
	require.NoError(t, err)

	// A charge whose answers were all lost is settled by search, which
	// finds it only on the account.
	f.Fail("o4", fakes.Post, fakes.Post, fakes.Post, fakes.Post, fakes.Post)
	_, err = c.Charge(ctx, order("o4", "pm_card_visa"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	searches := f.Stats().Searches
	settled, err := c.Settle(ctx, "o4")
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, settled.ReplayedFrom)
	assert.Greater(t, f.Stats().Searches, searches)

	for _, id := range []string{"o1", "refund:rf-1", "o2", "capture:cp-2", "refund:rf-3"} {
		for _, a := range f.sentAs(id) {
			assert.Equal(t, "acct_A", a, id)
		}
		assert.NotEmpty(t, f.sentAs(id), id)
	}
	st := f.Stats().ByAccount
	assert.Zero(t, st[""], "nothing sent on the platform's own account: %v", st)
	pi, ok := f.PaymentIntent(ch.ID)
	require.True(t, ok)
	assert.Equal(t, "stripe:acct_A", pi.Metadata[stripe.NamespaceMetadataKey], "the tag names the account")

	// The platform's client on the same store shares none of it.
	platform := connectClient(t, f, store, stripe.Provider{}, "")
	_, err = platform.Record(ctx, "o1")
	assert.ErrorIs(t, err, idempay.ErrNotFound)
}

// The namespace must name the connected account: a Provider.Account with
// another Config.Account (the platform's "default", say) would mix its
// records with those of whatever else uses that namespace. New refuses it,
// and a Stripe-Account that is no account ID.
func TestConnectPerClientMisconfigured(t *testing.T) {
	f := newConnectFake(t)
	for _, tc := range []struct {
		name    string
		p       stripe.Provider
		account string
		field   string
	}{
		{"namespace of the platform", stripe.Provider{Account: "acct_A"}, "", "Account"},
		{"namespace of another account", stripe.Provider{Account: "acct_A"}, "acct_B", "Account"},
		{"not an account ID", stripe.Provider{Account: "A"}, "A", "Provider.Account"},
		{"both per client and per charge", stripe.Provider{Account: "acct_A", ConnectByIntent: true}, "acct_A", "Provider.ConnectByIntent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := idempay.New(idempay.Config{BaseURL: f.URL, Credentials: secret, Store: memstore.New(), Provider: tc.p, Account: tc.account})
			var ce *idempay.ConfigError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, tc.field, ce.Field)
		})
	}
}

// With ConnectByIntent each charge names its connected account in its
// intent ID (stripe.ConnectedIntentID): it is sent with Stripe-Account,
// and so are its refunds, captures, cancels and lookups; two accounts'
// orders with the same number are two intents, two records, two
// PaymentIntents; an intent ID without an account charges the platform.
func TestConnectPerCharge(t *testing.T) {
	f := newConnectFake(t)
	c := connectClient(t, f, memstore.New(), stripe.Provider{ConnectByIntent: true}, "")
	ctx := context.Background()
	a, b := stripe.ConnectedIntentID("acct_A", "order-1"), stripe.ConnectedIntentID("acct_B", "order-1")
	assert.Equal(t, "acct_A/order-1", a)

	chA, err := c.Charge(ctx, order(a, "pm_card_visa"))
	require.NoError(t, err)
	chB, err := c.Charge(ctx, order(b, "pm_card_visa"))
	require.NoError(t, err)
	assert.NotEqual(t, chA.ID, chB.ID)
	assert.False(t, chB.Replayed, "another account's order is another intent")
	own, err := c.Charge(ctx, order("order-1", "pm_card_visa"))
	require.NoError(t, err)

	_, err = c.Refund(ctx, refundOf("rf-a", a, 500))
	require.NoError(t, err)
	f.Fail("rf-b", fakes.Post)
	_, err = c.Refund(ctx, refundOf("rf-b", b, 700))
	require.NoError(t, err, "settled by a lookup on acct_B")
	auth := order(stripe.ConnectedIntentID("acct_A", "order-2"), "pm_card_visa")
	auth.Extra = map[string]string{stripe.ExtraCaptureMethod: "manual"}
	_, err = c.Charge(ctx, auth)
	require.ErrorIs(t, err, idempay.ErrAuthorized)
	_, err = c.Cancel(ctx, idempay.CancelRequest{CancelID: "cn-2", IntentID: auth.IntentID})
	require.NoError(t, err)

	for id, want := range map[string]string{a: "acct_A", b: "acct_B", "order-1": "", "refund:rf-a": "acct_A",
		"refund:rf-b": "acct_B", auth.IntentID: "acct_A"} {
		require.NotEmpty(t, f.sentAs(id), id)
		for _, got := range f.sentAs(id) {
			assert.Equal(t, want, got, id)
		}
	}
	// Lookups go to the intent's account: the cancelled authorisation is
	// found there, and a lost charge is settled by search there.
	cancelled, err := stripe.Provider{ConnectByIntent: true}.FindOp(ctx, nil, connectTarget(t, f),
		idempay.OpRequest{Type: idempay.OpCancel, ID: "cn-2", IntentID: auth.IntentID, ChargeRef: authorized(t, f, auth.IntentID)},
		idempay.Record{})
	require.NoError(t, err)
	assert.Equal(t, idempay.KindSucceeded, cancelled.Kind)
	lost := stripe.ConnectedIntentID("acct_B", "order-4")
	f.Fail(lost, fakes.Post, fakes.Post, fakes.Post, fakes.Post, fakes.Post)
	_, err = c.Charge(ctx, order(lost, "pm_card_visa"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	settled, err := c.Settle(ctx, lost)
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, settled.ReplayedFrom)

	assert.Equal(t, []int{1, 1}, []int{f.Ledger().Count(a), f.Ledger().Count(b)})
	assert.EqualValues(t, 500, f.Ledger().Refunded(a))
	assert.EqualValues(t, 700, f.Ledger().Refunded(b))
	_ = own

	// An intent ID that starts like an account but is none is refused
	// before anything is stored: it must not charge the platform instead.
	_, err = c.Charge(ctx, order("acct_/order-3", "pm_card_visa"))
	assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
}

func connectTarget(t *testing.T, f *connectFake) idempay.Target {
	t.Helper()
	u, err := url.Parse(f.URL)
	require.NoError(t, err)
	return idempay.Target{BaseURL: u, Credentials: secret, Namespace: ns}
}

// authorized is the PaymentIntent the fake made for intent.
func authorized(t *testing.T, f *connectFake, intent string) string {
	t.Helper()
	for _, ch := range f.Ledger().Charges() {
		if ch.Intent == intent {
			return ch.ID
		}
	}
	t.Fatalf("no charge of %s", intent)
	return ""
}
