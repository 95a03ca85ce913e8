package twoc2ptest

import (
	"fmt"
	"strings"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// State is where a transaction stands.
type State string

// The states of a transaction, with the inquiry respCode of each.
const (
	// InProgress: the gateway failed part-way (a Mid fault); inquiry 2001.
	InProgress State = "in_progress"
	// AwaitingPayment: the token was issued; the customer has not paid.
	// Inquiry 0001.
	AwaitingPayment State = "awaiting_payment"
	// Paid: the customer paid; inquiry 0000 with tranRef.
	Paid State = "paid"
	// Declined: the payment was refused; inquiry answers the decline code.
	Declined State = "declined"
)

// Transaction is what one accepted token request opened.
type Transaction struct {
	MerchantID     string    // the token request's
	InvoiceNo      string    // the token request's, unique
	IdempotencyID  string    // the token request's, if any
	Description    string    // the token request's
	Amount         string    // the decimal number as received
	CurrencyCode   string    // upper-case ISO 4217
	PaymentChannel []string  // as requested, e.g. ["CC"]
	UserDefined    [5]string // userDefined1 to userDefined5
	PaymentToken   string    // the token the answer carried
	State          State     // where it stands
	RespCode       string    // the inquiry respCode of State
	TranRef        string    // set when paid
	ApprovalCode   string    // set when paid
	// Answered is false when the answer that carried the paymentToken was
	// lost (a Mid or Post fault): the client cannot know the outcome
	// without asking Payment Inquiry.
	Answered bool
	Created  time.Time // by the server's clock
	// Settled says a paid transaction was settled (at once, or by a
	// maintenance request with WithManualSettlement) and can be refunded;
	// Voided that it was voided before settlement.
	Settled, Voided bool
	// Refunds are the refunds made of it, oldest first.
	Refunds []RefundRecord
}

// RefundRecord is one refund of a transaction, as Refund Status (processType
// RS) lists it.
type RefundRecord struct {
	ReferenceNo   string    // the gateway's, one per refund
	IdempotencyID string    // the request's idempotencyID element, if any
	Amount        string    // actionAmount, as received
	Status        string    // RF confirmed, RP pending, RFF failed
	DateTime      time.Time // when it was made
}

// Transactions returns every transaction, oldest first.
func (s *Server) Transactions() []Transaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Transaction, len(s.order))
	for i, inv := range s.order {
		out[i] = s.txns[inv].clone()
	}
	return out
}

// Transaction returns the transaction of invoiceNo.
func (s *Server) Transaction(invoiceNo string) (Transaction, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.txns[invoiceNo]
	if !ok {
		return Transaction{}, false
	}
	return t.clone(), true
}

// Len returns the number of transactions.
func (s *Server) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.order)
}

// CheckInvoices returns a *DuplicateError if one idempotencyID opened more
// than one transaction, paid or not, which means a client sent one attempt
// of an intent under several invoice numbers; nil otherwise. CheckMoney
// checks what was paid, refunded, settled and voided.
func (s *Server) CheckInvoices() error {
	byKey := map[string][]string{}
	var keys []string
	for _, t := range s.Transactions() {
		if t.IdempotencyID == "" {
			continue
		}
		if byKey[t.IdempotencyID] == nil {
			keys = append(keys, t.IdempotencyID)
		}
		byKey[t.IdempotencyID] = append(byKey[t.IdempotencyID], t.InvoiceNo)
	}
	var d DuplicateError
	for _, k := range keys {
		if len(byKey[k]) > 1 {
			d.Keys = append(d.Keys, k)
			d.Invoices = append(d.Invoices, byKey[k])
		}
	}
	if d.Keys == nil {
		return nil
	}
	return &d
}

// DuplicateError lists idempotencyIDs that opened more than one transaction.
type DuplicateError struct {
	Keys     []string   // the idempotencyIDs that opened several
	Invoices [][]string // the invoices of Keys[i]
}

// Error lists each key with the invoices it opened.
func (e *DuplicateError) Error() string {
	var b strings.Builder
	b.WriteString("twoc2ptest: one key opened several transactions:")
	for i, k := range e.Keys {
		fmt.Fprintf(&b, " %s -> %v;", k, e.Invoices[i])
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Pay completes the payment of invoiceNo as the customer would on the
// payment page. It fails for an unknown, paid or declined invoice.
func (s *Server) Pay(invoiceNo string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.payLocked(invoiceNo)
}

// open returns the transaction of invoiceNo still waiting for its
// customer; s.mu is held.
func (s *Server) open(invoiceNo string) (*Transaction, error) {
	t, ok := s.txns[invoiceNo]
	switch {
	case !ok:
		return nil, fmt.Errorf("twoc2ptest: no transaction for invoice %q", invoiceNo)
	case t.State == Paid || t.State == Declined:
		return nil, fmt.Errorf("twoc2ptest: invoice %q is already %s", invoiceNo, t.State)
	}
	return t, nil
}

func (s *Server) payLocked(invoiceNo string) error {
	t, err := s.open(invoiceNo)
	if err != nil {
		return err
	}
	s.tranSeq++
	t.State, t.RespCode = Paid, "0000"
	t.TranRef = fmt.Sprintf("%09d", 4000000+s.tranSeq)
	t.ApprovalCode = fmt.Sprintf("%06d", s.tranSeq%1000000)
	t.Settled = !s.cfg.manualSettlement
	if minor, err := toMinor(t.Amount, t.CurrencyCode); err == nil {
		s.ledger.Add(fakes.Charge{ID: t.InvoiceNo, Merchant: t.MerchantID, Intent: t.InvoiceNo, Key: t.IdempotencyID,
			Amount: minor, Currency: t.CurrencyCode, Authorized: !t.Settled, Time: s.cfg.Clock()})
	}
	return nil
}

// PayAll pays every transaction still open and returns how many.
func (s *Server) PayAll() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, inv := range s.order {
		if s.payLocked(inv) == nil {
			n++
		}
	}
	return n
}

// Decline refuses the payment of invoiceNo with respCode (e.g. "4005").
func (s *Server) Decline(invoiceNo, respCode string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.open(invoiceNo)
	if err != nil {
		return err
	}
	t.State, t.RespCode = Declined, respCode
	return nil
}

func (t *Transaction) clone() Transaction {
	c := *t
	c.PaymentChannel = append([]string(nil), t.PaymentChannel...)
	c.Refunds = append([]RefundRecord(nil), t.Refunds...)
	return c
}

// OpenTransaction opens a transaction awaiting payment as an accepted
// token request would (channel CC), for tests of Payment Inquiry and
// Payment Maintenance that do not go through a token request. It fails for
// a known invoice, as 9015 would.
func (s *Server) OpenTransaction(invoiceNo, idempotencyID, amount, currencyCode string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, exists := s.txns[invoiceNo]; exists {
		return fmt.Errorf("twoc2ptest: invoice %q exists", invoiceNo)
	}
	t := &Transaction{MerchantID: s.cfg.merchantID, InvoiceNo: invoiceNo, IdempotencyID: idempotencyID,
		Amount: amount, CurrencyCode: currencyCode, PaymentChannel: []string{"CC"}, PaymentToken: s.newToken(),
		State: AwaitingPayment, RespCode: "0001", Answered: true, Created: s.cfg.Clock()}
	s.txns[invoiceNo] = t
	s.order = append(s.order, invoiceNo)
	return nil
}
