package idempay

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
)

// TwoC2P speaks 2C2P's Payment Gateway API v4.3: a Payment Token request
// per intent, and Payment Inquiry to settle what an answer did not.
//
// 2C2P has no idempotency header. The invoiceNo in the signed payload is
// the key in practice: a second token request with the same invoiceNo is
// refused with respCode 9015, not replayed. So the adapter derives the
// invoiceNo from the intent ID (TwoC2PInvoiceNo), which the Client has
// reserved in the KeyStore before anything is sent, and it is a
// LookupGuard: before any resend of an intent that may have reached 2C2P,
// and after any lost or unclassifiable answer (9015 included), the Client
// asks Payment Inquiry. Found settles the intent and is reported as a
// replay (ReplayFromLookup); 2002 "not found" proves that sending again is
// safe; anything else leaves the outcome unknown with the invoice kept. A
// 9015 is therefore never a failure. The intent's idempotency key travels
// in the idempotencyID field as well.
//
// # What a successful token request means
//
// A Payment Token request does not move money: it opens a payment that the
// customer completes on 2C2P's page (webPaymentUrl), or that the merchant
// completes with Do Payment. So respCode 0000 on the token request is
// reported as a pending charge (KindPending, Charge.State StatePending),
// with Charge.ID the paymentToken, Charge.AuthorizeURL the webPaymentUrl
// and Charge.Status "0000". Charging the intent again later (or Settle)
// asks Payment Inquiry, and only its 0000 makes the charge succeeded, with
// Charge.ID the tranRef. A charge found by inquiry before it was paid is
// pending with Charge.ID the invoiceNo and no AuthorizeURL: Payment Inquiry
// does not give a lost paymentToken back, so the customer cannot be sent
// to pay under that invoice; reconcile it with 2C2P before charging the
// order under a new intent ID.
//
// # respCodes
//
// Token request (ReadCharge): 0000, 0001, 2001 pending; 9015 (existing
// invoice), 4200 (tokenised, no payment), 9041 (token already used) and
// any code not listed unknown; 9004, 9005, 9006, 9009, 9010, 9040 invalid;
// 9007, 9042 configuration; 9990 to 9999 server errors (retried after an
// inquiry). An answer whose signature does not verify is unknown, never a
// success. A 5xx is a server error whatever its body.
//
// Payment Inquiry (FindCharge): 0000 succeeded; 0001, 2001 pending; the
// codes IsDecline accepts declined; 2002 not found; everything else, an
// unsigned success, or an answer that names no invoice or another invoice
// or merchant, unknown; an echoed idempotencyID other than the intent's key, a key
// conflict.
//
// # Credentials and configuration
//
// Config.Credentials is the merchant secret key: it signs every request
// and verifies every answer, and never appears in an error or a log. The
// merchant ID and the channels are set here. The channels decide the
// invoiceNo limit (20 characters with a QR channel, else 50), so they are
// part of the adapter, not of each request: a Client whose channels change
// would derive other invoice numbers for the same intents. Use a separate
// Config.Account for each set of channels.
//
// ChargeRequest fields: IntentID gives invoiceNo; Amount and Currency give
// amount (as a decimal number, see TwoC2PAmount) and currencyCode;
// Description (default: the intent ID) gives description; ReturnURL gives
// frontendReturnUrl; Extra keys "userDefined1" to "userDefined5" give those
// fields. Source, Customer and Metadata have no place in a token request
// and are refused, as are other Extra keys.
type TwoC2P struct {
	// MerchantID is the 2C2P merchant ID. Required.
	MerchantID string
	// PaymentChannel lists the channels offered to the customer. Default
	// ["CC"].
	PaymentChannel []string
	// Request3DS is sent as request3DS when set: "Y", "N" or "F".
	Request3DS string
	// BackendReturnURL is where 2C2P notifies the merchant's server.
	BackendReturnURL string
	// TokenPath and InquiryPath default to "/payment/4.3/paymentToken" and
	// "/payment/4.3/paymentInquiry", under Config.BaseURL (for example
	// https://sandbox-pgw.2c2p.com).
	TokenPath   string
	InquiryPath string
	// IsDecline says which Payment Inquiry respCodes are a definite refusal
	// of the payment. Default TwoC2PIssuerDecline. A code it accepts ends
	// the intent as failed: include only codes 2C2P confirms move no money.
	IsDecline func(respCode string) bool
	// Now is the clock for the exp and nbf claims of answers. Default
	// time.Now.
	Now func() time.Time
}

