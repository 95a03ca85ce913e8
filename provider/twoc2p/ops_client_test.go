package twoc2p_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/provider/twoc2p"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var bg = context.Background()

func refundReq(id, intent string, amount int64) idempay.RefundRequest {
	return idempay.RefundRequest{RefundID: id, IntentID: intent, Amount: amount, Currency: "THB"}
}

// maintenanceSeen records the maintenance requests the fake received, in
// order, as "processType invoiceNo idempotencyID", and checks that each
// operation's record was in the store, with the request's key, before its
// request arrived.
type maintenanceSeen struct {
	t     *testing.T
	store idempay.KeyStore
	mu    sync.Mutex
	seen  []string
}

func (m *maintenanceSeen) hook(info twoc2ptest.RequestInfo) {
	if info.Endpoint != twoc2ptest.Maintenance {
		return
	}
	m.mu.Lock()
	m.seen = append(m.seen, strings.TrimSpace(info.ProcessType+" "+info.InvoiceNo+" "+info.IdempotencyID))
	m.mu.Unlock()
	if info.IdempotencyID == "" {
		return // a lookup
	}
	typ := map[string]idempay.OpType{"R": idempay.OpRefund, "S": idempay.OpCapture, "V": idempay.OpCancel}[info.ProcessType]
	recs, err := m.store.ListOpen(bg, tc2pNS+"/"+string(typ), idempay.Cursor{}, 10000)
	found := false
	for _, rec := range recs {
		found = found || rec.Key == info.IdempotencyID
	}
	if err != nil || !found {
		m.t.Errorf("%s request with idempotencyID %s arrived before the store held its operation under that key",
			info.ProcessType, info.IdempotencyID)
	}
}

func (m *maintenanceSeen) list() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.seen...)
}

// opsFixture is a fake gateway, a Client speaking to it with the
// maintenance keys, and the record of what reached the fake.
type opsFixture struct {
	srv   *twoc2ptest.Server
	p     twoc2p.Provider
	c     *idempay.Client
	store idempay.KeyStore
	seen  *maintenanceSeen
}

func newOps(t *testing.T, manual bool, opts ...twoc2ptest.Option) *opsFixture {
	t.Helper()
	f := &opsFixture{store: newStore()}
	f.seen = &maintenanceSeen{t: t, store: f.store}
	opts = append(opts, twoc2ptest.WithHook(f.seen.hook))
	if manual {
		opts = append(opts, twoc2ptest.WithManualSettlement())
	}
	f.srv, f.p = opsServe(t, f.store, opts...)
	f.p.ManualSettlement = manual
	f.c = opsClient(t, f.srv, f.p, f.store)
	return f
}

// Through a Client: a refund of a paid charge is one sealed R under the
// charge's invoice with the refund's key as idempotencyID, reserved in
// the store before it left; asked again, answered from the store; a refund
// beyond what is left refused before anything is sent.
func TestRefundThroughClient(t *testing.T) {
	f := newOps(t, false)
	paid(t, f.c, f.srv, "ORDER100", 123456)
	op, err := f.c.Refund(bg, refundReq("rf-1", "ORDER100", 50000))
	require.NoError(t, err)
	assert.Equal(t, "RF", op.Status)
	assert.True(t, strings.HasPrefix(op.ID, "R"), "the refund's referenceNo: %s", op.ID)
	assert.Equal(t, int64(50000), op.Amount)
	assert.Equal(t, []string{"R ORDER100 " + op.Key}, f.seen.list())
	assert.Equal(t, int64(50000), f.srv.Ledger().Refunded("ORDER100"))

	again, err := f.c.Refund(bg, refundReq("rf-1", "ORDER100", 50000))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
	_, err = f.c.Refund(bg, refundReq("rf-2", "ORDER100", 73457))
	assert.ErrorIs(t, err, idempay.ErrRefundExceeds)
	assert.Len(t, f.seen.list(), 1, "nothing more was sent")
	op, err = f.c.Refund(bg, refundReq("rf-3", "ORDER100", 73456))
	require.NoError(t, err)
	l, err := f.c.Ledger(bg, "ORDER100")
	require.NoError(t, err)
	assert.Equal(t, int64(123456), l.Refunded)
	assert.Zero(t, l.Refundable)
	require.NoError(t, f.srv.CheckMoney())
}

