package idempay_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storeRetention is the file store's default retention: how long a closed
// record is kept before a sweep deletes it.
const storeRetention = filestore.DefaultRetention

// sweptWorld is a store, a server and a client on one manual clock, for
// stories of weeks: a refund long after its charge, with sweeps between.
type sweptWorld struct {
	store idempay.KeyStore
	clock *refserver.ManualClock
	s     *opsServer
	c     *idempay.Client
}

func newSweptWorld(t *testing.T, cfg refserver.Config) *sweptWorld {
	t.Helper()
	w := &sweptWorld{clock: refserver.NewManualClock(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))}
	switch *opsStoreKind {
	case "file":
		s, err := filestore.Open(filepath.Join(t.TempDir(), "keys.db"), filestore.WithClock(w.clock.Now),
			filestore.WithSweepInterval(0))
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		w.store = s
	default:
		w.store = memstore.New(memstore.WithClock(w.clock.Now))
	}
	cfg.Now = w.clock.Now
	w.s = startOps(t, w.store, cfg)
	w.c = opsClient(t, w.s, w.store)
	return w
}

// sweep moves every clock on by d and deletes what the store's retention
// lets go, as the file store's background sweep does.
func (w *sweptWorld) sweep(t *testing.T, d time.Duration) {
	t.Helper()
	w.clock.Advance(d)
	_, err := w.store.Expire(context.Background(), storeRetention)
	require.NoError(t, err)
}

// weeks is a refund's distance from its charge: past every record's
// retention.
const weeks = storeRetention + 24*time.Hour

// Rule (issue 17, 1): the charge's facts live in the ledger from its
// success on; a first refund after the charge's record was deleted is made,
// never refused as a charge that did not succeed.
func TestFirstRefundAfterTheChargeRecordExpired(t *testing.T) {
	w := newSweptWorld(t, refserver.Config{})
	charged(t, w.c, "o", 1500, false)
	w.sweep(t, weeks)
	_, err := w.c.Record(context.Background(), "o")
	require.ErrorIs(t, err, idempay.ErrNotFound, "the sweep deleted the charge's record")

	op, err := w.c.Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	assert.Equal(t, int64(500), op.Amount)
	l, err := w.c.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.Equal(t, int64(1000), l.Refundable)
	require.NoError(t, w.s.Ops().Check())
}

// Rule (issue 17, 2): a capture's outcome is in the ledger before its
// record may be deleted: the captured authorisation stays refundable, and
// SettleCapture answers from the ledger.
func TestCapturedAuthorisationRefundableAfterTheCaptureRecordExpired(t *testing.T) {
	w := newSweptWorld(t, refserver.Config{})
	charged(t, w.c, "o", 1500, true)
	_, err := w.c.Capture(context.Background(), idempay.CaptureRequest{CaptureID: "cp-1", IntentID: "o", Currency: "JPY"})
	require.NoError(t, err)
	w.sweep(t, weeks)

	settled, err := w.c.SettleCapture(context.Background(), idempay.CaptureRequest{CaptureID: "cp-1", IntentID: "o", Currency: "JPY"})
	require.NoError(t, err, "the ledger knows the capture succeeded")
	assert.Equal(t, idempay.StateSucceeded, settled.State)

	_, err = w.c.Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	l, err := w.c.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.Equal(t, int64(1500), l.Captured)
	assert.Equal(t, int64(1000), l.Refundable)
	ch, err := w.c.Charge(context.Background(), func() idempay.ChargeRequest {
		r := order("o")
		r.Extra = map[string]string{"capture": "false"}
		return r
	}())
	require.NoError(t, err, "a captured authorisation answers succeeded")
	assert.Equal(t, int64(1500), ch.Captured)
	require.NoError(t, w.s.Ops().Check())
}

