package twoc2p

import (
	"cmp"
	"errors"
	"net/http"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// ReadCharge reads a Payment Token answer; see README.md
// for the respCodes.
func (p Provider) ReadCharge(resp *http.Response, body []byte) idempay.Verdict {
	var f *facts
	if resp.Request != nil {
		f, _ = resp.Request.Context().Value(factsKey{}).(*facts)
	}
	if f == nil {
		// Not a request this adapter built: there is no key to verify
		// the answer with, so it cannot settle anything.
		return idempay.Verdict{Kind: idempay.KindUnknown, Err: &idempay.APIError{Code: "unverifiable",
			Message: "answer to a request not built by Provider.NewChargeRequest"}}
	}
	r, err := ParseResponse(f.signer, body)
	if v, done := byStatus(resp.StatusCode, r, err, body); done {
		return v
	}
	v := idempay.Verdict{Kind: tokenKind(r.RespCode)}
	if v.Kind == idempay.KindPending && r.Signed {
		v.Charge = &idempay.Charge{ID: cmp.Or(r.PaymentToken, f.invoiceNo), Status: r.RespCode,
			State: idempay.StatePending, Amount: f.amount, Currency: f.currency, AuthorizeURL: r.WebPaymentURL}
		return v
	}
	if v.Kind == idempay.KindPending { // unsigned: ParseResponse refuses these; stay safe anyway
		v.Kind = idempay.KindUnknown
	}
	v.Err = &idempay.APIError{Code: r.RespCode, Message: r.RespDesc}
	return v
}

// byStatus decides an answer whose HTTP status, not its respCode, settles
// its meaning: a 5xx whatever its body, a 2xx that could not be trusted or
// read, and any other status without a 2C2P body.
func byStatus(status int, r *Response, parseErr error, body []byte) (idempay.Verdict, bool) {
	k := idempay.ClassifyStatus(status)
	switch {
	case k == idempay.KindServerError:
		e := &idempay.APIError{Message: wire.Snippet(body)}
		if parseErr == nil {
			e.Code, e.Message = r.RespCode, r.RespDesc
		}
		return idempay.Verdict{Kind: idempay.KindServerError, Err: e}, true
	case parseErr == nil && (status/100 == 2 || status/100 == 4):
		return idempay.Verdict{}, false // the respCode decides
	case parseErr != nil && status/100 == 2:
		return idempay.Verdict{Kind: idempay.KindUnknown, Err: &idempay.APIError{Code: parseCode(parseErr), Message: parseErr.Error()}}, true
	}
	return idempay.Verdict{Kind: k, Err: &idempay.APIError{Message: wire.Snippet(body)}}, true
}

// parseCode names why an answer could not be read, for APIError.Code.
func parseCode(err error) string {
	switch {
	case errors.Is(err, idempay.ErrTwoC2PSignature):
		return "bad_signature"
	case errors.Is(err, ErrUnsigned):
		return "unsigned"
	case errors.Is(err, idempay.ErrTwoC2PNoSecret):
		return "no_secret"
	}
	return "malformed"
}

// tokenKind maps a Payment Token respCode to a Kind.
func tokenKind(code string) idempay.Kind {
	switch code {
	case codeSuccess, codePending, codeInProgress:
		return idempay.KindPending
	case codeInvalidValue, codeMissingField, codeTooLong, codeBadAmount, codeBadCurrency, codeTokenInvalid:
		return idempay.KindInvalid
	case codeBadMerchant, codeHashMismatch:
		return idempay.KindConfig
	case codeExisting, codeTokenised, codeTokenUsed:
		// 9015: the invoice exists, made by an earlier attempt or call.
		// Only Payment Inquiry can say how it stands.
		return idempay.KindUnknown
	}
	if internalFailure(code) {
		return idempay.KindServerError
	}
	return idempay.KindUnknown
}
