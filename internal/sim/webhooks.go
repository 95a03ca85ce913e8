package sim

// The webhook workload of checkout worlds (issue 16 #3): the provider
// delivers each started order's event to a BFF, at least once, and every
// BFF runs its handler through a webhook.Deduper on the world's shared
// store. The handler ships the order; it touches no payment, so the
// checkout story around it stays as it was. Its faults: a store error
// before a Deduper's call, and a Reserve answered only after the lease it
// granted ran out, while the provider's redelivery (to another instance or
// the same) takes the lapsed lease and runs the handler. Checks:
// lapsed-run (the handler started on a lease run out by the store's clock)
// and webhook-twice (it ran for an event a delivery had handled and
// recorded). Its draws are keyed dice, never the world's stream.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/idempay/idempay/webhook"
)

// checkWebhookTwice: a Deduper's handler ran for an event after a delivery
// of it returned Handled with the record written.
const checkWebhookTwice = "webhook-twice"

func init() { allChecks = append(allChecks, checkWebhookTwice) }

// Webhook fault rates, while faults are on.
const (
	pWhStep     = 0.3  // a step of the story delivers an event
	pWhRedeliv  = 0.3  // the provider delivers it again at once
	pWhStoreErr = 0.03 // a Deduper's store call fails before reaching the store
	pWhLate     = 0.1  // a Deduper's Reserve that claimed is answered after its lease
)

// webhooks is the webhook workload's part of a checkout world.
type webhooks struct {
	mu      sync.Mutex
	ddp     map[*instance]*webhook.Deduper
	handled map[string]string // event -> the delivery that handled and recorded it
	late    bool              // a late Reserve answer's redelivery is running
}

// whReq is one delivery, in its context, for the Deduper's store hooks.
type whReq struct {
	id, event  string
	o          *order
	n          map[string]int
	leaseUntil time.Time // the lease its Reserve was granted, on the store's clock
}

type whReqKey struct{}

func whReqOf(ctx context.Context) *whReq {
	r, _ := ctx.Value(whReqKey{}).(*whReq)
	return r
}

// deduperOf returns inst's Deduper, making it with the instance.
func (w *world) deduperOf(inst *instance) *webhook.Deduper {
	wh := &w.ck.wh
	wh.mu.Lock()
	defer wh.mu.Unlock()
	if wh.ddp == nil {
		wh.ddp, wh.handled = map[*instance]*webhook.Deduper{}, map[string]string{}
	}
	if d := wh.ddp[inst]; d != nil {
		return d
	}
	h := w.handle()
	d, err := webhook.NewDeduper(&hookedStore{enter: h.enter, hooks: &whSide{w: w, inst: inst}}, "sim", "shop",
		webhook.WithClock(w.clock.skewed(inst.slot.skew)), webhook.WithInstance("wh-"+inst.name))
	if err != nil {
		panic(err) // the options are the simulator's own
	}
	wh.ddp[inst] = d
	return d
}

// webhookStep may deliver an event of a started order after step i.
func (w *world) webhookStep(i int) {
	if !w.d.chance(pWhStep, "wh-step", i) {
		return
	}
	var started []*order
	for _, o := range w.orders {
		o.mu.Lock()
		if o.started {
			started = append(started, o)
		}
		o.mu.Unlock()
	}
	if len(started) == 0 {
		return
	}
	o := started[w.d.intn(len(started), "wh-order", i)]
	live := w.live()
	inst := live[w.d.intn(len(live), "wh-inst", i)]
	id := fmt.Sprintf("w%d", i)
	w.deliverEvent(o, inst, id)
	if w.d.chance(pWhRedeliv, "wh-again", i) {
		w.deliverEvent(o, w.other(inst, w.d.intn(4, "wh-again-pick", i)), id+"b")
	}
}

