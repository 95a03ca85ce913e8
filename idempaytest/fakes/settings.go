package fakes

import (
	"errors"
	"time"
)

// Settings are what every fake is configured with beyond its provider's
// own options, given to its WithSettings option. Zero fields keep the
// fake's defaults (or what an earlier WithSettings set).
type Settings struct {
	// Lease bounds how long a claim on an idempotency key blocks other
	// requests with it without completing: after a Mid fault the key is in
	// use until the lease runs out. Default two seconds.
	Lease time.Duration
	// Retention is how long a key is remembered; a key resent later
	// executes again (and charges again). Default 24 hours.
	Retention time.Duration
	// Clock is the fake's clock for leases, retention, search and list
	// delays and the objects' timestamps (a Clock's Now). Default time.Now.
	Clock func() time.Time
	// RetryAfter is sent, in whole seconds, with the 503 of Unavailable.
	RetryAfter time.Duration
	// DropReset ends dropped connections with a TCP reset, so the client
	// sees ECONNRESET instead of EOF.
	DropReset bool
	// CloseConnections answers every request with Connection: close, so
	// that every drop reaches the client: net/http's Transport silently
	// resends a request with an Idempotency-Key header on a reused
	// connection that failed before the answer's first byte.
	CloseConnections bool
	// Lenient makes the fake carry out the refunds, captures and cancels
	// its provider refuses (beyond the charge, a second capture, ...), as a
	// provider with a bug would, so that CheckMoney shows what a client
	// sent that it must not have.
	Lenient bool
}

// ErrBadSettings is returned for Settings with a negative duration.
var ErrBadSettings = errors.New("fakes: settings with a negative duration")

// Validate returns ErrBadSettings for a negative duration.
func (s Settings) Validate() error {
	if s.Lease < 0 || s.Retention < 0 || s.RetryAfter < 0 {
		return ErrBadSettings
	}
	return nil
}

// Merge returns s with the non-zero fields of o (and its true flags) laid
// over it.
func (s Settings) Merge(o Settings) Settings {
	if o.Lease != 0 {
		s.Lease = o.Lease
	}
	if o.Retention != 0 {
		s.Retention = o.Retention
	}
	if o.Clock != nil {
		s.Clock = o.Clock
	}
	if o.RetryAfter != 0 {
		s.RetryAfter = o.RetryAfter
	}
	s.DropReset = s.DropReset || o.DropReset
	s.CloseConnections = s.CloseConnections || o.CloseConnections
	s.Lenient = s.Lenient || o.Lenient
	return s
}
