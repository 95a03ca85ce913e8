package idempay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// 2C2P respCodes the adapter reads (PGW v4.3).
const (
	twoc2pSuccess       = "0000" // token issued; on inquiry: paid
	twoc2pPending       = "0001" // payment pending
	twoc2pInProgress    = "2001" // transaction in progress
	twoc2pNotFound      = "2002" // inquiry: no such transaction
	twoc2pTokenised     = "4200" // card tokenised, no payment
	twoc2pInvalidValue  = "9004"
	twoc2pMissingField  = "9005"
	twoc2pTooLong       = "9006"
	twoc2pBadMerchant   = "9007"
	twoc2pBadAmount     = "9009"
	twoc2pBadCurrency   = "9010"
	twoc2pExisting      = "9015" // a token already exists for the invoiceNo
	twoc2pTokenInvalid  = "9040"
	twoc2pTokenUsed     = "9041"
	twoc2pHashMismatch  = "9042"
	twoc2pInternalFirst = "9990" // 9990-9999: 2C2P internal failures
	twoc2pInternalLast  = "9999"
)

// TwoC2PResponse is a 2C2P answer read by TwoC2PSigner.ParseResponse: the
// claims of a verified {"payload": "<jwt>"}, or the plain error form
// {"respCode", "respDesc"}. Fields a given answer does not carry are empty.
type TwoC2PResponse struct {
	// Signed is true when the answer was a JWT whose signature verified.
	// Only a signed answer can report success or a pending payment.
	Signed bool `json:"-"`

	RespCode string `json:"respCode"`
	RespDesc string `json:"respDesc"`

	// Payment Token answers.
	PaymentToken  string `json:"paymentToken"`
	WebPaymentURL string `json:"webPaymentUrl"`

	// Payment Inquiry answers.
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

// twoc2pUnsignedForbidden lists the codes an unsigned answer may not carry:
// anything that would settle a payment as made or under way.
func twoc2pUnsignedForbidden(code string) bool {
	switch code {
	case twoc2pSuccess, twoc2pPending, twoc2pInProgress, twoc2pTokenised:
		return true
	}
	return false
}

// ParseResponse reads a 2C2P answer body. A body with a "payload" member
// must carry a JWT that verifies (see Verify); it is never read as the
// plain form instead. A body without one is the plain error form, which
// must have a respCode, and which is refused with ErrTwoC2PUnsigned when it
// claims success (0000), a pending or in-progress payment (0001, 2001) or a
// tokenisation (4200): anyone on the path can write an unsigned body.
//
// Errors wrap ErrTwoC2PSignature, ErrTwoC2PUnsigned, ErrTwoC2PMalformed or
// ErrTwoC2PNoSecret.
func (s TwoC2PSigner) ParseResponse(body []byte) (*TwoC2PResponse, error) {
	if s.Secret == "" {
		return nil, ErrTwoC2PNoSecret
	}
	var outer map[string]json.RawMessage
	if err := json.Unmarshal(body, &outer); err != nil || outer == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrTwoC2PMalformed)
	}
	if raw, ok := outer["payload"]; ok {
		var token string
		if err := json.Unmarshal(raw, &token); err != nil {
			return nil, fmt.Errorf("%w: payload is not a string", ErrTwoC2PMalformed)
		}
		claims, err := s.Verify(token)
		if err != nil {
			return nil, err
		}
		r, err := twoc2pDecodeClaims(claims)
		if err != nil {
			return nil, err
		}
		r.Signed = true
		return r, nil
	}
	r, err := twoc2pDecodeClaims(bytes.TrimSpace(body))
	if err != nil {
		return nil, err
	}
	r.Signed = false
	switch {
	case r.RespCode == "":
		return nil, fmt.Errorf("%w: neither payload nor respCode", ErrTwoC2PMalformed)
	case twoc2pUnsignedForbidden(r.RespCode):
		return nil, fmt.Errorf("%w: respCode %s", ErrTwoC2PUnsigned, r.RespCode)
	}
	return r, nil
}

func twoc2pDecodeClaims(claims []byte) (*TwoC2PResponse, error) {
	var r TwoC2PResponse
	if err := json.Unmarshal(claims, &r); err != nil {
		return nil, fmt.Errorf("%w: claims: %w", ErrTwoC2PMalformed, err)
	}
	// The amount may come as a number or as a string; keep its text.
	var amt struct {
		Amount json.RawMessage `json:"amount"`
	}
	_ = json.Unmarshal(claims, &amt) // the object decoded just above
	if a := bytes.TrimSpace(amt.Amount); len(a) > 0 && !bytes.Equal(a, []byte("null")) {
		if a[0] == '"' {
			if err := json.Unmarshal(a, &r.Amount); err != nil {
				return nil, fmt.Errorf("%w: amount: %w", ErrTwoC2PMalformed, err)
			}
		} else {
			r.Amount = string(a)
		}
	}
	r.Claims = append(json.RawMessage(nil), claims...)
	return &r, nil
}

// twoc2pInternal reports whether code is one of 2C2P's internal failures.
func twoc2pInternal(code string) bool {
	return len(code) == 4 && code >= twoc2pInternalFirst && code <= twoc2pInternalLast
}

// TwoC2PIssuerDecline is the default TwoC2P.IsDecline: the 40xx respCodes,
// which PGW uses for the card issuer's answer (the ISO 8583 response code
// behind "40": 4005 do not honour, 4051 insufficient funds, ...).
//
// It leaves out, so that they stay "outcome unknown" rather than "failed",
// the ISO codes that mean an approval or an unfinished request: 00, 08
// (honour with identification), 09 (in progress), 10 (partial approval), 11
// (VIP approval), 16 (approved, update track 3), 68 (answer too late) and
// 85 (no reason to decline). 4200 (tokenised) is not a 40xx code.
func TwoC2PIssuerDecline(respCode string) bool {
	if len(respCode) != 4 || !strings.HasPrefix(respCode, "40") || !allDigits(respCode) {
		return false
	}
	switch respCode[2:] {
	case "00", "08", "09", "10", "11", "16", "68", "85":
		return false
	}
	return true
}
