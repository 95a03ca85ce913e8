package webhook_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/webhook"
	"github.com/stretchr/testify/require"
)

var eventBody = []byte(`{"id":"evt_1","object":"event"}`)

func TestDeduperRunsOnceThenDuplicate(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	d := newDeduper(t, store, newClock())
	var h counter

	got, err := d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.NoError(t, err)
	require.Equal(t, webhook.Handled, got)
	for range 3 {
		got, err = d.Do(context.Background(), "evt_1", eventBody, h.fn)
		require.NoError(t, err, "a handled event answers nil, so the provider stops")
		require.Equal(t, webhook.Duplicate, got)
	}
	require.EqualValues(t, 1, h.runs.Load())

	rec, err := store.Load(context.Background(), "webhook:stripe:acct_test", "evt_1")
	require.NoError(t, err)
	require.Equal(t, idempay.StateSucceeded, rec.State)
	require.Equal(t, webhook.BodyFingerprint(eventBody), rec.Fingerprint)
	require.Empty(t, rec.LeaseOwner, "closing the record releases the lease")
}

// Rule: 32 concurrent deliveries of one event, spread over two instances
// sharing a store, run the handler once; the others are told it is in
// progress while it runs, and duplicates after.
func TestDeduperConcurrentRedeliveries(t *testing.T) {
	t.Parallel()
	const n = 32
	clk := newClock()
	store := memstore.New(memstore.WithClock(clk.Now))
	instances := []*webhook.Deduper{
		newDeduper(t, store, clk, webhook.WithInstance("a")),
		newDeduper(t, store, clk, webhook.WithInstance("b")),
	}
	var h counter
	release := make(chan struct{})
	blocking := func(ctx context.Context) error {
		_ = h.fn(ctx)
		select {
		case <-release:
			return nil
		case <-time.After(5 * time.Second):
			return errors.New("never released")
		}
	}

	type answer struct {
		d   webhook.Delivery
		err error
	}
	answers := make(chan answer, n)
	for i := range n {
		go func() {
			got, err := instances[i%2].Do(context.Background(), "evt_1", eventBody, blocking)
			answers <- answer{got, err}
		}()
	}
	for range n - 1 { // all but the one inside the handler come back while it is held
		a := recv(t, answers)
		require.ErrorIs(t, a.err, webhook.ErrInProgress)
		require.Zero(t, a.d)
	}
	close(release)
	handled := recv(t, answers)
	require.NoError(t, handled.err)
	require.Equal(t, webhook.Handled, handled.d)
	require.EqualValues(t, 1, h.runs.Load())

	got, err := instances[1].Do(context.Background(), "evt_1", eventBody, blocking)
	require.NoError(t, err)
	require.Equal(t, webhook.Duplicate, got)
	require.EqualValues(t, 1, h.runs.Load())
}

