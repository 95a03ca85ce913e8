package idempay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFlightBudgetCosts: a flight's first request is free, a resend costs
// RetryCost, a resend after a timeout costs TimeoutRetryCost, a healthy
// answer refunds what the flight's resends took, and a first-try success
// adds the refill, never beyond the capacity.
func TestFlightBudgetCosts(t *testing.T) {
	b := newRetryBudget(RetryPolicy{BudgetTokens: 20, RetryCost: 5, TimeoutRetryCost: 10, SuccessRefill: 1})
	timeout := fmt.Errorf("dial: %w", context.DeadlineExceeded)
	var fb flightBudget
	assert.True(t, fb.admit(b), "the first request is free")
	assert.Equal(t, 20, b.status().Available)
	fb.answered(b, nil, timeout)
	assert.True(t, fb.admit(b))
	assert.Equal(t, 10, b.status().Available, "a resend after a timeout costs more")
	fb.answered(b, &http.Response{StatusCode: 503}, nil)
	assert.True(t, fb.admit(b))
	assert.Equal(t, 5, b.status().Available, "a resend after a 503 costs RetryCost")
	fb.answered(b, &http.Response{StatusCode: 503}, nil)
	assert.True(t, fb.admit(b))
	assert.Equal(t, 0, b.status().Available)
	fb.answered(b, &http.Response{StatusCode: 503}, nil)
	assert.False(t, fb.admit(b), "an empty bucket refuses the resend")
	assert.Equal(t, 0, b.status().Available, "a refusal takes nothing")

	var other flightBudget
	assert.True(t, other.admit(b), "another operation's first request still leaves")
	other.answered(b, &http.Response{StatusCode: 200}, nil)
	assert.Equal(t, 1, b.status().Available, "a first-try success adds the refill")

	var healed flightBudget
	b.give(100)
	assert.Equal(t, 20, b.status().Available, "never beyond the capacity")
	healed.admit(b)
	healed.answered(b, nil, errors.New("connection refused"))
	healed.admit(b)
	assert.Equal(t, 15, b.status().Available)
	healed.answered(b, &http.Response{StatusCode: 402}, nil) // a decline: the provider works
	assert.Equal(t, 20, b.status().Available, "a healthy answer refunds the resends")
}

// TestBudgetPolicyDefaults: zero fields take the AWS quota's figures, a
// negative capacity turns the budget off, negative costs are refused.
func TestBudgetPolicyDefaults(t *testing.T) {
	p := RetryPolicy{}.withDefaults()
	assert.Equal(t, DefaultBudgetTokens, p.BudgetTokens)
	assert.Equal(t, DefaultRetryCost, p.RetryCost)
	assert.Equal(t, DefaultTimeoutRetryCost, p.TimeoutRetryCost)
	assert.Nil(t, newRetryBudget(RetryPolicy{BudgetTokens: -1}.withDefaults()))
	assert.Error(t, RetryPolicy{RetryCost: -1}.validate())
}
