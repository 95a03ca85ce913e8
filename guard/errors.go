package guard

import (
	"errors"
	"fmt"

	"github.com/idempay/idempay"
)

// ErrInvalidConfig is matched by every *ConfigError: New was given an
// option it refuses.
var ErrInvalidConfig = errors.New("guard: invalid config")

// ConfigError is an option refused by New. It matches ErrInvalidConfig.
type ConfigError struct {
	Option string // the option's name, e.g. "WithLease"
	Reason string
}

// Error names the option and why it was refused.
func (e *ConfigError) Error() string { return "guard: " + e.Option + ": " + e.Reason }

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

func configErr(option, format string, args ...any) error {
	return &ConfigError{Option: option, Reason: fmt.Sprintf(format, args...)}
}

// Errors returned by Guard.Settle and Guard.Reopen. None holds the key's
// tenant, a body or a header: they are safe to log.
var (
	// ErrNotFound: no request was ever guarded under this identity and
	// key, or its record has expired. It also matches idempay.ErrNotFound.
	ErrNotFound = fmt.Errorf("guard: no request under this key: %w", idempay.ErrNotFound)

	// ErrNotUnsettled: the request under this key is not waiting to be
	// settled: it is running, it was released for a retry, or its
	// response is already stored (settled before, or never unsettled).
	// Nothing was changed.
	ErrNotUnsettled = errors.New("guard: request is not unsettled")

	// ErrBusy: a retry of the request held the key for an instant each
	// time Settle or Reopen tried to take it; nothing was changed. Call
	// again.
	ErrBusy = errors.New("guard: key held by a retry; try again")

	// ErrInvalidResponse: the Response given to Settle cannot be replayed
	// (status outside 200 to 499, body larger than the response limit).
	ErrInvalidResponse = errors.New("guard: response cannot be stored")
)
