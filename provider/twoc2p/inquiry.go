package twoc2p

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/idempay/idempay"
)

// maxBody caps how much of an inquiry answer is read.
const maxBody = 1 << 20

// FindCharge asks Payment Inquiry how the invoice of the record's attempt
// (rec.Attempt, see idempay.TwoC2PAttemptInvoiceNo) stands: never an
// earlier attempt's, whose decline or payment is that attempt's, under its
// own key. It returns an error only when no answer came back (the Client
// then treats the outcome as unknown); every answer is a Verdict, mapped as
// README.md says. Found answers are marked Replayed: the
// charge was made by an earlier call, not by this one. hc nil means
// http.DefaultClient.
//
// An intent whose invoiceNo the mapping of earlier idempay versions spelt
// otherwise (see idempay.TwoC2PInvoiceNo) may have been sent under that
// spelling: when 2C2P does not know the current one, the earlier one is
// asked too, unless Provider.NoLegacyInvoiceNo, and only an answer that
// echoes the intent's own key settles it there. Those versions knew one
// attempt per intent, so this is done for attempt 1 only.
func (p Provider) FindCharge(ctx context.Context, hc *http.Client, t idempay.Target, rec idempay.Record) (idempay.Verdict, error) {
	invoiceNo, err := p.invoiceNo(rec.ID, rec.Attempt)
	if err != nil {
		return idempay.Verdict{}, err
	}
	v, err := p.lookup(ctx, hc, t, rec, invoiceNo, idempay.TwoC2PInvoiceNoIsHashed(invoiceNo))
	if err != nil || v.Kind != idempay.KindNotFound || p.NoLegacyInvoiceNo || rec.Attempt > 1 {
		return v, err
	}
	legacy := legacyInvoiceNo(rec.ID, idempay.TwoC2PHasQRChannel(p.channels()))
	if legacy == invoiceNo {
		return v, nil
	}
	return p.lookup(ctx, hc, t, rec, legacy, true)
}

// lookup asks Payment Inquiry about invoiceNo for rec. needKey says the
// invoice number may be another intent's too (a hashed or a legacy
// spelling): only an answer echoing rec's key then settles anything.
func (p Provider) lookup(ctx context.Context, hc *http.Client, t idempay.Target, rec idempay.Record, invoiceNo string, needKey bool) (idempay.Verdict, error) {
	q, err := p.inquire(ctx, hc, t, invoiceNo)
	if err != nil {
		return idempay.Verdict{}, err
	}
	v := q.verdict(p, invoiceNo, rec)
	if needKey && (v.Kind == idempay.KindSucceeded || v.Kind == idempay.KindPending || v.Kind == idempay.KindDeclined) &&
		q.resp.IdempotencyID != rec.Key {
		return idempay.Verdict{Kind: idempay.KindUnknown, Err: &idempay.APIError{Code: q.resp.RespCode,
			Message: "invoice " + invoiceNo + " may be another intent's: the answer does not echo this intent's idempotencyID"}}, nil
	}
	if p.ManualSettlement && v.Kind == idempay.KindSucceeded && v.Charge != nil {
		return p.settlement(ctx, hc, t, invoiceNo, v), nil
	}
	return v, nil
}

// settlement completes the verdict of a paid invoice of a merchant account
// with manual settlement (Provider.ManualSettlement) from Payment
// Maintenance's inquiry: approved and not settled (A) is an authorisation;
// settled, ready for settlement or refunded since, a captured charge;
// anything else, or no readable sealed answer, unknown: Payment Inquiry
// says paid, and nothing says whether the money is held or moved.
func (p Provider) settlement(ctx context.Context, hc *http.Client, t idempay.Target, invoiceNo string, v idempay.Verdict) idempay.Verdict {
	const why = "paid; whether it was settled is unknown: "
	act, err := p.inquireAction(ctx, hc, t, processInquiry, invoiceNo)
	if err != nil {
		return unknownVerdict("settlement_unknown", why+"Payment Maintenance did not answer: "+err.Error())
	}
	a, uv, ok := lookupAnswer(act, p.MerchantID, invoiceNo, processInquiry)
	switch {
	case !ok:
		uv.Err.Message = why + uv.Err.Message
		return uv
	case a.RespCode != actionOK:
		return unknownVerdict(a.RespCode, why+a.RespDesc)
	}
	ch := *v.Charge
	switch {
	case a.Status == "A":
		ch.Authorized = true
	case settledStatus[a.Status] || a.Status == "RS":
	default:
		return unknownVerdict(a.Status, "paid, but Payment Maintenance says status "+quoteOrNone(a.Status)+
			" (voided, failed or unknown): reconcile invoice "+invoiceNo+" with 2C2P")
	}
	v.Charge = &ch
	return v
}

