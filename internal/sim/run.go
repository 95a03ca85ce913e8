package sim

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"
)

// seedResult is what one seed found.
type seedResult struct {
	seed       uint64
	cfg        seedConfig
	violations []violation
	fatals     []string
	took       time.Duration
	w          *world
}

// runSeed runs one seed from start to oracle.
func runSeed(seed uint64, opt *options) seedResult {
	start := time.Now()
	w := newWorld(seed, opt)
	w.fam = newFamily(goid())
	w.fam.seed = seed
	res := seedResult{seed: seed, cfg: w.cfg, w: w}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := w.start(ctx); err != nil {
		res.fatals = []string{err.Error()}
		return res
	}
	defer w.cleanup()
	if opt.checkout {
		w.checkoutStory(ctx)
		w.or.checkoutFinal()
	} else {
		for i := range w.cfg.steps {
			w.step(ctx, i)
			w.settleStep()
			w.crashInWindow(ctx)
		}
		w.quiet(ctx)
	}
	w.or.final(ctx)
	res.violations = w.or.violations()
	for i := range res.violations {
		res.violations[i].story = w.tr.story(res.violations[i].intent, opt.storyLen)
	}
	res.fatals = append(res.fatals, w.or.fatals...)
	res.took = time.Since(start)
	return res
}

// settleStep waits for what a step left running: the calls its pauses
// started, and flights whose callers left, which end by recording their
// outcome (a Resolve), or else go quiet.
func (w *world) settleStep() {
	w.bg.Wait()
	w.mu.Lock()
	left := w.abandoned
	w.abandoned = nil
	w.mu.Unlock()
	for _, c := range left {
		w.waitQuiet(c.resolved)
	}
	w.landLate()
}

// quiet is the end of every seed: faults stop, hosts restart, time passes
// beyond every lease, and everyone resumes what they know of, by their
// waiting callers and by each instance's recovery worker (Unresolved).
func (w *world) quiet(ctx context.Context) {
	w.faultsOn.Store(false)
	w.tr.add("", "world", "QUIET: the faults stop")
	w.advance(restartDelay, "restarts are done")
	w.resumeAll(ctx, "q1.")
	w.resumeOps(ctx, "q1.")
	// Past every lease on the store's clock too: a step back of that
	// clock lengthens the leases it granted before it (seeds 715, 1111,
	// 1297, 1386, 1798: a crash reopens a record whose close it lost,
	// under a lease that then runs hours longer).
	w.advance(simLease+time.Minute+w.setBackSince(time.Time{}), "past every lease")
	w.resumeAll(ctx, "q2.")
	w.resumeOps(ctx, "q2.")
}

func (w *world) resumeAll(ctx context.Context, phase string) {
	n := 0
	id := func() string { n++; return fmt.Sprintf("%s%d", phase, n) }
	for _, inst := range w.live() {
		for _, o := range w.orders {
			if st, caller, _ := o.snapshot(); caller == inst && st == outUnknown && w.mayResend(o) {
				w.resume(ctx, inst, o, id())
			}
		}
		w.recover(ctx, inst, id)
		w.bg.Wait()
	}
}

// recover is an instance's recovery worker: it pages through Unresolved
// and charges each intent again with the shop's request, round after round,
// until a round brings nothing new.
func (w *world) recover(ctx context.Context, inst *instance, id func() string) {
	var last []string
	for range 6 {
		ids := w.unresolved(ctx, inst, id())
		if len(ids) == 0 || slices.Equal(ids, last) {
			return
		}
		last = ids
		for _, intent := range ids {
			if o := w.byID[intent]; o != nil {
				w.resume(ctx, inst, o, id())
			}
		}
	}
}

// resume settles o in the quiet phase, as a recovery worker does: Settle
// first (a lookup by the stored record, whatever parameters made it), then
// the shop's request, then (when the open attempt was made with the other
// parameters) that request.
func (w *world) resume(ctx context.Context, inst *instance, o *order, id string) {
	res := w.settle(ctx, inst, o, id+"s")
	if res.out == outUnknown {
		res = w.charge(ctx, inst, o, canonical, id)
	}
	if res.attemptOpen {
		res = w.charge(ctx, inst, o, otherParams, id+"o")
	}
	w.mu.Lock()
	w.resumed[o.id] = true
	w.resumeMismatch[o.id] = res.mismatch
	w.mu.Unlock()
}

// unresolved reads every page Unresolved gives, up to a bound.
func (w *world) unresolved(ctx context.Context, inst *instance, id string) []string {
	c := w.newCall(ctx, inst, nil, "list", canonical, id)
	defer c.cancel()
	var all []string
	cursor := ""
	for range 50 {
		ids, next, err := inst.cl.unresolved(c.ctx, w.cfg.pageSize, cursor)
		if err != nil {
			c.trace("Unresolved: %v", err)
			break
		}
		all = append(all, ids...)
		if next == "" {
			break
		}
		cursor = next
	}
	w.tr.add("", inst.name+"/"+id, "recovery: Unresolved(%d) gives %v", w.cfg.pageSize, all)
	w.mu.Lock()
	for _, id := range all {
		w.listed[id] = true
	}
	w.mu.Unlock()
	return all
}

// cleanup closes the store and removes its files.
func (w *world) cleanup() {
	_ = w.handle().shut()
	if w.cfg.store == "filestore" {
		sc, _ := w.storeConfig()
		os.Remove(sc.path)
	}
	w.dropShared()
}
