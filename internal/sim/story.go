package sim

import (
	"context"
	"fmt"
	"time"
)

// The step loop: one seed's story, drawn step by step from the seed's own
// stream (only this loop's goroutine draws from it, so the order of draws
// is the order of steps). Each step is one thing the shop, its customers,
// its operators or its hosts do.

// Weights of the kinds of step, once every order has been charged or when
// the loop chooses not to start one.
var stepWeights = []struct {
	kind string
	w    float64
}{
	{"retry", 22},    // a caller charges an order again whose answer was not a success
	{"redeliver", 8}, // the same charge request arrives again (a queue, a double click)
	{"mismatch", 5},  // the order is charged again with other parameters
	{"settle", 7},    // a webhook settles the order
	{"advance", 22},  // time passes
	{"expire", 7},    // the operator's retention sweep runs
	{"customer", 9},  // a customer finishes (or fails) 3-D Secure
	{"kill", 3},      // a host dies while idle
	{"op", 14},       // a refund, a capture or cancel, or one asked for again (with -sim.ops)
	// Only in a world of a crash model (crashstore.go): weightless
	// elsewhere, so that the other worlds draw the stories they always drew.
	{"store-crash", 6}, // the database server crashes (or the power goes)
	{"store-clock", 3}, // the database server's clock steps
}

func (w *world) step(ctx context.Context, i int) {
	id := fmt.Sprintf("s%d", i)
	if un := w.unstarted(); len(un) > 0 && (len(un) >= w.cfg.steps-i || w.rng.Float64() < 0.45) {
		w.charge(ctx, w.pickInst(), un[0], canonical, id)
		return
	}
	kind := w.pickKind()
	if w.catchUp > 0 {
		// After a long jump the shop catches up: retries, webhooks,
		// the sweep, and the duplicates a queue delivers late.
		w.catchUp--
		kind = []string{"retry", "settle", "expire", "redeliver"}[w.rng.IntN(4)]
	}
	switch kind {
	case "retry":
		w.retry(ctx, id)
	case "redeliver":
		w.again(ctx, id, canonical)
	case "mismatch":
		w.again(ctx, id, otherParams)
	case "settle":
		if o := w.pickOrder(nil); o != nil {
			w.settle(ctx, w.pickInst(), o, id)
		}
	case "advance":
		w.jump(ctx)
	case "expire":
		w.sweep(ctx)
	case "customer":
		w.customer(ctx, id)
	case "kill":
		w.kill(w.pickInst(), "the host dies")
	case "op":
		if w.opsOn() {
			w.opStep(ctx, id)
		}
	case "store-crash":
		w.storeCrash(ctx)
	case "store-clock":
		w.stepStoreClock("NTP or an operator")
	}
}

// retry is a caller charging again an order whose answer was not a
// success, from the instance it was waiting on if that one still runs.
func (w *world) retry(ctx context.Context, id string) {
	o := w.pickOrder(func(o *order) bool { st, _, _ := o.snapshot(); return st != outSucceeded })
	if o == nil || !w.mayResend(o) {
		return
	}
	_, caller, _ := o.snapshot()
	if caller == nil || caller.dead.Load() || caller.closed.Load() {
		caller = w.pickInst()
	}
	w.charge(ctx, caller, o, canonical, id)
}

// again is an order charged again from any instance: the same request
// delivered twice, or one with other parameters.
func (w *world) again(ctx context.Context, id string, v variant) {
	if o := w.pickOrder(nil); o != nil && w.mayResend(o) {
		w.charge(ctx, w.pickInst(), o, v, id)
	}
}

// jump moves time on; stores sweep hourly (the file store's default), and
// after a day or more the shop catches up.
func (w *world) jump(ctx context.Context) {
	d := w.pickJump()
	w.advance(d, "the world goes on")
	if d >= time.Hour {
		w.sweep(ctx)
	}
	if d >= 23*time.Hour {
		w.catchUp = 4
	}
}

func (w *world) pickKind() string {
	weight := func(kind string, x float64) float64 {
		crashable := w.crash != nil || (w.cfg.store == "redis" && w.opt.redisLoss && kind == "store-crash")
		if (kind == "store-crash" || kind == "store-clock") && !crashable {
			return 0
		}
		if w.cfg.theme == "long-haul" && (kind == "redeliver" || kind == "expire") {
			return 2 * x
		}
		return x
	}
	total := 0.0
	for _, s := range stepWeights {
		total += weight(s.kind, s.w)
	}
	u := w.rng.Float64() * total
	for _, s := range stepWeights {
		if u -= weight(s.kind, s.w); u < 0 {
			return s.kind
		}
	}
	return "advance"
}

