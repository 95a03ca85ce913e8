package webhook

import (
	"errors"
	"net/http"
)

// HTTPStatus is the answer the Handler sends for an error of Receive or
// Deduper.Do, for code that answers by itself:
//
//	nil, ErrNotRecorded                         200 (stop redelivering)
//	*HandlerError                               500 (deliver again)
//	ErrNoSignature, ErrBadSignature,
//	ErrTimestamp, ErrNoEventID                  400
//	ErrInProgress                               409 (deliver again later)
//	ErrTooLarge                                 413
//	ErrEventMismatch                            422
//	anything else (a KeyStore failure)          500
//
// A *HandlerError is looked at first, so a handler whose own error happens
// to wrap one of these sentinels still gets 500, and its event another
// delivery. Stripe delivers again after any answer other than 2xx, and
// Omise is assumed to; 4xx only says the fault is in the request, not in
// this server.
func HTTPStatus(err error) int {
	var herr *HandlerError
	switch {
	case err == nil:
		return http.StatusOK
	case errors.As(err, &herr):
		return http.StatusInternalServerError
	case errors.Is(err, ErrNotRecorded):
		return http.StatusOK
	case errors.Is(err, ErrNoSignature), errors.Is(err, ErrBadSignature),
		errors.Is(err, ErrTimestamp), errors.Is(err, ErrNoEventID):
		return http.StatusBadRequest
	case errors.Is(err, ErrInProgress):
		return http.StatusConflict
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrEventMismatch):
		return http.StatusUnprocessableEntity
	}
	return http.StatusInternalServerError
}

// publicPhrase is the body sent with an error: a fixed phrase per
// condition. The error itself may hold a handler's internals, so it goes
// to the error hook, never to the sender.
func publicPhrase(err error) string {
	var herr *HandlerError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &herr):
		return "handler failed"
	case errors.Is(err, ErrNotRecorded):
		return "handled"
	case errors.Is(err, ErrNoSignature):
		return "no signature"
	case errors.Is(err, ErrBadSignature):
		return "bad signature"
	case errors.Is(err, ErrTimestamp):
		return "signature timestamp refused"
	case errors.Is(err, ErrNoEventID):
		return "no event id"
	case errors.Is(err, ErrInProgress):
		return "event in progress, retry later"
	case errors.Is(err, ErrTooLarge):
		return "body too large"
	case errors.Is(err, ErrEventMismatch):
		return "event id seen with another body"
	}
	return "internal error"
}
