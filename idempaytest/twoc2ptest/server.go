package twoc2ptest

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/golang-jwt/jwt/v5"
	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// Server is the fake 2C2P gateway on a loopback port, like an
// httptest.Server: its URL, Start, Client and Close are the embedded
// fakes.Loopback's. The faults of Payment Token requests are scripted with
// the embedded fakes.Script's Fail (by invoiceNo), FailKey (by
// idempotencyID), FailNext and SetFaultRates; those of inquiries and
// maintenance requests with FailInquiry, FailMaintenance and
// SetEndpointFaultRates. It is also an http.Handler, for tests that serve
// it themselves. Its methods are safe for concurrent use, also while
// requests are served, and its books and counters stay readable after
// Close. Make one with NewServer or NewUnstartedServer; the zero Server is
// not usable.
type Server struct {
	*fakes.Loopback
	*fakes.Script // Payment Token's

	cfg    config
	gates  map[Endpoint]*faults.Gate
	ledger *fakes.Ledger
	keys   *faults.KeyTable // maintenance idempotencyIDs, with WithMaintenanceKeys
	jose   *joseKeys

	mu      sync.Mutex
	rng     *rand.Rand // payment tokens; guarded by mu
	txns    map[string]*Transaction
	order   []string // invoices, oldest first
	tranSeq int
	counts  Stats // the counts that are not Traffic
}

// Stats counts what the server saw. Requests are counted when their
// payload verified, faulted or not.
type Stats struct {
	// Token counts Payment Token requests: Keys lists the distinct
	// idempotencyIDs of each invoice's, in the order first seen; Codes the
	// respCodes answered. Inquiry counts Payment Inquiries, Maintenance
	// the maintenance requests (by invoiceNo).
	Token, Inquiry, Maintenance fakes.Traffic
	// Rejected counts requests whose payload or merchant did not verify.
	Rejected int
	// Invalid counts token requests refused for their fields (9004-9010).
	Invalid int
	// Existing counts 9015 answers: token requests for a known invoice.
	Existing int
	// Undelivered counts transactions opened whose answer was lost.
	Undelivered int
}

// NewServer starts a Server. Without options it knows DefaultMerchantID
// with DefaultSecret and injects no faults. It panics if an option is
// refused or it cannot listen, as httptest.NewServer does. Call Close when
// done, or give WithTest.
func NewServer(opts ...Option) *Server {
	s := NewUnstartedServer(opts...)
	s.Start()
	return s
}

// NewUnstartedServer returns a Server that is not listening yet: call
// Start, or serve it yourself (it is an http.Handler). It panics if an
// option is refused.
func NewUnstartedServer(opts ...Option) *Server {
	c := config{merchantID: DefaultMerchantID, secret: DefaultSecret, webPaymentBase: DefaultWebPaymentBase}
	faults.Apply("twoc2ptest", &c, opts)
	c.Settings = c.WithDefaults()
	s := &Server{cfg: c, ledger: &fakes.Ledger{}, keys: faults.NewKeyTable(c.Lease, c.Retention),
		jose: &joseKeys{merchant: c.merchantKey, gateway: c.gatewayKey}, rng: rand.New(rand.NewPCG(c.Seed, 0x2c2f)),
		txns: map[string]*Transaction{}, gates: map[Endpoint]*faults.Gate{}}
	for i, e := range []Endpoint{Token, Inquiry, Maintenance} {
		g := c.Gate(fakes.NewScript(c.rates[e], c.Seed+uint64(i)))
		g.QuietRetryAfter, g.Unavailable, g.Write = true, unavailable, writeBody
		s.gates[e] = g
	}
	s.Script, s.Loopback = s.gates[Token].Faults, fakes.NewLoopback(s)
	c.Check(s.Close, func() error { return errors.Join(s.CheckMoney(), s.CheckInvoices()) })
	return s
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := s.counts
	s.mu.Unlock()
	st.Token, st.Inquiry = s.gates[Token].Traffic.Snapshot(), s.gates[Inquiry].Traffic.Snapshot()
	st.Maintenance = s.gates[Maintenance].Traffic.Snapshot()
	return st
}

