package sim

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// The checks. Each is named in every violation it reports, and can be
// switched off with -sim.checks.
const (
	checkDoubleCharge    = "double-charge"          // money moved twice for one intent
	checkFalseFailed     = "false-failed"           // failed reported after money moved
	checkFalseSuccess    = "false-success"          // succeeded reported, the provider shows no charge
	checkPendingSuccess  = "pending-as-success"     // succeeded reported for a pending charge (issue 9)
	checkLeaseAtSend     = "lease-at-send"          // a request left without its sender holding the lease
	checkConcurrentSend  = "concurrent-send"        // two flights of one intent on the wire at once
	checkKeyNotStored    = "key-not-stored"         // a request left with a key the store does not hold
	checkStaleKey        = "stale-key-resend"       // a key resent after the provider forgot it
	checkUnsettled       = "unsettled"              // after the quiet phase, money moved and the store does not say so
	checkSecret          = "secret"                 // a secret in the store, an error or a log line
	checkStaleLease      = "stale-lease"            // in progress elsewhere, with nobody working on it
	checkWriteAfterClose = "write-after-close"      // a store write after the application closed the client
	checkImpatient       = "impatient-caller"       // a caller who stopped waiting stopped the flight (issue 9)
	checkStoreDamage     = "store-damage"           // a damaged file store opened as a fresh one, or crashed
	checkLostCreate      = "reserve-created-lost"   // Reserve said Created=false for a record nobody was told it created
	checkFalsePending    = "false-pending"          // pending reported without the charge to show, or for one the provider does not hold pending
	checkAttemptOrder    = "attempt-open"           // an attempt began while an earlier one was not definitely failed
	checkSettledAnswer   = "settled-answer"         // a Charge of an intent the store holds succeeded did not answer the success
	checkOpFalseFailed   = "op-false-failed"        // a refund, capture or cancel told failed, and the provider made it
	checkOpFalseSuccess  = "op-false-success"       // one told succeeded that the provider did not make, or failed
	checkOpMoney         = "op-money"               // refunded twice or beyond the charge, captured beyond the authorisation, ...
	checkOpUnsettled     = "op-unsettled"           // after the quiet phase, an operation made and the store does not say so
	checkCheckoutDouble  = "checkout-double-charge" // checkout.go: the provider holds two charges for one checkout
	checkCheckoutReplay  = "checkout-replay"        // a replay the guard gave is not byte for byte the answer it stored
	checkCheckoutFalse   = "checkout-false-answer"  // a 200 for a charge the provider does not hold, a 402 for a key that charged
	checkCheckoutSettled = "checkout-unsettled"     // after the quiet phase a checkout whose money moved is not known paid to its frontend
	checkCheckoutAnswer  = "checkout-answer"        // the frontend got an answer it cannot get (400, 422, a 500 corrupt)
	checkCheckoutTwice   = "checkout-handler-twice" // the handler ran again for a key after an answer the guard had to stand by
)

// allChecks lists every check with what it stands for.
var allChecks = []string{checkDoubleCharge, checkFalseFailed, checkFalseSuccess, checkPendingSuccess,
	checkLeaseAtSend, checkConcurrentSend, checkKeyNotStored, checkStaleKey, checkUnsettled, checkSecret,
	checkStaleLease, checkWriteAfterClose, checkImpatient, checkStoreDamage, checkLostCreate,
	checkFalsePending, checkAttemptOrder, checkSettledAnswer,
	checkOpFalseFailed, checkOpFalseSuccess, checkOpMoney, checkOpUnsettled,
	checkCheckoutDouble, checkCheckoutReplay, checkCheckoutFalse, checkCheckoutSettled, checkCheckoutAnswer,
	checkFailedResent, checkFailedCharged, checkOpFailedLater, checkRefusedPaid, checkCheckoutTwice}

// violation is one broken promise, with the story of its intent.
type violation struct {
	check, intent, msg string
	hint               string // which known bug the evidence points at (hints.go), if any
	story              []event
}

