package idempay

import (
	"errors"
	"fmt"
	"strings"
)

// Outcome is what a charge is known to have done with the customer's money.
type Outcome int

const (
	// OutcomeUnknown: an attempt may have reached the part of the provider
	// that moves money and no answer settled it. The key stays open in the
	// KeyStore; charging the intent again resumes with it and settles it.
	// It is the zero value on purpose: a result nobody classified is unknown.
	OutcomeUnknown Outcome = iota
	// OutcomeSucceeded: the provider charged (now, or earlier and replayed).
	OutcomeSucceeded
	// OutcomeFailed: the charge definitely did not move money, or nothing
	// was sent (bad input, a decline, a configuration error). Charging the
	// intent again with other parameters starts a new attempt.
	OutcomeFailed
	// OutcomePending: the provider accepted the charge, but money has not
	// moved yet and may still (3-D Secure, a hosted page, konbini, a 2C2P
	// payment token). The intent is open; show the customer what the
	// provider asks for (Charge.AuthorizeURL) and settle it later. Never
	// ship a pending order as paid.
	OutcomePending
)

// String is "succeeded", "failed", "pending" or "unknown".
func (o Outcome) String() string {
	switch o {
	case OutcomeSucceeded:
		return "succeeded"
	case OutcomeFailed:
		return "failed"
	case OutcomePending:
		return "pending"
	}
	return "unknown"
}

// Sentinel errors, for errors.Is. Each is found in the chain of the error
// returned by Client.Charge; where the condition carries data, an *APIError
// or *ValidationError is in the chain too.
var (
	// ErrOutcomeUnknown is in the chain of every error whose Outcome is
	// OutcomeUnknown: money may have moved. Charge the intent again later
	// (or call Settle) to find out; never treat it as a failure.
	ErrOutcomeUnknown = errors.New("idempay: outcome unknown")

	// ErrPending is in the chain of every error whose Outcome is
	// OutcomePending: the charge was accepted and waits for the customer
	// or the payment method. Charge returns the pending *Charge with it.
	ErrPending = errors.New("idempay: pending")

	// ErrDeclined: the provider refused the payment (card declined,
	// insufficient funds). Definite: no money moved. The refusal is stored
	// for the attempt: the same request answers it again; a request with
	// other parameters (another card) starts a new attempt of the intent.
	ErrDeclined = errors.New("idempay: payment declined")

	// ErrInvalidRequest: the request was refused as invalid, locally
	// before anything was sent (with a *ValidationError) or by the provider.
	ErrInvalidRequest = errors.New("idempay: invalid request")

	// ErrAttemptOpen: the intent has an attempt with other parameters whose
	// outcome is not known yet (unknown or pending). Nothing was sent: money
	// may still move under that attempt, so it must be settled (Settle, or
	// Charge with its own parameters) before another attempt may begin.
	// The outcome is the open attempt's: unknown or pending.
	ErrAttemptOpen = errors.New("idempay: an attempt of the intent is still unsettled")

	// ErrStoppedWaiting: the caller's context ended while the charge was
	// still running. The charge goes on and records its outcome; the next
	// Charge of the intent answers it. Outcome unknown for this caller.
	ErrStoppedWaiting = errors.New("idempay: stopped waiting; the charge goes on")

	// ErrClosed: the Client was closed. Nothing was sent or looked up.
	ErrClosed = errors.New("idempay: client closed")

	// ErrKeyConflict: the provider says the key was used with other
	// parameters. Something was done under the key, so the outcome of the
	// intent is unknown.
	ErrKeyConflict = errors.New("idempay: idempotency key re-used with other parameters")

	// ErrInProgress: another attempt with the key is still running (409
	// past the retry budget, or another instance holds the intent's lease).
	// Outcome unknown.
	ErrInProgress = errors.New("idempay: charge in progress elsewhere")

	// ErrKeyExpired: the intent's key is older than KeyRetention and
	// unresolved. It is never resent, since the provider may have forgotten
	// it and would charge again; settle the intent by lookup or reconcile it
	// by hand. Outcome unknown, unless the provider's lookup proved that
	// nothing was charged under the key: then failed, and the next charge
	// begins a new attempt.
	ErrKeyExpired = errors.New("idempay: unresolved key past the retention window")

	// ErrStoredFailure: the provider replayed a failure it stored for the
	// key (a 5xx produced while executing). Retrying cannot change it.
	// Outcome unknown.
	ErrStoredFailure = errors.New("idempay: provider replayed a stored failure")

	// ErrUnreachable: no attempt reached the provider (connection refused,
	// rate-limited every time). Outcome failed when the key was new; the
	// attempt is recorded as failed and a later Charge, with the same
	// parameters or others, begins a new attempt.
	ErrUnreachable = errors.New("idempay: provider not reached")

	// ErrConfig: the configuration is wrong, and nothing was charged
	// because of it: New refused the Config (a *ConfigError, nothing
	// stored or sent), or the provider refused the credentials or the
	// endpoint (401, 403, 404, 501, a TLS certificate error). Outcome
	// failed.
	ErrConfig = errors.New("idempay: configuration refused")

	// ErrNoLookup: the provider cannot look a charge up by intent (its
	// adapter is no Finder, or OwnAPI.LookupPath is unset). Returned by
	// Settle; an expired key then ends ErrKeyExpired.
	ErrNoLookup = errors.New("idempay: provider cannot look charges up")

	// ErrStore: the KeyStore failed. When Reserve fails nothing is sent,
	// yet the outcome is unknown: an earlier call may have sent the key.
	ErrStore = errors.New("idempay: key store failed")
)

