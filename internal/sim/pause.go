package sim

import (
	"context"
	"fmt"
	"time"
)

// A pause holds one call at a point of its life (after its Reserve,
// before its request is written, after it is written) and runs a scenario
// while it waits: the interleavings a fleet meets, forced rather than left
// to the scheduler, so that a seed replays them.
type scenario int

const (
	scTakeover    scenario = iota // the lease runs out; another instance charges the intent
	scLeasePass                   // the lease runs out (a GC pause, a slow Reserve)
	scSameProcess                 // the same process charges the intent with the other key choice
	scWebhook                     // a webhook Settles the intent here; then another instance charges it
	scKill                        // the process is killed; a new one starts on the same store
	scImpatient                   // the caller stops waiting; the application shuts the client down
	scCount
)

func (s scenario) String() string {
	return [...]string{"takeover", "lease-runs-out", "same-process", "webhook", "kill", "impatient"}[s]
}

// Chance of a pause at each point of a call, while faults are on.
var pauseRate = map[string]float64{"reserve": 0.04, "before-write": 0.05, "after-write": 0.05}

// Scenario weights, in scenario order.
var scenarioWeight = [scCount]float64{0.24, 0.12, 0.18, 0.16, 0.15, 0.15}

// maybePause pauses c at where, if the seed says so: at most once per
// call, never in a call a pause started, never once faults are off, never
// in a refund, capture or cancel (their concurrency is the chaos tests').
func (w *world) maybePause(c *call, where string) {
	if c == nil || c.o == nil || c.nested || c.opID != "" || !w.faultsOn.Load() {
		return
	}
	st := c.get()
	if st.paused || st.zombie || !w.d.chance(pauseRate[where], "pause", where, c.o.id, c.id) {
		return
	}
	c.set(func(c *call) { c.paused = true })
	// Let what the call just started reach its first wait (the lease's
	// heartbeat): time jumps in the scenario must find it waiting, in
	// every run of the seed.
	w.waitQuiet(nil)
	sc := w.pickScenario(c, where)
	c.trace("PAUSE at %s: %s", where, sc)
	w.play(c, sc, where)
	c.trace("resume after pause (%s)", sc)
}

func (w *world) pickScenario(c *call, where string) scenario {
	u, acc := w.d.u("scenario", where, c.o.id, c.id)*sum(scenarioWeight[:]), 0.0
	for s, p := range scenarioWeight {
		if acc += p; u < acc {
			return scenario(s)
		}
	}
	return scTakeover
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// play runs scenario s for the paused call c.
func (w *world) play(c *call, s scenario, where string) {
	past := simLease + w.d.between(time.Second, time.Minute, "past-lease", c.id)
	switch s {
	case scTakeover:
		w.advance(past, "the paused call's lease runs out")
		w.meanwhile(c, func(id string) { w.charge(context.Background(), w.other(c.inst, 0), c.o, canonical, id) })
	case scLeasePass:
		w.advance(past, "a pause longer than the lease")
	case scSameProcess:
		w.meanwhile(c, func(id string) { w.charge(context.Background(), c.inst, c.o, otherKey, id) })
	case scWebhook:
		w.meanwhile(c, func(id string) {
			w.settle(context.Background(), c.inst, c.o, id+"w")
			w.charge(context.Background(), w.other(c.inst, 1), c.o, canonical, id+"c")
		})
	case scKill:
		w.kill(c.inst, fmt.Sprintf("killed while %s was paused at %s", c.id, where))
	case scImpatient:
		w.meanwhile(c, func(string) { w.impatient(c) })
	}
}

// meanwhile runs f while c waits, and returns when f is done or has gone
// quiet (it may be waiting for c itself).
func (w *world) meanwhile(c *call, f func(id string)) {
	done := make(chan struct{})
	w.bg.Add(1)
	go func() {
		defer w.bg.Done()
		defer close(done)
		f(c.id + "/" + c.inst.name)
	}()
	w.waitQuiet(done)
}

// impatient is the caller of c walking away (a browser that disconnects),
// then the application shutting its client down and restarting.
func (w *world) impatient(c *call) {
	c.set(func(c *call) { c.cancelled = true })
	c.trace("the caller stops waiting (context cancelled)")
	c.cancel()
	w.mu.Lock()
	w.abandoned = append(w.abandoned, c)
	w.mu.Unlock()
	w.waitQuiet(c.returned)
	ctx, cancel := context.WithTimeout(context.Background(), quietCap)
	defer cancel()
	inst := c.inst
	err := inst.cl.close(ctx)
	inst.closed.Store(true)
	w.tr.add("", inst.name, "the application closes its client and restarts (close: %v)", err)
	w.restartSlot(inst)
}

func (w *world) advance(d time.Duration, why string) {
	w.clock.Advance(d)
	w.tr.add("", "world", "time +%s: %s", d.Round(time.Second), why)
}
