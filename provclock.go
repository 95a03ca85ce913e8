package idempay

import (
	"net/http"
	"sync"
	"time"
)

// maxDateSkew bounds how far an answer's Date may stand from the holder's
// clock and still be read as the provider's: beyond it the header is more
// likely a cache's or a broken proxy's than a provider clock two days off,
// and taking it would widen every lookup's window to no purpose.
const maxDateSkew = 48 * time.Hour

// providerClock is what the answers' Date headers tell of the provider's
// clock, against the holder's own (Config.Clock): lead, a lower bound of
// how far the provider's clock reads ahead of the holder's (negative when
// behind).
//
// A Date is stamped before the answer leaves and truncated to the second,
// and the holder's clock is read once the answer is in, so Date minus that
// reading never exceeds the true difference: the largest over all answers
// is the tightest lower bound. The provider's clock at any instant t of
// the holder's is then at least t + lead.
//
// Why it is kept: a provider's lookup that lists charges from a record's
// CreatedAt (Omise) reads CreatedAt on the provider's clock, and a store
// whose clock reads ahead of the provider's stamps CreatedAt after the
// charge. When the hosts' clocks are ahead too, the store's lead over them
// shows nothing; over the provider's it does (storeFloor.ahead).
type providerClock struct {
	mu    sync.Mutex
	known bool
	lead  time.Duration
}

// observe takes the Date of an answer received at the holder's instant
// local. An answer without a readable Date, or with one too far off,
// teaches nothing.
func (p *providerClock) observe(h http.Header, local time.Time) {
	v := h.Get("Date")
	if p == nil || v == "" {
		return
	}
	date, err := http.ParseTime(v)
	if err != nil {
		return
	}
	d := date.Sub(local)
	if d > maxDateSkew || d < -maxDateSkew {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.known || d > p.lead {
		p.known, p.lead = true, d
	}
}

// offset is the lower bound of the provider's lead over the holder's
// clock, if any answer has taught one.
func (p *providerClock) offset() (time.Duration, bool) {
	if p == nil {
		return 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lead, p.known
}
