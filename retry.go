package idempay

import (
	"net/http"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// RetryPolicy bounds the retries of one charge. Zero fields take the
// defaults of DefaultRetryPolicy.
//
// What is retried, always with the same key: requests that never left
// (connection refused), requests whose answer was lost (timeout, reset,
// EOF after writing), 5xx answers other than 501 that are not replays,
// 409 (the key is in flight) and 429. Never retried: declines, validation
// errors, 401/403/404, a key used with other parameters, and a replayed
// 5xx (the provider stored a failure for the key: retrying returns it
// again).
type RetryPolicy struct {
	// MaxAttempts caps the requests of one charge, the first included.
	MaxAttempts int
	// InitialInterval is the first backoff; each next one is Multiplier
	// times longer, up to MaxInterval, and randomised by
	// RandomizationFactor (0.5: between half and one and a half times).
	InitialInterval     time.Duration
	MaxInterval         time.Duration
	Multiplier          float64
	RandomizationFactor float64
	// MaxElapsed caps the whole charge, attempts and waits included.
	MaxElapsed time.Duration
	// MaxRetryAfter caps how long a Retry-After header may make us wait.
	MaxRetryAfter time.Duration
	// NoJitter turns the randomisation off (RandomizationFactor 0 means
	// the default, so this says it explicitly).
	NoJitter bool

	// BudgetTokens is the capacity of the client's retry budget, a token
	// bucket shared by all its operations (the AWS SDK v2 retry quota):
	// the first request of an operation is free, each resend costs
	// RetryCost tokens (TimeoutRetryCost after a timeout), and an answer
	// that shows the provider working gives back what its operation's
	// resends cost, or SuccessRefill tokens if it needed none. An empty
	// bucket stops resends, so a total outage costs at most
	// BudgetTokens/RetryCost retries beyond one request per operation.
	// An operation the budget stops ends with an error matching
	// ErrRetryBudgetExhausted, failed only if nothing it sent could have
	// arrived and otherwise unknown. Zero means DefaultBudgetTokens;
	// negative turns the budget off.
	BudgetTokens int
	// RetryCost, TimeoutRetryCost and SuccessRefill: zero means
	// DefaultRetryCost, DefaultTimeoutRetryCost and DefaultSuccessRefill.
	RetryCost        int
	TimeoutRetryCost int
	SuccessRefill    int
}

// DefaultRetryPolicy is what a zero RetryPolicy becomes.
var DefaultRetryPolicy = RetryPolicy{
	MaxAttempts:         6,
	InitialInterval:     200 * time.Millisecond,
	MaxInterval:         5 * time.Second,
	Multiplier:          2,
	RandomizationFactor: 0.5,
	MaxElapsed:          60 * time.Second,
	MaxRetryAfter:       10 * time.Second,
	BudgetTokens:        DefaultBudgetTokens,
	RetryCost:           DefaultRetryCost,
	TimeoutRetryCost:    DefaultTimeoutRetryCost,
	SuccessRefill:       DefaultSuccessRefill,
}

// withDefaults fills the zero fields from DefaultRetryPolicy.
func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy
	if p.MaxAttempts > 0 {
		d.MaxAttempts = p.MaxAttempts
	}
	if p.InitialInterval > 0 {
		d.InitialInterval = p.InitialInterval
	}
	if p.MaxInterval > 0 {
		d.MaxInterval = p.MaxInterval
	}
	if p.Multiplier >= 1 {
		d.Multiplier = p.Multiplier
	}
	if p.RandomizationFactor > 0 {
		d.RandomizationFactor = p.RandomizationFactor
	}
	if p.NoJitter {
		d.RandomizationFactor = 0
	}
	if p.MaxElapsed > 0 {
		d.MaxElapsed = p.MaxElapsed
	}
	if p.MaxRetryAfter > 0 {
		d.MaxRetryAfter = p.MaxRetryAfter
	}
	if p.BudgetTokens != 0 {
		d.BudgetTokens = p.BudgetTokens
	}
	d.RetryCost = pick(p.RetryCost, d.RetryCost)
	d.TimeoutRetryCost = pick(p.TimeoutRetryCost, d.TimeoutRetryCost)
	d.SuccessRefill = pick(p.SuccessRefill, d.SuccessRefill)
	return d
}

func (p RetryPolicy) validate() error {
	switch {
	case p.MaxAttempts < 0:
		return configErr("Retry.MaxAttempts", "is negative")
	case p.RandomizationFactor < 0 || p.RandomizationFactor >= 1:
		return configErr("Retry.RandomizationFactor", "must be in [0, 1)")
	case p.Multiplier != 0 && p.Multiplier < 1:
		return configErr("Retry.Multiplier", "must be at least 1")
	case p.InitialInterval < 0 || p.MaxInterval < 0 || p.MaxElapsed < 0 || p.MaxRetryAfter < 0:
		return configErr("Retry", "durations must not be negative")
	case p.RetryCost < 0 || p.TimeoutRetryCost < 0 || p.SuccessRefill < 0:
		return configErr("Retry", "budget costs must not be negative")
	}
	return nil
}

// pick is v when it is set (positive), else the default d.
func pick(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

// retryable says whether a verdict is worth another attempt with the same
// key. A replayed 5xx is a failure the provider stored for the key: asking
// again only returns it again, whatever the provider's retry advice says.
func retryable(v Verdict) bool {
	if v.Kind == KindServerError && v.Replayed {
		return false
	}
	switch v.Retry {
	case RetryNo:
		return false
	case RetryYes:
		return !settles(v.Kind)
	}
	switch v.Kind {
	case KindNotSent, KindLost, KindInFlight, KindRateLimited, KindServerError:
		return true
	}
	return false
}

// settles reports whether a kind ends the charge with a known outcome.
func settles(k Kind) bool {
	return k == KindSucceeded || k == KindPending || k == KindDeclined
}

// mayHaveMoved reports whether an attempt that got this verdict could have
// reached the part of the provider that moves money.
func mayHaveMoved(k Kind) bool {
	switch k {
	case KindNotSent, KindRateLimited, KindConfig, KindInvalid, KindDeclined, KindNotFound:
		return false
	}
	return true
}

// backoffSchedule computes the waits of one charge: exponential with
// jitter from cenkalti/backoff (one instance per charge, as it is not safe
// for concurrent use), stretched to a Retry-After the server asked for,
// within the policy's cap.
type backoffSchedule struct {
	exp    *backoff.ExponentialBackOff
	policy RetryPolicy
	now    func() time.Time
}

func newBackoffSchedule(p RetryPolicy, now func() time.Time) *backoffSchedule {
	exp := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(p.InitialInterval),
		backoff.WithMaxInterval(p.MaxInterval),
		backoff.WithMultiplier(p.Multiplier),
		backoff.WithRandomizationFactor(p.RandomizationFactor),
		backoff.WithMaxElapsedTime(0), // the charge's context bounds the time
	)
	return &backoffSchedule{exp: exp, policy: p, now: now}
}

// next is the wait before the next attempt, given the last response (nil
// after a transport error).
func (s *backoffSchedule) next(resp *http.Response) time.Duration {
	wait := s.exp.NextBackOff()
	if resp == nil {
		return wait
	}
	if ra, ok := retryAfter(resp.Header.Get("Retry-After"), s.now()); ok {
		wait = max(wait, min(ra, s.policy.MaxRetryAfter))
	}
	return wait
}

// retryAfter parses a Retry-After value: delay-seconds or an HTTP-date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second) // avoid overflow; the cap applies later
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}