// oracle collects a seed's violations: one per check and intent (the
// first; later ones are only counted).
type oracle struct {
	w       *world
	enabled map[string]bool
	mu      sync.Mutex
	list    []violation
	seen    map[string]int
	fatals  []string
}

func newOracle(w *world, enabled map[string]bool) *oracle {
	return &oracle{w: w, enabled: enabled, seen: map[string]int{}}
}

func (o *oracle) report(check, intent, hint, format string, args ...any) {
	if !o.enabled[check] {
		return
	}
	msg := fmt.Sprintf(format, args...)
	o.w.tr.add(intent, "ORACLE", "VIOLATION %s [%s]: %s", check, hint, msg)
	o.mu.Lock()
	defer o.mu.Unlock()
	k := check + "\x00" + intent
	if o.seen[k]++; o.seen[k] > 1 {
		return
	}
	o.list = append(o.list, violation{check: check, intent: intent, msg: msg, hint: hint})
}

// fatal records a failure of the simulator itself, not of the SDK.
func (o *oracle) fatal(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.fatals = append(o.fatals, fmt.Sprintf(format, args...))
}

// atReturn judges an answer when its caller gets it: failed must mean no
// money moved, succeeded must be a charge the provider shows as made, and
// "in progress elsewhere" must have somebody working elsewhere.
func (o *oracle) atReturn(c *call, res result) {
	w := o.w
	w.noteFailed(c, res)
	switch res.out {
	case outFailed:
		if n := o.chargedUnder(c, res.key); n > 0 {
			o.report(checkFalseFailed, c.o.id, o.w.falseFailedHint(c), "%s was told failed (%v) but the provider holds %d charge(s) %s", c.who(), res.err, n, under(res.key))
		}
	case outSucceeded:
		switch t := w.prov.chargeTruth(c.o, res.chargeID); {
		case t == truthCharged:
		case t == truthPending || res.chargePending:
			o.report(checkPendingSuccess, c.o.id, hintPending, "%s was told succeeded for a pending charge %s, which the provider shows %s", c.who(), res.chargeID, t)
		default:
			o.report(checkFalseSuccess, c.o.id, "", "%s was told succeeded for charge %q, which the provider shows %s", c.who(), res.chargeID, t)
		}
	case outPending:
		switch t := w.prov.chargeTruth(c.o, res.chargeID); {
		case res.chargeID == "":
			o.report(checkFalsePending, c.o.id, hintPending, "%s was told pending without the charge to show the customer (%v)", c.who(), res.err)
		case t == truthNone:
			// (Declined is not judged: a pending answer from the store
			// after a failed lookup is stale, not false: no money moved.)
			o.report(checkFalsePending, c.o.id, hintPending, "%s was told pending for charge %s, which the provider shows %s", c.who(), res.chargeID, t)
		}
	}
	if res.inProgress && c.get().refusedLease {
		o.staleLease(c)
	}
	// (An authorisation answers pending until captured, failed once
	// cancelled: it is judged by its operations.)
	if c.settledBefore && c.o.kind != "auth" && res.out != outSucceeded && !c.get().zombie && !c.get().cancelled && !res.storeFailed {
		o.report(checkSettledAnswer, c.o.id, "", "%s charged an intent the store held succeeded and was told %s (%v)", c.who(), res.out, res.err)
	}
}

// chargedUnder counts the provider's charges of c's intent made with key,
// or, when key is empty (a request refused before it named an attempt),
// those made before c began: another caller may charge the intent while
// the refusal is on its way back, which the refusal says nothing of.
func (o *oracle) chargedUnder(c *call, key string) int {
	ord := c.o
	if key == "" {
		return c.chargedAtStart
	}
	if rec, ok, err := o.w.load(context.Background(), ord.id); err == nil && ok && rec.key == key && rec.state != "failed" {
		return 0 // a later attempt carries the key again (it never reached the provider before)
	}
	return o.w.prov.chargedKeys(ord)[key]
}

func under(key string) string {
	if key == "" {
		return "for the intent"
	}
	return "made with its key " + key
}