// Rule: whatever becomes of a refund's answer, it is never resent before
// Refund Status proves it absent: a lost answer after the refund was made
// is settled by the lookup (a replay from it), one lost before is sent
// again once the lookup shows no refund under its key; a lost lookup
// leaves the refund unknown, and the next call settles it the same way.
// Each refund is made exactly once.
func TestRefundLostAnswers(t *testing.T) {
	f := newOps(t, false)
	paid(t, f.c, f.srv, "ORDER200", 1000000)
	for i, tc := range []struct {
		faults []fakes.Fault
		first  idempay.Outcome
		seen   []string // processTypes reaching the fake, over both calls
	}{
		{[]fakes.Fault{fakes.Post}, idempay.OutcomeSucceeded, []string{"R", "RS"}},
		{[]fakes.Fault{fakes.Pre}, idempay.OutcomeSucceeded, []string{"R", "RS", "R"}},
		{[]fakes.Fault{fakes.Mid}, idempay.OutcomeSucceeded, []string{"R", "RS", "R"}},
		{[]fakes.Fault{fakes.Unavailable}, idempay.OutcomeSucceeded, []string{"R", "RS", "R"}},
		{[]fakes.Fault{fakes.Internal}, idempay.OutcomeSucceeded, []string{"R", "RS", "R"}},
		{[]fakes.Fault{fakes.Post, fakes.Pre}, idempay.OutcomeUnknown, []string{"R", "RS", "RS"}},
		{[]fakes.Fault{fakes.Pre, fakes.Post}, idempay.OutcomeUnknown, []string{"R", "RS", "RS", "R"}},
		{[]fakes.Fault{fakes.Post, fakes.Unavailable}, idempay.OutcomeUnknown, []string{"R", "RS", "RS"}},
		{[]fakes.Fault{fakes.Mid, fakes.Internal}, idempay.OutcomeUnknown, []string{"R", "RS", "RS", "R"}},
	} {
		id := "rf-lost-" + string(rune('a'+i))
		before := len(f.seen.list())
		f.srv.FailMaintenance("ORDER200", tc.faults...)
		op, err := f.c.Refund(bg, refundReq(id, "ORDER200", 1000))
		assert.Equal(t, tc.first, idempay.OutcomeOf(err), "%v: %v", tc.faults, err)
		if tc.first == idempay.OutcomeUnknown {
			op, err = f.c.Refund(bg, refundReq(id, "ORDER200", 1000))
			require.NoError(t, err, "%v: the second call settles it", tc.faults)
		}
		require.NotNil(t, op)
		if tc.faults[0] == fakes.Post {
			assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom, "%v", tc.faults)
		}
		assert.Equal(t, 1, madeUnder(t, f.srv, f.store, idempay.OpRefund, id), "%v: made once", tc.faults)
		var types []string
		for _, s := range f.seen.list()[before:] {
			types = append(types, strings.Fields(s)[0])
		}
		assert.Equal(t, tc.seen, types, "%v", tc.faults)
	}
	assert.Equal(t, int64(9000), f.srv.Ledger().Refunded("ORDER200"))
	require.NoError(t, f.srv.CheckMoney())
	assert.Zero(t, f.srv.Stats().Existing)
}

// Rule: a refund 2C2P answers RP is pending, and its amount counts as
// refunded until Refund Status says how it ended: RF succeeded, RFF failed
// (the amount freed).
func TestRefundPending(t *testing.T) {
	f := newOps(t, false, twoc2ptest.WithPendingRefunds())
	paid(t, f.c, f.srv, "ORDER300", 100000)
	op, err := f.c.Refund(bg, refundReq("rf-p1", "ORDER300", 40000))
	require.ErrorIs(t, err, idempay.ErrPending)
	require.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	ref := op.ID
	l, _ := f.c.Ledger(bg, "ORDER300")
	assert.Equal(t, int64(40000), l.RefundsInFlight)

	_, err = f.c.Refund(bg, refundReq("rf-p1", "ORDER300", 40000))
	require.ErrorIs(t, err, idempay.ErrPending, "still pending at 2C2P")
	require.True(t, f.srv.CompleteRefund(ref, true))
	op, err = f.c.Refund(bg, refundReq("rf-p1", "ORDER300", 40000))
	require.NoError(t, err)
	assert.Equal(t, "RF", op.Status)

	op, err = f.c.Refund(bg, refundReq("rf-p2", "ORDER300", 60000))
	require.ErrorIs(t, err, idempay.ErrPending)
	require.True(t, f.srv.CompleteRefund(op.ID, false))
	_, err = f.c.Refund(bg, refundReq("rf-p2", "ORDER300", 60000))
	assert.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	l, _ = f.c.Ledger(bg, "ORDER300")
	assert.Equal(t, int64(40000), l.Refunded)
	assert.Equal(t, int64(60000), l.Refundable, "the failed refund freed its amount")
	require.NoError(t, f.srv.CheckMoney())
}