// inquiry is one Payment Inquiry answer, read.
type inquiry struct {
	status   int
	body     []byte
	resp     *Response
	parseErr error
}

// inquire sends one Payment Inquiry for invoiceNo and reads the answer.
func (p Provider) inquire(ctx context.Context, hc *http.Client, t idempay.Target, invoiceNo string) (inquiry, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	body, err := idempay.TwoC2PInquiry{MerchantID: p.MerchantID, InvoiceNo: invoiceNo}.Body(t.Credentials)
	if err != nil {
		return inquiry{}, err
	}
	r, err := post(ctx, t, cmp.Or(p.InquiryPath, InquiryPath), body)
	if err != nil {
		return inquiry{}, err
	}
	resp, err := hc.Do(r)
	if err != nil {
		return inquiry{}, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return inquiry{}, err
	}
	parsed, perr := ParseResponse(p.signer(t), answer)
	return inquiry{status: resp.StatusCode, body: answer, resp: parsed, parseErr: perr}, nil
}

// verdict maps the answer about invoiceNo to a Verdict for rec. Its
// refusal, if any, carries the inquiry's HTTP status and the provider's
// name, which the Client fills only for answers to charge requests.
func (q inquiry) verdict(p Provider, invoiceNo string, rec idempay.Record) idempay.Verdict {
	v, done := byStatus(q.status, q.resp, q.parseErr, q.body)
	if done {
		// A lookup that 2C2P did not answer with a readable respCode
		// proves nothing either way.
		v.Kind = idempay.KindUnknown
	} else {
		v = p.inquiryVerdict(q.resp, invoiceNo, rec)
	}
	if v.Err != nil {
		v.Err.Provider = cmp.Or(v.Err.Provider, p.Name())
		if v.Err.Status == 0 {
			v.Err.Status = q.status
		}
	}
	return v
}

// inquiryVerdict maps a Payment Inquiry answer about invoiceNo to a Verdict.
func (p Provider) inquiryVerdict(r *Response, invoiceNo string, rec idempay.Record) idempay.Verdict {
	isDecline := p.IsDecline
	if isDecline == nil {
		isDecline = IsRefusal
	}
	code := r.RespCode
	unknown := func(why string) idempay.Verdict {
		return idempay.Verdict{Kind: idempay.KindUnknown, Err: &idempay.APIError{Code: code, Message: strings.TrimSpace(r.RespDesc + " " + why)}}
	}
	var k idempay.Kind
	switch {
	case code == codeSuccess:
		k = idempay.KindSucceeded
	case code == codePending || code == codeInProgress:
		k = idempay.KindPending
	case code == codeNotFound:
		k = idempay.KindNotFound
	case isDecline(code):
		k = idempay.KindDeclined
	default:
		return unknown("")
	}
	// A signed answer about another invoice or merchant is a replayed or
	// misrouted answer, not one about this intent.
	if r.Signed && (r.InvoiceNo != "" && r.InvoiceNo != invoiceNo || r.MerchantID != "" && r.MerchantID != p.MerchantID) {
		return unknown("(answer names invoice " + r.InvoiceNo + " of merchant " + r.MerchantID + ")")
	}
	if k == idempay.KindNotFound {
		// Accepted unsigned too: a resend it allows cannot charge twice,
		// since 2C2P refuses an existing invoiceNo with 9015.
		return idempay.Verdict{Kind: idempay.KindNotFound}
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
		return idempay.Verdict{Kind: idempay.KindKeyConflict, Err: &idempay.APIError{Code: code, Type: "idempotency_error",
			Message: "invoice " + invoiceNo + " was opened under another idempotency key"}}
	}
	return found(r, k, invoiceNo, rec)
}

// found is the verdict of a signed answer that settles rec's intent.
func found(r *Response, k idempay.Kind, invoiceNo string, rec idempay.Record) idempay.Verdict {
	v := idempay.Verdict{Kind: k, Replayed: true}
	if k == idempay.KindDeclined {
		v.Err = &idempay.APIError{Type: "card_error", Code: r.RespCode, DeclineCode: r.RespCode, Message: r.RespDesc}
		return v
	}
	// IntentID and Key are filled here because a verdict found before a
	// resend goes to the caller as it is.
	ch := &idempay.Charge{IntentID: rec.ID, Key: rec.Key, ID: cmp.Or(r.TranRef, invoiceNo), Status: r.RespCode,
		State: idempay.StateSucceeded, Currency: strings.ToUpper(r.CurrencyCode)}
	if k == idempay.KindPending {
		ch.State = idempay.StatePending
	}
	if r.Amount != "" && r.CurrencyCode != "" {
		// The amount is informational here; one we cannot read does not
		// change what the respCode says happened.
		ch.Amount, _ = idempay.TwoC2PParseAmount(r.Amount, r.CurrencyCode)
	}
	v.Charge = ch
	return v
}