// ChargeError is the error returned by Client.Charge for every outcome but
// success, except bad input refused before anything was looked up (a bare
// *ValidationError, outcome failed). It says which intent and key, how many
// requests went out, and what is known about the money.
type ChargeError struct {
	IntentID string
	Key      string
	Outcome  Outcome
	Requests int   // requests that left this process for this call
	Err      error // the cause: a sentinel above, an *APIError, or a transport error
}

// Error names the intent, the outcome, the attempts and the cause.
func (e *ChargeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "idempay: charge %q: outcome %s", e.IntentID, e.Outcome)
	if e.Requests > 0 {
		fmt.Fprintf(&b, " after %d request(s)", e.Requests)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes the cause and, for an unknown outcome, ErrOutcomeUnknown;
// for a pending one, ErrPending.
func (e *ChargeError) Unwrap() []error {
	switch e.Outcome {
	case OutcomeUnknown:
		return []error{e.Err, ErrOutcomeUnknown}
	case OutcomePending:
		return []error{e.Err, ErrPending}
	}
	return []error{e.Err}
}

// PanicError is the cause of an unknown outcome when something inside a
// flight panicked (an adapter, the store, OwnAPI.Encode, Config.NewKey or
// Config.Clock). The process goes on; the intent stays open.
type PanicError struct {
	Message string // the panic value, printed, with this call's secrets taken out
	Stack   []byte // the panicking goroutine's stack
}

// Error gives the panic value.
func (e *PanicError) Error() string { return "idempay: panic in flight: " + e.Message }

// APIError is a refusal or failure answered by the provider.
type APIError struct {
	Provider    string // adapter name
	Status      int    // HTTP status (200 for a decline carried in a 200)
	Type        string // provider's error type, e.g. "card_error"
	Code        string // provider's error code, e.g. "card_declined"
	DeclineCode string // provider's decline reason, if any
	Param       string // the offending parameter, if any
	Message     string // provider's message (never contains our secrets)
	RequestID   string // provider's request ID, for support tickets
	Replayed    bool   // the answer was a replay of a stored one

	kind error // the sentinel this refusal stands for
}

// Error gives the provider, status, codes, message and request ID.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: HTTP %d", e.Provider, e.Status)
	for _, f := range [][2]string{{"type", e.Type}, {"code", e.Code}, {"decline_code", e.DeclineCode}, {"param", e.Param}} {
		if f[1] != "" {
			fmt.Fprintf(&b, " %s=%s", f[0], f[1])
		}
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Replayed {
		b.WriteString(" (replayed)")
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	return b.String()
}

// Unwrap returns the sentinel this refusal stands for (ErrDeclined,
// ErrKeyConflict, ...), or nil.
func (e *APIError) Unwrap() error { return e.kind }

// ValidationError is a bad input refused before anything was stored or
// sent. It matches ErrInvalidRequest with errors.Is.
type ValidationError struct {
	Field  string // the field at fault, e.g. "Amount"
	Reason string // why, in words
}

// Error names the field and the reason.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("idempay: invalid %s: %s", e.Field, e.Reason)
}

// Unwrap returns ErrInvalidRequest.
func (e *ValidationError) Unwrap() error { return ErrInvalidRequest }

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// OutcomeOf says what err means for the money: OutcomeSucceeded for nil,
// the Outcome of a *ChargeError or *OpError (OutcomePending for a pending
// charge or operation, and for an authorisation awaiting capture),
// OutcomeFailed for a bad input refused before sending, and OutcomeUnknown
// for anything else, because an error nobody classified cannot prove that
// no money moved.
func OutcomeOf(err error) Outcome {
	if err == nil {
		return OutcomeSucceeded
	}
	var ce *ChargeError
	if errors.As(err, &ce) {
		return ce.Outcome
	}
	var oe *OpError
	if errors.As(err, &oe) {
		return oe.Outcome
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		return OutcomeFailed
	}
	return OutcomeUnknown
}
