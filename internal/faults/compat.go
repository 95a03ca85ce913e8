package faults

import "github.com/idempay/idempay/idempaytest/fakes"

// Transitional names for internal/fake2c2p and provider/twoc2p's tests,
// which move to idempaytest/twoc2ptest and idempaytest/fakes last; the
// types are idempaytest/fakes's own.
type (
	Fault = fakes.Fault
	Rates = fakes.Rates
)

// Transitional names of the faults, as above.
const (
	None        = fakes.None
	Pre         = fakes.Pre
	Unavailable = fakes.Unavailable
	Mid         = fakes.Mid
	Internal    = fakes.Internal
	Post        = fakes.Post
)
