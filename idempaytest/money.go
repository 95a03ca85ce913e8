package idempaytest

import (
	"errors"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// The Server's refund, capture and cancel endpoints (idempay.OwnAPI's
// default RefundPath, CapturePath and CancelPath): POST makes the
// operation under the charge's key semantics, GET with ?refund_id=
// (capture_id, cancel_id) looks it up. A charge made with Extra
// "capture": false is an authorisation, captured (in part or whole) or
// cancelled once; refunds add up to at most what was charged or captured.
const (
	RefundPath  = "/payments/refund"
	CapturePath = "/payments/capture"
	CancelPath  = "/payments/cancel"
)

// CheckMoney returns a *fakes.MoneyError naming every way money moved
// wrong: an intent charged twice, a refund made twice (one refund ID under
// two keys), refunds beyond the charge or beyond what the test said it
// meant (IntendRefund), an authorisation captured twice or captured and
// cancelled; nil otherwise. NewClient runs it when the test
// ends. CheckNoDuplicates is the part about charges.
func (s *Server) CheckMoney() error { return s.api.Ledger().Check() }

// IntendRefund tells the server that the code under test means to refund
// amount of intentID in all (calls add up). CheckMoney, and NewClient's
// check when the test ends, then fail with fakes.RefundedBeyondIntent when
// the intent's refunds come to more: a consumer that retried an unknown
// refund under a new refund ID refunded twice what it meant, however far
// within the charge. Intents with no intention are not judged.
func (s *Server) IntendRefund(intentID string, amount int64) {
	s.api.Ledger().IntendRefund(intentID, amount)
}

// Ledger returns the server's books: every charge, refund, capture and
// cancel it made, oldest first.
func (s *Server) Ledger() *fakes.Ledger { return s.api.Ledger() }

// Refunds returns how many times the server made the refund (or capture,
// or cancel) opID: exactly once is what idempay promises.
func (s *Server) Refunds(opID string) int { return s.api.Ledger().OpCount(opID) }

// Refunded returns the sum the server refunded for intentID.
func (s *Server) Refunded(intentID string) int64 { return s.api.Ledger().Refunded(intentID) }

// OpRequests returns how many refund, capture and cancel requests for opID
// reached the server, faulted or not.
func (s *Server) OpRequests(opID string) int { return s.api.Stats().Ops.ByID[opID] }

// checkEnd is NewClient's check at the end of a test: the duplicate
// charges as CheckNoDuplicates says them, and whatever else CheckMoney
// finds.
func (s *Server) checkEnd() error {
	var me *fakes.MoneyError
	if !errors.As(s.CheckMoney(), &me) {
		return nil
	}
	rest := &fakes.MoneyError{}
	for _, v := range me.Violations {
		if v.Kind != fakes.ChargedTwice {
			rest.Violations = append(rest.Violations, v)
		}
	}
	if rest.Violations == nil {
		return s.CheckNoDuplicates()
	}
	return errors.Join(s.CheckNoDuplicates(), rest)
}
