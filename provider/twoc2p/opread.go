package twoc2p

import (
	"cmp"
	"errors"
	"strings"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// The reading rules of Payment Maintenance answers, tabled in
// OPERATIONS.md. The one rule behind all of them: a definite refusal or a
// proof of absence only from a sealed answer about this very request; any
// answer that does not say, unknown.

// Payment Maintenance result codes, as 2C2P's table names them.
const (
	actionOK            = "00"
	actionNoTransaction = "16" // Requested transaction doesn't exist.
	actionVoided        = "29" // Transaction is already voided.
	actionSettled       = "39" // Transaction is already settled.
	actionRefundPending = "42" // Refund pending.
	actionKeyOtherType  = "50" // Same Idempotent Key exists with different Type
	actionKeyPending    = "51" // Same Idempotent Key exists with status Pending
)

// actionRefusals are the result codes that refuse the request itself, in
// words that leave no doubt that this request did nothing: invalid input,
// a transaction state that does not allow the action, an amount beyond
// what is left. They are read as idempay.KindInvalid, not KindDeclined:
// 2C2P stores no answer for a key, so a refusal speaks for this request
// only, never for an earlier one that may have been carried out (a second
// refund refused with 49 "fully refunded" because the first went
// through). The Client then reports failed only when nothing sent before
// may have moved money, and unknown otherwise.
var actionRefusals = setOf(`
	02 10 11 12 15 16 17 18 21 22 29 30 31 32 33 36 37 38 39 40 41 43 46 47 48 49 53 54 61`)

// actionConfig are the codes that say 2C2P could not take the request from
// this merchant at all (merchant ID, signature, decryption, a process the
// account lacks): configuration, nothing done. 2C2P answers the first four
// in plain XML, as it cannot seal an answer to a request it cannot open.
var actionConfig = setOf(`03 13 14 96 97`)

// actionRetry are the codes of a failure that may have come after 2C2P
// acted (a time-out, "unable to complete"): a server error, resent only
// after a lookup proves the operation absent.
var actionRetry = setOf(`95 98 99`)

// plainConfig are the codes a plain (unsealed) answer may carry and be
// believed: 2C2P could not open or place the request, so it did nothing.
var plainConfig = setOf(`03 13 14 96`)

// Payment Maintenance status codes the readers know.
var (
	refundFailedStatus = setOf(`RFF RR RR1 RR2 RR3`) // a refund that definitely failed
	settledStatus      = setOf(`S RF RP RFF RR RR1 RR2 RR3`)
)

// actionByStatus decides an answer whose HTTP status, not its respCode,
// settles its meaning: a 5xx whatever its body, a 2xx that could not be
// opened, any other status without a readable answer.
func actionByStatus(status int, a *actionAnswer, readErr error, body []byte) (idempay.Verdict, bool) {
	k := idempay.ClassifyStatus(status)
	switch {
	case k == idempay.KindServerError:
		e := &idempay.APIError{Message: wire.Snippet(body)}
		if readErr == nil {
			e.Code, e.Message = a.RespCode, a.RespDesc
		}
		return idempay.Verdict{Kind: idempay.KindServerError, Err: e}, true
	case readErr == nil && (status/100 == 2 || status/100 == 4):
		return idempay.Verdict{}, false // the respCode decides
	case readErr != nil && status/100 == 2:
		return unknownVerdict(actionReadCode(readErr), readErr.Error()), true
	}
	return idempay.Verdict{Kind: k, Err: &idempay.APIError{Message: wire.Snippet(body)}}, true
}

// actionReadCode names why an answer could not be read, for APIError.Code.
func actionReadCode(err error) string {
	switch {
	case errors.Is(err, ErrMaintenanceSignature):
		return "bad_signature"
	case errors.Is(err, ErrMaintenanceDecrypt):
		return "undecryptable"
	}
	return "malformed"
}

// verdict reads an opened answer to the request f describes.
func (f *opFacts) verdict(a *actionAnswer) idempay.Verdict {
	code := a.RespCode
	apiErr := &idempay.APIError{Code: code, Message: a.RespDesc}
	unknown := func(why string) idempay.Verdict {
		return unknownVerdict(code, strings.TrimSpace(a.RespDesc+" "+why))
	}
	if !a.Sealed {
		if plainConfig[code] {
			return idempay.Verdict{Kind: idempay.KindConfig, Err: apiErr}
		}
		return unknown("(an unsealed answer proves nothing but that 2C2P could not open the request)")
	}
	if why := f.notOurs(a); why != "" {
		return unknown(why)
	}
	switch {
	case code == actionOK:
		return f.done(a)
	case code == actionRefundPending && f.typ == idempay.OpRefund:
		return idempay.Verdict{Kind: idempay.KindPending,
			Operation: operation(cmp.Or(a.ReferenceNo, f.invoiceNo), cmp.Or(a.Status, "RP"), idempay.KindPending, f.amount, f.currency)}
	case (code == actionVoided || code == actionSettled) && f.typ != idempay.OpRefund:
		return f.stateProven(code, apiErr)
	case code == actionKeyOtherType:
		return idempay.Verdict{Kind: idempay.KindKeyConflict, Err: apiErr}
	case code == actionKeyPending:
		return idempay.Verdict{Kind: idempay.KindInFlight, Err: apiErr}
	case actionRefusals[code]:
		return idempay.Verdict{Kind: idempay.KindInvalid, Err: apiErr}
	case actionConfig[code]:
		return idempay.Verdict{Kind: idempay.KindConfig, Err: apiErr}
	case actionRetry[code]:
		return idempay.Verdict{Kind: idempay.KindServerError, Err: apiErr}
	}
	return unknown("")
}

// stateProven reads 29 ("already voided") and 39 ("already settled") to a
// capture or cancel as the state they prove, the way FindOp of a
// capture or cancel reads the same transaction's status V or S: a settled
// transaction is captured and can never be voided, a voided one is voided
// and can never be captured. Whoever settled or voided it (an earlier
// attempt whose answer was lost, say), the money stands so; the Client
// tells an operation that never entered the ledger from one that did.
func (f *opFacts) stateProven(code string, apiErr *idempay.APIError) idempay.Verdict {
	status := map[string]string{actionVoided: "V", actionSettled: "S"}[code]
	byStatus := captureByStatus
	if f.typ == idempay.OpCancel {
		byStatus = cancelByStatus
	}
	switch k := byStatus(status); k {
	case idempay.KindSucceeded:
		return idempay.Verdict{Kind: k, Operation: operation(f.invoiceNo, status, k, f.amount, f.currency)}
	case idempay.KindDeclined:
		return idempay.Verdict{Kind: k, Err: apiErr}
	}
	return unknownVerdict(code, apiErr.Message)
}

// notOurs says why a sealed answer is not about f's request, or "".
func (f *opFacts) notOurs(a *actionAnswer) string {
	switch {
	case a.InvoiceNo != f.invoiceNo:
		return "(the answer names invoice " + quoteOrNone(a.InvoiceNo) + ", not " + f.invoiceNo + ")"
	case a.ProcessType != "" && !strings.EqualFold(a.ProcessType, f.process):
		return "(the answer is to processType " + a.ProcessType + ", not " + f.process + ")"
	case a.MerchantID != "" && a.MerchantID != f.merchant:
		return "(the answer names merchant " + a.MerchantID + ")"
	case a.IdempotencyID != "" && a.IdempotencyID != f.key:
		return "(the answer echoes another idempotencyID)"
	}
	return ""
}

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return `"` + s + `"`
}

