// Package conformance checks a provider adapter's optional capabilities,
// each only where the adapter implements it, as testing/fstest.TestFS
// checks a file system: the refunds, captures and cancels of its
// idempay.Operator, and their lookups, as Operates says. For a type of
// operation the adapter does not make, it checks that the Client refuses the
// operation with idempay.ErrNotSupported before anything is stored.
//
// Check runs every rule and returns all the failures joined, so that a
// test can also prove that a broken adapter fails it; TestProvider reports
// them on t. Each rule is stated in its failure.
//
// Some rules need no server (what a request carries, how a hostile answer
// is read); the others charge, refund, capture and cancel through a real
// idempay.Client against Subject.BaseURL, a fake speaking the provider's
// wire format (internal/refserver for OwnAPI).
package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
)

// Subject is an adapter under test and a server that speaks its format.
type Subject struct {
	Provider    idempay.Provider // the adapter
	BaseURL     string           // its fake server
	Credentials idempay.Secret   // what the fake accepts, if it checks
	// Charge is a request the server charges at once, for intentID, of
	// Amount in Currency.
	Charge func(intentID string) idempay.ChargeRequest
	// Manual is a request the server authorises for a later capture; nil
	// when the adapter has no manual capture (Capturer and Canceller are
	// then checked without a server only).
	Manual   func(intentID string) idempay.ChargeRequest
	Amount   int64  // what Charge and Manual charge, in minor units
	Currency string // and in what
	// Store makes a fresh store for each rule; default memstore.New.
	Store func() idempay.KeyStore
}

// TestProvider runs Check and reports its failures on t.
func TestProvider(t *testing.T, s Subject) {
	t.Helper()
	if err := Check(s); err != nil {
		t.Error(err)
	}
}

// rule is one check: its name, and a function reporting what failed.
type rule struct {
	name string
	run  func(s Subject) error
}

// Check runs every rule that applies to s.Provider and returns the
// failures, joined, or nil.
func Check(s Subject) error {
	if s.Store == nil {
		s.Store = func() idempay.KeyStore { return memstore.New() }
	}
	var errs []error
	for _, r := range rules(s.Provider) {
		if err := r.run(s); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.name, err))
		}
	}
	return errors.Join(errs...)
}

// rules lists the checks for what p implements, and the refusal checks
// for what it does not.
func rules(p idempay.Provider) []rule {
	var rs []rule
	for _, t := range []idempay.OpType{idempay.OpRefund, idempay.OpCapture, idempay.OpCancel} {
		c, ok := capabilityOf(p, t)
		if !ok {
			rs = append(rs, rule{fmt.Sprintf("%s not supported", t), notSupported(t)})
			continue
		}
		rs = append(rs, rule{fmt.Sprintf("%s request", t), requestRules(c)},
			rule{fmt.Sprintf("%s hostile answers", t), hostileRules(c)})
		if c.finds {
			rs = append(rs, rule{fmt.Sprintf("%s lookup without proof", t), findRules(c)})
		} else if g, ok := p.(idempay.LookupBeforeResender); ok && g.LookupBeforeResend() {
			rs = append(rs, rule{fmt.Sprintf("%s lookup for a guard", t), func(Subject) error {
				return fmt.Errorf("the provider does not de-duplicate (LookupBeforeResender) and cannot look a %s up: "+
					"one that may have reached it is never resent", t)
			}})
		}
	}
	flows := []func(Subject) error{refundFlow, captureFlow, cancelFlow}
	for i, t := range []idempay.OpType{idempay.OpRefund, idempay.OpCapture, idempay.OpCancel} {
		if _, ok := capabilityOf(p, t); ok {
			rs = append(rs, rule{string(t) + " through a client", flows[i]})
		}
	}
	return rs
}

// newClient is a client of s with a fresh store and quick retries.
func newClient(s Subject) (*idempay.Client, error) {
	return idempay.New(idempay.Config{BaseURL: s.BaseURL, Credentials: s.Credentials, Provider: s.Provider,
		Store: s.Store(), Retry: idempay.RetryPolicy{MaxAttempts: 3, InitialInterval: time.Millisecond, MaxElapsed: 20 * time.Second}})
}

// notSupported: a Client whose provider lacks the capability refuses the
// operation with ErrNotSupported, outcome failed, before anything is
// stored.
func notSupported(t idempay.OpType) func(Subject) error {
	return func(s Subject) error {
		store := memstore.New()
		c, err := idempay.New(idempay.Config{BaseURL: s.BaseURL, Provider: s.Provider, Store: store})
		if err != nil {
			return err
		}
		ctx := context.Background()
		var opErr error
		switch t {
		case idempay.OpRefund:
			_, opErr = c.Refund(ctx, idempay.RefundRequest{RefundID: "cf-rf", IntentID: "cf", Amount: 1, Currency: s.Currency})
		case idempay.OpCapture:
			_, opErr = c.Capture(ctx, idempay.CaptureRequest{CaptureID: "cf-cp", IntentID: "cf", Currency: s.Currency})
		case idempay.OpCancel:
			_, opErr = c.Cancel(ctx, idempay.CancelRequest{CancelID: "cf-cn", IntentID: "cf"})
		}
		if !errors.Is(opErr, idempay.ErrNotSupported) || idempay.OutcomeOf(opErr) != idempay.OutcomeFailed {
			return fmt.Errorf("want ErrNotSupported, outcome failed; got %v", opErr)
		}
		for rec := range c.UnresolvedOps(ctx, t) {
			return fmt.Errorf("refused, yet stored %s %q", t, rec.ID)
		}
		return nil
	}
}