// Ledger returns the books: every paid transaction (an authorisation with
// WithManualSettlement) and every refund, settlement and void.
func (s *Server) Ledger() *fakes.Ledger { return s.ledger }

// CheckMoney returns a *fakes.MoneyError naming every way money moved wrong
// (one idempotencyID paying two invoices, a refund made twice, refunds
// beyond the payment, ...), or nil. Call it when the test's requests are
// done.
func (s *Server) CheckMoney() error { return s.ledger.Check() }

// SetEndpointFaultRates replaces the random fault rates of endpoint e.
func (s *Server) SetEndpointFaultRates(e Endpoint, r fakes.Rates) error {
	g, ok := s.gates[e]
	if !ok {
		return errors.New("twoc2ptest: unknown endpoint " + string(e))
	}
	return g.Faults.SetFaultRates(r)
}

// FailInquiry scripts the faults of the next inquiries for invoiceNo.
func (s *Server) FailInquiry(invoiceNo string, f ...fakes.Fault) {
	s.gates[Inquiry].Faults.Fail(invoiceNo, f...)
}

// FailMaintenance scripts the faults of the next maintenance requests for
// id: their idempotencyID, or their invoiceNo.
func (s *Server) FailMaintenance(id string, f ...fakes.Fault) {
	s.gates[Maintenance].Faults.Fail(id, f...)
}

// ServeHTTP serves the three endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fakes.StampDate(w.Header(), s.cfg.Clock())
	if s.cfg.CloseConnections {
		w.Header().Set("Connection", "close")
	}
	var e Endpoint
	switch r.URL.Path {
	case TokenPath:
		e = Token
	case InquiryPath:
		e = Inquiry
	case MaintenancePath:
		e = Maintenance
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if e == Maintenance {
		s.maintain(w, r)
		return
	}
	claims, err := s.readPayload(r)
	if err != nil {
		s.count(func(st *Stats) { st.Rejected++ })
		s.refuse(w, nil, "", "9042", true, nil)
		return
	}
	info := RequestInfo{Endpoint: e, Claims: claims, Request: r}
	info.MerchantID, _ = str(claims, "merchantID")
	info.InvoiceNo, _ = str(claims, "invoiceNo")
	info.IdempotencyID, _ = str(claims, "idempotencyID")
	if info.MerchantID != s.cfg.merchantID {
		s.count(func(st *Stats) { st.Rejected++ })
		s.refuse(w, nil, "", "9007", true, nil)
		return
	}
	g, key := s.gates[e], info.IdempotencyID
	if e == Inquiry {
		key = ""
	}
	f, ok := g.Arrive(w, key, info.InvoiceNo, s.hook(info), info.IdempotencyID)
	if !ok {
		return
	}
	if f == fakes.Internal {
		g.Traffic.Fault(f)
		s.internal(w, g, info.InvoiceNo)
		return
	}
	if e == Token {
		s.token(w, g, info, f)
	} else {
		s.inquiry(w, g, info, f)
	}
}

// hook is the WithHook call of a request.
func (s *Server) hook(info RequestInfo) func() {
	if s.cfg.hook == nil {
		return nil
	}
	return func() { s.cfg.hook(info) }
}

func (s *Server) count(f func(*Stats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.counts)
}