// Rule (issue 17, 3): a refund that definitely failed frees its amount for
// good, and one that succeeded counts as refunded, not in flight, after
// their records are deleted.
func TestSettledRefundsKeepTheirStateAfterTheirRecordsExpired(t *testing.T) {
	w := newSweptWorld(t, refserver.Config{})
	charged(t, w.c, "o", 1500, false)
	w.s.answer("rf-1", opAnswer(200, "re_1", "failed", 1000))
	_, err := w.c.Refund(context.Background(), refundOf("o", "rf-1", 1000))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	_, err = w.c.Refund(context.Background(), refundOf("o", "rf-2", 500))
	require.NoError(t, err)
	w.sweep(t, weeks)

	l, err := w.c.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.Equal(t, int64(500), l.Refunded)
	assert.Zero(t, l.RefundsInFlight)
	assert.Equal(t, int64(1000), l.Refundable)
	_, err = w.c.Refund(context.Background(), refundOf("o", "rf-3", 1000))
	require.NoError(t, err, "the failed refund's amount is free")
	require.NoError(t, w.s.Ops().Check())
}

// Rule (issue 17, 4): a refund ID is remembered for the ledger's life: the
// same refund asked again after its record was deleted is answered from
// the ledger, never made again.
func TestSameRefundAfterItsRecordExpiredIsNotMadeAgain(t *testing.T) {
	w := newSweptWorld(t, refserver.Config{Lenient: true})
	charged(t, w.c, "o", 1500, false)
	first, err := w.c.Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	w.sweep(t, weeks)

	again, err := w.c.Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID)
	assert.True(t, again.Replayed)
	assert.Equal(t, 1, w.s.Ops().Count("rf-1"), "refunded once")
	again, err = w.c.Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID)
	assert.Equal(t, 1, w.s.Ops().Count("rf-1"), "refunded once")
	require.NoError(t, w.s.Ops().Check())
}

// Rule (issue 17, 5): with the caller's key, a refund repeated after a
// sweep is a new record of attempt 1 under the same key; it is still not
// the attempt the ledger entered, so it is neither sent unchecked nor made
// again, even against a provider that does not check amounts.
func TestCallerKeyedRefundAfterASweepIsNotSentUnchecked(t *testing.T) {
	w := newSweptWorld(t, refserver.Config{Lenient: true})
	charged(t, w.c, "o", 1500, false)
	req := refundOf("o", "rf-1", 1500)
	req.Key = "caller-key-rf-1"
	_, err := w.c.Refund(context.Background(), req)
	require.NoError(t, err)
	w.sweep(t, weeks)

	_, err = w.c.Refund(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, int64(1500), w.s.Ops().Refunded("o"), "refunded 1500 on a 1500 charge, not 3000")
	require.NoError(t, w.s.Ops().Check())

	other := refundOf("o", "rf-2", 100)
	other.Key = req.Key
	_, err = w.c.Refund(context.Background(), other)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "a key of one refund is never another's: %v", err)
	assert.Zero(t, w.s.Ops().Count("rf-2"))
}

// Rule (issue 17, 2): a ledger written before outcomes were kept in it
// (an open capture entry whose record a sweep deleted) is settled by
// SettleCapture, which asks the provider and writes the answer into the
// ledger; the captured authorisation is then refundable.
func TestSettleCaptureSettlesAnOpenEntryWhoseRecordIsGone(t *testing.T) {
	w := newSweptWorld(t, refserver.Config{})
	charged(t, w.c, "o", 1500, true)
	capture := idempay.CaptureRequest{CaptureID: "cp-1", IntentID: "o", Currency: "JPY"}
	_, err := w.c.Capture(context.Background(), capture)
	require.NoError(t, err)
	reopenEntries(t, w.store, "o") // as a ledger of an older version left it
	w.sweep(t, weeks)
	_, err = w.c.Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.ErrorIs(t, err, idempay.ErrNotRefundable, "the ledger does not know the capture ended")

	settled, err := w.c.SettleCapture(context.Background(), capture)
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, settled.State)
	l, err := w.c.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.Equal(t, int64(1500), l.Captured)
	_, err = w.c.Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	require.NoError(t, w.s.Ops().Check())
}