// done reads the status of a sealed 00 answer to f's request.
func (f *opFacts) done(a *actionAnswer) idempay.Verdict {
	var k idempay.Kind
	id := f.invoiceNo
	switch s := a.Status; {
	case f.typ == idempay.OpRefund && s == "RF", f.typ == idempay.OpCapture && s == "S",
		f.typ == idempay.OpCancel && s == "V":
		k = idempay.KindSucceeded
	case f.typ == idempay.OpRefund && s == "RP", f.typ == idempay.OpCapture && s == "RS",
		f.typ == idempay.OpCancel && s == "VP":
		k = idempay.KindPending
	default:
		// A success that names no outcome of this action (or a failed
		// one) is settled by lookup, which names the refund itself.
		return unknownVerdict(a.RespCode, "00 with status "+quoteOrNone(a.Status)+" for a "+string(f.typ))
	}
	if f.typ == idempay.OpRefund {
		id = cmp.Or(a.ReferenceNo, f.invoiceNo)
	}
	return idempay.Verdict{Kind: k, Operation: operation(id, a.Status, k, f.amount, f.currency)}
}

// lookupAnswer returns the answer of a lookup if it can prove anything:
// readable, sealed, about invoiceNo and the processType asked. Otherwise
// it returns the unknown verdict.
func lookupAnswer(act action, merchant, invoiceNo, process string) (*actionAnswer, idempay.Verdict, bool) {
	if v, done := actionByStatus(act.status, act.answer, act.readErr, act.body); done {
		// A lookup that 2C2P did not answer readably proves nothing.
		v.Kind = idempay.KindUnknown
		return nil, v, false
	}
	a := act.answer
	f := &opFacts{process: process, merchant: merchant, invoiceNo: invoiceNo}
	switch {
	case !a.Sealed:
		return nil, unknownVerdict(a.RespCode, "unsealed lookup answer"), false
	case a.IdempotencyID != "":
		// A lookup carries no idempotencyID: an answer echoing one is not
		// this lookup's.
		return nil, unknownVerdict(a.RespCode, "the lookup answer echoes an idempotencyID"), false
	}
	if why := f.notOurs(a); why != "" {
		return nil, unknownVerdict(a.RespCode, why), false
	}
	return a, idempay.Verdict{}, true
}

