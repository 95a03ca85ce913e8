package sim

import (
	"context"

	"github.com/idempay/idempay"
	"strings"
	"sync"
	"time"
)

// call is one Charge, Settle or Unresolved made by the simulated shop. It
// travels in the context the SDK hands to the store and the transport, so
// that every store call and every request is tied to the call (and the
// intent) it was made for.
type call struct {
	w      *world
	id     string
	op     string // charge, settle, list
	o      *order // nil for list
	inst   *instance
	v      variant
	nested bool // made while another call was paused: never paused itself
	// settledBefore: the store held the intent succeeded when the call
	// began, so it must answer the success whatever its parameters.
	settledBefore  bool
	chargedAtStart int            // the provider's charges of the intent when the call began
	opID           string         // an operation's ID (RefundID, ...), for refund, capture and cancel calls
	opType         idempay.OpType // and its type

	ctx         context.Context
	cancel      context.CancelFunc
	returned    chan struct{}
	resolved    chan struct{} // closed at its first Resolve: its flight is ending
	resolveOnce sync.Once

	mu           sync.Mutex
	attempts     int // charge requests seen at the transport
	lookups      int
	storeOps     map[string]int
	owner        string    // the lease owner its Reserve carried
	reserved     time.Time // true time of its last Reserve
	refusedLease bool      // Reserve found the lease held by another owner
	rkey         string    // the key of the attempt its last Reserve saw
	rattempt     int       // and that attempt
	paused       bool
	cancelled    bool // its caller stopped waiting
	zombie       bool // its process was killed under it
	grace        bool // its lease may outlive it: its release or reply was lost
	active       bool
	ended        time.Duration
	res          result // what its caller got
}

type callKey struct{}

func callOf(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// newCall registers a call; parent names the call whose pause made it.
func (w *world) newCall(ctx context.Context, inst *instance, o *order, op string, v variant, id string) *call {
	c := &call{w: w, id: id, op: op, o: o, inst: inst, v: v, returned: make(chan struct{}), resolved: make(chan struct{}),
		storeOps: map[string]int{}, active: true, nested: strings.Contains(id, "/")}
	if o != nil {
		c.chargedAtStart = w.prov.charges(o)
	}
	c.ctx, c.cancel = context.WithCancel(context.WithValue(ctx, callKey{}, c))
	w.mu.Lock()
	w.calls = append(w.calls, c)
	w.mu.Unlock()
	return c
}

func (c *call) who() string { return c.inst.name + "/" + c.id }

func (c *call) intent() string {
	if c.o == nil {
		return ""
	}
	return c.o.id
}

func (c *call) trace(format string, args ...any) { c.w.tr.add(c.intent(), c.who(), format, args...) }

// nextStoreOp numbers the store calls of one kind a call makes, for the
// fault draws.
func (c *call) nextStoreOp(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.storeOps[op]++
	return c.storeOps[op]
}

func (c *call) nextAttempt(charge bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if charge {
		c.attempts++
		return c.attempts
	}
	c.lookups++
	return c.lookups
}

// flightEnded marks that the call's flight recorded its outcome (a Resolve,
// tried or done): a flight whose caller left is ending.
func (c *call) flightEnded() { c.resolveOnce.Do(func() { close(c.resolved) }) }

// flightOver reports whether the call's flight recorded its outcome.
func (c *call) flightOver() bool {
	select {
	case <-c.resolved:
		return true
	default:
		return false
	}
}

func (c *call) reservedAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reserved
}

func (c *call) set(f func(c *call)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

func (c *call) get() call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return call{owner: c.owner, refusedLease: c.refusedLease, cancelled: c.cancelled, zombie: c.zombie,
		grace: c.grace, active: c.active, ended: c.ended, paused: c.paused, attempts: c.attempts, res: c.res,
		rkey: c.rkey, rattempt: c.rattempt}
}

// charge sends one Charge of o from inst and records what came back.
func (w *world) charge(ctx context.Context, inst *instance, o *order, v variant, id string) result {
	c := w.newCall(ctx, inst, o, "charge", v, id)
	if rec, ok, err := w.load(ctx, o.id); err == nil && ok && rec.state == "succeeded" {
		c.settledBefore = true
	}
	req := w.withAuth(o, w.prov.request(o, v))
	o.mu.Lock()
	o.started = true
	o.mu.Unlock()
	c.trace("CHARGE %s key=%q amount=%d", v, req.Key, req.Amount)
	res := inst.cl.charge(c.ctx, req)
	w.endCall(c, res)
	return res
}

// settle calls Settle for o from inst, as a webhook handler would.
func (w *world) settle(ctx context.Context, inst *instance, o *order, id string) result {
	c := w.newCall(ctx, inst, o, "settle", canonical, id)
	c.trace("SETTLE")
	res := inst.cl.settle(c.ctx, o.id)
	w.endCall(c, res)
	return res
}

// endCall traces the answer, runs the checks that judge an answer when it
// is given, and updates the shop's order.
func (w *world) endCall(c *call, res result) {
	defer close(c.returned) // once the answer is recorded
	msg := w.answered(c, res)
	st := c.get()
	c.trace("-> %s id=%s pending=%v attempts=%d%s", res.out, w.short(res.chargeID), res.chargePending, st.attempts, msg)
	if st.zombie || c.inst.dead.Load() {
		c.trace("(its process is dead: nobody reads this answer)")
		return
	}
	w.or.atReturn(c, res)
	if !st.cancelled {
		w.updateOrder(c, res)
	}
}

// answered ends call c with res: it is no longer active, its context is
// done, and its error (kept for the secret check) is returned as ": text"
// for the trace.
func (w *world) answered(c *call, res result) string {
	c.set(func(c *call) { c.active, c.ended, c.res = false, w.clock.Elapsed(), res })
	c.cancel()
	if res.err == nil {
		return ""
	}
	w.mu.Lock()
	w.errs = append(w.errs, callErr{c.intent(), res.err.Error()})
	w.mu.Unlock()
	return ": " + res.err.Error()
}

// updateOrder records the answer in the shop's order: a success sticks,
// anything else is the order's latest news.
func (w *world) updateOrder(c *call, res result) {
	o := c.o
	o.mu.Lock()
	defer o.mu.Unlock()
	if res.chargePending && res.chargeID != "" {
		o.shown = res.chargeID // the shop sends the customer to the provider's page
	}
	if o.status != outSucceeded {
		o.status = res.out
	}
	if c.op == "charge" {
		o.caller = c.inst
	}
}

// short keeps provider IDs short in traces.
func (w *world) short(id string) string {
	if len(id) > 14 {
		return id[:14] + "…"
	}
	return id
}