// Rule: 2C2P's refusal of a first request (here 49: the payment was fully
// refunded from outside idempay) fails the refund: nothing was made under
// its key. The same refusal after an attempt that may have refunded would
// be unknown (see TestReadRefundRules: refusals are KindInvalid).
func TestRefundRefusedBy2C2P(t *testing.T) {
	f := newOps(t, false)
	paid(t, f.c, f.srv, "ORDER400", 50000)
	require.Equal(t, "00", byHand(t, f.srv, "R", "ORDER400", "500.00"))
	_, err := f.c.Refund(bg, refundReq("rf-1", "ORDER400", 100))
	require.ErrorIs(t, err, idempay.ErrInvalidRequest)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	var api *idempay.APIError
	require.ErrorAs(t, err, &api)
	assert.Equal(t, "49", api.Code)
	assert.Zero(t, madeUnder(t, f.srv, f.store, idempay.OpRefund, "rf-1"))
}

// Rule: a request 2C2P cannot decrypt (96: sealed to another key) or
// verify (13: signed with another key) is a configuration error, answered
// plain: nothing done, outcome failed.
func TestMaintenanceConfigRefused(t *testing.T) {
	f := newOps(t, false)
	paid(t, f.c, f.srv, "ORDER500", 50000)
	for name, keys := range map[string]twoc2p.MaintenanceKeys{
		"96": {Merchant: opsMerchantKey(), Gateway: &opsGatewayKey().PublicKey},
		"13": {Merchant: opsGatewayKey(), Gateway: f.srv.GatewayKey()},
	} {
		p := f.p
		p.Maintenance = keys
		c := opsClient(t, f.srv, p, f.store)
		_, err := c.Refund(bg, refundReq("rf-"+name, "ORDER500", 100))
		require.ErrorIs(t, err, idempay.ErrConfig, name)
		assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), name)
		var api *idempay.APIError
		require.ErrorAs(t, err, &api)
		assert.Equal(t, name, api.Code)
		assert.NotContains(t, err.Error(), opsMerchantKey().D.String()[:12])
	}
	assert.Equal(t, 2, f.srv.Stats().Rejected)
	assert.Zero(t, f.srv.Ledger().Refunded("ORDER500"))
}

// Rule: without Maintenance keys a Client refuses refunds, captures and
// cancels with ErrNotSupported, outcome failed, before anything is stored
// or sent; its charges go on as before. ManualSettlement without them is
// refused for the charge itself, before anything is stored.
func TestOpsWithoutKeys(t *testing.T) {
	store := newStore()
	srv, _ := tc2pServe(t, tc2pFake{}, store, nil)
	p := twoc2p.Provider{MerchantID: tc2pMerchant}
	c := opsClient(t, srv, p, store)
	paid(t, c, srv, "ORDER600", 50000)
	for _, call := range []func() error{
		func() error { _, err := c.Refund(bg, refundReq("rf", "ORDER600", 100)); return err },
		func() error {
			_, err := c.Capture(bg, idempay.CaptureRequest{CaptureID: "cp", IntentID: "ORDER600", Currency: "THB"})
			return err
		},
		func() error {
			_, err := c.Cancel(bg, idempay.CancelRequest{CancelID: "cn", IntentID: "ORDER600"})
			return err
		},
	} {
		err := call()
		require.ErrorIs(t, err, idempay.ErrNotSupported)
		require.ErrorIs(t, err, twoc2p.ErrNoMaintenanceKeys)
		assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	}
	for _, typ := range []idempay.OpType{idempay.OpRefund, idempay.OpCapture, idempay.OpCancel} {
		for rec := range c.UnresolvedOps(bg, typ) {
			t.Errorf("stored %s %q", typ, rec.ID)
		}
	}
	l, err := c.Ledger(bg, "ORDER600")
	require.NoError(t, err, "the ledger holds the charge from its success on")
	assert.Empty(t, l.Ops, "and no operation")
	assert.Zero(t, srv.Stats().Maintenance.Requests)

	// Manual settlement needs the keys: New refuses it without them, and
	// Validate (for an adapter used without New) refuses every charge.
	p.ManualSettlement = true
	_, err = idempay.New(idempay.Config{BaseURL: srv.URL, Credentials: tc2pSecret, Provider: p, Store: store})
	var ce *idempay.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Provider.Maintenance", ce.Field)
	var ve *idempay.ValidationError
	require.ErrorAs(t, p.Validate(idempay.ChargeRequest{IntentID: "ORDER601", Amount: 100, Currency: "THB"}), &ve)
	assert.Equal(t, "Provider.Maintenance", ve.Field)
	_, err = store.Load(bg, tc2pNS, "ORDER601")
	assert.ErrorIs(t, err, idempay.ErrNotFound)
}

