package idempaytest_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The exported constants are spelled out so that godoc shows their
// values; they must stay what the reference server uses.
func TestConstantsMatchTheReferenceServer(t *testing.T) {
	assert.Equal(t, refserver.DefaultPath, idempaytest.ChargePath)
	assert.Equal(t, refserver.DefaultReplayHeader, idempaytest.ReplayHeader)
	assert.Equal(t, refserver.DeclineTokenPrefix, idempaytest.DeclineToken)
	assert.Equal(t, "none pre unavailable mid internal post", join(idempaytest.None, idempaytest.Pre,
		idempaytest.Unavailable, idempaytest.Mid, idempaytest.Internal, idempaytest.Post))
}

func join(fs ...idempaytest.Fault) string {
	s := ""
	for i, f := range fs {
		if i > 0 {
			s += " "
		}
		s += f.String()
	}
	return s
}

func TestServerChargesOnce(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	client := idempaytest.NewClient(t, srv)

	ch, err := client.Charge(context.Background(), idempaytest.Request("order-1", 1500))
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, ch.State)
	assert.EqualValues(t, 1500, ch.Amount)
	assert.False(t, ch.Replayed)
	assert.Equal(t, 1, srv.Charges("order-1"))
	assert.Equal(t, 1, srv.TotalCharges())
	assert.Equal(t, 1, srv.Requests("order-1"))
	assert.Equal(t, 1, srv.TotalRequests())
	assert.Equal(t, []string{ch.Key}, srv.Keys("order-1"))
	assert.NoError(t, srv.CheckNoDuplicates())

	// Unknown intents have nothing.
	assert.Zero(t, srv.Charges("nope"))
	assert.Zero(t, srv.Requests("nope"))
	assert.Empty(t, srv.Keys("nope"))
}

// Each fault, struck once, is survived by the idempay client with one key
// and one charge; what differs is how many requests it took and whether
// the answer was a replay.
func TestServerFaultsAreSurvivedWithOneKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fault    idempaytest.Fault
		requests int // exact count, or 0 for "at least 2" (Mid: 409s while the lease runs, as many as the machine's speed allows)
		replayed bool
	}{
		{idempaytest.None, 1, false},
		{idempaytest.Pre, 2, false},
		{idempaytest.Unavailable, 2, false},
		{idempaytest.Internal, 2, false},
		{idempaytest.Post, 2, true},
		{idempaytest.Mid, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.fault.String(), func(t *testing.T) {
			t.Parallel()
			srv := idempaytest.NewServer()
			defer srv.Close()
			client := idempaytest.NewClient(t, srv)
			srv.Fail("order-1", tc.fault)

			ch, err := client.Charge(context.Background(), idempaytest.Request("order-1", 1500))
			require.NoError(t, err)
			assert.Equal(t, tc.replayed, ch.Replayed)
			if tc.replayed {
				assert.Equal(t, idempay.ReplayFromServer, ch.ReplayedFrom)
			}
			if tc.requests > 0 {
				assert.Equal(t, tc.requests, srv.Requests("order-1"))
			} else {
				// However busy the machine, the retry comes after the first
				// request; how many 409s fit in the server's lease is load.
				assert.GreaterOrEqual(t, srv.Requests("order-1"), 2)
			}
			assert.Equal(t, ch.Requests, srv.Requests("order-1"))
			assert.Equal(t, 1, srv.Charges("order-1"))
			assert.Len(t, srv.Keys("order-1"), 1)
		})
	}
}

func TestServerFailScriptsOnlyItsIntent(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	client := idempaytest.NewClient(t, srv)
	srv.Fail("order-1", idempaytest.Pre, idempaytest.Pre)
	srv.Fail("order-1", idempaytest.None, idempaytest.Unavailable) // adds to the script

	for _, id := range []string{"order-2", "order-1"} {
		_, err := client.Charge(context.Background(), idempaytest.Request(id, 100))
		require.NoError(t, err)
	}
	assert.Equal(t, 1, srv.Requests("order-2"))
	assert.Equal(t, 3, srv.Requests("order-1"), "two dropped, the third let through by None")
	// The Unavailable left in the script strikes the next request for
	// order-1, from whichever client.
	other := idempaytest.NewClient(t, srv, func(c *idempay.Config) { c.Store = memstore.New(); c.Retry.MaxAttempts = 1 })
	_, err := other.Charge(context.Background(), idempaytest.Request("order-1", 100))
	require.Error(t, err, "503, and one attempt allowed")
	assert.Equal(t, 4, srv.Requests("order-1"))
	assert.Equal(t, 1, srv.Charges("order-1"))
}