// reopenEntries rewrites the intent's ledger with every entry open, as a
// ledger written before the outcomes were kept in it reads once its
// operations' records are gone.
func reopenEntries(t *testing.T, store idempay.KeyStore, intent string) {
	t.Helper()
	ctx := context.Background()
	res, err := store.Reserve(ctx, idempay.ReserveRequest{Namespace: "ownapi:default/ledger", ID: intent,
		Attempt: 1, Key: "ledger", Fingerprint: "idempay-ledger-v1", Owner: "test", Lease: time.Minute})
	require.NoError(t, err)
	require.True(t, res.Claimed)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(res.Record.Result, &doc))
	for _, e := range doc["ops"].([]any) {
		e.(map[string]any)["State"] = "open"
	}
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	require.NoError(t, store.Resolve(ctx, idempay.Resolution{Namespace: "ownapi:default/ledger", ID: intent,
		Key: "ledger", State: idempay.StateOpen, Result: raw, LeaseOwner: "test"}))
}

// Rule (issue 17, 3): a refund that failed because nothing reached the
// provider (429 to the end) is closed failed while the flight holds its
// lease, then written into the ledger: its amount is free after the sweep.
func TestRefundThatNeverArrivedFreesItsAmountAfterASweep(t *testing.T) {
	w := newSweptWorld(t, refserver.Config{})
	charged(t, w.c, "o", 1500, false)
	for range 5 { // fastRetry's attempts
		w.s.answer("rf-1", status(429, `{"error":"slow down"}`))
	}
	_, err := w.c.Refund(context.Background(), refundOf("o", "rf-1", 1500))
	require.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "%v", err)
	w.sweep(t, weeks)

	l, err := w.c.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.Zero(t, l.RefundsInFlight)
	assert.Equal(t, int64(1500), l.Refundable)
	require.Len(t, l.Ops, 1)
	assert.Equal(t, idempay.StateFailed, l.Ops[0].State)
}

// Rule (issue 17, build): a paid intent charged again after a sweep
// deleted its record is answered from the ledger, with the attempt and key
// that paid it, and never charged again; other parameters are told apart.
func TestPaidIntentChargedAfterASweepIsAnsweredFromTheLedger(t *testing.T) {
	w := newSweptWorld(t, refserver.Config{})
	first, err := w.c.Charge(context.Background(), order("o"))
	require.NoError(t, err)
	w.sweep(t, weeks)

	again, err := w.c.Charge(context.Background(), order("o"))
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, first.ID, again.ID)
	assert.Equal(t, first.Key, again.Key)
	assert.Equal(t, first.Attempt, again.Attempt)
	assert.Equal(t, first.Status, again.Status)
	assert.Equal(t, first.Amount, again.Amount)
	assert.False(t, again.ParamsDiffer)
	other := order("o")
	other.Amount = 900
	again, err = w.c.Charge(context.Background(), other)
	require.NoError(t, err)
	assert.True(t, again.ParamsDiffer, "the ledger knows the paid attempt's parameters")
	assert.Equal(t, 1, w.s.Ledger().Count("o"), "charged once")
	require.NoError(t, w.s.Ledger().Check())
}

// Rule (issue 17, 4): the same refund asked again after a sweep, when the
// ledger does not know how its first attempt ended (a ledger of an older
// version), is not sent: it is unknown until SettleRefund asks the
// provider; then it answers the refund made, still made once.
func TestSameRefundWithAnOpenForgottenEntryWaitsForALookup(t *testing.T) {
	w := newSweptWorld(t, refserver.Config{Lenient: true})
	charged(t, w.c, "o", 1500, false)
	first, err := w.c.Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	reopenEntries(t, w.store, "o")
	w.sweep(t, weeks)

	_, err = w.c.Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err), "%v", err)
	assert.Equal(t, 1, w.s.Ops().Count("rf-1"), "not sent again")

	settled, err := w.c.SettleRefund(context.Background(), refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	assert.Equal(t, first.ID, settled.ID)
	again, err := w.c.Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID)
	assert.Equal(t, 1, w.s.Ops().Count("rf-1"), "refunded once")
	l, err := w.c.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.Equal(t, int64(500), l.Refunded)
	assert.Zero(t, l.RefundsInFlight)
	require.NoError(t, w.s.Ops().Check())
}
