package idempay

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"net/http"
	"strings"
)

// FindCharge asks Payment Inquiry how the intent's invoice stands. It
// returns an error only when no answer came back (the Client then treats
// the outcome as unknown); every answer is a Verdict, mapped as the type's
// documentation says. Found answers are marked Replayed: the charge was
// made by an earlier attempt, not by this call.
func (a TwoC2P) FindCharge(ctx context.Context, hc *http.Client, t Target, rec Record) (Verdict, error) {
	invoiceNo, err := a.invoiceNo(rec.IntentID)
	if err != nil {
		return Verdict{}, err
	}
	body, err := TwoC2PInquiry{MerchantID: a.MerchantID, InvoiceNo: invoiceNo}.Body(t.Credentials)
	if err != nil {
		return Verdict{}, err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost,
		t.BaseURL.JoinPath(cmp.Or(a.InquiryPath, TwoC2PInquiryPath)).String(), bytes.NewReader(body))
	if err != nil {
		return Verdict{}, err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json")
	resp, err := hc.Do(r)
	if err != nil {
		return Verdict{}, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return Verdict{}, err
	}
	parsed, perr := a.signer(t).ParseResponse(answer)
	if v, done := twoc2pByStatus(resp.StatusCode, parsed, perr, answer); done {
		// A lookup that 2C2P did not answer with a readable respCode
		// proves nothing either way.
		v.Kind = KindUnknown
		return v, nil
	}
	return a.inquiryVerdict(parsed, invoiceNo, rec), nil
}

// inquiryVerdict maps a Payment Inquiry answer about invoiceNo to a Verdict.
func (a TwoC2P) inquiryVerdict(r *TwoC2PResponse, invoiceNo string, rec Record) Verdict {
	isDecline := a.IsDecline
	if isDecline == nil {
		isDecline = TwoC2PIssuerDecline
	}
	code := r.RespCode
	unknown := func(why string) Verdict {
		return Verdict{Kind: KindUnknown, Err: &APIError{Code: code, Message: strings.TrimSpace(r.RespDesc + " " + why)}}
	}
	var k Kind
	switch {
	case code == twoc2pSuccess:
		k = KindSucceeded
	case code == twoc2pPending || code == twoc2pInProgress:
		k = KindPending
	case code == twoc2pNotFound:
		k = KindNotFound
	case isDecline(code):
		k = KindDeclined
	default:
		return unknown("")
	}
	// A signed answer about another invoice or merchant is a replayed or
	// misrouted answer, not one about this intent.
	if r.Signed && (r.InvoiceNo != "" && r.InvoiceNo != invoiceNo || r.MerchantID != "" && r.MerchantID != a.MerchantID) {
		return unknown("(answer names invoice " + r.InvoiceNo + " of merchant " + r.MerchantID + ")")
	}
	if k == KindNotFound {
		// Accepted unsigned too: a resend it allows cannot charge twice,
		// since 2C2P refuses an existing invoiceNo with 9015.
		return Verdict{Kind: KindNotFound}
	}
	if !r.Signed {
		return unknown("(unsigned)")
	}
	if r.InvoiceNo == "" {
		// Payment Inquiry names the transaction's invoice. A signed answer
		// that names none is not one: a Payment Token answer also says 0000,
		// meaning only that a token was issued.
		return unknown("(answer names no invoice)")
	}
	if r.IdempotencyID != "" && r.IdempotencyID != rec.Key {
		// The invoice was opened under another key: by another intent whose
		// ID maps to the same invoiceNo, or after the record was lost. Either
		// way it cannot be claimed as this intent's charge.
		return Verdict{Kind: KindKeyConflict, Err: &APIError{Code: code, Type: "idempotency_error",
			Message: "invoice " + invoiceNo + " was opened under another idempotency key"}}
	}
	v := Verdict{Kind: k, Replayed: true}
	if k == KindDeclined {
		v.Err = &APIError{Type: "card_error", Code: code, DeclineCode: code, Message: r.RespDesc}
		return v
	}
	// IntentID and Key are filled here because a verdict found before a
	// resend goes to the caller as it is.
	ch := &Charge{IntentID: rec.IntentID, Key: rec.Key, ID: cmp.Or(r.TranRef, invoiceNo), Status: code,
		State: StateSucceeded, Currency: strings.ToUpper(r.CurrencyCode)}
	if k == KindPending {
		ch.State = StatePending
	}
	if r.Amount != "" && r.CurrencyCode != "" {
		// The amount is informational here; one we cannot read does not
		// change what the respCode says happened.
		ch.Amount, _ = TwoC2PParseAmount(r.Amount, r.CurrencyCode)
	}
	v.Charge = ch
	return v
}
