package sim

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Errors the simulator makes stores return.
var (
	errInjected  = errors.New("sim: injected store failure")
	errLostReply = errors.New("sim: store reply lost after the write")
	errDead      = errors.New("sim: process killed")
	errLate      = errors.New("sim: the store did not answer in time (the write is still on its way)")
)

// pLateWrite is the chance that a write of a charge, a release or a
// renewal reaches the store only after its writer gave up on it (issue 16:
// late writes): the writer is told the store did not answer, and the write
// lands once the step's calls are over.
const pLateWrite = 0.012

// ledgerPollTime is how much virtual time passes per refused poll of a
// leased ledger. The client polls every few milliseconds of real time for
// about two leases; a second a poll made a poller behind a dead holder's
// 10-minute lease take 600 real polls (30 s of real sleeping, issue 20),
// so a poll stands for 15 s.
const ledgerPollTime = 15 * time.Second

// Per-call probabilities of store faults while faults are on.
const (
	pReserveErr  = 0.03
	pResolveErr  = 0.04
	pLoadErr     = 0.05
	pLostReserve = 0.02
	pLostResolve = 0.02
)

// storeSide is the simulator's half of one instance's hookedStore: it
// traces every call, injects faults, pauses slow Reserves, refuses the
// calls of a dead process and flags the writes of a closed one.
type storeSide struct {
	w    *world
	inst *instance
}

func (s *storeSide) before(ctx context.Context, sc storeCall) error {
	c := callOf(ctx)
	err := s.gate(c, sc)
	if err != nil && c != nil && sc.op == "resolve" {
		c.flightEnded()
	}
	return err
}

// gate refuses the calls of a dead process, flags the writes of a closed
// one, and draws the faults of the call.
func (s *storeSide) gate(c *call, sc storeCall) error {
	w := s.w
	if s.inst.dead.Load() {
		return errDead
	}
	write := sc.op == "reserve" || sc.op == "resolve"
	if write && s.inst.closed.Load() {
		w.or.report(checkWriteAfterClose, sc.intent, hintClose, "%s wrote to the store (%s %s) after the application closed it",
			s.inst.name, sc.op, sc.state)
	}
	if c == nil || !w.faultsOn.Load() || c.get().zombie {
		return nil
	}
	n := c.nextStoreOp(sc.op)
	if w.cfg.store == "redis" && w.redisReplyLost(sc, c, n) {
		// Every write of the Redis store is a script (issue 16: not only
		// Reserve's): a close or a release re-run finds its own write.
		c.trace("FAULT the reply to this %s's script will be lost (go-redis sends it again)", sc.op)
		w.redis.armed.Store(true)
	}
	if write && w.d.chance(pLateWrite, "late-write", sc.op, sc.intent, c.id, n) {
		c.trace("FAULT store %s %s times out: the write is still on its way", sc.op, sc.state)
		c.set(func(c *call) { c.grace = true })
		return errLate
	}
	p := map[string]float64{"reserve": pReserveErr, "resolve": pResolveErr, "load": pLoadErr}[sc.op]
	if w.d.chance(p, "store-err", sc.op, sc.intent, c.id, n) {
		c.trace("FAULT store %s fails before reaching the store", sc.op)
		if sc.op == "resolve" {
			c.set(func(c *call) { c.grace = true })
		}
		return errInjected
	}
	return nil
}

func (s *storeSide) after(ctx context.Context, sc storeCall, ans storeAnswer, err error) error {
	c := callOf(ctx)
	if c == nil {
		return nil
	}
	switch sc.op {
	case "reserve":
		return s.afterReserve(c, sc, ans, err)
	case "resolve":
		defer c.flightEnded()
		return s.afterResolve(c, sc, err)
	}
	return nil
}

func (s *storeSide) afterReserve(c *call, sc storeCall, ans storeAnswer, err error) error {
	w := s.w
	if err != nil {
		c.trace("reserve -> error %v", err)
		return nil
	}
	w.noteReserve(c, sc, ans)
	if strings.HasSuffix(sc.ns, "/ledger") && !ans.claimed && !ans.rec.closed && !w.clock.real {
		// The client polls a ledger another flight holds, sleeping in
		// real time; the lease runs out on the store's (virtual) clock.
		// Time passes while it waits, as it does in life (ledgerPollTime).
		w.clock.Advance(ledgerPollTime)
	}
	if w.faultsOn.Load() && !c.get().zombie && w.d.chance(pLostReserve, "lost-reply", "reserve", sc.intent, c.id, c.nextStoreOp("reserve-reply")) {
		c.trace("FAULT reserve reply lost after the write")
		c.set(func(c *call) { c.grace = true })
		return errLostReply
	}
	w.maybePause(c, "reserve")
	if s.inst.dead.Load() {
		return errDead // killed while its Reserve was on the way back
	}
	return nil
}

