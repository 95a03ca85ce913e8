package idempay

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Rule: the provider's clock is a lower bound learnt from well-formed,
// plausible Date headers only; the tightest answer wins.
func TestProviderClockKeepsTheTightestPlausibleLowerBound(t *testing.T) {
	local := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	date := func(d time.Duration) http.Header {
		return http.Header{"Date": {local.Add(d).Format(http.TimeFormat)}}
	}
	var p providerClock
	_, ok := p.offset()
	assert.False(t, ok, "nothing learnt before an answer")

	p.observe(http.Header{"Date": {"yesterday"}}, local)
	p.observe(http.Header{}, local)
	p.observe(date(-49*time.Hour), local) // a cache's, not a provider's
	p.observe(date(49*time.Hour), local)
	_, ok = p.offset()
	assert.False(t, ok, "unreadable or implausible Dates teach nothing")

	p.observe(date(-46*time.Minute), local)
	p.observe(date(-47*time.Minute), local) // an answer that took longer
	off, ok := p.offset()
	assert.True(t, ok)
	assert.Equal(t, -46*time.Minute, off)
	var none *providerClock
	none.observe(date(0), local)
	_, ok = none.offset()
	assert.False(t, ok)
}