// With manual settlement a paid charge is an authorisation (Payment
// Maintenance's inquiry says A): Charge answers ErrAuthorized; a partial
// settlement (S) captures it, after which Charge answers succeeded and only
// the settled amount can be refunded; a void (V) cancels another, after
// which Charge answers ErrCanceled. Lost answers are settled by the
// inquiry (S settled, V voided) without a resend.
func TestCaptureAndCancelThroughClient(t *testing.T) {
	f := newOps(t, true)
	auth := paid(t, f.c, f.srv, "AUTH1", 100000)
	require.True(t, auth.Authorized)
	op, err := f.c.Capture(bg, idempay.CaptureRequest{CaptureID: "cp-1", IntentID: "AUTH1", Amount: 60000, Currency: "THB"})
	require.NoError(t, err)
	assert.Equal(t, "S", op.Status)
	assert.Equal(t, "AUTH1", op.ID)
	ch, err := f.c.Charge(bg, idempay.ChargeRequest{IntentID: "AUTH1", Amount: 100000, Currency: "THB"})
	require.NoError(t, err)
	assert.Equal(t, int64(60000), ch.Captured)
	_, err = f.c.Refund(bg, refundReq("rf-1", "AUTH1", 60001))
	assert.ErrorIs(t, err, idempay.ErrRefundExceeds)
	_, err = f.c.Refund(bg, refundReq("rf-2", "AUTH1", 60000))
	require.NoError(t, err)

	paid(t, f.c, f.srv, "AUTH2", 100000)
	op, err = f.c.Cancel(bg, idempay.CancelRequest{CancelID: "cn-2", IntentID: "AUTH2"})
	require.NoError(t, err)
	assert.Equal(t, "V", op.Status)
	_, err = f.c.Charge(bg, idempay.ChargeRequest{IntentID: "AUTH2", Amount: 100000, Currency: "THB"})
	assert.ErrorIs(t, err, idempay.ErrCanceled)

	// Lost answers.
	paid(t, f.c, f.srv, "AUTH3", 100000)
	paid(t, f.c, f.srv, "AUTH4", 100000)
	f.srv.FailMaintenance("AUTH3", fakes.Post)
	f.srv.FailMaintenance("AUTH4", fakes.Post)
	op, err = f.c.Capture(bg, idempay.CaptureRequest{CaptureID: "cp-3", IntentID: "AUTH3", Currency: "THB"})
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
	assert.Equal(t, int64(100000), op.Amount, "a whole capture")
	op, err = f.c.Cancel(bg, idempay.CancelRequest{CancelID: "cn-4", IntentID: "AUTH4"})
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
	var last []string
	for _, s := range f.seen.list()[len(f.seen.list())-4:] {
		last = append(last, strings.Join(strings.Fields(s)[:2], " "))
	}
	assert.Equal(t, []string{"S AUTH3", "I AUTH3", "V AUTH4", "I AUTH4"}, last, "no resend: the inquiry settled each")

	// Voided from outside idempay: a capture is answered 29 "already
	// voided", the state it proves: it can never be made, nothing moved.
	paid(t, f.c, f.srv, "AUTH5", 100000)
	require.Equal(t, "00", byHand(t, f.srv, "V", "AUTH5", ""))
	_, err = f.c.Capture(bg, idempay.CaptureRequest{CaptureID: "cp-5", IntentID: "AUTH5", Currency: "THB"})
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))

	// Settled from outside idempay: a cancel is refused (the fake answers
	// 21 "Void not allowed"; 39 "already settled" reads the same), failed.
	paid(t, f.c, f.srv, "AUTH9", 100000)
	require.Equal(t, "00", byHand(t, f.srv, "S", "AUTH9", "1000.00"))
	_, err = f.c.Cancel(bg, idempay.CancelRequest{CancelID: "cn-9", IntentID: "AUTH9"})
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "%v", err)

	// Settled from outside idempay before the charge settled: captured.
	req := idempay.ChargeRequest{IntentID: "AUTH6", Amount: 100000, Currency: "THB"}
	_, err = f.c.Charge(bg, req)
	require.ErrorIs(t, err, idempay.ErrPending)
	require.NoError(t, f.srv.Pay("AUTH6"))
	require.Equal(t, "00", byHand(t, f.srv, "S", "AUTH6", "1000.00"))
	ch, err = f.c.Charge(bg, req)
	require.NoError(t, err)
	assert.False(t, ch.Authorized)

	// Voided from outside before the charge settled: paid, but neither
	// held nor moved; the lookup cannot settle it, and the charge stays
	// as the store knows it (pending), never succeeded: reconcile.
	req.IntentID = "AUTH7"
	_, err = f.c.Charge(bg, req)
	require.ErrorIs(t, err, idempay.ErrPending)
	require.NoError(t, f.srv.Pay("AUTH7"))
	require.Equal(t, "00", byHand(t, f.srv, "V", "AUTH7", ""))
	ch, err = f.c.Charge(bg, req)
	assert.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err), "%v", err)
	assert.NotErrorIs(t, err, idempay.ErrAuthorized)
	assert.False(t, ch.Authorized)

	require.NoError(t, f.srv.CheckMoney())
}

