package sim

import (
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// reqFault is what happens to one request on the wire. The transport plays
// all of it but Mid and Internal, which the fake plays (they need its key
// table: a claim left to its lease, a 500 stored under the key).
type reqFault struct {
	refuse bool          // connection refused: nothing written
	synth  synthKind     // answered in the provider's place: 409, 429, 503, a proxy's 502
	pre    bool          // written, then dropped before the provider acts
	fake   fakes.Fault   // fakes.Mid or fakes.Internal, played by the fake
	post   bool          // the provider acts, then the answer is lost
	slow   time.Duration // the answer takes this long, in virtual time
	cut    int           // for synthEcho: where the 200-byte cut falls in the secret
}

func (f reqFault) String() string {
	switch {
	case f.refuse:
		return "refused"
	case f.synth != 0:
		return [...]string{"", "409", "429", "503", "502-echo"}[f.synth]
	case f.pre:
		return "drop-before"
	case f.fake == fakes.Mid:
		return "drop-during"
	case f.fake == fakes.Internal:
		return "500-stored"
	case f.post:
		return "drop-after"
	case f.slow > 0:
		return "slow " + f.slow.String()
	}
	return "none"
}

// Per-attempt probabilities of the faults of a charge request, stacked in
// this order; the rest of the unit interval is no fault.
var chargeFaults = []struct {
	p float64
	f reqFault
}{
	{0.05, reqFault{refuse: true}},
	{0.05, reqFault{synth: synthRateLimit}},
	{0.04, reqFault{synth: synthUnavailable}},
	{0.03, reqFault{synth: synthConflict}},
	{0.02, reqFault{synth: synthEcho}},
	{0.05, reqFault{pre: true}},
	{0.05, reqFault{fake: fakes.Mid}},
	{0.04, reqFault{fake: fakes.Internal}},
	{0.08, reqFault{post: true}},
}

// pStorm is the chance that a call meets a provider it cannot reach at all
// (every attempt refused, or every attempt rate-limited): the refusals
// that let today's client report "failed".
const pStorm = 0.05

// drawFault draws the fault of attempt n of call c.
func (w *world) drawFault(c *call, rq reqInfo, n int) reqFault {
	if !w.faultsOn.Load() {
		return reqFault{}
	}
	id, intent := c.id, c.intent()
	if !rq.charge {
		return w.lookupFault(id, intent, n)
	}
	if w.d.chance(pStorm, "storm", intent, id) {
		if w.d.chance(0.5, "storm-kind", intent, id) {
			return reqFault{refuse: true}
		}
		return reqFault{synth: synthRateLimit}
	}
	var f reqFault
	u, acc := w.d.u("charge-fault", intent, id, n), 0.0
	for _, cf := range chargeFaults {
		if acc += cf.p; u < acc {
			f = cf.f
			break
		}
	}
	if f.synth == synthConflict && w.prov.name() == "2c2p" {
		f = reqFault{} // 2C2P has no notion of a key in flight
	}
	if f.synth == synthEcho {
		f.cut = 4 + w.d.intn(16, "echo-cut", intent, id, n)
	}
	if f == (reqFault{}) && w.d.chance(0.06, "slow", intent, id, n) {
		f.slow = w.d.between(2*time.Second, 40*time.Second, "slow-by", intent, id, n)
	}
	return f
}

func (w *world) lookupFault(id, intent string, n int) reqFault {
	switch u := w.d.u("lookup-fault", intent, id, n); {
	case u < 0.05:
		return reqFault{refuse: true}
	case u < 0.10:
		return reqFault{synth: synthUnavailable}
	case u < 0.14:
		return reqFault{post: true}
	}
	return reqFault{}
}