// staleLease judges an answer "in progress elsewhere" given because the
// store's lease was held: the holder must be a call still running, or one
// whose process died or whose release was lost at most staleBound ago.
func (o *oracle) staleLease(c *call) {
	w := o.w
	rec, ok, err := w.load(context.Background(), c.o.id)
	if err != nil || !ok {
		return
	}
	w.mu.Lock()
	holder := w.claims[c.o.id]
	w.mu.Unlock()
	if holder == nil || holder.get().owner != rec.owner {
		return // a holder the simulator did not see claim (it cannot judge)
	}
	hs := holder.get()
	if hs.active && !hs.zombie {
		return
	}
	if hs.cancelled && !hs.zombie && !holder.flightOver() {
		return // its caller left, its flight goes on, and holds the lease by right
	}
	// Judged when the store gave its answer: a pause after it makes the
	// answer stale, not false.
	age := c.reservedAt().Sub(w.clock.origin) - hs.ended
	// A store clock set back lengthens every lease it granted before, by
	// each step since (seeds 1694, 1719: a step back after a forward one
	// leaves the net offset ahead, but the lease longer all the same).
	granted := w.clock.origin.Add(hs.ended - simLease) // the earliest a lease still held at its end was stamped
	bound := staleBound + max(-time.Duration(w.storeOff.Load()), w.setBackSince(granted), 0)
	if (hs.zombie || hs.grace) && age <= bound {
		return
	}
	if w.crashRevived(c.o.id, c.reservedAt(), bound) {
		return // a store crash lost the release: the lease stands again, for one lease (the contract allows it)
	}
	why := "ended normally"
	switch {
	case hs.zombie:
		why = "died with its process"
	case hs.grace:
		why = "lost a store reply"
	}
	o.report(checkStaleLease, c.o.id, staleHint(holder), "%s was told in progress elsewhere, but the lease holder %s %s %s ago; the lease runs until %s",
		c.who(), holder.who(), why, age.Round(1e9), fmtAt(rec.leaseUntil))
}

// final runs the checks that judge the whole seed, after the quiet phase.
func (o *oracle) final(ctx context.Context) {
	w := o.w
	for _, ord := range w.orders {
		if n := w.prov.charges(ord); n > 1 {
			o.report(checkDoubleCharge, ord.id, w.doubleHint(ord), "the provider made %d charges for the intent", n)
		}
		o.settled(ctx, ord)
		o.attempts(ctx, ord)
	}
	if w.opsOn() {
		o.finalOps(ctx)
	}
	o.finalFailed(ctx)
	o.secrets(ctx)
}

// settled checks that an intent whose money moved (or that the provider
// declined) is closed in the store once the faults stopped and everyone
// resumed what they knew of.
func (o *oracle) settled(ctx context.Context, ord *order) {
	w := o.w
	t := w.prov.truth(ord)
	rec, ok, err := w.load(ctx, ord.id)
	if err != nil {
		o.fatal("final load of %s: %v", ord.id, err)
		return
	}
	ord.mu.Lock()
	closedOnce := ord.closed
	ord.mu.Unlock()
	switch {
	case !ok && closedOnce: // settled, then expired: what the store may do
	case t == truthCharged && (!ok || rec.state != "succeeded"):
		o.report(checkUnsettled, ord.id, w.unsettledHint(ord), "after the quiet phase the provider shows the intent charged, the store %s", recState(rec, ok))
	case t == truthDeclined && ok && len(rec.past) == 0 && !rec.closed && rec.state != "pending" && w.prov.name() != "ownapi" && !w.unprovable(rec):
		// (Judged for an intent of one attempt only: the provider's truth
		// is the intent's, and a later attempt may rightly stay open after
		// an earlier one's decline.)
		// (The own API's lookup shows charges only: a decline whose
		// answer was lost cannot be found, and stays open by design.)
		o.report(checkUnsettled, ord.id, w.unsettledHint(ord), "after the quiet phase the provider shows the intent declined, the store %s", recState(rec, ok))
	}
}

