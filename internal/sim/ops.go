package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
)

// Refunds, captures and cancels (issue 12): the shop refunds paid orders in
// parts, an operator clicks again (the same refund ID, from any instance),
// authorisations are captured or cancelled. Each operation is its own
// record, sent under its own key, with the same faults as a charge; the
// oracle judges them as it judges charges: never refunded twice or beyond
// the charge, never captured beyond the authorisation, never told failed
// when money moved, every one settled once the faults stop.

// shopOp is one operation the shop asked for, and what it was last told.
type shopOp struct {
	typ    idempay.OpType
	id     string // the caller's operation ID (RefundID, CaptureID, CancelID)
	amount int64  // refunds and captures
	status outcome
	told   bool      // some caller got an answer
	first  time.Time // when the shop first asked for it
}

// opsOn reports whether the world plays operations.
func (w *world) opsOn() bool { return w.opt.ops }

// opStep is a step of the operations' story: a new refund, a capture or
// cancel of an authorisation, or an operation asked for again.
func (w *world) opStep(ctx context.Context, id string) {
	switch u := w.rng.Float64(); {
	case u < 0.45:
		w.newRefund(ctx, id)
	case u < 0.70:
		w.newCapture(ctx, id)
	default:
		w.opAgain(ctx, id)
	}
}

// newRefund refunds part of a paid order: amounts are drawn so that two or
// three refunds may together ask for more than was charged, which the
// client must refuse before sending.
func (w *world) newRefund(ctx context.Context, id string) {
	o := w.pickOrder(func(o *order) bool { st, _, _ := o.snapshot(); return st == outSucceeded })
	if o == nil {
		return
	}
	amount := 1 + w.rng.Int64N(o.amount*2/3)
	op := o.addOp(idempay.OpRefund, amount, w.clock.Now())
	w.operate(ctx, w.pickInst(), o, op, id)
}

// newCapture captures (in whole or in part) or cancels an authorisation.
func (w *world) newCapture(ctx context.Context, id string) {
	o := w.pickOrder(func(o *order) bool { return o.kind == "auth" })
	if o == nil {
		return
	}
	typ, amount := idempay.OpCapture, o.amount
	switch u := w.rng.Float64(); {
	case u < 0.2:
		typ, amount = idempay.OpCancel, 0
	case u < 0.5:
		amount = 1 + w.rng.Int64N(o.amount)
	}
	op := o.addOp(typ, amount, w.clock.Now())
	w.operate(ctx, w.pickInst(), o, op, id)
}

// opAgain sends an operation again, the same request: an operator's second
// click, a queue's second delivery, a retry after "unknown".
func (w *world) opAgain(ctx context.Context, id string) {
	var all []struct {
		o  *order
		op *shopOp
	}
	for _, o := range w.orders {
		o.mu.Lock()
		for _, op := range o.ops {
			all = append(all, struct {
				o  *order
				op *shopOp
			}{o, op})
		}
		o.mu.Unlock()
	}
	if len(all) == 0 {
		return
	}
	x := all[w.rng.IntN(len(all))]
	if w.tooLate(x.op) {
		return
	}
	w.operate(ctx, w.pickInst(), x.o, x.op, id)
}

func (o *order) addOp(typ idempay.OpType, amount int64, now time.Time) *shopOp {
	o.mu.Lock()
	defer o.mu.Unlock()
	op := &shopOp{typ: typ, id: fmt.Sprintf("%s-%s%d", o.id, typ, len(o.ops)+1), amount: amount, first: now}
	o.ops = append(o.ops, op)
	return op
}

// operate sends one operation from inst and records what came back.
func (w *world) operate(ctx context.Context, inst *instance, o *order, op *shopOp, id string) result {
	c := w.newCall(ctx, inst, o, string(op.typ), canonical, id)
	c.opID, c.opType = op.id, op.typ
	c.trace("%s %s amount=%d", op.typ, op.id, op.amount)
	res := inst.cl.operate(c.ctx, op, o.id, w.prov.currency())
	w.endOp(c, op, res)
	return res
}

