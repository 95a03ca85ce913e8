package fake2c2p

import (
	"encoding/json"
	"maps"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/golang-jwt/jwt/v5"
	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/faults"
)

// Server is the fake gateway, an http.Handler: mount it on
// httptest.NewServer. Its methods are safe for concurrent use.
type Server struct {
	cfg    Config
	faults map[Endpoint]*faults.Injector

	mu      sync.Mutex
	rng     *rand.Rand // payment tokens; guarded by mu
	txns    map[string]*Transaction
	order   []string // invoices, oldest first
	tranSeq int
	stats   Stats
}

// Stats counts what the server saw. Requests are counted when their
// payload verified, faulted or not.
type Stats struct {
	TokenRequests int
	Inquiries     int
	// Rejected counts requests whose payload or merchant did not verify.
	Rejected int
	// Invalid counts token requests refused for their fields (9004-9010).
	Invalid int
	// Existing counts 9015 answers: token requests for a known invoice.
	Existing int
	// Undelivered counts transactions opened whose answer was lost.
	Undelivered int
	// TokenFaults and InquiryFaults count the faults injected.
	TokenFaults   map[faults.Fault]int
	InquiryFaults map[faults.Fault]int
	// KeysByInvoice lists the distinct idempotencyIDs of the token
	// requests for each invoice, in the order first seen.
	KeysByInvoice map[string][]string
}

// New returns a Server configured by cfg. It panics if cfg.Validate
// reports an error: a fixture built wrong should stop the test at once.
func New(cfg Config) *Server {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg = cfg.withDefaults()
	return &Server{
		cfg: cfg,
		faults: map[Endpoint]*faults.Injector{
			Token:   faults.NewInjector(cfg.TokenFaults, cfg.Seed),
			Inquiry: faults.NewInjector(cfg.InquiryFaults, cfg.Seed+1),
		},
		rng:  rand.New(rand.NewPCG(cfg.Seed, 0x2c2f)),
		txns: map[string]*Transaction{},
		stats: Stats{TokenFaults: map[faults.Fault]int{}, InquiryFaults: map[faults.Fault]int{},
			KeysByInvoice: map[string][]string{}},
	}
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.TokenFaults = maps.Clone(s.stats.TokenFaults)
	st.InquiryFaults = maps.Clone(s.stats.InquiryFaults)
	st.KeysByInvoice = make(map[string][]string, len(s.stats.KeysByInvoice))
	for k, v := range s.stats.KeysByInvoice {
		st.KeysByInvoice[k] = slices.Clone(v)
	}
	return st
}

// SetFaults replaces the random fault rates (scripts are kept), for
// example to let a chaos test settle with faults off.
func (s *Server) SetFaults(token, inquiry faults.Rates) error {
	if err := token.Validate(); err != nil {
		return err
	}
	if err := inquiry.Validate(); err != nil {
		return err
	}
	_ = s.faults[Token].SetRates(token) // validated above
	_ = s.faults[Inquiry].SetRates(inquiry)
	return nil
}

// InjectToken scripts the faults of the next token requests for invoiceNo,
// one per request (faults.None lets one through). Scripts win over rates.
func (s *Server) InjectToken(invoiceNo string, fs ...faults.Fault) {
	s.faults[Token].ScriptIntent(invoiceNo, fs...)
}

// InjectInquiry scripts the faults of the next inquiries for invoiceNo.
func (s *Server) InjectInquiry(invoiceNo string, fs ...faults.Fault) {
	s.faults[Inquiry].ScriptIntent(invoiceNo, fs...)
}