func TestServerFailNext(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	client := idempaytest.NewClient(t, srv)
	srv.FailNext(idempaytest.Post)

	ch, err := client.Charge(context.Background(), idempaytest.Request("any", 100))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromServer, ch.ReplayedFrom)
	assert.Equal(t, 2, srv.Requests("any"))
}

func TestServerDeclines(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	client := idempaytest.NewClient(t, srv)
	req := idempaytest.Request("order-1", 100)
	req.Source = idempaytest.DeclineToken + "_insufficient"

	_, err := client.Charge(context.Background(), req)
	require.ErrorIs(t, err, idempay.ErrDeclined)
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusPaymentRequired, apiErr.Status)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.Zero(t, srv.Charges("order-1"))
}

// Random faults from one seed strike the same requests again when the
// requests come in the same order, so a failing run can be replayed.
// Mid is left out: how many 409s it causes depends on the wall clock.
func TestServerFaultRatesAreReproducibleBySeed(t *testing.T) {
	t.Parallel()
	rates := idempaytest.FaultRates{Pre: 0.15, Unavailable: 0.15, Internal: 0.1, Post: 0.15}
	run := func(seed uint64) []int {
		srv := idempaytest.NewServer(idempaytest.WithFaultRates(rates, seed))
		defer srv.Close()
		client := idempaytest.NewClient(t, srv)
		var requests []int
		for _, id := range intents(30) {
			_, err := client.Charge(context.Background(), idempaytest.Request(id, 100))
			require.NoError(t, err, id)
			assert.Equal(t, 1, srv.Charges(id), id)
			requests = append(requests, srv.Requests(id))
		}
		assert.Greater(t, srv.TotalRequests(), 30, "some faults struck")
		return requests
	}
	assert.Equal(t, run(7), run(7))
}

func TestServerSetFaultRates(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer(idempaytest.WithFaultRates(idempaytest.FaultRates{Pre: 1}, 1))
	defer srv.Close()
	client := idempaytest.NewClient(t, srv, func(c *idempay.Config) { c.Retry.MaxAttempts = 2 })

	_, err := client.Charge(context.Background(), idempaytest.Request("order-1", 100))
	require.Error(t, err, "every request dropped")
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))

	require.Error(t, srv.SetFaultRates(idempaytest.FaultRates{Pre: 2}))
	require.NoError(t, srv.SetFaultRates(idempaytest.FaultRates{}))
	ch, err := client.Charge(context.Background(), idempaytest.Request("order-1", 100))
	require.NoError(t, err)
	assert.Equal(t, []string{ch.Key}, srv.Keys("order-1"), "the resumed charge sent the same key")
	assert.Equal(t, 1, srv.Charges("order-1"))
}

func TestServerSecret(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer(idempaytest.WithSecret("sk_test_kit"))
	defer srv.Close()

	_, err := idempaytest.NewClient(t, srv).Charge(context.Background(), idempaytest.Request("order-1", 100))
	require.NoError(t, err, "NewClient sends the secret")

	anonymous := idempaytest.NewClient(t, srv, func(c *idempay.Config) { c.Credentials = "" })
	_, err = anonymous.Charge(context.Background(), idempaytest.Request("order-2", 100))
	require.ErrorIs(t, err, idempay.ErrConfig)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.Zero(t, srv.Charges("order-2"))
}

func TestServerReplayHeader(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer(idempaytest.WithReplayHeader("X-Replayed"))
	defer srv.Close()
	srv.Fail("order-1", idempaytest.Post)

	ch, err := idempaytest.NewClient(t, srv).Charge(context.Background(), idempaytest.Request("order-1", 100))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromServer, ch.ReplayedFrom, "NewClient reads the server's spelling")
}

// WithClock lets a test expire the lease a Mid fault left without
// sleeping; WithLease makes the client give up before it expires.
func TestServerLeaseAndClock(t *testing.T) {
	t.Parallel()
	clock := newClock()
	srv := idempaytest.NewServer(idempaytest.WithLease(time.Minute), idempaytest.WithClock(clock.Now))
	defer srv.Close()
	client := idempaytest.NewClient(t, srv, func(c *idempay.Config) { c.Retry.MaxAttempts = 3 })
	srv.Fail("order-1", idempaytest.Mid)

	_, err := client.Charge(context.Background(), idempaytest.Request("order-1", 100))
	require.ErrorIs(t, err, idempay.ErrInProgress)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Zero(t, srv.Charges("order-1"))

	clock.Advance(time.Minute)
	ch, err := client.Charge(context.Background(), idempaytest.Request("order-1", 100))
	require.NoError(t, err)
	assert.False(t, ch.Replayed, "the crashed claim was taken over and charged")
	assert.Equal(t, 1, srv.Charges("order-1"))
	assert.Len(t, srv.Keys("order-1"), 1)
}