// endOp traces an operation's answer, judges it, and notes it in the shop.
func (w *world) endOp(c *call, op *shopOp, res result) {
	defer close(c.returned)
	msg := w.answered(c, res)
	c.trace("-> %s %s id=%s%s", op.typ, res.out, w.short(res.chargeID), msg)
	if c.get().zombie || c.inst.dead.Load() {
		return
	}
	w.or.atOpReturn(c, op, res)
	if !c.get().cancelled {
		c.o.mu.Lock()
		if op.status != outSucceeded {
			op.status = res.out
		}
		op.told = true
		c.o.mu.Unlock()
	}
}

// operate is the driver's side: the Client call of op's type.
func (c *client) operate(ctx context.Context, op *shopOp, intent, currency string) result {
	var o *idempay.Operation
	var err error
	switch op.typ {
	case idempay.OpRefund:
		o, err = c.c.Refund(ctx, idempay.RefundRequest{RefundID: op.id, IntentID: intent, Amount: op.amount, Currency: currency})
	case idempay.OpCapture:
		o, err = c.c.Capture(ctx, idempay.CaptureRequest{CaptureID: op.id, IntentID: intent, Amount: op.amount, Currency: currency})
	default:
		o, err = c.c.Cancel(ctx, idempay.CancelRequest{CancelID: op.id, IntentID: intent})
	}
	r := classify(nil, err)
	r.refusedLocally = errors.Is(err, idempay.ErrRefundExceeds) || errors.Is(err, idempay.ErrCaptureExceeds) ||
		errors.Is(err, idempay.ErrChargeNotSucceeded) || errors.Is(err, idempay.ErrNotRefundable) ||
		errors.Is(err, idempay.ErrAuthorizationClosed) || errors.Is(err, idempay.ErrNotAuthorization)
	if o != nil {
		r.chargeID, r.key, r.chargePending = o.ID, o.Key, o.State == idempay.StatePending
	}
	return r
}

// opsOf returns the provider's operations made for an operation. The fakes
// tag them with the operation ID where the provider keeps one (metadata);
// where it keeps none (an Omise capture, a 2C2P action) they are known by
// the key, which the store's record names.
func (w *world) opsOf(op *shopOp) []fakes.Op {
	key := ""
	if rec, ok, err := w.loadIn(context.Background(), w.namespace()+"/"+string(op.typ), op.id); err == nil && ok {
		key = rec.key
	}
	var out []fakes.Op
	for _, x := range w.prov.ledger().Ops() {
		byKey := key != "" && x.Key == key && (x.OpID == "" || x.OpID == key)
		if x.OpID == op.id || byKey {
			out = append(out, x)
		}
	}
	return out
}

// moved counts the operations of opID that may have moved money.
func moved(ops []fakes.Op) int {
	n := 0
	for _, op := range ops {
		if op.Status != fakes.OpFailed {
			n++
		}
	}
	return n
}

// atOpReturn judges an operation's answer when its caller gets it: failed
// must mean the provider made no operation for it that moves money;
// succeeded must be one the provider shows succeeded.
func (o *oracle) atOpReturn(c *call, op *shopOp, res result) {
	ops := o.w.opsOf(op)
	o.w.noteFailed(c, res)
	o.refusedPaid(c, op, res)
	switch res.out {
	case outFailed:
		if n := moved(ops); n > 0 {
			o.report(checkOpFalseFailed, c.o.id, "", "%s: %s %s was told failed (%v) but the provider made %d that moved money", c.who(), op.typ, op.id, res.err, n)
		}
	case outSucceeded:
		if len(ops) == 0 && op.typ != idempay.OpCancel {
			o.report(checkOpFalseSuccess, c.o.id, "", "%s: %s %s was told succeeded, the provider shows none", c.who(), op.typ, op.id)
		}
		for _, x := range ops {
			if x.Status == fakes.OpFailed {
				o.report(checkOpFalseSuccess, c.o.id, "", "%s: %s %s was told succeeded, the provider shows it failed", c.who(), op.typ, op.id)
			}
		}
	}
}

