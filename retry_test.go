package idempay

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRetryClassification(t *testing.T) {
	cases := []struct {
		name   string
		v      Verdict
		retry  bool
		moved  bool // could money have moved?
		settle bool
	}{
		{"dial refused: nothing written", Verdict{Kind: KindNotSent}, true, false, false},
		{"answer lost after writing", Verdict{Kind: KindLost}, true, true, false},
		{"2xx fresh", Verdict{Kind: KindSucceeded}, false, true, true},
		{"2xx replayed", Verdict{Kind: KindSucceeded, Replayed: true}, false, true, true},
		{"pending (3-D Secure)", Verdict{Kind: KindPending}, false, true, true},
		{"402 decline", Verdict{Kind: KindDeclined}, false, false, true},
		{"400 validation", Verdict{Kind: KindInvalid}, false, false, false},
		{"400/422 key re-used", Verdict{Kind: KindKeyConflict}, false, true, false},
		{"401/403/404", Verdict{Kind: KindConfig}, false, false, false},
		{"409 in flight", Verdict{Kind: KindInFlight}, true, true, false},
		{"429", Verdict{Kind: KindRateLimited}, true, false, false},
		{"5xx fresh", Verdict{Kind: KindServerError}, true, true, false},
		{"5xx replayed: a stored failure", Verdict{Kind: KindServerError, Replayed: true}, false, true, false},
		{"5xx replayed even if told to retry", Verdict{Kind: KindServerError, Replayed: true, Retry: RetryYes}, false, true, false},
		{"unclassified answer", Verdict{Kind: KindUnknown}, false, true, false},
		{"provider says retry a 400", Verdict{Kind: KindInvalid, Retry: RetryYes}, true, false, false},
		{"provider says do not retry a 503", Verdict{Kind: KindServerError, Retry: RetryNo}, false, true, false},
		{"provider says retry, but it succeeded", Verdict{Kind: KindSucceeded, Retry: RetryYes}, false, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.retry, retryable(c.v), "retryable")
			assert.Equal(t, c.moved, mayHaveMoved(c.v.Kind), "mayHaveMoved")
			assert.Equal(t, c.settle, settles(c.v.Kind), "settles")
		})
	}
}

func TestClassifyStatus(t *testing.T) {
	want := map[int]Kind{
		200: KindSucceeded, 201: KindSucceeded, 302: KindUnknown, 400: KindInvalid, 401: KindConfig,
		402: KindDeclined, 403: KindConfig, 404: KindConfig, 409: KindInFlight, 422: KindInvalid,
		429: KindRateLimited, 500: KindServerError, 501: KindConfig, 502: KindServerError,
		503: KindServerError, 504: KindServerError,
	}
	for status, k := range want {
		assert.Equal(t, k, ClassifyStatus(status), "status %d", status)
	}
}

func TestClassifyTransportError(t *testing.T) {
	plain := errors.New("read: connection reset by peer")
	assert.Equal(t, KindNotSent, classifyTransportError(plain, false))
	assert.Equal(t, KindLost, classifyTransportError(plain, true))
	cert := fmt.Errorf("post: %w", &tls.CertificateVerificationError{Err: errors.New("bad")})
	assert.Equal(t, KindConfig, classifyTransportError(cert, true), "a certificate error is configuration, never retried")
	assert.Equal(t, KindConfig, classifyTransportError(errors.New(`unsupported protocol scheme "ftp"`), false))
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	d, ok := retryAfter("3", now)
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, d)
	d, ok = retryAfter(now.Add(7*time.Second).Format(http.TimeFormat), now)
	assert.True(t, ok)
	assert.Equal(t, 7*time.Second, d)
	d, ok = retryAfter(now.Add(-time.Minute).Format(http.TimeFormat), now)
	assert.True(t, ok)
	assert.Zero(t, d, "a date in the past means now")
	for _, bad := range []string{"", "-1", "soon", "1.5"} {
		_, ok := retryAfter(bad, now)
		assert.False(t, ok, "%q", bad)
	}
	d, ok = retryAfter("99999999999999", now)
	assert.True(t, ok)
	assert.Equal(t, 24*time.Hour, d, "huge values are clamped before the cap, never overflow")
}

func TestBackoffHonoursAndCapsRetryAfter(t *testing.T) {
	p := RetryPolicy{InitialInterval: 10 * time.Millisecond, MaxRetryAfter: 2 * time.Second, NoJitter: true}.withDefaults()
	s := newBackoffSchedule(p, time.Now)
	resp := func(ra string) *http.Response {
		return &http.Response{Header: http.Header{"Retry-After": {ra}}}
	}
	assert.Equal(t, 10*time.Millisecond, s.next(nil), "first wait is the initial interval")
	assert.Equal(t, 1*time.Second, s.next(resp("1")), "Retry-After longer than the backoff is honoured")
	assert.Equal(t, 2*time.Second, s.next(resp("3600")), "Retry-After is capped")
	assert.Equal(t, 80*time.Millisecond, s.next(resp("0")), "Retry-After shorter than the backoff does not shorten it")
}

func TestBackoffJitterStaysInRange(t *testing.T) {
	p := RetryPolicy{InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second}.withDefaults()
	s := newBackoffSchedule(p, time.Now)
	seen := map[time.Duration]bool{}
	first := s.next(nil)
	assert.GreaterOrEqual(t, first, 50*time.Millisecond)
	assert.LessOrEqual(t, first, 150*time.Millisecond)
	for range 20 {
		s = newBackoffSchedule(p, time.Now)
		seen[s.next(nil)] = true
	}
	assert.Greater(t, len(seen), 1, "jitter spreads the waits")
}

func TestRetryPolicyValidation(t *testing.T) {
	for _, p := range []RetryPolicy{{MaxAttempts: -1}, {RandomizationFactor: 1.5}, {Multiplier: 0.5}, {MaxElapsed: -time.Second}} {
		err := p.validate()
		assert.ErrorIs(t, err, ErrConfig, "%+v", p)
	}
	assert.NoError(t, RetryPolicy{}.validate())
}