// Rule: without any coordination from the test, concurrent deliveries
// retried until each is answered nil run the handler exactly once.
func TestDeduperConcurrentUntilAcknowledged(t *testing.T) {
	t.Parallel()
	d := newDeduper(t, nil, newClock())
	var h counter
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for {
				_, err := d.Do(context.Background(), "evt_1", eventBody, h.fn)
				if err == nil {
					return
				}
				if !errors.Is(err, webhook.ErrInProgress) {
					t.Errorf("unexpected error: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, 1, h.runs.Load())
}

// Rule (defect 8): a failed handler must not leave the event locked; the
// next delivery runs it again at once.
func TestDeduperHandlerErrorThenRedelivery(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	d := newDeduper(t, store, newClock())
	boom := errors.New("database unavailable")
	h := counter{err: boom}

	_, err := d.Do(context.Background(), "evt_1", eventBody, h.fn)
	var herr *webhook.HandlerError
	require.ErrorAs(t, err, &herr)
	require.Equal(t, "evt_1", herr.EventID)
	require.ErrorIs(t, err, boom)
	rec, err := store.Load(context.Background(), d.Namespace(), "evt_1")
	require.NoError(t, err)
	require.Equal(t, idempay.StateOpen, rec.State)
	require.Empty(t, rec.LeaseOwner, "the lease is released, not left to expire")

	h.err = nil
	got, err := d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.NoError(t, err)
	require.Equal(t, webhook.Handled, got)
	require.EqualValues(t, 2, h.runs.Load())
}

// Rule: a panicking handler releases the lease and the panic goes on.
func TestDeduperPanicReleasesLease(t *testing.T) {
	t.Parallel()
	d := newDeduper(t, nil, newClock())
	require.PanicsWithValue(t, "handler bug", func() {
		_, _ = d.Do(context.Background(), "evt_1", eventBody, func(context.Context) error { panic("handler bug") })
	})
	var h counter
	got, err := d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.NoError(t, err, "no wait for the lease after a panic")
	require.Equal(t, webhook.Handled, got)
}

// Rule (defect 5): an instance killed inside the handler leaves its lease;
// deliveries get ErrInProgress until it runs out, then one takes over.
func TestDeduperCrashedInstanceLeaseExpires(t *testing.T) {
	t.Parallel()
	clk := newClock()
	store := memstore.New(memstore.WithClock(clk.Now))
	d := newDeduper(t, store, clk)
	// What a killed process leaves: the reservation Do makes, never resolved.
	_, err := store.Reserve(context.Background(), idempay.ReserveRequest{
		Namespace: d.Namespace(), ID: "evt_1", Attempt: 1, Key: "evt_1", Fingerprint: webhook.BodyFingerprint(eventBody),
		Owner: "dead:1/x", Lease: time.Minute,
	})
	require.NoError(t, err)

	var h counter
	_, err = d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.ErrorIs(t, err, webhook.ErrInProgress)
	require.Contains(t, err.Error(), "2026-01-01T00:01:00Z", "says until when")
	clk.Advance(59 * time.Second)
	_, err = d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.ErrorIs(t, err, webhook.ErrInProgress)
	require.Zero(t, h.runs.Load())

	clk.Advance(time.Second)
	got, err := d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.NoError(t, err)
	require.Equal(t, webhook.Handled, got)
	require.EqualValues(t, 1, h.runs.Load())
}

// Rule: when the store fails after a successful handler, the delivery is
// still acknowledged (ErrNotRecorded, Handled); the record keeps its lease
// until it runs out, and only a delivery after that runs the handler again.
func TestDeduperNotRecorded(t *testing.T) {
	t.Parallel()
	clk := newClock()
	store := &flakyStore{KeyStore: memstore.New(memstore.WithClock(clk.Now))}
	d := newDeduper(t, store, clk)
	var h counter

	store.failResolve.Store(true)
	got, err := d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.ErrorIs(t, err, webhook.ErrNotRecorded)
	require.ErrorIs(t, err, errStoreDown)
	require.Equal(t, webhook.Handled, got)
	require.Equal(t, 200, webhook.HTTPStatus(err))

	store.failResolve.Store(false)
	_, err = d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.ErrorIs(t, err, webhook.ErrInProgress)
	clk.Advance(time.Minute)
	got, err = d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.NoError(t, err)
	require.Equal(t, webhook.Handled, got)
	require.EqualValues(t, 2, h.runs.Load(), "at least once, as ErrNotRecorded documents")
}

// Rule: a handler error whose release also fails reports both; the lease
// then runs out on its own.
func TestDeduperHandlerErrorAndReleaseFails(t *testing.T) {
	t.Parallel()
	clk := newClock()
	store := &flakyStore{KeyStore: memstore.New(memstore.WithClock(clk.Now))}
	d := newDeduper(t, store, clk)
	store.failResolve.Store(true)
	boom := errors.New("boom")
	_, err := d.Do(context.Background(), "evt_1", eventBody, func(context.Context) error { return boom })
	require.ErrorIs(t, err, boom)
	require.ErrorIs(t, err, errStoreDown)
	require.Equal(t, 500, webhook.HTTPStatus(err))

	store.failResolve.Store(false)
	clk.Advance(time.Minute)
	var h counter
	got, err := d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.NoError(t, err)
	require.Equal(t, webhook.Handled, got)
}

// Rule (defect 7): the fingerprint is the raw bytes of the event's data;
// the same ID with other data is refused while it is unhandled, and changes
// nothing. Delivery bookkeeping outside data may differ between deliveries,
// and an event already handled is a duplicate whatever the body.
func TestDeduperSameIDOtherBody(t *testing.T) {
	t.Parallel()
	first := []byte(`{"id":"evt_1","object":"event","pending_webhooks":2,"data":{"object":{"id":"ch_1","amount":1500}}}`)
	redelivered := []byte(`{"id":"evt_1","object":"event","pending_webhooks":1,"data":{"object":{"id":"ch_1","amount":1500}}}`)
	other := []byte(`{"id":"evt_1","object":"event","pending_webhooks":1,"data":{"object":{"id":"ch_1","amount":9999}}}`)
	failing := func(context.Context) error { return errors.New("handler failed") }

	t.Run("after success, any body is a duplicate", func(t *testing.T) {
		t.Parallel()
		store := memstore.New()
		d := newDeduper(t, store, newClock())
		var h counter
		_, err := d.Do(context.Background(), "evt_1", first, h.fn)
		require.NoError(t, err)
		for _, body := range [][]byte{redelivered, other} {
			got, err := d.Do(context.Background(), "evt_1", body, h.fn)
			require.NoError(t, err)
			require.Equal(t, webhook.Duplicate, got)
		}
		require.EqualValues(t, 1, h.runs.Load())
	})
	t.Run("after a failure, a redelivery whose bookkeeping changed is handled", func(t *testing.T) {
		t.Parallel()
		d := newDeduper(t, memstore.New(), newClock())
		_, err := d.Do(context.Background(), "evt_1", first, failing)
		require.Error(t, err)
		var h counter
		got, err := d.Do(context.Background(), "evt_1", redelivered, h.fn)
		require.NoError(t, err)
		require.Equal(t, webhook.Handled, got)
		require.EqualValues(t, 1, h.runs.Load())
	})
	t.Run("after a failure, other data is refused and the lease given back", func(t *testing.T) {
		t.Parallel()
		store := memstore.New()
		d := newDeduper(t, store, newClock())
		_, err := d.Do(context.Background(), "evt_1", first, failing)
		require.Error(t, err)
		var h counter
		_, err = d.Do(context.Background(), "evt_1", other, h.fn)
		require.ErrorIs(t, err, webhook.ErrEventMismatch)
		require.Equal(t, 422, webhook.HTTPStatus(err))
		rec, err := store.Load(context.Background(), d.Namespace(), "evt_1")
		require.NoError(t, err)
		require.Empty(t, rec.LeaseOwner)
		require.Equal(t, idempay.StateOpen, rec.State)
		got, err := d.Do(context.Background(), "evt_1", first, h.fn)
		require.NoError(t, err, "the genuine redelivery is not kept waiting")
		require.Equal(t, webhook.Handled, got)
		require.EqualValues(t, 1, h.runs.Load())
	})
	t.Run("a byte of whitespace inside data is other data", func(t *testing.T) {
		t.Parallel()
		d := newDeduper(t, nil, newClock())
		_, err := d.Do(context.Background(), "evt_1", first, failing)
		require.Error(t, err)
		spaced := []byte(`{"id":"evt_1","object":"event","pending_webhooks":2,"data":{"object":{"id":"ch_1", "amount":1500}}}`)
		var h counter
		_, err = d.Do(context.Background(), "evt_1", spaced, h.fn)
		require.ErrorIs(t, err, webhook.ErrEventMismatch)
	})
	t.Run("a body without data is compared whole", func(t *testing.T) {
		t.Parallel()
		d := newDeduper(t, nil, newClock())
		_, err := d.Do(context.Background(), "evt_1", eventBody, failing)
		require.Error(t, err)
		var h counter
		_, err = d.Do(context.Background(), "evt_1", append(append([]byte(nil), eventBody...), '\n'), h.fn)
		require.ErrorIs(t, err, webhook.ErrEventMismatch)
	})
	t.Run("WithFingerprint decides what is the same event", func(t *testing.T) {
		t.Parallel()
		idOnly := func(b []byte) string { return "same" }
		d := newDeduper(t, nil, newClock(), webhook.WithFingerprint(idOnly))
		_, err := d.Do(context.Background(), "evt_1", first, failing)
		require.Error(t, err)
		var h counter
		got, err := d.Do(context.Background(), "evt_1", other, h.fn)
		require.NoError(t, err)
		require.Equal(t, webhook.Handled, got)
	})
}

// cutOff lets a delivery's first Reserve through and fails the later ones
// (the lease's renewals): the instance is cut off from the store.
type cutOff struct {
	idempay.KeyStore
	calls atomic.Int32
}

func (s *cutOff) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if s.calls.Add(1) > 1 {
		return idempay.Reservation{}, errStoreDown
	}
	return s.KeyStore.Reserve(ctx, r)
}

// Rule: the lease is renewed while the handler runs, so a slow handler
// keeps its event; a handler whose lease is lost (its renewals cannot reach
// the store) has its context ended, with ErrLeaseLost, before another
// delivery may take the event over.
func TestDeduperLostLeaseEndsHandlerContext(t *testing.T) {
	t.Parallel()
	d, err := webhook.NewDeduper(memstore.New(), "stripe", "acct_test", webhook.WithLease(idempay.MinLease))
	require.NoError(t, err)
	_, err = d.Do(context.Background(), "evt_slow", eventBody, func(ctx context.Context) error {
		time.Sleep(2 * idempay.MinLease) // two leases long: renewed meanwhile
		return ctx.Err()
	})
	require.NoError(t, err, "a slow handler keeps its lease")

	cut, err := webhook.NewDeduper(&cutOff{KeyStore: memstore.New()}, "stripe", "acct_test", webhook.WithLease(idempay.MinLease))
	require.NoError(t, err)
	_, err = cut.Do(context.Background(), "evt_1", eventBody, func(ctx context.Context) error {
		<-ctx.Done()
		return context.Cause(ctx)
	})
	require.ErrorIs(t, err, idempay.ErrLeaseLost)
	var herr *webhook.HandlerError
	require.ErrorAs(t, err, &herr)
}

// Rule: once the handler has succeeded, the record is written even if the
// provider hung up (the request's context ended) meanwhile.
func TestDeduperRecordsAfterRequestCancelled(t *testing.T) {
	t.Parallel()
	d := newDeduper(t, nil, newClock())
	ctx, cancel := context.WithCancel(context.Background())
	got, err := d.Do(ctx, "evt_1", eventBody, func(context.Context) error { cancel(); return nil })
	require.NoError(t, err)
	require.Equal(t, webhook.Handled, got)
	got, err = d.Do(context.Background(), "evt_1", eventBody, func(context.Context) error { return errors.New("ran twice") })
	require.NoError(t, err)
	require.Equal(t, webhook.Duplicate, got)
}

// Rule: namespaces keep accounts, providers and charge intents apart.
func TestDeduperNamespaces(t *testing.T) {
	t.Parallel()
	clk := newClock()
	store := memstore.New(memstore.WithClock(clk.Now))
	a := newDeduper(t, store, clk)
	b, err := webhook.NewDeduper(store, "stripe", "acct_other", webhook.WithClock(clk.Now))
	require.NoError(t, err)
	c, err := webhook.NewDeduper(store, "omise", "acct_test", webhook.WithClock(clk.Now))
	require.NoError(t, err)
	require.Equal(t, "webhook:stripe:acct_test", a.Namespace())
	require.Equal(t, "webhook:stripe:acct_other", b.Namespace())
	require.Equal(t, "webhook:omise:acct_test", c.Namespace())

	var h counter
	for _, d := range []*webhook.Deduper{a, b, c} {
		got, err := d.Do(context.Background(), "evt_1", eventBody, h.fn)
		require.NoError(t, err)
		require.Equal(t, webhook.Handled, got)
	}
	require.EqualValues(t, 3, h.runs.Load())
	_, err = store.Load(context.Background(), "stripe:acct_test", "evt_1")
	require.ErrorIs(t, err, idempay.ErrNotFound, "nothing written where charges live")
}

// Rule: a record closed as failed (by hand, to drop a poison event) is
// acknowledged without running the handler.
func TestDeduperFailedRecordIsNotRerun(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	d := newDeduper(t, store, newClock())
	_, err := d.Do(context.Background(), "evt_1", eventBody, func(context.Context) error { return errors.New("poison") })
	require.Error(t, err)
	require.NoError(t, store.Resolve(context.Background(), idempay.Resolution{
		Namespace: d.Namespace(), ID: "evt_1", Key: "evt_1", State: idempay.StateFailed,
	}))
	var h counter
	got, err := d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.NoError(t, err)
	require.Equal(t, webhook.Duplicate, got)
	require.Zero(t, h.runs.Load())
}

func TestDeduperRefusesBadInput(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	for _, c := range []struct {
		name              string
		store             idempay.KeyStore
		provider, account string
		opts              []webhook.DeduperOption
	}{
		{"nil store", nil, "stripe", "a", nil},
		{"empty provider", store, "", "a", nil},
		{"provider with a colon", store, "stripe:x", "a", nil},
		{"upper-case provider", store, "Stripe", "a", nil},
		{"empty account", store, "stripe", "", nil},
		{"account with a space", store, "stripe", "a b", nil},
		{"zero lease", store, "stripe", "a", []webhook.DeduperOption{webhook.WithLease(0)}},
		{"lease below MinLease", store, "stripe", "a", []webhook.DeduperOption{webhook.WithLease(idempay.MinLease - 1)}},
		{"nil clock", store, "stripe", "a", []webhook.DeduperOption{webhook.WithClock(nil)}},
		{"empty instance", store, "stripe", "a", []webhook.DeduperOption{webhook.WithInstance("")}},
		{"nil fingerprint", store, "stripe", "a", []webhook.DeduperOption{webhook.WithFingerprint(nil)}},
		{"nil option", store, "stripe", "a", []webhook.DeduperOption{nil}},
	} {
		_, err := webhook.NewDeduper(c.store, c.provider, c.account, c.opts...)
		require.Error(t, err, c.name)
	}

	d := newDeduper(t, store, newClock())
	var h counter
	for _, id := range []string{"", "evt 1", "evt_\n", "évt", strings.Repeat("e", webhook.MaxEventIDLength+1)} {
		_, err := d.Do(context.Background(), id, eventBody, h.fn)
		require.ErrorIs(t, err, webhook.ErrNoEventID, "%q", id)
	}
	_, err := d.Do(context.Background(), strings.Repeat("e", webhook.MaxEventIDLength), eventBody, h.fn)
	require.NoError(t, err)
	_, err = d.Do(context.Background(), "evt_2", eventBody, nil)
	require.Error(t, err)
	require.EqualValues(t, 1, h.runs.Load())
}

// Rule: a handler that fails after its lease ran out does not release the
// lease, which another delivery may hold by then: the release names its
// delivery's owner and the store refuses it.
func TestDeduperLateFailureKeepsTheTakeoverLease(t *testing.T) {
	t.Parallel()
	clk := newClock()
	store := memstore.New(memstore.WithClock(clk.Now))
	d := newDeduper(t, store, clk)
	_, err := d.Do(context.Background(), "evt_1", eventBody, func(context.Context) error {
		clk.Advance(time.Minute)                                                // the lease runs out while the handler is still busy...
		res, err := store.Reserve(context.Background(), idempay.ReserveRequest{ // ...and another instance takes over
			Namespace: d.Namespace(), ID: "evt_1", Attempt: 1, Key: "evt_1", Fingerprint: webhook.BodyFingerprint(eventBody),
			Owner: "other/1", Lease: time.Minute,
		})
		require.NoError(t, err)
		require.True(t, res.Claimed)
		return errors.New("late failure")
	})
	require.ErrorContains(t, err, "late failure")
	rec, err := store.Load(context.Background(), d.Namespace(), "evt_1")
	require.NoError(t, err)
	require.Equal(t, "other/1", rec.LeaseOwner, "the other delivery keeps its lease")

	var h counter
	_, err = d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.ErrorIs(t, err, webhook.ErrInProgress)
}

// Rule: leases run on the store's clock, not on the instance's: a delivery
// on an instance whose clock runs an hour ahead holds its event for its
// whole lease on the store's clock, so no other delivery takes it over
// early, and its failure then releases it.
func TestDeduperLeaseIgnoresTheInstancesClock(t *testing.T) {
	t.Parallel()
	clk := newClock()
	store := memstore.New(memstore.WithClock(clk.Now))
	ahead := func() time.Time { return clk.Now().Add(time.Hour) }
	d := newDeduper(t, store, clk, webhook.WithClock(ahead))
	boom := errors.New("boom")
	_, err := d.Do(context.Background(), "evt_1", eventBody, func(context.Context) error {
		res, err := store.Reserve(context.Background(), idempay.ReserveRequest{
			Namespace: d.Namespace(), ID: "evt_1", Attempt: 1, Key: "evt_1", Fingerprint: webhook.BodyFingerprint(eventBody),
			Owner: "other/1", Lease: time.Minute,
		})
		require.NoError(t, err)
		require.False(t, res.Claimed, "the lease runs on the store's clock")
		return boom
	})
	require.ErrorIs(t, err, boom)
	var h counter
	got, err := d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.NoError(t, err, "released by the failure")
	require.Equal(t, webhook.Handled, got)
}