// attempts checks an intent's attempts as the store keeps them: every
// attempt before the current one ended failed (a new attempt only after a
// definite failure), and no failed attempt's key charged the customer.
func (o *oracle) attempts(ctx context.Context, ord *order) {
	rec, ok, err := o.w.load(ctx, ord.id)
	if err != nil || !ok {
		return
	}
	keys := o.w.prov.chargedKeys(ord)
	// A caller's key whose attempts never reached the provider may carry a
	// later attempt: a charge with it is that attempt's, not a failed one's.
	live := map[string]bool{}
	if rec.state != "failed" {
		live[rec.key] = true
	}
	failed := map[string]int{}
	for _, p := range rec.past {
		if p.state != "failed" {
			o.report(checkAttemptOrder, ord.id, "", "attempt %d is in the history as %s: attempt %d began while it was unsettled", p.attempt, p.state, p.attempt+1)
			live[p.key] = true
			continue
		}
		failed[p.key] = p.attempt
	}
	if rec.state == "failed" {
		failed[rec.key] = rec.attempt
	}
	for key, n := range failed {
		if c := keys[key]; c > 0 && key != "" && !live[key] {
			o.report(checkFalseFailed, ord.id, "", "the store holds attempt %d failed, but the provider made %d charge(s) with its key %s", n, c, key)
		}
	}
}

// unprovable reports an open attempt that no lookup can settle by design:
// Stripe's search lags writes, so an empty search never proves that an
// attempt made nothing; past KeyRetention its key is never resent either.
// It stays unknown (ErrKeyExpired) for the operator to reconcile, rather
// than risk a second charge.
func (w *world) unprovable(rec recView) bool {
	return w.prov.name() == "stripe" && w.storeNow().Sub(rec.createdAt) >= keyRetention
}

func recState(rec recView, ok bool) string {
	if !ok {
		return "has no record"
	}
	return "holds it " + rec.state
}

// secrets looks for any ten characters of a secret in the store's
// records, the errors callers got, and the logs.
func (o *oracle) secrets(ctx context.Context) {
	w := o.w
	type hay struct{ where, intent, text string }
	hays := []hay{{"a log line", "", w.logs.String()}}
	w.mu.Lock()
	for _, e := range w.errs {
		hays = append(hays, hay{"an error returned to a caller", e.intent, e.text})
	}
	w.mu.Unlock()
	for _, ord := range w.orders {
		if rec, ok, _ := w.load(ctx, ord.id); ok {
			hays = append(hays, hay{"the store's record", ord.id, string(rec.blob)})
		}
	}
	for _, sec := range w.secretList() {
		name, s := sec[0], sec[1]
		for _, h := range hays {
			if frag := leaked(h.text, s); frag != "" {
				o.report(checkSecret, h.intent, hintSecret, "%s (%q) found in %s: …%s…", name, frag, h.where, around(h.text, frag))
			}
		}
	}
}

// secretList names every secret of the seed, in a fixed order.
func (w *world) secretList() [][2]string {
	out := [][2]string{{"the API credentials", secretToken(w.d, "creds", 0)}}
	for _, ord := range w.orders {
		out = append(out, [2]string{"the payment token of " + ord.id, ord.source},
			[2]string{"the other payment token of " + ord.id, ord.otherSource})
	}
	for i, s := range w.prov.secrets() {
		out = append(out, [2]string{fmt.Sprintf("client secret #%d", i), s})
	}
	return out
}

// leaked returns a ten-character piece of secret found in text, or "".
func leaked(text, secret string) string {
	const n = 10
	for i := 0; i+n <= len(secret); i++ {
		if strings.Contains(text, secret[i:i+n]) {
			return secret[i : i+n]
		}
	}
	return ""
}

// around quotes the text near frag.
func around(text, frag string) string {
	i := strings.Index(text, frag)
	lo, hi := max(i-60, 0), min(i+len(frag)+20, len(text))
	return strings.ReplaceAll(text[lo:hi], "\n", " ")
}

// summary lists the violations, sorted, for the report of a seed.
func (o *oracle) violations() []violation {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := append([]violation(nil), o.list...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].check < out[j].check })
	return out
}
