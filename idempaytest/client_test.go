package idempaytest_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a testing.TB that records failures and cleanups instead of
// acting on them, to test what NewClient reports.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	fatal    string
	cleanups []func()
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.fatal = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit() // as testing.T does: nothing after Fatalf runs
}

func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func (r *recorder) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// inGoroutine runs f where runtime.Goexit ends only f.
func inGoroutine(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

func TestNewClientStopsTheTestOnBadConfig(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	rec := &recorder{TB: t}
	var got *idempay.Client
	inGoroutine(func() {
		got = idempaytest.NewClient(rec, srv, func(c *idempay.Config) { c.BaseURL = "ftp://nowhere" })
	})
	assert.Nil(t, got)
	assert.Contains(t, rec.fatal, "idempaytest: NewClient: idempay: config BaseURL")
}

// A duplicate charge fails the test at its end, once however many
// clients the test made.
func TestNewClientReportsDuplicatesOnce(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	rec := &recorder{TB: t}
	for range 3 {
		c := idempaytest.NewClient(rec, srv) // each with its own store: three keys
		_, err := c.Charge(context.Background(), idempaytest.Request("order-1", 100))
		require.NoError(t, err)
	}
	require.Len(t, rec.cleanups, 4, "one duplicate check, and one Close per client")
	rec.runCleanups()
	require.Len(t, rec.errors, 1)
	assert.Contains(t, rec.errors[0], `intent "order-1" 3 times`)
}

func TestNewClientIsQuietWithoutDuplicates(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	rec := &recorder{TB: t}
	store := memstore.New() // shared: both clients use one key
	for range 2 {
		c := idempaytest.NewClient(rec, srv, func(c *idempay.Config) { c.Store = store })
		_, err := c.Charge(context.Background(), idempaytest.Request("order-1", 100))
		require.NoError(t, err)
	}
	rec.runCleanups()
	assert.Empty(t, rec.errors)
	assert.Empty(t, rec.fatal)
}

// The client is closed when the test ends, before the duplicate check:
// a charge still running when the test ends is waited for.
func TestNewClientClosesTheClientAtTheEnd(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	rec := &recorder{TB: t}
	c := idempaytest.NewClient(rec, srv)
	rec.runCleanups()
	assert.Empty(t, rec.errors)
	_, err := c.Charge(context.Background(), idempaytest.Request("order-1", 100))
	require.ErrorIs(t, err, idempay.ErrClosed)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
}

// Settle works: NewClient's provider can look charges up on the server.
func TestNewClientCanSettle(t *testing.T) {
	t.Parallel()
	srv := idempaytest.NewServer()
	defer srv.Close()
	client := idempaytest.NewClient(t, srv, func(c *idempay.Config) { c.Retry.MaxAttempts = 1 })
	srv.Fail("order-1", idempaytest.Post)

	_, err := client.Charge(context.Background(), idempaytest.Request("order-1", 100))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	ch, err := client.Settle(context.Background(), "order-1")
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, 1, srv.Requests("order-1"), "settled without resending")
}

func TestFastRetryIsValidAndOutlastsTheLease(t *testing.T) {
	t.Parallel()
	p := idempaytest.FastRetry()
	_, err := idempay.New(idempay.Config{BaseURL: "http://127.0.0.1:1", Store: memstore.New(), Retry: p})
	require.NoError(t, err)
	total, wait := time.Duration(0), p.InitialInterval
	for range p.MaxAttempts - 1 {
		total += wait
		wait = min(time.Duration(float64(wait)*p.Multiplier), p.MaxInterval)
	}
	assert.Greater(t, total, idempaytest.DefaultLease)
	assert.Less(t, total, time.Second)

	p.MaxAttempts = 1
	assert.Equal(t, 8, idempaytest.FastRetry().MaxAttempts, "each call returns a fresh policy")
}

func TestRequestIsValidForTheOwnAPI(t *testing.T) {
	t.Parallel()
	req := idempaytest.Request("order-1", 1500)
	require.NoError(t, req.Validate())
	require.NoError(t, idempay.OwnAPI{}.Validate(req))
}