func TestServerStoredServerErrors(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer(idempaytest.WithStoredServerErrors())
	defer srv.Close()
	srv.Fail("order-1", idempaytest.Internal)

	_, err := idempaytest.NewClient(t, srv).Charge(context.Background(), idempaytest.Request("order-1", 100))
	require.ErrorIs(t, err, idempay.ErrStoredFailure)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Equal(t, 2, srv.Requests("order-1"), "the retry got the stored 500 and stopped")
}

// Two clients with separate stores do not share keys: both charge. That
// is the bug CheckNoDuplicates exists to catch.
func TestCheckNoDuplicatesReportsEachIntent(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	var keys []string
	for range 2 {
		c, err := idempay.New(idempay.Config{BaseURL: srv.URL, HTTPClient: srv.Client(), Store: memstore.New()})
		require.NoError(t, err)
		ch, err := c.Charge(context.Background(), idempaytest.Request("order-1", 100))
		require.NoError(t, err)
		keys = append(keys, ch.Key)
	}
	err := srv.CheckNoDuplicates()
	var dup *idempaytest.DuplicateChargeError
	require.ErrorAs(t, err, &dup)
	require.Len(t, dup.Duplicates, 1)
	assert.Equal(t, "order-1", dup.Duplicates[0].IntentID)
	assert.Equal(t, keys, dup.Duplicates[0].Keys)
	assert.Len(t, dup.Duplicates[0].ChargeIDs, 2)
	assert.Contains(t, err.Error(), `intent "order-1" 2 times`)
	assert.Equal(t, 2, srv.Charges("order-1"))
}

func TestServerReadableAfterClose(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	client := idempaytest.NewClient(t, srv)
	_, err := client.Charge(context.Background(), idempaytest.Request("order-1", 100))
	require.NoError(t, err)
	srv.Close()

	assert.Equal(t, 1, srv.Charges("order-1"))
	assert.Equal(t, 1, srv.Requests("order-1"))
	_, err = client.Charge(context.Background(), idempaytest.Request("order-2", 100))
	assert.ErrorIs(t, err, idempay.ErrUnreachable, "a closed server refuses connections")
}

func TestNewServerRefusesBadOptions(t *testing.T) {
	t.Parallel()
	bad := map[string]idempaytest.Option{
		"rate above 1":        idempaytest.WithFaultRates(idempaytest.FaultRates{Pre: 1.5}, 0),
		"rates sum above 1":   idempaytest.WithFaultRates(idempaytest.FaultRates{Pre: 0.6, Post: 0.6}, 0),
		"empty replay header": idempaytest.WithReplayHeader(""),
		"header with colon":   idempaytest.WithReplayHeader("X-Replayed:"),
		"empty secret":        idempaytest.WithSecret(""),
		"secret with space":   idempaytest.WithSecret("sk test"),
		"zero lease":          idempaytest.WithLease(0),
		"negative lease":      idempaytest.WithLease(-time.Second),
		"nil clock":           idempaytest.WithClock(nil),
	}
	for name, opt := range bad {
		t.Run(name, func(t *testing.T) {
			assert.PanicsWithValue(t, panicValue(t, opt), func() { idempaytest.NewServer(opt) })
		})
	}
}

// panicValue returns what NewServer panics with for opt, checking that it
// names the package and the function.
func panicValue(t *testing.T, opt idempaytest.Option) (v any) {
	defer func() {
		v = recover()
		s, ok := v.(string)
		require.True(t, ok, "panics with a string, got %#v", v)
		assert.Contains(t, s, "idempaytest: NewServer: ")
	}()
	idempaytest.NewServer(opt).Close()
	return nil
}

func intents(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "order-" + string(rune('A'+i%26)) + string(rune('a'+i/26))
	}
	return ids
}

// newClock is a manual clock for WithClock.
func newClock() *fakes.Clock { return fakes.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) }

// The zero Server is not usable: it must come from NewServer. The zero
// FakeCharger is (every FakeCharger test starts from one).
func TestZeroValues(t *testing.T) {
	t.Parallel()
	assert.Panics(t, func() { (&idempaytest.Server{}).Charges("order-1") })
	assert.Panics(t, func() { (&idempaytest.IntentScript{}).Succeed() })

	var fake idempaytest.FakeCharger
	assert.Empty(t, fake.Calls())
	_, err := fake.Charge(context.Background(), idempaytest.Request("order-1", 100))
	assert.NoError(t, err)
}
