package faults

import "time"

// Claimed is a request's hold on its idempotency key while it executes:
// Commit stores the answer and runs effect (recording the money moved) in
// one step, or does neither and returns false when another request took
// the key over; Release gives the key up, for an answer the provider does
// not store. Reclaimed says the key was taken over from a claim whose
// lease ran out.
type Claimed struct {
	Commit    func(resp Stored, effect func()) bool
	Release   func()
	Reclaimed bool
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