// pickJump draws how far time moves: seconds, past a lease, around the
// key windows (23 h the client's, 24 h the provider's), hours, or past
// the store's retention.
func (w *world) pickJump() time.Duration {
	r := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(w.rng.Float64()*float64(hi-lo)) }
	u := w.rng.Float64()
	switch w.cfg.theme {
	case "long-haul":
		if u < 0.35 {
			return storeRetention + r(time.Hour, 2*24*time.Hour)
		}
		u = (u - 0.35) / 0.65
	case "skewed":
		if u < 0.35 {
			return r(23*time.Hour, 27*time.Hour)
		}
		u = (u - 0.35) / 0.65
	}
	switch {
	case u < 0.40:
		return r(time.Second, 20*time.Second)
	case u < 0.62:
		return simLease + r(time.Second, 2*time.Minute)
	case u < 0.77:
		return r(23*time.Hour, 26*time.Hour)
	case u < 0.87:
		return r(time.Hour, 3*time.Hour)
	}
	return storeRetention + r(time.Hour, 2*24*time.Hour)
}

func (w *world) unstarted() []*order {
	var out []*order
	for _, o := range w.orders {
		o.mu.Lock()
		if !o.started {
			out = append(out, o)
		}
		o.mu.Unlock()
	}
	return out
}

// pickOrder picks a started order that ok accepts (any, if ok is nil).
func (w *world) pickOrder(ok func(*order) bool) *order {
	var cands []*order
	for _, o := range w.orders {
		o.mu.Lock()
		started := o.started
		o.mu.Unlock()
		if started && (ok == nil || ok(o)) {
			cands = append(cands, o)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	return cands[w.rng.IntN(len(cands))]
}

func (w *world) pickInst() *instance {
	live := w.live()
	return live[w.rng.IntN(len(live))]
}

// mayResend keeps the shop honest: nobody charges an order again more
// than the store's retention after it was settled, which is what the
// store's retention promises to cover.
func (w *world) mayResend(o *order) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed && w.clock.Now().Sub(o.closedAt) >= storeRetention-time.Hour {
		w.tr.add(o.id, "world", "(a charge again is not sent: settled %s ago, past the store's retention)",
			w.clock.Now().Sub(o.closedAt).Round(time.Hour))
		return false
	}
	return true
}

// customer plays a customer on the provider's page for a pending charge
// the shop showed: most pay, some fail, and the ones never picked abandon.
func (w *world) customer(ctx context.Context, id string) {
	var cands []*order
	for _, o := range w.orders {
		if _, _, shown := o.snapshot(); shown != "" && w.prov.truth(o) == truthPending {
			cands = append(cands, o)
		}
	}
	if len(cands) == 0 {
		return
	}
	o := cands[w.rng.IntN(len(cands))]
	_, _, shown := o.snapshot()
	ok := w.rng.Float64() < 0.75
	w.prov.complete(o, shown, ok)
	w.tr.add(o.id, "customer", "the customer finishes the payment page of %s: paid=%v (now %s)", w.short(shown), ok, w.prov.truth(o))
	if w.rng.Float64() < 0.7 { // the provider's webhook arrives (some are lost)
		w.settle(ctx, w.pickInst(), o, id+"wh")
	}
}

// sweep runs the operator's Expire, and traces which records it deleted.
func (w *world) sweep(ctx context.Context) {
	before := map[string]bool{}
	for _, o := range w.orders {
		_, ok, _ := w.load(ctx, o.id)
		before[o.id] = ok
	}
	s, leave, err := w.handle().enter()
	if err != nil {
		return
	}
	n, err := expire(ctx, s, storeRetention)
	leave()
	w.tr.add("", "operator", "Expire sweep (retention %s): %d deleted, err %v", storeRetention, n, err)
	for _, o := range w.orders {
		if _, ok, _ := w.load(ctx, o.id); before[o.id] && !ok {
			w.mu.Lock()
			w.expired[o.id] = true
			w.mu.Unlock()
			o.mu.Lock()
			closedAt := o.closedAt
			o.mu.Unlock()
			w.tr.add(o.id, "operator", "record deleted by Expire (it was closed at %s)", fmtAt(closedAt))
			w.judgeExpired(o, closedAt)
		}
	}
}
