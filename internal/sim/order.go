package sim

import (
	"fmt"
	"sync"
	"time"
)

// order is one payment intent of the simulated shop, and what the shop (not
// the SDK) knows about it: the shop's order database is the ground on which
// callers decide to retry, and its request is what a resume sends again.
type order struct {
	id          string
	idx         int
	kind        string // ok, decline or 3ds: what the provider will do with it
	amount      int64
	currency    string
	source      string // the payment token: a secret
	otherSource string // the card of a charge re-sent with other parameters
	frontendKey string // the key a frontend passes through, if any

	mu       sync.Mutex
	started  bool
	status   outcome   // the last definite answer any caller got, or unknown
	caller   *instance // whose caller is waiting on it, if any
	shown    string    // the pending charge the customer was sent to
	closedAt time.Time // when the store last closed its record (virtual time)
	closed   bool
	ops      []*shopOp // the refunds, captures and cancels asked for
}

// variant says which request of an order a call sends.
type variant int

const (
	// canonical is the order's request as the shop sends it every time.
	canonical variant = iota
	// otherKey is the same payment with the other key choice: without the
	// frontend key when the order has one, with a new one when it has not.
	otherKey
	// otherParams is the order charged again with other parameters (another
	// amount and card), as a confused or malicious client does.
	otherParams
)

func (v variant) String() string { return [...]string{"canonical", "other-key", "other-params"}[v] }

func newOrder(seed uint64, idx int, d dice) *order {
	o := &order{id: fmt.Sprintf("o%dx%d", seed, idx), idx: idx, amount: int64(1000 + 100*idx)}
	switch u := d.u("order-kind", idx); {
	case u < 0.12:
		o.kind = "decline"
	case u < 0.40:
		o.kind = "3ds"
	default:
		o.kind = "ok"
	}
	o.source = secretToken(d, "source", idx)
	o.otherSource = secretToken(d, "other-source", idx)
	if d.chance(0.35, "frontend-key", idx) {
		o.frontendKey = fmt.Sprintf("fk-%d-%d", seed, idx)
	}
	return o
}

// secretToken makes the random part of a payment token: long and unique, so
// that any eight characters of it found in a log line or a record are a leak.
func secretToken(d dice, site string, idx int) string {
	const digits = "abcdefghijkmnopqrtuvwxyz2346789" // no s or 5: "3ds" must not appear by chance
	b := make([]byte, 24)
	for i := range b {
		b[i] = digits[d.intn(len(digits), site, idx, i)]
	}
	return string(b)
}

// view returns the shop's knowledge of the order under its lock.
func (o *order) snapshot() (status outcome, caller *instance, shown string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.status, o.caller, o.shown
}

// kindOf is what the provider will do with the variant's request: the
// other card of a declined order is a good one, so that "declined, then
// another card on the same intent" is played out (issue 9: attempts).
func (o *order) kindOf(v variant) string {
	if v == otherParams && o.kind == "decline" {
		return "ok"
	}
	return o.kind
}

// token is the secret part of the payment token a variant sends.
func (o *order) token(v variant) string {
	if v == otherParams {
		return o.otherSource
	}
	return o.source
}
