package clients_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/clients"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/omisetest"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
)

func TestStripeLostAnswerIsReplayed(t *testing.T) {
	srv := stripetest.NewServer()
	defer srv.Close()
	client := clients.Stripe(t, srv)
	srv.Fail("order-1", fakes.Post)
	ch, err := client.Charge(context.Background(), idempay.ChargeRequest{IntentID: "order-1", Amount: 1500,
		Currency: "JPY", Source: "pm_card_visa"})
	if err != nil || ch.ReplayedFrom != idempay.ReplayFromServer {
		t.Fatalf("Charge: %v, replayed from %q; want success replayed by the server", err, ch.ReplayedFrom)
	}
	if n := srv.Ledger().Count("order-1"); n != 1 {
		t.Fatalf("%d charges, want 1", n)
	}
}

func TestOmiseLostAnswerIsSettled(t *testing.T) {
	srv := omisetest.NewServer()
	defer srv.Close()
	client := clients.Omise(t, srv)
	srv.Fail("order-1", fakes.Post)
	if _, err := client.Charge(context.Background(), idempay.ChargeRequest{IntentID: "order-1", Amount: 150000,
		Currency: "THB", Source: "tokn_test_1"}); err != nil {
		t.Fatalf("Charge: %v", err)
	}
	if n := srv.Ledger().Count("order-1"); n != 1 {
		t.Fatalf("%d charges, want 1", n)
	}
}

func TestTwoC2PTokenIsPending(t *testing.T) {
	srv := twoc2ptest.NewServer()
	defer srv.Close()
	client := clients.TwoC2P(t, srv)
	ch, err := client.Charge(context.Background(), idempay.ChargeRequest{IntentID: "order1", Amount: 150000,
		Currency: "THB", Description: "order 1"})
	if !errors.Is(err, idempay.ErrPending) || ch == nil || ch.AuthorizeURL == "" {
		t.Fatalf("Charge: %v (%+v); want pending with the payment page", err, ch)
	}
}

// TestDuplicateFailsTheTest: two clients with stores of their own charge
// one intent, so the fake charges it twice; the cleanup's check of the
// books must fail the test.
func TestDuplicateFailsTheTest(t *testing.T) {
	srv := stripetest.NewServer()
	defer srv.Close()
	rec := &recorder{TB: t}
	req := idempay.ChargeRequest{IntentID: "order-1", Amount: 1500, Currency: "JPY", Source: "pm_card_visa"}
	for range 2 {
		if _, err := clients.Stripe(rec, srv).Charge(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	rec.runCleanups()
	if len(rec.errs) == 0 {
		t.Fatal("two charges of one intent passed the books' check")
	}
}

// recorder is a testing.TB whose cleanups and errors the test holds.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recorder) Helper() {}
func (r *recorder) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}
