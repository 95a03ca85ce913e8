package faults

import (
	"net/http"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// Claimed is a request's hold on its idempotency key while it executes:
// Commit stores the answer and runs effect (recording the money moved) in
// one step, or does neither and returns false when another request took
// the key over; Release gives the key up, for an answer the provider does
// not store. Reclaimed says the key was taken over from a claim whose
// lease ran out.
type Claimed struct {
	Commit    func(resp Stored, effect func()) bool // stores the answer with its effect, or reports the claim lost
	Release   func()                                // gives the key up
	Reclaimed bool                                  // taken over from a claim whose lease ran out
}

// Unprotected is the hold of a request without a key, or of a provider
// that does not honour keys: every commit takes effect, nothing is stored.
func Unprotected() Claimed {
	return Claimed{
		Commit: func(_ Stored, effect func()) bool {
			if effect != nil {
				effect()
			}
			return true
		},
		Release: func() {},
	}
}

// Outcomes are what a fake does with each thing a claim on a key can find.
type Outcomes struct {
	Mismatch func()            // the key was used with another request
	InUse    func()            // another request holds the key
	Replay   func(resp Stored) // an answer is stored under the key
	Run      func(c Claimed)   // the request holds the key and executes
}

// Execute claims key for account with the request's fingerprint fp and
// calls the outcome that applies. An empty key runs Unprotected.
func (kt *KeyTable) Execute(account, key, fp string, now time.Time, o Outcomes) {
	if key == "" {
		o.Run(Unprotected())
		return
	}
	c := kt.Claim(account, key, fp, now)
	switch c.Kind {
	case ClaimMismatch:
		o.Mismatch()
	case ClaimInUse:
		o.InUse()
	case ClaimReplay:
		o.Replay(c.Resp)
	default:
		o.Run(Claimed{
			Commit: func(resp Stored, effect func()) bool {
				return kt.Commit(account, key, c.Token, resp, effect)
			},
			Release:   func() { kt.Release(account, key, c.Token) },
			Reclaimed: c.Reclaimed,
		})
	}
}

// Crash applies the faults that strike while a request executes, before
// anything moves, and reports whether the request ended there: Mid drops
// the connection (the claim left to its lease); Internal answers resp, a
// 500 carrying code, stored under the key when store (as Stripe stores
// what failed once it started executing), the key released otherwise. When
// the stored 500 cannot be committed (the claim was lost) inUse answers.
func (g *Gate) Crash(w http.ResponseWriter, id string, f fakes.Fault, c Claimed, resp Stored, code string, store bool,
	inUse func()) bool {
	switch f {
	case fakes.Mid:
		g.Drop(w, f)
		return true
	case fakes.Internal:
		g.Traffic.Fault(f)
		if !store {
			c.Release()
		} else if !c.Commit(resp, nil) {
			inUse()
			return true
		}
		g.Send(w, id, resp.Status, resp.Body, code, false)
		return true
	}
	return false
}

// Decision is what a refund, capture or cancel comes to: the answer to
// store, the op to enter in the books (nil for a refusal), and the change
// to the fake's own objects (nil for none), made together with the answer.
type Decision struct {
	Resp   Stored    // the answer to store
	Op     *fakes.Op // the op to enter in the books, nil for a refusal
	Update func()    // the change to the fake's objects, nil for none
}

// Operate decides an operation on merchant's charge chargeID under the
// books' decision lock and commits the decision's answer with its record
// and its update, in one step: two operations of one charge never both
// pass a check only one of them may pass, and no answer exists without its
// effect. It returns the answer and whether the commit held (false: the
// claim was taken over, and the request must not answer it).
func Operate(l *fakes.Ledger, merchant, chargeID string, c Claimed, decide func(b fakes.Balance, found bool) Decision) (Stored, bool) {
	var d Decision
	committed := false
	l.Decide(merchant, chargeID, func(b fakes.Balance, found bool, record func(fakes.Op)) {
		d = decide(b, found)
		committed = c.Commit(d.Resp, func() {
			if d.Op != nil {
				record(*d.Op)
			}
			if d.Update != nil {
				d.Update()
			}
		})
	})
	return d.Resp, committed
}