// finalOps runs, after the quiet phase, the checks of money moved by
// operations: the fake's books (refunded twice, beyond the charge,
// captured beyond the authorisation, captured and cancelled), one provider
// operation per operation ID, and every operation whose money moved
// recorded in the store.
func (o *oracle) finalOps(ctx context.Context) {
	w := o.w
	var me *fakes.MoneyError
	if err := w.prov.ledger().Check(); errors.As(err, &me) {
		for _, v := range me.Violations {
			o.report(checkOpMoney, v.Intent, "", "the provider's books: %s", v)
		}
	}
	for _, ord := range w.orders {
		ord.mu.Lock()
		ops := append([]*shopOp(nil), ord.ops...)
		ord.mu.Unlock()
		for _, op := range ops {
			made := w.opsOf(op)
			if n := moved(made); n > 1 {
				o.report(checkOpMoney, ord.id, "", "%s %s was made %d times by the provider", op.typ, op.id, n)
			}
			o.opSettled(ctx, ord, op, made)
		}
	}
}

// opSettled checks that an operation the provider carried out is known to
// the store once the faults stopped and the shop resumed what it knew of.
func (o *oracle) opSettled(ctx context.Context, ord *order, op *shopOp, made []fakes.Op) {
	if len(made) == 0 || made[0].Status != fakes.OpSucceeded {
		return
	}
	rec, ok, err := o.w.loadIn(ctx, o.w.namespace()+"/"+string(op.typ), op.id)
	if err != nil || (ok && rec.state == "succeeded") || (!ok && o.w.clock.Now().Sub(op.first) >= storeRetention-time.Hour) {
		return // settled, or expired with the retention the shop keeps to
	}
	o.report(checkOpUnsettled, ord.id, "", "after the quiet phase the provider shows %s %s succeeded, the store %s", op.typ, op.id, recState(rec, ok))
}

// resumeOps sends again, in the quiet phase, every operation whose last
// answer was not a success: the shop's retry of what it was not told.
// Then its recovery worker sends again every operation UnresolvedOps names
// (those told succeeded whose record could not be closed among them).
func (w *world) resumeOps(ctx context.Context, phase string) {
	n := 0
	again := func(o *order, op *shopOp) {
		n++
		w.operate(ctx, w.pickQuiet(n), o, op, fmt.Sprintf("%sop%d", phase, n))
	}
	listed := map[string]bool{}
	for _, t := range []idempay.OpType{idempay.OpRefund, idempay.OpCapture, idempay.OpCancel} {
		for _, id := range w.pickQuiet(0).cl.unresolvedOps(ctx, t) {
			listed[id] = true
		}
	}
	for _, o := range w.orders {
		o.mu.Lock()
		var todo []*shopOp
		for _, op := range o.ops {
			if (listed[op.id] || (op.status != outSucceeded && op.status != outFailed)) && !w.tooLate(op) {
				todo = append(todo, op)
			}
		}
		o.mu.Unlock()
		for _, op := range todo {
			again(o, op)
		}
	}
}

// unresolvedOps lists the operation IDs of type t the store holds open.
func (c *client) unresolvedOps(ctx context.Context, t idempay.OpType) []string {
	var ids []string
	for rec, err := range c.c.UnresolvedOps(ctx, t) {
		if err != nil || len(ids) >= 500 {
			break
		}
		ids = append(ids, rec.ID)
	}
	return ids
}

// tooLate keeps the shop honest, as mayResend does for charges: nobody asks
// for an operation again more than the store's retention after first
// asking, which is what the store's retention promises to cover.
// An operation the store still holds open is never too late: its record
// is there to settle it.
func (w *world) tooLate(op *shopOp) bool {
	if w.clock.Now().Sub(op.first) < storeRetention-time.Hour {
		return false
	}
	rec, ok, err := w.loadIn(context.Background(), w.namespace()+"/"+string(op.typ), op.id)
	return err != nil || !ok || rec.closed
}

