package faults

import (
	"errors"
	"fmt"
	"time"
)

// Apply runs each of a fake's options on c, and panics naming pkg on the
// first one refused: a fixture built wrong should stop the test at once,
// as httptest.NewServer does.
func Apply[C any, O ~func(*C) error](pkg string, c *C, opts []O) {
	for _, opt := range opts {
		if err := opt(c); err != nil {
			panic(pkg + ": NewServer: " + err.Error())
		}
	}
}

// SetHook sets a fake's request hook, refusing a nil one.
func SetHook[T any](dst *func(T), hook func(T)) error {
	if hook == nil {
		return errors.New("hook is nil")
	}
	*dst = hook
	return nil
}

// SetDelay sets one of a fake's delays, refusing a negative one; what
// names it in the refusal.
func SetDelay(dst *time.Duration, d time.Duration, what string) error {
	if d < 0 {
		return fmt.Errorf("%s is negative", what)
	}
	*dst = d
	return nil
}
