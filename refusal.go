package idempay

import (
	"errors"
	"fmt"
)

// refusal is an operation the Client refused: nothing was sent under the
// record's key, and nothing will be. When a flight's beforeSend refuses,
// the record's attempt is closed as failed with the guard's code, and the
// next call of the operation begins a new attempt, checked afresh (an
// unknown refund that settled as failed may have freed the amount).
type refusal struct{ err error }

func refuse(err error) error { return &refusal{err: err} }

// Error is the guard's reason.
func (r *refusal) Error() string { return r.err.Error() }

// Unwrap returns the guard's error.
func (r *refusal) Unwrap() error { return r.err }

func isRefusal(err error) bool {
	var r *refusal
	return errors.As(err, &r)
}

// refusalCodes names each refusal's sentinel in the store, so that a refused
// attempt answers with the same sentinel when read back.
var refusalCodes = []struct {
	code string
	err  error
}{
	{"charge_not_succeeded", ErrChargeNotSucceeded},
	{"not_refundable", ErrNotRefundable},
	{"refund_exceeds", ErrRefundExceeds},
	{"capture_exceeds", ErrCaptureExceeds},
	{"not_authorization", ErrNotAuthorization},
	{"authorization_closed", ErrAuthorizationClosed},
	{"invalid", ErrInvalidRequest},
}

func refusalCode(err error) string {
	for _, g := range refusalCodes {
		if errors.Is(err, g.err) {
			return g.code
		}
	}
	return "refused"
}

// storedRefusal is a stored refusal read back: its sentinel and its words.
func storedRefusal(code, reason string) error {
	for _, g := range refusalCodes {
		if g.code == code {
			return fmt.Errorf("%w: %s", g.err, reason)
		}
	}
	return fmt.Errorf("idempay: refused: %s", reason)
}