// refundFound reads a Refund Status answer for the refund made under
// rec.Key. Absence is proved only by a sealed list of the invoice's
// refunds of which none carries the key and none could be it unnamed (a
// refund without idempotencyID of the same amount); or by 16, no such
// transaction, hence no refund of it.
func refundFound(act action, merchant string, op idempay.OpRequest, rec idempay.Record, invoiceNo string) idempay.Verdict {
	a, v, ok := lookupAnswer(act, merchant, invoiceNo, processRefundStatus)
	if !ok {
		return v
	}
	switch a.RespCode {
	case actionNoTransaction:
		return idempay.Verdict{Kind: idempay.KindNotFound}
	case actionOK:
	default:
		return unknownVerdict(a.RespCode, a.RespDesc)
	}
	var mine []refundEntry
	for _, e := range a.Refunds {
		if e.IdempotencyID != "" && e.IdempotencyID == rec.Key {
			mine = append(mine, e)
		}
	}
	switch len(mine) {
	case 0:
	case 1:
		e := mine[0]
		var k idempay.Kind
		switch {
		case e.Status == "RF":
			k = idempay.KindSucceeded
		case e.Status == "RP":
			k = idempay.KindPending
		case refundFailedStatus[e.Status]:
			return idempay.Verdict{Kind: idempay.KindDeclined, Err: &idempay.APIError{Code: e.Status,
				Message: "refund " + e.ReferenceNo + " of invoice " + invoiceNo + " is " + e.Status}}
		default:
			return unknownVerdict(e.Status, "refund "+e.ReferenceNo+" has status "+quoteOrNone(e.Status))
		}
		return idempay.Verdict{Kind: k, Operation: operation(cmp.Or(e.ReferenceNo, invoiceNo), e.Status, k, op.Amount, op.Currency)}
	default:
		return unknownVerdict("duplicate", "Refund Status lists more than one refund under the refund's idempotencyID")
	}
	for _, e := range a.Refunds {
		if e.IdempotencyID != "" {
			continue // another refund's, named
		}
		amount, err := idempay.TwoC2PParseAmount(e.Amount, op.Currency)
		if err != nil || amount == op.Amount {
			return unknownVerdict("unattributed", "Refund Status lists refund "+quoteOrNone(e.ReferenceNo)+
				" without idempotencyID, of the refund's amount: it may be this refund")
		}
	}
	return idempay.Verdict{Kind: idempay.KindNotFound}
}

// statusFound reads an inquiry (processType I) answer through byStatus, a
// capture's or cancel's reading of the transaction's status.
func statusFound(act action, merchant string, op idempay.OpRequest, invoiceNo string, byStatus func(string) idempay.Kind) idempay.Verdict {
	a, v, ok := lookupAnswer(act, merchant, invoiceNo, processInquiry)
	if !ok {
		return v
	}
	switch a.RespCode {
	case actionNoTransaction:
		return idempay.Verdict{Kind: idempay.KindNotFound}
	case actionOK:
	default:
		return unknownVerdict(a.RespCode, a.RespDesc)
	}
	switch k := byStatus(a.Status); k {
	case idempay.KindSucceeded, idempay.KindPending:
		return idempay.Verdict{Kind: k, Operation: operation(invoiceNo, a.Status, k, op.Amount, op.Currency)}
	case idempay.KindDeclined:
		return idempay.Verdict{Kind: k, Err: &idempay.APIError{Code: a.Status,
			Message: "transaction " + invoiceNo + " has status " + a.Status}}
	case idempay.KindNotFound:
		return idempay.Verdict{Kind: k}
	}
	return unknownVerdict(a.Status, "transaction "+invoiceNo+" has status "+quoteOrNone(a.Status))
}

// captureByStatus: settled (or refunded since) is the capture made; ready
// for settlement, pending; still approved, not made; voided, never to be.
func captureByStatus(status string) idempay.Kind {
	switch {
	case settledStatus[status]:
		return idempay.KindSucceeded
	case status == "RS":
		return idempay.KindPending
	case status == "A":
		return idempay.KindNotFound
	case status == "V" || status == "VP":
		return idempay.KindDeclined
	}
	return idempay.KindUnknown
}

// cancelByStatus: voided is the cancel made; void pending, pending; still
// approved, not made; settled (or on its way), never to be.
func cancelByStatus(status string) idempay.Kind {
	switch {
	case status == "V":
		return idempay.KindSucceeded
	case status == "VP":
		return idempay.KindPending
	case status == "A":
		return idempay.KindNotFound
	case settledStatus[status] || status == "RS":
		return idempay.KindDeclined
	}
	return idempay.KindUnknown
}