// Rule: the keys never show: not in a Provider or Config printed with any
// verb, not in slog, not in ParseMaintenanceKeys' errors.
func TestMaintenanceKeysNeverPrinted(t *testing.T) {
	p := opsProvider(&opsGatewayKey().PublicKey)
	secrets := []string{opsMerchantKey().D.String()[:20], opsMerchantKey().Primes[0].String()[:20],
		opsMerchantKey().D.Text(16)[:20], opsGatewayKey().N.String()[:20], opsGatewayKey().N.Text(16)[:20]}
	cfg := idempay.Config{Provider: p, BaseURL: "https://pgw.test"}
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%d"} {
		out = append(out, sprintf(verb, p), sprintf(verb, cfg), sprintf(verb, p.Maintenance), sprintf(verb, &p.Maintenance))
	}
	out = append(out, slogText(p), slogText(p.Maintenance))
	// A Provider holds funcs, which encoding/json refuses; a configuration
	// of the caller's that holds the keys encodes them as their String.
	b, err := json.Marshal(struct{ Keys twoc2p.MaintenanceKeys }{p.Maintenance})
	require.NoError(t, err)
	assert.Equal(t, `{"Keys":"twoc2p.MaintenanceKeys{Merchant: set, Gateway: set}"}`, string(b))
	for _, s := range out {
		for _, secret := range secrets {
			require.NotContains(t, s, secret)
		}
	}
	assert.Contains(t, sprintf("%v", p), "Merchant: set, Gateway: set")

	_, err = twoc2p.ParseMaintenanceKeys([]byte("-----BEGIN RSA PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END RSA PRIVATE KEY-----\n"), nil)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "c2VjcmV0")
}