// Defaults of TwoC2P.
const (
	TwoC2PTokenPath   = "/payment/4.3/paymentToken"
	TwoC2PInquiryPath = "/payment/4.3/paymentInquiry"
)

var (
	_ Provider    = TwoC2P{}
	_ LookupGuard = TwoC2P{}
)

// Name is "2c2p".
func (TwoC2P) Name() string { return "2c2p" }

// LookupBeforeResend is true: 2C2P answers a repeated invoiceNo with 9015
// instead of a replay, so only Payment Inquiry can say what an earlier
// attempt did.
func (TwoC2P) LookupBeforeResend() bool { return true }

// twoc2pExtra are the ChargeRequest.Extra keys the adapter understands.
var twoc2pExtra = [5]string{"userDefined1", "userDefined2", "userDefined3", "userDefined4", "userDefined5"}

// Validate refuses, before anything is stored or signed, what a token
// request could not carry: see the type's documentation.
func (a TwoC2P) Validate(req ChargeRequest) error {
	switch {
	case req.Source != "":
		return invalid("Source", "has no place in a 2C2P payment token request; the customer pays on webPaymentUrl")
	case req.Customer != "":
		return invalid("Customer", "has no place in a 2C2P payment token request")
	case len(req.Metadata) > 0:
		return invalid("Metadata", "has no place in a 2C2P payment token request; use Extra userDefined1 to userDefined5")
	}
	for k := range req.Extra {
		if !slices.Contains(twoc2pExtra[:], k) {
			return invalid("Extra", "key %q is not one of userDefined1 to userDefined5", k)
		}
	}
	p, err := a.payload(req, req.Key)
	if err != nil {
		return err
	}
	return p.Validate()
}

// payload builds the token request of req, to carry key.
func (a TwoC2P) payload(req ChargeRequest, key string) (TwoC2PPaymentToken, error) {
	channels := a.channels()
	invoiceNo, err := TwoC2PInvoiceNo(req.IntentID, TwoC2PHasQRChannel(channels))
	if err != nil {
		return TwoC2PPaymentToken{}, err
	}
	p := TwoC2PPaymentToken{
		MerchantID:        a.MerchantID,
		InvoiceNo:         invoiceNo,
		Description:       cmp.Or(req.Description, req.IntentID),
		Amount:            req.Amount,
		Currency:          req.Currency,
		PaymentChannel:    channels,
		IdempotencyID:     key,
		Request3DS:        a.Request3DS,
		FrontendReturnURL: req.ReturnURL,
		BackendReturnURL:  a.BackendReturnURL,
	}
	for i, k := range twoc2pExtra {
		p.UserDefined[i] = req.Extra[k]
	}
	return p, nil
}

func (a TwoC2P) channels() []string {
	if len(a.PaymentChannel) == 0 {
		return []string{"CC"}
	}
	return a.PaymentChannel
}

func (a TwoC2P) invoiceNo(intentID string) (string, error) {
	return TwoC2PInvoiceNo(intentID, TwoC2PHasQRChannel(a.channels()))
}

func (a TwoC2P) signer(t Target) TwoC2PSigner {
	return TwoC2PSigner{Secret: t.Credentials, Now: a.Now}
}

// twoc2pFacts travels in the request's context from NewChargeRequest to
// ReadCharge, which the Provider interface gives only the response: the
// key to verify the answer with, and what the answer does not repeat.
type twoc2pFacts struct {
	signer    TwoC2PSigner
	invoiceNo string
	amount    int64
	currency  string
}

type twoc2pFactsKey struct{}

// String keeps the secret out of a printed context.
func (*twoc2pFacts) String() string { return "2c2p request" }

