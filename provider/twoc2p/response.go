package twoc2p

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/idempay/idempay"
)

// Errors of ParseResponse, for errors.Is. A signature that does not verify
// is idempay.ErrTwoC2PSignature, a signer without a secret
// idempay.ErrTwoC2PNoSecret.
var (
	// ErrUnsigned: an answer claimed success or a pending payment without
	// a signature. Only errors may come unsigned.
	ErrUnsigned = errors.New("twoc2p: unsigned 2C2P answer claims success")

	// ErrMalformed: an answer is neither {"payload": "<jwt>"} nor
	// {"respCode", "respDesc"}.
	ErrMalformed = errors.New("twoc2p: malformed 2C2P answer")
)

// Response is a 2C2P answer read by ParseResponse: the claims of a verified
// {"payload": "<jwt>"}, or the plain error form {"respCode", "respDesc"}.
// Fields a given answer does not carry are empty.
type Response struct {
	// Signed is true when the answer was a JWT whose signature verified.
	// Only a signed answer can report success or a pending payment.
	Signed bool `json:"-"`

	RespCode string `json:"respCode"`
	RespDesc string `json:"respDesc"`

	// Payment Token answers.
	PaymentToken  string `json:"paymentToken"`
	WebPaymentURL string `json:"webPaymentUrl"`

	// Payment Inquiry answers (and the payment result 2C2P posts back).
	MerchantID          string `json:"merchantID"`
	InvoiceNo           string `json:"invoiceNo"`
	Amount              string `json:"-"` // decimal major units, as sent
	CurrencyCode        string `json:"currencyCode"`
	TranRef             string `json:"tranRef"`
	ReferenceNo         string `json:"referenceNo"`
	ApprovalCode        string `json:"approvalCode"`
	TransactionDateTime string `json:"transactionDateTime"`
	ChannelCode         string `json:"channelCode"`
	// IdempotencyID is echoed by some answers; when present, the adapter
	// checks it is the intent's key.
	IdempotencyID string `json:"idempotencyID"`

	// Claims is the verified claims object (or the plain body) as received.
	Claims json.RawMessage `json:"-"`
}

// unsignedForbidden lists the codes an unsigned answer may not carry:
// anything that would settle a payment as made or under way.
func unsignedForbidden(code string) bool {
	switch code {
	case codeSuccess, codePending, codeInProgress, codeTokenised:
		return true
	}
	return false
}

// ParseResponse reads a 2C2P answer body with the merchant's signer. A
// body with a "payload" member must carry a JWT that verifies
// (idempay.TwoC2PSigner.Verify); it is never read as the plain form
// instead. A body without one is the plain error form, which must have a
// respCode, and which is refused with ErrUnsigned when it claims success
// (0000), a pending or in-progress payment (0001, 2001) or a tokenisation
// (4200): anyone on the path can write an unsigned body.
//
// Errors wrap idempay.ErrTwoC2PSignature, ErrUnsigned, ErrMalformed or
// idempay.ErrTwoC2PNoSecret.
func ParseResponse(s idempay.TwoC2PSigner, body []byte) (*Response, error) {
	if s.Secret == "" {
		return nil, idempay.ErrTwoC2PNoSecret
	}
	var outer map[string]json.RawMessage
	if err := json.Unmarshal(body, &outer); err != nil || outer == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	if raw, ok := outer["payload"]; ok {
		return parseSigned(s, raw)
	}
	r, err := decodeClaims(bytes.TrimSpace(body))
	if err != nil {
		return nil, err
	}
	switch {
	case r.RespCode == "":
		return nil, fmt.Errorf("%w: neither payload nor respCode", ErrMalformed)
	case unsignedForbidden(r.RespCode):
		return nil, fmt.Errorf("%w: respCode %s", ErrUnsigned, r.RespCode)
	}
	return r, nil
}

func parseSigned(s idempay.TwoC2PSigner, raw json.RawMessage) (*Response, error) {
	var token string
	if err := json.Unmarshal(raw, &token); err != nil {
		return nil, fmt.Errorf("%w: payload is not a string", ErrMalformed)
	}
	claims, err := s.Verify(token)
	if err != nil {
		return nil, err
	}
	r, err := decodeClaims(claims)
	if err != nil {
		return nil, err
	}
	r.Signed = true
	return r, nil
}

func decodeClaims(claims []byte) (*Response, error) {
	var r Response
	if err := json.Unmarshal(claims, &r); err != nil {
		return nil, fmt.Errorf("%w: claims: %w", ErrMalformed, err)
	}
	// The amount may come as a number or as a string; keep its text.
	var amt struct {
		Amount json.RawMessage `json:"amount"`
	}
	_ = json.Unmarshal(claims, &amt) // the object decoded just above
	if a := bytes.TrimSpace(amt.Amount); len(a) > 0 && !bytes.Equal(a, []byte("null")) {
		if a[0] == '"' {
			if err := json.Unmarshal(a, &r.Amount); err != nil {
				return nil, fmt.Errorf("%w: amount: %w", ErrMalformed, err)
			}
		} else {
			r.Amount = string(a)
		}
	}
	r.Claims = append(json.RawMessage(nil), claims...)
	return &r, nil
}