// noteReserve records what a Reserve did: who holds the lease now, and
// whether a record said to exist was ever created. Only the charges'
// records are judged here; an operation's and the ledger's only name
// their lease owner's call (for the send checks of operations).
func (w *world) noteReserve(c *call, sc storeCall, ans storeAnswer) {
	w.mu.Lock()
	w.owners[sc.owner] = c
	charge := sc.ns == w.namespace()
	lost := charge && !ans.created && !w.created[sc.intent]
	if charge {
		w.created[sc.intent] = true // it exists now, whoever made it
		if ans.claimed {
			w.claims[sc.intent] = c
		}
	}
	w.mu.Unlock()
	now := w.clock.Now()
	if charge {
		c.set(func(c *call) {
			c.owner, c.reserved = sc.owner, now
			c.refusedLease = !ans.claimed && !ans.rec.closed
			c.rkey, c.rattempt = ans.rec.key, ans.rec.attempt
		})
	}
	if c.opID != "" && strings.HasSuffix(sc.ns, "/"+string(c.opType)) {
		c.set(func(c *call) { c.rkey, c.rattempt = ans.rec.key, ans.rec.attempt })
	}
	c.trace("reserve %s created=%v claimed=%v key=%s state=%s lease=%s until %s", w.nsWord(sc.ns),
		ans.created, ans.claimed, ans.rec.key, ans.rec.state, w.ownerName(ans.rec.owner), fmtAt(ans.rec.leaseUntil))
	if lost {
		w.or.report(checkLostCreate, sc.intent, hintRedisRetry, "Reserve answered Created=false for a record no Reserve was ever told it created")
	}
}

// nsWord names a namespace in traces: empty for the charges'.
func (w *world) nsWord(ns string) string {
	if ns == w.namespace() {
		return "charge"
	}
	if i := strings.LastIndexByte(ns, '/'); i >= 0 {
		return ns[i+1:]
	}
	return ns
}

func (s *storeSide) afterResolve(c *call, sc storeCall, err error) error {
	w := s.w
	c.trace("resolve %s %s key=%s owner=%s -> %v", w.nsWord(sc.ns), sc.state, sc.key, w.ownerName(sc.owner), err)
	if err != nil {
		if sc.state == "open" {
			c.set(func(c *call) { c.grace = true })
		}
		return nil
	}
	if sc.ns != w.namespace() {
		return nil // an operation's or the ledger's record
	}
	if sc.state == "open" {
		w.mu.Lock()
		w.released[sc.intent] = c
		w.mu.Unlock()
	}
	if sc.state == "succeeded" || sc.state == "failed" {
		o := w.byID[sc.intent]
		o.mu.Lock()
		o.closed, o.closedAt = true, w.clock.Now()
		o.mu.Unlock()
	}
	if w.faultsOn.Load() && !c.get().zombie && w.d.chance(pLostResolve, "lost-reply", "resolve", sc.intent, c.id, c.nextStoreOp("resolve-reply")) {
		c.trace("FAULT resolve reply lost after the write")
		c.set(func(c *call) { c.grace = true })
		return errLostReply
	}
	return nil
}

// queueLate keeps a write that lands after its writer gave up.
func (s *storeSide) queueLate(sc storeCall, apply func() (storeAnswer, error)) {
	w := s.w
	w.mu.Lock()
	w.late = append(w.late, lateWrite{sc: sc, apply: apply})
	w.mu.Unlock()
}

// lateWrite is a write on its way to the store.
type lateWrite struct {
	sc    storeCall
	apply func() (storeAnswer, error)
}

// landLate applies the writes on their way, in the order they were made,
// and notes what they did as the store hooks would have.
func (w *world) landLate() {
	w.mu.Lock()
	late := w.late
	w.late = nil
	w.mu.Unlock()
	for _, l := range late {
		ans, err := l.apply()
		sc := l.sc
		w.tr.add(w.orderOf(sc.intent), "world", "LATE WRITE lands: %s %s %s key=%s owner=%s -> created=%v claimed=%v err=%v",
			sc.op, w.nsWord(sc.ns), sc.state, sc.key, w.ownerName(sc.owner), ans.created, ans.claimed, err)
		if err != nil || sc.ns != w.namespace() {
			continue
		}
		switch {
		case sc.op == "reserve":
			w.mu.Lock()
			w.created[sc.intent] = true
			w.mu.Unlock()
		case sc.state == "succeeded" || sc.state == "failed":
			o := w.byID[sc.intent]
			o.mu.Lock()
			o.closed, o.closedAt = true, w.clock.Now()
			o.mu.Unlock()
		}
	}
}

// redisReplyLost draws whether the reply to a write's script is lost
// (Reserve keeps the draw it always had, so its seeds keep their stories).
func (w *world) redisReplyLost(sc storeCall, c *call, n int) bool {
	switch sc.op {
	case "reserve":
		return w.d.chance(pRedisLostReply, "redis-lost", sc.intent, c.id, n)
	case "resolve":
		return w.d.chance(pRedisLostReply, "redis-lost-resolve", sc.intent, c.id, n)
	}
	return false
}

// ownerName is the instance a lease owner belongs to, for traces.
func (w *world) ownerName(owner string) string {
	if owner == "" {
		return "-"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if c := w.owners[owner]; c != nil {
		return c.inst.name
	}
	return "?"
}