func TestParseMaintenanceKeys(t *testing.T) {
	privPKCS1, privPKCS8, pubPKIX, pubPKCS1, cert := pemForms(t)
	for _, priv := range [][]byte{privPKCS1, privPKCS8} {
		for _, pub := range [][]byte{pubPKIX, pubPKCS1, cert} {
			k, err := twoc2p.ParseMaintenanceKeys(priv, pub)
			require.NoError(t, err)
			assert.True(t, k.Merchant.Equal(opsMerchantKey()))
			assert.True(t, k.Gateway.Equal(&opsGatewayKey().PublicKey))
		}
	}
	_, err := twoc2p.ParseMaintenanceKeys(pubPKIX, pubPKIX)
	assert.Error(t, err)
	_, err = twoc2p.ParseMaintenanceKeys(privPKCS1, privPKCS1)
	assert.Error(t, err)
	_, err = twoc2p.ParseMaintenanceKeys(nil, pubPKIX)
	assert.Error(t, err)
	assert.True(t, errors.Is(twoc2p.MaintenanceKeys{}.Check(), twoc2p.ErrNoMaintenanceKeys))
}

// Rule (and a limit of the seam, see OPERATIONS.md): a refusal after an
// attempt whose answer was lost is unknown, never failed, even when Refund
// Status proved the lost attempt absent before the resend: 2C2P stores no
// answer for a key, and the Client does not carry the proof over to the
// refusal. Here the refund's first request is lost before 2C2P acts, and
// the charge is refunded in full from outside idempay before the lookup;
// the resend is refused with 49. Nothing was ever made under the refund's
// key, yet every call says unknown, and its amount stays in flight until
// it is reconciled.
func TestRefusalAfterLostAttemptStaysUnknown(t *testing.T) {
	store := newStore()
	var srvp atomic.Pointer[twoc2ptest.Server]
	var once sync.Once
	hook := func(info twoc2ptest.RequestInfo) {
		if info.ProcessType == "RS" {
			once.Do(func() {
				if code := actionByHand(srvp.Load(), "R", info.InvoiceNo, "500.00"); code != "00" {
					t.Errorf("refund by hand: %s", code)
				}
			})
		}
	}
	srv, p := opsServe(t, store, twoc2ptest.WithHook(hook))
	srvp.Store(srv)
	c := opsClient(t, srv, p, store)
	paid(t, c, srv, "ORDER700", 50000)
	srv.FailMaintenance("ORDER700", fakes.Pre)
	for range 2 {
		_, err := c.Refund(bg, refundReq("rf-1", "ORDER700", 100))
		require.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err), "%v", err)
		var api *idempay.APIError
		require.ErrorAs(t, err, &api)
		assert.Equal(t, "49", api.Code)
	}
	assert.Zero(t, madeUnder(t, srv, store, idempay.OpRefund, "rf-1"))
	l, err := c.Ledger(bg, "ORDER700")
	require.NoError(t, err)
	assert.Equal(t, int64(100), l.RefundsInFlight)
	assert.Equal(t, int64(50000), srv.Ledger().Refunded("ORDER700"), "the refund by hand only")
}

// Rule: a refund of an intent paid on its second attempt (after a declined
// first) acts on that attempt's invoice, the one 2C2P settled, never on
// the first attempt's.
func TestRefundOfASecondAttemptUsesItsInvoice(t *testing.T) {
	f := newOps(t, false)
	req := idempay.ChargeRequest{IntentID: "ORDER200", Amount: 50000, Currency: "THB"}
	_, err := f.c.Charge(bg, req)
	require.ErrorIs(t, err, idempay.ErrPending)
	inv1 := tc2pAttemptInvoice(t, "ORDER200", 1, false)
	require.NoError(t, f.srv.Decline(inv1, "4051"))
	_, err = f.c.Charge(bg, req)
	require.ErrorIs(t, err, idempay.ErrDeclined)

	second := req
	second.Extra = map[string]string{"userDefined1": "attempt-2"}
	_, err = f.c.Charge(bg, second)
	require.ErrorIs(t, err, idempay.ErrPending)
	inv2 := tc2pAttemptInvoice(t, "ORDER200", 2, false)
	require.NoError(t, f.srv.Pay(inv2))
	ch, err := f.c.Charge(bg, second)
	require.NoError(t, err)
	require.Equal(t, 2, ch.Attempt)

	op, err := f.c.Refund(bg, refundReq("rf-200", "ORDER200", 20000))
	require.NoError(t, err)
	assert.Equal(t, []string{"R " + inv2 + " " + op.Key}, f.seen.list(), "the refund names attempt 2's invoice")
	require.NoError(t, f.srv.CheckMoney())
}
