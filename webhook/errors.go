package webhook

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors, for errors.Is. None of them, nor any error of this
// package, holds a secret or the signature the verifier expected: an error
// that reaches a log or an HTTP answer must not help anyone forge the next
// webhook. HTTPStatus maps each to the answer the Handler sends.
var (
	// ErrNoSignature is returned by Verify when the request carries nothing
	// to check: the signature header is absent or empty, or (Stripe) holds
	// no v1 signature. Such a request was not sent by the provider, or went
	// through a proxy that dropped the header. Answered 400.
	ErrNoSignature = errors.New("webhook: no signature")

	// ErrBadSignature is returned by Verify when signatures are present but
	// none matches the body with any configured secret: the body or the
	// timestamp was altered, the secret is the wrong one (test against live
	// mode, another endpoint's secret, a rotated-out secret), or the header
	// is garbled. Also returned by the zero value of a verifier, which has
	// no secret. Answered 400.
	ErrBadSignature = errors.New("webhook: signature does not match")

	// ErrTimestamp is returned by Verify when the signed timestamp is
	// missing or is not unix seconds, and, through a *TimestampError, when a
	// genuine signature was made longer ago (or further ahead) than the
	// tolerance: a replayed request or a skewed clock. Answered 400.
	ErrTimestamp = errors.New("webhook: signature timestamp refused")

	// ErrNoEventID is returned when no usable event ID can be read from a
	// verified body: the body is not a JSON object with a string "id", or
	// the ID (from EventID or a WithEventID function) is empty, longer
	// than MaxEventIDLength, or holds other than printable ASCII. It is
	// also in the chain of Deduper.Do's error for such an ID. Answered 400.
	ErrNoEventID = errors.New("webhook: no usable event ID")

	// ErrTooLarge is returned by the Handler when the body exceeds its
	// limit (DefaultMaxBody or WithMaxBody). Answered 413.
	ErrTooLarge = errors.New("webhook: body too large")

	// ErrInProgress is returned by Deduper.Do when another delivery of the
	// same event holds the lease: it is being handled now, here or on
	// another instance, or its handler crashed and the lease has not run
	// out yet. The handler did not run. Answered 409, so that the provider
	// delivers again later and that delivery finds the event handled, or
	// the lease expired and takes it over.
	ErrInProgress = errors.New("webhook: event is being handled by another delivery")

	// ErrEventMismatch is returned by Deduper.Do when an event not yet
	// handled was first seen with other data (another fingerprint). The
	// handler did not run and nothing was changed. It means two different
	// events got one ID (an ID function that reads the wrong field, two
	// accounts sharing one namespace) or the provider changed the event's
	// data between deliveries; either way a person must look. Answered 422.
	ErrEventMismatch = errors.New("webhook: event ID already seen with another body")

	// ErrNotRecorded is returned by Deduper.Do, with Handled, when the
	// handler succeeded but the KeyStore failed to record it. The work is
	// done, so the Handler answers 200 and the provider stops; but the
	// record stays open under a lease, and a delivery of the same event
	// after the lease ends (a manual resend, say) runs the handler again.
	ErrNotRecorded = errors.New("webhook: handled, but not recorded in the store")
)

// TimestampError is returned by Verify when the signature is genuine but
// its timestamp is further than Tolerance from Now. It matches
// ErrTimestamp under errors.Is. Its times are safe to log and say which
// way a clock is off.
type TimestampError struct {
	Signed    time.Time     // the timestamp the provider signed
	Now       time.Time     // the verifier's clock when it checked
	Tolerance time.Duration // the largest difference allowed
}

// Error says how far off the timestamp is, in which direction of time and
// against which tolerance.
func (e *TimestampError) Error() string {
	when := "before"
	if e.Signed.After(e.Now) {
		when = "after"
	}
	return fmt.Sprintf("webhook: signed at %s, %s %s our clock (%s), tolerance %s",
		e.Signed.UTC().Format(time.RFC3339), e.Now.Sub(e.Signed).Abs(), when, e.Now.UTC().Format(time.RFC3339), e.Tolerance)
}

// Unwrap makes a TimestampError match ErrTimestamp.
func (e *TimestampError) Unwrap() error { return ErrTimestamp }

// HandlerError is returned by Deduper.Do (and so by Handler.Receive) when
// the caller's handler returned an error, or ran past the lease and saw
// its context end. The lease was released, so the provider's next delivery
// runs the handler again; unless releasing failed too, in which case
// errors.Join adds that error and the lease runs out on its own. Answered
// 500.
type HandlerError struct {
	EventID string // the event whose handler failed
	Err     error  // what the handler returned
}

// Error names the event and quotes the handler's error, which is the
// caller's own text: the Handler sends it to the error hook, never to the
// provider.
func (e *HandlerError) Error() string {
	return fmt.Sprintf("webhook: handler for event %s: %v", e.EventID, e.Err)
}

// Unwrap returns the handler's error.
func (e *HandlerError) Unwrap() error { return e.Err }