// NewChargeRequest builds the signed Payment Token request of req, with key
// as its idempotencyID. The body is the same JWT on every retry.
func (a TwoC2P) NewChargeRequest(ctx context.Context, t Target, req ChargeRequest, key string) (*http.Request, error) {
	p, err := a.payload(req, key)
	if err != nil {
		return nil, err
	}
	body, err := p.Body(t.Credentials)
	if err != nil {
		return nil, err
	}
	facts := &twoc2pFacts{signer: a.signer(t), invoiceNo: p.InvoiceNo, amount: req.Amount,
		currency: strings.ToUpper(req.Currency)}
	ctx = context.WithValue(ctx, twoc2pFactsKey{}, facts)
	r, err := http.NewRequestWithContext(ctx, http.MethodPost,
		t.BaseURL.JoinPath(cmp.Or(a.TokenPath, TwoC2PTokenPath)).String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json")
	return r, nil
}

// ReadCharge reads a Payment Token answer; see the type's documentation
// for the respCodes.
func (a TwoC2P) ReadCharge(resp *http.Response, body []byte) Verdict {
	var facts *twoc2pFacts
	if resp.Request != nil {
		facts, _ = resp.Request.Context().Value(twoc2pFactsKey{}).(*twoc2pFacts)
	}
	if facts == nil {
		// Not a request this adapter built: there is no key to verify
		// the answer with, so it cannot settle anything.
		return Verdict{Kind: KindUnknown, Err: &APIError{Code: "unverifiable",
			Message: "answer to a request not built by TwoC2P.NewChargeRequest"}}
	}
	r, err := facts.signer.ParseResponse(body)
	if v, done := twoc2pByStatus(resp.StatusCode, r, err, body); done {
		return v
	}
	v := Verdict{Kind: twoc2pTokenKind(r.RespCode)}
	if v.Kind == KindPending && r.Signed {
		v.Charge = &Charge{ID: cmp.Or(r.PaymentToken, facts.invoiceNo), Status: r.RespCode, State: StatePending,
			Amount: facts.amount, Currency: facts.currency, AuthorizeURL: r.WebPaymentURL}
		return v
	}
	if v.Kind == KindPending { // unsigned: ParseResponse refuses these; stay safe anyway
		v.Kind = KindUnknown
	}
	v.Err = &APIError{Code: r.RespCode, Message: r.RespDesc}
	return v
}

// twoc2pByStatus decides an answer whose HTTP status, not its respCode,
// settles its meaning: a 5xx whatever its body, a 2xx that could not be
// trusted or read, and any other status without a 2C2P body.
func twoc2pByStatus(status int, r *TwoC2PResponse, parseErr error, body []byte) (Verdict, bool) {
	k := ClassifyStatus(status)
	switch {
	case k == KindServerError:
		e := &APIError{Message: snippet(body)}
		if parseErr == nil {
			e.Code, e.Message = r.RespCode, r.RespDesc
		}
		return Verdict{Kind: KindServerError, Err: e}, true
	case parseErr == nil && (status/100 == 2 || status/100 == 4):
		return Verdict{}, false // the respCode decides
	case parseErr != nil && status/100 == 2:
		return Verdict{Kind: KindUnknown, Err: &APIError{Code: twoc2pParseCode(parseErr), Message: parseErr.Error()}}, true
	}
	return Verdict{Kind: k, Err: &APIError{Message: snippet(body)}}, true
}

// twoc2pParseCode names why an answer could not be read, for APIError.Code.
func twoc2pParseCode(err error) string {
	switch {
	case errors.Is(err, ErrTwoC2PSignature):
		return "bad_signature"
	case errors.Is(err, ErrTwoC2PUnsigned):
		return "unsigned"
	case errors.Is(err, ErrTwoC2PNoSecret):
		return "no_secret"
	}
	return "malformed"
}

// twoc2pTokenKind maps a Payment Token respCode to a Kind.
func twoc2pTokenKind(code string) Kind {
	switch code {
	case twoc2pSuccess, twoc2pPending, twoc2pInProgress:
		return KindPending
	case twoc2pInvalidValue, twoc2pMissingField, twoc2pTooLong, twoc2pBadAmount, twoc2pBadCurrency, twoc2pTokenInvalid:
		return KindInvalid
	case twoc2pBadMerchant, twoc2pHashMismatch:
		return KindConfig
	case twoc2pExisting, twoc2pTokenised, twoc2pTokenUsed:
		// 9015: the invoice exists, made by an earlier attempt or call.
		// Only Payment Inquiry can say how it stands.
		return KindUnknown
	}
	if twoc2pInternal(code) {
		return KindServerError
	}
	return KindUnknown
}
