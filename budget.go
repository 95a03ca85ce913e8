package idempay

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
)

// ErrRetryBudgetExhausted is matched by the error of an operation whose
// next retry the client's retry budget refused: the provider has been
// failing for many operations at once, and resending would only add to its
// load. Nothing more of the operation was sent. Its outcome still follows
// the one rule: failed only if nothing sent before could have arrived,
// otherwise unknown (charge it again, or settle it, later).
var ErrRetryBudgetExhausted = errors.New("idempay: retry budget exhausted")

// Defaults of the retry budget (RetryPolicy.BudgetTokens and the costs),
// those of the AWS SDK v2 retry quota: a budget of 500 tokens at 5 a retry
// lets a total outage cost at most 100 retries over all the client's
// operations, however many there are.
const (
	DefaultBudgetTokens     = 500
	DefaultRetryCost        = 5
	DefaultTimeoutRetryCost = 10
	DefaultSuccessRefill    = 1
)

// RetryBudgetStatus is what the client's retry budget holds now, for
// dashboards: Available out of Capacity tokens. A client without a budget
// (RetryPolicy.BudgetTokens negative) reports zero for both.
type RetryBudgetStatus struct {
	Capacity  int `json:"capacity"`
	Available int `json:"available"`
}

// RetryBudget reports the client's retry budget.
func (c *Client) RetryBudget() RetryBudgetStatus {
	if t, ok := c.hc.Transport.(*attemptTransport); ok && t.budget != nil {
		return t.budget.status()
	}
	return RetryBudgetStatus{}
}

// retryBudget is a token bucket shared by every flight of one client: the
// first request of a flight is free, each resend takes tokens (more after a
// timeout, which holds a provider's resources longest), and an answer that
// shows the provider healthy gives back what its flight's resends took, or
// a token if it took none. When the bucket is empty no flight resends, so
// during a total outage the requests sent stay close to the operations.
type retryBudget struct {
	mu                     sync.Mutex
	capacity, available    int
	retryCost, timeoutCost int
	refill                 int
}

// newRetryBudget returns p's budget, or nil when p has none.
func newRetryBudget(p RetryPolicy) *retryBudget {
	if p.BudgetTokens < 0 {
		return nil
	}
	return &retryBudget{capacity: p.BudgetTokens, available: p.BudgetTokens,
		retryCost: p.RetryCost, timeoutCost: p.TimeoutRetryCost, refill: p.SuccessRefill}
}

// take takes the cost of one resend, after a timeout or not, and reports
// what it took; ok is false, and nothing taken, when the bucket lacks it.
func (b *retryBudget) take(afterTimeout bool) (cost int, ok bool) {
	cost = b.retryCost
	if afterTimeout {
		cost = b.timeoutCost
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if cost > b.available {
		return 0, false
	}
	b.available -= cost
	return cost, true
}

// give puts n tokens back, never above the capacity.
func (b *retryBudget) give(n int) {
	b.mu.Lock()
	b.available = min(b.available+n, b.capacity)
	b.mu.Unlock()
}

func (b *retryBudget) status() RetryBudgetStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	return RetryBudgetStatus{Capacity: b.capacity, Available: b.available}
}

// flightBudget is one flight's account with the budget, kept in its
// wireProbe: how many requests it handed over, whether the last one timed
// out, and what its resends took. A flight's requests go one at a time.
type flightBudget struct {
	mu       sync.Mutex
	requests int
	timedOut bool
	spent    int
}

// admit is asked before each request of a flight leaves: the first is
// free, a resend must be paid for. It reports false when the budget
// refuses the resend.
func (fb *flightBudget) admit(b *retryBudget) bool {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if fb.requests > 0 {
		cost, ok := b.take(fb.timedOut)
		if !ok {
			return false
		}
		fb.spent += cost
	}
	fb.requests++
	return true
}

// answered settles the flight's account once a request came back: an
// answer that shows the provider working refunds the resends' cost, or
// adds the refill when there was none; a failure only notes whether it was
// a timeout, which makes the next resend dearer.
func (fb *flightBudget) answered(b *retryBudget, resp *http.Response, err error) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	fb.timedOut = err != nil && isTimeout(err)
	if err != nil || !healthy(resp.StatusCode) {
		return
	}
	if fb.spent > 0 {
		b.give(fb.spent)
		fb.spent = 0
	} else if fb.requests == 1 {
		b.give(b.refill)
	}
}

// healthy reports whether an answer shows a provider able to work: anything
// but a 5xx, a timeout status, "in flight" and "slow down".
func healthy(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return false
	}
	return status < 500
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