// deliverEvent is one delivery of o's event to inst's Deduper.
func (w *world) deliverEvent(o *order, inst *instance, id string) {
	event := "evt_" + o.id
	r := &whReq{id: id, event: event, o: o, n: map[string]int{}}
	who := "wh-" + inst.name + "/" + id
	w.tr.add(o.id, who, "DELIVER %s", event)
	ctx := context.WithValue(context.Background(), whReqKey{}, r)
	got, err := w.deduperOf(inst).Do(ctx, event, []byte(`{"id":"`+event+`","data":{"order":"`+o.id+`"}}`),
		func(context.Context) error { w.webhookRuns(r, who); return nil })
	w.tr.add(o.id, who, "-> %s %v", got, err)
	if got == webhook.Handled && err == nil {
		wh := &w.ck.wh
		wh.mu.Lock()
		if _, ok := wh.handled[event]; !ok {
			wh.handled[event] = id
		}
		wh.mu.Unlock()
	}
}

// webhookRuns judges a start of the handler for r's event.
func (w *world) webhookRuns(r *whReq, who string) {
	w.tr.add(r.o.id, who, "the handler ships the order")
	if now := w.storeNow(); !r.leaseUntil.IsZero() && !now.Before(r.leaseUntil) {
		w.or.report(checkLapsedRun, r.o.id, hintLateReserve, "%s: the Deduper's handler starts for %s at %s, after its lease ran out at %s",
			who, r.event, fmtAt(now), fmtAt(r.leaseUntil))
	}
	wh := &w.ck.wh
	wh.mu.Lock()
	by, done := wh.handled[r.event]
	wh.mu.Unlock()
	if done {
		hint := hintLateReserve
		w.mu.Lock()
		if len(w.lostWrites[r.event]) > 0 {
			hint = hintStoreLoss // a store crash took the record of the event
		}
		w.mu.Unlock()
		w.or.report(checkWebhookTwice, r.o.id, hint, "%s: the handler runs again for %s, which delivery %s handled and recorded",
			who, r.event, by)
	}
}

// whSide is the simulator's half of a Deduper's store.
type whSide struct {
	w    *world
	inst *instance
}

func (s *whSide) before(ctx context.Context, sc storeCall) error {
	w := s.w
	if s.inst.dead.Load() {
		return errDead
	}
	r := whReqOf(ctx)
	if r == nil || !w.faultsOn.Load() {
		return nil
	}
	r.n[sc.op]++
	if w.d.chance(pWhStoreErr, "wh-store", sc.op, r.id, r.n[sc.op]) {
		w.tr.add(r.o.id, "wh-"+s.inst.name+"/"+r.id, "FAULT Deduper store %s fails before reaching the store", sc.op)
		return errInjected
	}
	return nil
}

func (s *whSide) after(ctx context.Context, sc storeCall, ans storeAnswer, err error) error {
	r := whReqOf(ctx)
	if r == nil || err != nil {
		return nil
	}
	who := "wh-" + s.inst.name + "/" + r.id
	switch sc.op {
	case "reserve":
		s.w.tr.add(r.o.id, who, "Deduper reserve claimed=%v state=%s", ans.claimed, ans.rec.state)
		if ans.claimed && r.leaseUntil.IsZero() {
			r.leaseUntil = ans.rec.leaseUntil
			s.lateReserve(r, who)
		}
	case "resolve":
		s.w.tr.add(r.o.id, who, "Deduper resolve %s", sc.state)
	}
	if s.inst.dead.Load() {
		return errDead
	}
	return nil
}

// lateReserve may hold r's Reserve answer past its lease while the
// provider, having had no answer, delivers the event again.
func (s *whSide) lateReserve(r *whReq, who string) {
	w := s.w
	wh := &w.ck.wh
	wh.mu.Lock()
	busy := wh.late
	wh.mu.Unlock()
	if busy || !w.faultsOn.Load() || !w.d.chance(pWhLate, "wh-late", r.id) {
		return
	}
	w.tr.add(r.o.id, who, "FAULT the Deduper's Reserve answer is late: it arrives after its lease ran out")
	w.advance(webhook.DefaultLease+w.d.between(time.Second, 5*time.Second, "wh-late-by", r.id), "the Deduper's Reserve answer is on its way")
	wh.mu.Lock()
	wh.late = true
	wh.mu.Unlock()
	w.deliverEvent(r.o, w.other(s.inst, w.d.intn(4, "wh-late-pick", r.id)), r.id+"L")
	wh.mu.Lock()
	wh.late = false
	wh.mu.Unlock()
	w.tr.add(r.o.id, who, "the late Reserve answer arrives (claimed, lease until %s)", fmtAt(r.leaseUntil))
}