// ServeHTTP serves the two endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.cfg.CloseConnections {
		w.Header().Set("Connection", "close")
	}
	var e Endpoint
	switch r.URL.Path {
	case TokenPath:
		e = Token
	case InquiryPath:
		e = Inquiry
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	claims, err := s.readPayload(r)
	if err != nil {
		s.count(func(st *Stats) { st.Rejected++ })
		s.refuse(w, "9042", true, nil)
		return
	}
	info := RequestInfo{Endpoint: e, Claims: claims, Request: r}
	info.MerchantID, _ = str(claims, "merchantID")
	info.InvoiceNo, _ = str(claims, "invoiceNo")
	info.IdempotencyID, _ = str(claims, "idempotencyID")
	if info.MerchantID != s.cfg.MerchantID {
		s.count(func(st *Stats) { st.Rejected++ })
		s.refuse(w, "9007", true, nil)
		return
	}
	s.count(func(st *Stats) {
		if e == Inquiry {
			st.Inquiries++
			return
		}
		st.TokenRequests++
		if info.InvoiceNo != "" && info.IdempotencyID != "" &&
			!slices.Contains(st.KeysByInvoice[info.InvoiceNo], info.IdempotencyID) {
			st.KeysByInvoice[info.InvoiceNo] = append(st.KeysByInvoice[info.InvoiceNo], info.IdempotencyID)
		}
	})
	if s.cfg.OnRequest != nil {
		s.cfg.OnRequest(info)
	}
	f := s.faults[e].Draw(info.IdempotencyID, info.InvoiceNo)
	if f != faults.None {
		s.count(func(st *Stats) {
			if e == Token {
				st.TokenFaults[f]++
			} else {
				st.InquiryFaults[f]++
			}
		})
	}
	switch f {
	case faults.Pre:
		s.drop(w)
		return
	case faults.Unavailable:
		s.unavailable(w)
		return
	case faults.Internal:
		s.internal(w)
		return
	}
	if e == Token {
		s.token(w, info, f)
	} else {
		s.inquiry(w, info, f)
	}
}

func (s *Server) count(f func(*Stats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.stats)
}

var (
	alnum  = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	amount = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`)
)

// token serves a Payment Token request that got past the early faults.
func (s *Server) token(w http.ResponseWriter, in RequestInfo, f faults.Fault) {
	t, code := s.validate(in)
	if code != "" {
		s.count(func(st *Stats) { st.Invalid++ })
		if f == faults.Mid || f == faults.Post {
			s.drop(w)
			return
		}
		s.refuse(w, code, false, nil)
		return
	}
	s.mu.Lock()
	if _, exists := s.txns[t.InvoiceNo]; exists {
		s.stats.Existing++
		s.mu.Unlock()
		if f == faults.Mid || f == faults.Post {
			s.drop(w)
			return
		}
		s.refuse(w, "9015", false, nil)
		return
	}
	t.PaymentToken = s.newToken()
	t.State, t.RespCode = AwaitingPayment, "0001"
	if f == faults.Mid {
		t.State, t.RespCode = InProgress, "2001"
	}
	t.Answered = f == faults.None
	if !t.Answered {
		s.stats.Undelivered++
	}
	t.Created = s.cfg.Now()
	s.txns[t.InvoiceNo] = t
	s.order = append(s.order, t.InvoiceNo)
	s.mu.Unlock()
	if !t.Answered {
		s.drop(w)
		return
	}
	s.answer(w, jwt.MapClaims{
		"webPaymentUrl": s.cfg.WebPaymentBase + t.PaymentToken,
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
func (s *Server) inquiry(w http.ResponseWriter, in RequestInfo, f faults.Fault) {
	if f == faults.Mid || f == faults.Post {
		s.drop(w)
		return
	}
	if in.InvoiceNo == "" {
		s.refuse(w, "9005", false, nil)
		return
	}
	t, ok := s.Transaction(in.InvoiceNo)
	if !ok {
		s.refuse(w, "2002", false, jwt.MapClaims{"merchantID": s.cfg.MerchantID, "invoiceNo": in.InvoiceNo})
		return
	}
	if t.State == Declined && s.cfg.PlainErrors {
		s.refuse(w, t.RespCode, false, nil)
		return
	}
	s.answer(w, paymentResult(t, !s.cfg.NoIdempotencyEcho))
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
