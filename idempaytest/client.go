package idempaytest

import (
	"context"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
)

// FastRetry returns a retry policy for tests: up to 8 attempts, backoffs
// from 2 ms doubling to 50 ms, no jitter, Retry-After capped at 50 ms.
// Its waits add up to about 160 ms, longer than DefaultLease, so a charge
// outlives a Mid fault, and without jitter a scripted test takes the same
// path every run. It is a function, not a variable, so no test can change
// it for another.
func FastRetry() idempay.RetryPolicy {
	return idempay.RetryPolicy{
		MaxAttempts:     8,
		InitialInterval: 2 * time.Millisecond,
		MaxInterval:     50 * time.Millisecond,
		Multiplier:      2,
		NoJitter:        true,
		MaxElapsed:      10 * time.Second,
		MaxRetryAfter:   50 * time.Millisecond,
	}
}

// ClientOption changes the configuration NewClient builds, before the
// client is made: set a Logger, a Clock, a shared Store, another Retry
// policy or your own Provider.
type ClientOption func(*idempay.Config)

// NewClient returns an idempay client for srv: the server's URL and
// HTTP client, its secret as credentials, a fresh in-memory store,
// FastRetry, and an idempay.OwnAPI provider that reads the server's replay
// header and can look charges and operations up (so Client.Settle works,
// and refunds, captures and cancels settle by lookup). Options apply
// last; an option that sets Provider replaces all of that provider setup.
//
// It stops the test with t.Fatal if idempay.New refuses the
// configuration. When the test ends it closes the client, waiting up to
// CloseTimeout for the charges still running (flights go on after their
// caller stopped waiting) to record their outcomes, and then fails the
// test if srv moved money wrong (CheckMoney: an intent charged twice, a
// refund made twice, ...): a duplicate is never a passing outcome. A charge
// still running after CloseTimeout fails the test too, since it could
// charge after the check.
//
//	func TestLostAnswer(t *testing.T) {
//		srv := idempaytest.NewServer()
//		defer srv.Close()
//		client := idempaytest.NewClient(t, srv)
//		srv.Fail("order-1", idempaytest.Post)
//		ch, err := client.Charge(ctx, idempaytest.Request("order-1", 1500))
//		// err is nil, ch.ReplayedFrom is idempay.ReplayFromServer,
//		// srv.Charges("order-1") is 1.
//	}
func NewClient(t testing.TB, srv *Server, opts ...ClientOption) *idempay.Client {
	t.Helper()
	provider := idempay.OwnAPI{LookupPath: ChargePath, RefundPath: RefundPath, CapturePath: CapturePath,
		CancelPath: CancelPath, OpLookup: true}
	if srv.replayHeader != "" {
		provider.ReplayHeaders = []string{srv.replayHeader}
	}
	cfg := idempay.Config{
		BaseURL:     srv.URL,
		Credentials: idempay.Secret(srv.secret),
		Provider:    provider,
		Store:       memstore.New(),
		HTTPClient:  srv.Client(),
		Retry:       FastRetry(),
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	c, err := idempay.New(cfg)
	if err != nil {
		t.Fatalf("idempaytest: NewClient: %v", err)
	}
	srv.checkAtEnd(t)
	// Registered after the duplicate check, so run before it: cleanups run
	// last registered first.
	t.Cleanup(func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), CloseTimeout)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("idempaytest: NewClient: %v; the duplicate check may miss what they charge", err)
		}
	})
	return c
}

// CloseTimeout is how long a client made by NewClient waits, when its test
// ends, for the charges still running: longer than FastRetry's budget.
const CloseTimeout = 15 * time.Second

// checkAtEnd fails t at its end if srv moved money wrong (CheckMoney: an
// intent charged twice, a refund made twice, ...). The check is registered
// once per test and server, so that a test with several clients reports a
// duplicate once.
func (s *Server) checkAtEnd(t testing.TB) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.checked[t] {
		return
	}
	if s.checked == nil {
		s.checked = map[testing.TB]bool{}
	}
	s.checked[t] = true
	t.Cleanup(func() {
		t.Helper()
		if err := s.checkEnd(); err != nil {
			t.Errorf("%v", err)
		}
		s.mu.Lock()
		delete(s.checked, t)
		s.mu.Unlock()
	})
}

// Request returns a charge request the Server accepts: amountJPY yen,
// paid with Token. Change Source to DeclineToken for a decline.
func Request(intentID string, amountJPY int64) idempay.ChargeRequest {
	return idempay.ChargeRequest{IntentID: intentID, Amount: amountJPY, Currency: "JPY", Source: Token}
}
