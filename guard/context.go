package guard

import (
	"context"
	"sync/atomic"
)

// request is what the guard knows of one guarded request, in its context.
type request struct {
	key       string
	identity  string
	final     atomic.Bool
	unsettled atomic.Bool
}

type ctxKey struct{}

func fromContext(ctx context.Context) *request {
	r, _ := ctx.Value(ctxKey{}).(*request)
	return r
}

// KeyFrom returns the Idempotency-Key of the guarded request whose context
// is ctx, decoded (without the quotes of the structured-field form), and
// whether there is one. Pass it on as idempay.ChargeRequest.BaseKey: the
// frontend's key names one user action, this service's record of the
// request, and the provider's key of the action's first attempt. A retry
// that runs the handler again (after a 5xx, a panic or a crash) resumes
// the attempt under its key, and charges nothing twice; a retry after an
// attempt that failed with nothing charged (ErrUnreachable) begins the next
// attempt under idempay.AttemptKey(key, n) instead of being refused.
func KeyFrom(ctx context.Context) (string, bool) {
	if r := fromContext(ctx); r != nil {
		return r.key, true
	}
	return "", false
}

// IdentityFrom returns the caller identity the guard scoped the request's
// key by (the WithIdentity function's answer), and whether there is one.
func IdentityFrom(ctx context.Context) (string, bool) {
	if r := fromContext(ctx); r != nil {
		return r.identity, true
	}
	return "", false
}

// MarkFinal tells the guard that the response the handler writes, if its
// status is below 500, is the request's final answer and is to be stored
// and replayed: a decline (402), a validation error that a retry cannot
// change (422). Without it only 2xx answers are stored, and a 3xx or 4xx
// releases the key, so a retry runs the handler again. Never mark an
// outage final (idempay.ErrUnreachable, an unknown outcome): answer it
// with a 5xx, which releases the key for the retry. It reports whether
// ctx belongs to a guarded request. It has no effect on a 5xx. Call it
// before the handler flushes: an answer that streams unmarked is not
// locked first.
func MarkFinal(ctx context.Context) bool {
	r := fromContext(ctx)
	if r != nil {
		r.final.Store(true)
	}
	return r != nil
}

// MarkUnsettled tells the guard that the request may have had an effect
// that running the handler again would repeat (money may have moved, and
// the handler could not charge under the request's key). If the response
// is then not stored (a 5xx, a 4xx not marked final, a panic), the key
// stays locked: every retry gets 409 until Guard.Settle records the answer
// or Guard.Reopen lets the handler run again. A stored response (2xx, or
// final) settles the request by itself.
//
// Call it before writing the status: the response of a request marked
// unsettled is then held back until its record is written, durably (the
// lock, or the stored response), and the write is tried again after a
// store error while the guard keeps the lease; if the store refuses it for
// a whole lease, the client gets 503 "retry with the same key" instead of
// the handler's answer. It reports whether ctx belongs to a guarded
// request.
func MarkUnsettled(ctx context.Context) bool {
	r := fromContext(ctx)
	if r != nil {
		r.unsettled.Store(true)
	}
	return r != nil
}
