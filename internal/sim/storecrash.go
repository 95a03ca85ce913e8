package sim

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The world's side of the crash models (crashstore.go): the server crashes
// and restarts, perhaps with the hosts of the fleet (a power cut), and its
// clock steps (NTP, an operator, a failover to a host whose clock differs).

// storeNow is the store's clock: true time, plus the crash model's offset.
// Leases and ages are judged on it, as the stores judge them.
func (w *world) storeNow() time.Time {
	return w.clock.Now().Add(time.Duration(w.storeOff.Load()))
}

// storeCrash crashes the store of a crash-model world: what its model may
// lose is lost, the server comes back (sometimes on another host, with
// another clock), and in a power cut every process of the fleet restarts
// with it. Drawn by the step loop only.
func (w *world) storeCrash(ctx context.Context) {
	cs := w.crash
	if cs == nil {
		if w.cfg.store == "redis" && w.opt.redisLoss {
			w.redisLoseDataSet(ctx)
		}
		return
	}
	power := w.rng.Float64() < 0.5
	failover := w.rng.Float64() < 0.3
	lost := cs.crash()
	w.mu.Lock()
	w.storeCrashes++
	w.lastCrash = w.clock.Now()
	for i, e := range lost {
		lost[i].intent = w.orderOf(e.intent)
		w.lostWrites[lost[i].intent] = append(w.lostWrites[lost[i].intent], e.what)
	}
	w.mu.Unlock()
	why := "the database server crashes and restarts"
	if power {
		why = "a power cut: the database server and every host restart"
	}
	w.tr.add("", "world", "STORE CRASH (%s): %s; %d acknowledged write(s) lost", cs.model, why, len(lost))
	for _, e := range lost {
		w.tr.add(e.intent, "world", "STORE CRASH lost the acknowledged %s", e.what)
	}
	if failover {
		w.stepStoreClock("the server came back on another host")
	}
	if power {
		for _, inst := range w.live() {
			w.killOne(inst, "power cut")
			w.restartSlot(inst)
		}
	}
	w.syncClosed(ctx)
}

// redisLoseDataSet is the shared Redis server restarting without
// persistence, as this seed's store sees it: every key under the seed's
// prefix is gone (whatever the store keeps there, a marker of its own
// included), while the server and the other seeds' keys stay.
func (w *world) redisLoseDataSet(ctx context.Context) {
	n := w.dropRedisKeys(ctx)
	w.mu.Lock()
	w.storeCrashes++
	w.lastCrash = w.clock.Now()
	for _, o := range w.orders {
		w.lostWrites[o.id] = append(w.lostWrites[o.id], "the whole data set")
	}
	w.mu.Unlock()
	w.tr.add("", "world", "STORE CRASH (redis without persistence): the server restarts empty; %d key(s) of this seed lost", n)
	w.syncClosed(ctx)
}

// crashRevived reports whether a store crash lost writes of intent at most
// bound before at: a release it lost gives the lease back to its holder.
func (w *world) crashRevived(intent string, at time.Time, bound time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.lostWrites[intent]) > 0 && !w.lastCrash.IsZero() && at.Sub(w.lastCrash) <= bound
}

// pCrashInWindow is the chance, after a step that left acknowledged
// writes unflushed, that the server crashes right then: a crash matters
// inside the window of loss, so the simulator looks for it there.
const pCrashInWindow = 0.12

// crashInWindow may crash the store of a crash-model world while the
// last step's writes are still unflushed. Drawn by the step loop only,
// and only in those worlds.
func (w *world) crashInWindow(ctx context.Context) {
	if w.crash == nil || w.crash.unflushed() == 0 || w.rng.Float64() >= pCrashInWindow {
		return
	}
	w.storeCrash(ctx)
}

// syncClosed makes the shop's note of closed records agree with the store
// after a crash: a close the store lost is no close (the shop's "settled,
// then expired" excuse must not cover a record the crash reopened).
func (w *world) syncClosed(ctx context.Context) {
	for _, o := range w.orders {
		rec, ok, err := w.load(ctx, o.id)
		if err != nil {
			continue
		}
		w.mu.Lock()
		expired := w.expired[o.id]
		w.mu.Unlock()
		o.mu.Lock()
		if o.closed && ((ok && !rec.closed) || (!ok && !expired)) {
			o.closed = false
		}
		o.mu.Unlock()
	}
}

// stepStoreClock steps the store's clock: mostly seconds to minutes either
// way, sometimes an hour or more back (a server set back by NTP after
// running fast), sometimes most of an hour ahead.
func (w *world) stepStoreClock(why string) {
	r := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(w.rng.Float64()*float64(hi-lo)) }
	var d time.Duration
	switch u := w.rng.Float64(); {
	case u < 0.6:
		d = r(time.Second, 2*time.Minute)
	case u < 0.85:
		d = -r(30*time.Minute, 3*time.Hour)
	default:
		// Ahead by less than the hour of slack the shop keeps on the
		// store's retention (mayResend): a clock far ahead deletes
		// records early, which is issue 16 item 4's class, played by
		// the file store's own clock, not by this model.
		d = r(5*time.Minute, 50*time.Minute)
	}
	if w.rng.Float64() < 0.5 && d > 0 && d < 2*time.Minute {
		d = -d
	}
	off := time.Duration(w.storeOff.Add(int64(d)))
	if d < 0 {
		w.mu.Lock()
		w.setBacks = append(w.setBacks, setBack{at: w.clock.Now(), by: -d})
		w.mu.Unlock()
	}
	w.tr.add("", "world", "STORE CLOCK steps %s (%s): the store's clock is now %s off true time", fmtSigned(d), why, fmtSigned(off))
}

func fmtSigned(d time.Duration) string {
	if d < 0 {
		return "-" + (-d).Round(time.Second).String()
	}
	return "+" + d.Round(time.Second).String()
}

// orderOf is the order a record belongs to: its own, or the one whose
// operation (ID "<order>-refund1", ...) it is.
func (w *world) orderOf(id string) string {
	if w.byID[id] != nil {
		return id
	}
	for _, o := range w.orders {
		if strings.HasPrefix(id, o.id+"-") {
			return o.id
		}
	}
	return id
}

// lostWrite names one write a crash lost, for the story.
type lostWrite struct{ intent, what string }

// describe names a logged write for a story.
func (e logged) describe() lostWrite {
	switch {
	case e.reserve != nil:
		return lostWrite{e.reserve.ID, fmt.Sprintf("reserve of %s attempt %d key=%s", e.reserve.Namespace, e.reserve.Attempt, e.reserve.Key)}
	case e.resolve != nil:
		return lostWrite{e.resolve.ID, fmt.Sprintf("resolve %s key=%s (durable=%v) in %s", e.resolve.State, e.resolve.Key, e.resolve.Durable, e.resolve.Namespace)}
	}
	return lostWrite{"", fmt.Sprintf("expire sweep (retention %s)", e.expire)}
}

// setBack is one step back of the store's clock: at that true time, by
// that much.
type setBack struct {
	at time.Time
	by time.Duration
}

// setBackSince is how far the store's clock has stepped back since true
// time t, summed: how much longer than it was granted a lease stamped at
// t may run on the store's clock (its net offset from true time may be
// ahead all the same). A zero t counts every step.
func (w *world) setBackSince(t time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var sum time.Duration
	for _, b := range w.setBacks {
		if !b.at.Before(t) {
			sum += b.by
		}
	}
	return sum
}