// pickQuiet picks an instance for the quiet phase without drawing from the
// step stream.
func (w *world) pickQuiet(n int) *instance {
	live := w.live()
	return live[n%len(live)]
}

// loadIn reads a record of any namespace straight from the store.
func (w *world) loadIn(ctx context.Context, ns, id string) (recView, bool, error) {
	s, leave, err := w.handle().enter()
	if err != nil {
		return recView{}, false, err
	}
	defer leave()
	return loadRec(ctx, s, ns, id)
}

// handOffOp is handOff for an operation: the store holds the operation's
// record with the key it carries (when the request shows it), leased to
// the sending call.
func (w *world) handOffOp(c *call, rq reqInfo) {
	now := w.storeNow()
	rec, ok, err := w.loadIn(context.Background(), w.namespace()+"/"+string(c.opType), c.opID)
	switch {
	case err != nil:
		c.trace("(send check: store unreadable: %v)", err)
	case !ok:
		w.or.report(checkKeyNotStored, c.intent(), "", "%s sent %s %s before the store held its record", c.who(), c.opType, c.opID)
	case rq.key != "" && rec.key != rq.key:
		w.or.report(checkKeyNotStored, c.intent(), "", "%s sent %s %s with key %s, the store holds %s", c.who(), c.opType, c.opID, rq.key, rec.key)
	case w.ownerCall(rec.owner) != c || !now.Before(rec.leaseUntil):
		w.or.report(checkLeaseAtSend, c.intent(), "", "%s sent %s %s without holding its lease: %s; the store's time is %s",
			c.who(), c.opType, c.opID, w.leaseWords(rec), fmtAt(now))
	}
}

// ownerCall is the call that last claimed a lease with owner.
func (w *world) ownerCall(owner string) *call {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.owners[owner]
}

// withAuth makes req an authorisation when o is one.
func (w *world) withAuth(o *order, req idempay.ChargeRequest) idempay.ChargeRequest {
	if o.kind != "auth" {
		return req
	}
	extra := maps.Clone(req.Extra)
	if extra == nil {
		extra = map[string]string{}
	}
	maps.Copy(extra, w.prov.authExtra())
	req.Extra = extra
	return req
}

// opFault is the fault of an operation's request: a charge's, with the
// faults the fake plays by key (Mid, a stored 500) played by the transport
// instead (the answer lost after the provider acted; a 503).
func (w *world) opFault(c *call, rq reqInfo, n int) reqFault {
	f := w.drawFault(c, reqInfo{charge: true, key: rq.key}, n)
	switch f.fake {
	case fakes.Mid:
		f = reqFault{post: true}
	case fakes.Internal:
		f = reqFault{synth: synthUnavailable}
	}
	return f
}

// refusedPaid judges a refund refused as "the charge never succeeded"
// (issue 17 #1): a caller who believes it may charge the customer again.
// It is a violation whenever the provider shows the intent charged, for
// instance after the charge's record expired (refunds come weeks after the
// charge, sweeps between them).
func (o *oracle) refusedPaid(c *call, op *shopOp, res result) {
	if op.typ != idempay.OpRefund || !errors.Is(res.err, idempay.ErrChargeNotSucceeded) {
		return
	}
	if o.w.prov.truth(c.o) != truthCharged {
		return
	}
	if rec, ok, err := o.w.load(context.Background(), c.o.id); err != nil || (ok && !rec.closed) {
		return // the charge's record is open: a charge again resumes its key, and cannot charge twice
	}
	hint := ""
	o.w.mu.Lock()
	if o.w.expired[c.o.id] {
		hint = hintRefundExpired
	}
	o.w.mu.Unlock()
	o.report(checkRefusedPaid, c.o.id, hint, "%s: refund %s was refused as a charge that never succeeded (%v), and the provider shows the intent charged", c.who(), op.id, res.err)
}
