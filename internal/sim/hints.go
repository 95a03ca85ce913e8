package sim

import (
	"fmt"
	"strings"
	"time"
)

// Hints name the known bug a violation's evidence points at: the items of
// issue 8 §2 and of issue 9. They are read off what the simulator saw
// (who held the lease, who released it, what Expire deleted), not guessed
// from the message, and they are only hints: the story is the evidence.
const (
	hintExpiry      = "issue8#1 expiry by CreatedAt"
	hintSkewKey     = "issue8#2 key age across skewed clocks"
	hintSkewLease   = "issue8#2 lease judged across skewed clocks"
	hintSkewLookup  = "issue8#2 lookup window from a skewed CreatedAt"
	hintLeaseRanOut = "issue8#3 sent after its lease ran out"
	hintTwoFlights  = "issue8#4 two flights in one process"
	hintSettleFree  = "issue8#5 Settle freed a running flight's lease"
	hintMismatch    = "issue8#6 mismatched request kept its lease"
	hintCrashStall  = "issue8#7 crash stalls the lease"
	hintStarved     = "issue8#8 starved behind pendings (no cursor)"
	hintClose       = "issue8#9 no Client.Close"
	hintDamage      = "issue8#10 damaged file store"
	hintRedisRetry  = "issue8#11 Redis reply lost, script re-run"
	hintPending     = "issue9#1 pending read as succeeded"
	hintMismatchRes = "issue9#2 the resume is refused as other parameters"
	hintSecret      = "issue9#7 secrets kept or cut before redaction"
	hintImpatient   = "issue9#8 impatient caller stops the flight"
)

// leaseWords describes a record's lease for a message.
func (w *world) leaseWords(rec recView) string {
	if rec.owner == "" {
		return "the store holds the lease free (released)"
	}
	return fmt.Sprintf("the store has it held by %s until %s", w.ownerName(rec.owner), fmtAt(rec.leaseUntil))
}

// leaseHint says why a sender did not hold its lease when it sent.
func (w *world) leaseHint(c *call, rec recView) string {
	st := c.get()
	w.mu.Lock()
	rel := w.released[c.intent()]
	w.mu.Unlock()
	switch {
	case rec.owner == "" && rel != nil && rel.op == "settle":
		return hintSettleFree
	case rec.owner == st.owner && !rec.leaseUntil.After(c.reservedAt()):
		return hintSkewLease // over by true time the moment it was taken
	case rec.owner != st.owner && rec.owner != "" && w.skewed():
		return hintSkewLease
	}
	return hintLeaseRanOut
}

// overlapHint says why two flights were on the wire at once.
func (w *world) overlapHint(c, other *call) string {
	w.mu.Lock()
	rel := w.released[c.intent()]
	w.mu.Unlock()
	switch {
	case c.inst == other.inst:
		return hintTwoFlights
	case rel != nil && rel.op == "settle":
		return hintSettleFree
	case w.skewed():
		return hintSkewLease
	}
	return hintLeaseRanOut
}

// falseFailedHint says how a call came to report failed after money moved.
func (w *world) falseFailedHint(c *call) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rel := w.released[c.intent()]; rel != nil && rel.op == "settle" {
		return hintSettleFree
	}
	for _, o := range w.calls {
		if o.op == "charge" && o.o == c.o && o.inst == c.inst && strings.HasPrefix(o.id, c.id+"/") {
			return hintTwoFlights
		}
	}
	return hintLeaseRanOut
}

func staleHint(holder *call) string {
	hs := holder.get()
	switch {
	case hs.res.mismatch, holder.v == otherParams: // (a caller who left never read its ErrIntentMismatch)
		return hintMismatch
	case hs.zombie:
		return hintCrashStall
	case hs.grace:
		return hintCrashStall + " (a lost store reply, no heartbeat)"
	}
	return ""
}

func (w *world) doubleHint(o *order) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case len(w.lostWrites[o.id]) > 0:
		return hintStoreLoss
	case w.expired[o.id]:
		return hintExpiry
	case w.staleKeys[o.id]:
		return hintSkewKey
	}
	return ""
}

func (w *world) unsettledHint(o *order) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case len(w.lostWrites[o.id]) > 0:
		return hintStoreLoss
	case w.expired[o.id]:
		return hintExpiry
	case !w.listed[o.id] && !w.resumed[o.id]:
		return hintStarved // nobody resumed it: recovery never got past the head of Unresolved
	case w.resumeMismatch[o.id]:
		return hintMismatchRes // the record was made by other parameters: every resume is ErrIntentMismatch
	case w.staleKeys[o.id]:
		return hintSkewKey // resent after the provider forgot the key: a new charge object replaced the paid one
	case w.cfg.provider == "omise" && w.skewedLocked():
		return hintSkewLookup
	}
	return ""
}

// skewed reports whether an instance's clock is more than five seconds
// off true time (the store's clock, in the simulated world): leases and
// key ages are judged on the instances' clocks today.
func (w *world) skewed() bool { return w.skewedLocked() }

// skewedLocked reads only the seed's configuration: safe under w.mu.
func (w *world) skewedLocked() bool {
	for _, s := range w.cfg.skews {
		if s > 5*time.Second || s < -5*time.Second {
			return true
		}
	}
	return false
}