var (
	alnum  = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	amount = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`)
)

// token serves a Payment Token request that got past the early faults.
func (s *Server) token(w http.ResponseWriter, g *faults.Gate, in RequestInfo, f fakes.Fault) {
	t, code := s.validate(in)
	if code != "" {
		s.count(func(st *Stats) { st.Invalid++ })
		if f == fakes.Mid || f == fakes.Post {
			g.Drop(w, f)
			return
		}
		s.refuse(w, g, in.InvoiceNo, code, false, nil)
		return
	}
	s.mu.Lock()
	if _, exists := s.txns[t.InvoiceNo]; exists {
		s.counts.Existing++
		s.mu.Unlock()
		if f == fakes.Mid || f == fakes.Post {
			g.Drop(w, f)
			return
		}
		s.refuse(w, g, in.InvoiceNo, "9015", false, nil)
		return
	}
	t.PaymentToken = s.newToken()
	t.State, t.RespCode = AwaitingPayment, "0001"
	if f == fakes.Mid {
		t.State, t.RespCode = InProgress, "2001"
	}
	t.Answered = f == fakes.None
	if !t.Answered {
		s.counts.Undelivered++
	}
	t.Created = s.cfg.Clock()
	s.txns[t.InvoiceNo] = t
	s.order = append(s.order, t.InvoiceNo)
	s.mu.Unlock()
	if !t.Answered {
		g.Drop(w, f)
		return
	}
	s.answer(w, g, in.InvoiceNo, jwt.MapClaims{
		"webPaymentUrl": s.cfg.webPaymentBase + t.PaymentToken,
		"paymentToken":  t.PaymentToken,
		"respCode":      "0000",
		"respDesc":      desc("0000"),
	})
}

// validate checks a token request's fields as 2C2P documents them and
// returns the transaction it would open, or the respCode refusing it.
func (s *Server) validate(in RequestInfo) (*Transaction, string) {
	c := in.Claims
	t := &Transaction{MerchantID: in.MerchantID, InvoiceNo: in.InvoiceNo, IdempotencyID: in.IdempotencyID}
	var ok bool
	if t.Description, ok = str(c, "description"); !ok || t.Description == "" {
		return nil, "9005"
	}
	if t.CurrencyCode, ok = str(c, "currencyCode"); !ok || t.CurrencyCode == "" {
		return nil, "9005"
	}
	channels, ok := c["paymentChannel"].([]any)
	if !ok || len(channels) == 0 {
		return nil, "9005"
	}
	qr := false
	for _, ch := range channels {
		name, ok := ch.(string)
		if !ok || !alnum.MatchString(name) {
			return nil, "9004"
		}
		qr = qr || strings.Contains(strings.ToUpper(name), "QR")
		t.PaymentChannel = append(t.PaymentChannel, name)
	}
	limit := 50
	if qr {
		limit = 20
	}
	switch {
	case t.InvoiceNo == "":
		return nil, "9005"
	case !alnum.MatchString(t.InvoiceNo):
		return nil, "9004"
	case len(t.InvoiceNo) > limit:
		return nil, "9006"
	case len([]rune(t.Description)) > 250:
		return nil, "9006"
	case len(t.IdempotencyID) > 100:
		return nil, "9006"
	}
	scale, err := idempay.CurrencyExponent(t.CurrencyCode)
	if err != nil || t.CurrencyCode != strings.ToUpper(t.CurrencyCode) {
		return nil, "9010"
	}
	// The amount must be a JSON number (not a string), positive, with no
	// more decimals than the currency has.
	num, ok := c["amount"].(json.Number)
	if !ok || !amount.MatchString(num.String()) || strings.Trim(num.String(), "0.") == "" {
		return nil, "9009"
	}
	t.Amount = num.String()
	if _, frac, found := strings.Cut(t.Amount, "."); found && len(frac) > scale {
		return nil, "9009"
	}
	for i := range t.UserDefined {
		t.UserDefined[i], _ = str(c, "userDefined"+string(rune('1'+i)))
	}
	return t, ""
}

// inquiry serves a Payment Inquiry that got past the early faults.
func (s *Server) inquiry(w http.ResponseWriter, g *faults.Gate, in RequestInfo, f fakes.Fault) {
	if f == fakes.Mid || f == fakes.Post {
		g.Drop(w, f)
		return
	}
	if in.InvoiceNo == "" {
		s.refuse(w, g, in.InvoiceNo, "9005", false, nil)
		return
	}
	t, ok := s.Transaction(in.InvoiceNo)
	if !ok {
		s.refuse(w, g, in.InvoiceNo, "2002", false, jwt.MapClaims{"merchantID": s.cfg.merchantID, "invoiceNo": in.InvoiceNo})
		return
	}
	if t.State == Declined && s.cfg.plainErrors {
		s.refuse(w, g, in.InvoiceNo, t.RespCode, false, nil)
		return
	}
	s.answer(w, g, in.InvoiceNo, paymentResult(t, !s.cfg.noEcho))
}

// newToken returns a payment token from the seeded source; s.mu is held.
func (s *Server) newToken() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := make([]byte, 32)
	for i := range b {
		b[i] = digits[s.rng.IntN(len(digits))]
	}
	return "fk" + string(b)
}
