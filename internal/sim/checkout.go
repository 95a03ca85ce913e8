package sim

// The checkout workload (issue 11): a frontend, the guard, a BFF and the
// provider together. Every client instance runs a BFF: /checkout behind
// guard.New on the world's shared store (through its own hooks, which draw
// the guard's store faults), whose handler charges the order through the
// instance's idempay.Client with the guard's key, so that the frontend's
// key is the BFF's record and the provider's key. A simulated frontend
// sends checkouts to the fleet in process (ServeHTTP on a recorder: no
// sockets) with the faults of a browser: double clicks (to the same or
// another instance, while the first holds the key or after its lease ran
// out), answers lost, timeouts, retries with the same key after 409 and
// 503, and a new key with another card after a definite 402. The faults
// between BFF and provider are the world's (transport.go, pauses, kills,
// store faults). See checkCheckout* in oracle.go for what is judged.
//
// The BFF's answers:
//
//	succeeded -> 200 {"status":"paid"}      stored (2xx): every retry gets it
//	pending   -> 202 {"status":"pending"}   stored (2xx): final for this endpoint. The
//	             frontend sends the customer to the provider's page for the charge
//	             it names; what happens there arrives by webhook (Settle), not by
//	             another checkout. A retry gets the same 202, the same charge.
//	failed    -> 402 {"status":"declined"}  guard.MarkFinal: a decline stays a decline
//	unknown   -> 503                        guard.MarkUnsettled: money may have moved,
//	             the key stays locked (409) until the BFF's reconciler settles it
//	             (Client.Settle, then Guard.Settle with the answer the handler
//	             would have given) or, once faults stop and Settle still cannot
//	             tell, Guard.Reopen: the retry runs the handler again, which
//	             charges under the same key and so cannot charge twice.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/idempay/idempay/guard"
)

// ckBroken switches on the deliberate bugs of the proof that the checkout
// checks can fail (checkout_test.go, FINDINGS.md "Checkout path"). Never
// set outside that test.
var ckBroken struct {
	noGuardKey       bool // the handler charges without the guard's key
	releaseOn503     bool // the handler does not MarkUnsettled an unknown outcome
	unknownAsDecline bool // the handler answers an unknown outcome 402 declined, final
	pendingAsPaid    bool // the handler answers a pending charge 200 paid
	settleOtherBody  bool // the reconciler settles a locked key with another body than the handler's
}

// Frontend fault rates, per request while faults are on.
const (
	pFeLost    = 0.12 // the BFF ran, its answer was lost: the frontend resends at once
	pFeTimeout = 0.08 // the frontend gave up waiting: it resends later
	pFeDouble  = 0.18 // a double click
	feSends    = 5    // sends per burst of the frontend before it waits for later
)

// checkouts is the checkout world's part of a world.
type checkouts struct {
	mu   sync.Mutex
	bffs map[*instance]*bff
	keys map[string]*ckKey   // frontend key -> what it was sent for
	fe   map[string]*feState // order -> what its frontend knows
	sent map[string]bool     // every key a BFF's charge sent or was answered with
	late bool                // a late Reserve answer's retry is running (latereserve.go)
	wh   webhooks            // the provider's event deliveries (webhooks.go)
}

// ckKey is one frontend key: the order and card it pays, and the answers
// the guard could store for it (handler answers to store, reconciler
// settlements), and the first replay.
type ckKey struct {
	o        *order
	v        variant
	storable []string
	replay   string
	declined bool // a 402 was given for it
	// promised: a run of the handler for the key gave the frontend an
	// answer the guard must stand by (final, or unsettled and locked),
	// and no Reopen has freed the key since (issue 16 #2).
	promised bool
	promiser string // the request that gave it
}

// feState is a checkout as its frontend sees it.
type feState struct {
	attempt  int
	key      string
	v        variant
	sends    int
	final    int    // 200, 202 or 402 once the frontend has a final answer
	chargeID string // of a final 200 or 202
}

// bff is one instance's BFF.
type bff struct {
	inst *instance
	g    *guard.Guard
	h    http.Handler
}

// ckReq is one frontend request, in its context, for the guard's store hooks.
type ckReq struct {
	id   string
	o    *order
	mu   sync.Mutex
	ops  map[string]int
	hold func() // run once, when the request's handler starts (it holds the key)
	ran  bool   // the handler ran for this request
	key  string // the frontend's key
	// leaseUntil is the end of the guard's lease its Reserve was granted,
	// on the store's clock (latereserve.go).
	leaseUntil time.Time
}

type ckReqKey struct{}

func ckReqOf(ctx context.Context) *ckReq {
	r, _ := ctx.Value(ckReqKey{}).(*ckReq)
	return r
}

func (r *ckReq) nextOp(op string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops[op]++
	return r.ops[op]
}

// guardSide is the simulator's half of a BFF's guard store: the shared
// store, with faults of its own drawn from the seed and the request.
type guardSide struct {
	w    *world
	inst *instance
}

func (s *guardSide) before(ctx context.Context, sc storeCall) error {
	w := s.w
	if s.inst.dead.Load() {
		return errDead
	}
	r := ckReqOf(ctx)
	if r == nil || !w.faultsOn.Load() {
		return nil
	}
	p := map[string]float64{"reserve": 0.03, "resolve": 0.04, "load": 0.03}[sc.op]
	if w.d.chance(p, "guard-store", sc.op, r.id, r.nextOp(sc.op)) {
		w.tr.add(r.o.id, "bff-"+s.inst.name+"/"+r.id, "FAULT guard store %s fails before reaching the store", sc.op)
		return errInjected
	}
	return nil
}

func (s *guardSide) after(ctx context.Context, sc storeCall, ans storeAnswer, err error) error {
	w := s.w
	r := ckReqOf(ctx)
	if r == nil || err != nil {
		return nil
	}
	who := "bff-" + s.inst.name + "/" + r.id
	if sc.op == "reserve" {
		w.tr.add(r.o.id, who, "guard reserve claimed=%v state=%s", ans.claimed, ans.rec.state)
		s.lateReserve(r, ans)
	}
	if sc.op == "resolve" {
		w.tr.add(r.o.id, who, "guard resolve %s", sc.state)
		if w.faultsOn.Load() && w.d.chance(0.02, "guard-lost", r.id, r.nextOp("resolve-reply")) {
			w.tr.add(r.o.id, who, "FAULT guard resolve reply lost after the write")
			return errLostReply
		}
	}
	if s.inst.dead.Load() {
		return errDead
	}
	return nil
}

// bffOf returns inst's BFF, starting it with the instance.
func (w *world) bffOf(inst *instance) *bff {
	ck := w.ck
	ck.mu.Lock()
	defer ck.mu.Unlock()
	if b := ck.bffs[inst]; b != nil {
		return b
	}
	h := w.handle()
	g, err := guard.New(&hookedStore{enter: h.enter, hooks: &guardSide{w: w, inst: inst}},
		guard.WithScope("checkout"), guard.WithIdentity(guard.SingleTenant),
		guard.WithClock(w.clock.skewed(inst.slot.skew)), guard.WithInstance("bff-"+inst.name),
		guard.WithLogger(w.logs.logger("bff-"+inst.name)))
	if err != nil {
		panic(err) // the options are the simulator's own
	}
	b := &bff{inst: inst, g: g}
	b.h = g.Wrap(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { w.checkoutHandler(b, rw, r) }))
	ck.bffs[inst] = b
	return b
}

type ckBody struct {
	Order string `json:"order"`
	Card  int    `json:"card"` // 0: the order's card; 1: the other card
}

type ckAnswer struct {
	Order    string `json:"order"`
	ChargeID string `json:"charge_id,omitempty"`
	Status   string `json:"status"`
}

// checkoutHandler is the BFF's /checkout.
func (w *world) checkoutHandler(b *bff, rw http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var body ckBody
	o := (*order)(nil)
	if err := json.NewDecoder(r.Body).Decode(&body); err == nil {
		o = w.byID[body.Order]
	}
	if o == nil {
		guard.MarkFinal(ctx)
		writeCk(rw, http.StatusBadRequest, ckAnswer{Order: body.Order, Status: "bad request"})
		return
	}
	key, _ := guard.KeyFrom(ctx)
	w.handlerRuns(ctx, o, key)
	chargeKey := key
	if ckBroken.noGuardKey {
		chargeKey = ""
	}
	v := canonical
	if body.Card == 1 {
		v = otherParams
	}
	rid := "?"
	if cr := ckReqOf(ctx); cr != nil {
		rid = cr.id
		if h := cr.hold; h != nil {
			// A double click: the other request arrives while this one
			// holds the key. (Held here, not in the guard's Reserve: there
			// the claim's heartbeat would start after a jump past its
			// lease and lose it at once on its own goroutine, a race.)
			cr.hold = nil
			h()
		}
	}
	// The handler charges under a context that the guard's lease loss does
	// not end: the guard cancels it from a real-time heartbeat, which under
	// the virtual clock would fire at a moment the seed does not fix. The
	// store's owner check is what keeps a request that lost its lease from
	// recording its answer over another's (its Close fails).
	res := w.bffCharge(context.WithoutCancel(ctx), b.inst, o, v, chargeKey, rid+"h")
	switch {
	case ckBroken.unknownAsDecline && res.out == outUnknown:
		res.out = outFailed
	case ckBroken.pendingAsPaid && res.out == outPending:
		res.out = outSucceeded
	}
	status, ans := answerOf(o, res)
	switch status {
	case http.StatusPaymentRequired:
		guard.MarkFinal(ctx)
	case http.StatusServiceUnavailable:
		if !ckBroken.releaseOn503 {
			guard.MarkUnsettled(ctx)
		}
		rw.Header().Set("Retry-After", "1")
	}
	if status != http.StatusServiceUnavailable {
		w.ckStorable(key, status, ans)
	}
	writeCk(rw, status, ans)
}

// answerOf maps a charge's outcome to the BFF's answer.
func answerOf(o *order, res result) (int, ckAnswer) {
	switch res.out {
	case outSucceeded:
		return http.StatusOK, ckAnswer{Order: o.id, ChargeID: res.chargeID, Status: "paid"}
	case outPending:
		return http.StatusAccepted, ckAnswer{Order: o.id, ChargeID: res.chargeID, Status: "pending"}
	case outFailed:
		return http.StatusPaymentRequired, ckAnswer{Order: o.id, Status: "declined"}
	}
	return http.StatusServiceUnavailable, ckAnswer{Order: o.id, Status: "unknown, retry"}
}

func ckJSON(a ckAnswer) []byte {
	b, _ := json.Marshal(a)
	return append(b, '\n')
}

func writeCk(rw http.ResponseWriter, status int, a ckAnswer) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_, _ = rw.Write(ckJSON(a))
}

// ckWire is an answer as the oracle compares them: status, type, body.
func ckWire(status int, ctype string, body []byte) string {
	return fmt.Sprintf("%d %s %s", status, ctype, body)
}

// ckStorable notes an answer the guard may store for key.
func (w *world) ckStorable(key string, status int, a ckAnswer) {
	w.ck.mu.Lock()
	defer w.ck.mu.Unlock()
	if k := w.ck.keys[key]; k != nil {
		k.storable = append(k.storable, ckWire(status, "application/json", ckJSON(a)))
	}
}

// bffCharge is the handler's Charge: the shop's request for the order and
// card, under the guard's key.
func (w *world) bffCharge(ctx context.Context, inst *instance, o *order, v variant, key, id string) result {
	c := w.newCall(ctx, inst, o, "charge", v, id)
	if rec, ok, err := w.load(ctx, o.id); err == nil && ok && rec.state == "succeeded" {
		c.settledBefore = true
	}
	req := w.prov.request(o, v)
	req.Key = key
	c.trace("CHARGE %s key=%q amount=%d (the BFF's handler)", v, req.Key, req.Amount)
	res := inst.cl.charge(c.ctx, req)
	w.ck.mu.Lock()
	for _, k := range []string{key, res.key} {
		if k != "" {
			w.ck.sent[k] = true
		}
	}
	w.ck.mu.Unlock()
	w.endCall(c, res)
	w.settleStep() // what its pauses started ends before the handler answers
	return res
}

// feAnswer is what one frontend request got.
type feAnswer struct {
	status   int
	retry    time.Duration
	lost     bool // no answer: lost, timed out, or the process died
	late     bool // timed out: the frontend resends later, not now
	replayed bool
	ans      ckAnswer
}

// feRequest sends one checkout request to inst's BFF and judges its answer.
func (w *world) feRequest(o *order, inst *instance, key string, v variant, rid string, hold func()) feAnswer {
	b := w.bffOf(inst)
	card := 0
	if v == otherParams {
		card = 1
	}
	body, _ := json.Marshal(ckBody{Order: o.id, Card: card})
	cr := &ckReq{id: rid, o: o, ops: map[string]int{}, hold: hold, key: key}
	req := httptest.NewRequest(http.MethodPost, "http://bff.sim/checkout", bytes.NewReader(body))
	req = req.WithContext(context.WithValue(context.Background(), ckReqKey{}, cr))
	req.Header.Set(guard.HeaderKey, key)
	req.Header.Set("Content-Type", "application/json")
	who := "fe/" + rid
	w.tr.add(o.id, who, "POST /checkout to %s key=%s card=%d", inst.name, key, card)
	rec := httptest.NewRecorder()
	b.h.ServeHTTP(rec, req)
	// What the request left running (a pause's calls, a flight whose
	// caller left) ends before the frontend goes on, as after a step.
	w.settleStep()
	if inst.dead.Load() {
		w.tr.add(o.id, who, "no answer: %s died", inst.name)
		return feAnswer{lost: true}
	}
	a := feAnswer{status: rec.Code, replayed: rec.Header().Get(guard.HeaderReplayed) == "true"}
	_ = json.Unmarshal(rec.Body.Bytes(), &a.ans)
	if s, err := strconv.Atoi(rec.Header().Get("Retry-After")); err == nil {
		a.retry = time.Duration(s) * time.Second
	}
	w.tr.add(o.id, who, "<- %d replayed=%v %s", a.status, a.replayed, bytes.TrimSpace(rec.Body.Bytes()))
	w.judgeAnswer(o, key, rid, a, ckWire(rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes()))
	if cr.ran && !a.replayed && promising(a) {
		w.ck.mu.Lock()
		if k := w.ck.keys[key]; k != nil {
			k.promised, k.promiser = true, rid
		}
		w.ck.mu.Unlock()
	}
	return a
}

// promising reports an answer of the handler that the guard must stand
// by: final (paid, pending, declined), or unknown and marked unsettled.
func promising(a feAnswer) bool {
	switch a.status {
	case http.StatusOK, http.StatusAccepted, http.StatusPaymentRequired:
		return true
	case http.StatusServiceUnavailable:
		return a.ans.Status == "unknown, retry" && !ckBroken.releaseOn503
	}
	return false
}

// handlerRuns judges a run of the handler for key: none may follow an
// answer the guard had to stand by, until a Reopen frees the key (issue 16
// #2: the lock or the stored answer lost, by a crash or a store error).
func (w *world) handlerRuns(ctx context.Context, o *order, key string) {
	cr := ckReqOf(ctx)
	if cr == nil {
		return
	}
	cr.ran = true
	w.judgeLapsedRun(cr)
	w.ck.mu.Lock()
	k := w.ck.keys[key]
	promised, by := k != nil && k.promised, ""
	if promised {
		by = k.promiser
	}
	w.ck.mu.Unlock()
	if promised {
		hint := w.failedHint(o.id)
		if hint == "" {
			hint = hintGuardLock
		}
		w.or.report(checkCheckoutTwice, o.id, hint, "bff/%s: the handler runs again for key %s, after fe/%s was given an answer the guard had to stand by",
			cr.id, key, by)
	}
}

// judgeAnswer runs the checks that judge an answer when the BFF gives it.
func (w *world) judgeAnswer(o *order, key, rid string, a feAnswer, wire string) {
	ck := w.ck
	ck.mu.Lock()
	k := ck.keys[key]
	var storable []string
	first := false
	if a.replayed && a.status != http.StatusInternalServerError {
		if k.replay == "" {
			k.replay, first = wire, true
		}
		storable = slices.Clone(k.storable)
	}
	firstReplay := k.replay
	if a.status == http.StatusPaymentRequired {
		k.declined = true
	}
	ck.mu.Unlock()
	if a.replayed && a.status != http.StatusInternalServerError {
		if !first && wire != firstReplay {
			w.or.report(checkCheckoutReplay, o.id, "", "fe/%s: the replay for key %s is %q, an earlier replay was %q", rid, key, wire, firstReplay)
		}
		if !slices.Contains(storable, wire) {
			w.or.report(checkCheckoutReplay, o.id, "", "fe/%s: the replay for key %s, %q, is no answer the BFF gave for it (%q)", rid, key, wire, storable)
		}
	}
	switch a.status {
	case http.StatusOK:
		if t := w.prov.chargeTruth(o, a.ans.ChargeID); t != truthCharged {
			w.or.report(checkCheckoutFalse, o.id, "", "fe/%s: told 200 paid for charge %q (key %s), which the provider shows %s", rid, a.ans.ChargeID, key, t)
		}
	case http.StatusPaymentRequired:
		if n := w.prov.chargedKeys(o)[key]; n > 0 {
			w.or.report(checkCheckoutFalse, o.id, "", "fe/%s: told 402 declined for key %s, under which the provider made %d charge(s)", rid, key, n)
		}
	case http.StatusAccepted, http.StatusConflict, http.StatusServiceUnavailable:
	default:
		w.or.report(checkCheckoutAnswer, o.id, "", "fe/%s: the frontend sent one body per key and got %d: %+v", rid, a.status, a.ans)
	}
}

// feKey is the frontend's key of an attempt: what a browser generates.
func (w *world) feKey(o *order, attempt int) string {
	return fmt.Sprintf("ck-%s-a%d-%08x", o.id, attempt, w.d.bits("fe-key", o.id, attempt)&0xffffffff)
}

// startCheckout is the customer pressing "pay" for o.
func (w *world) startCheckout(o *order, id string) {
	o.mu.Lock()
	o.started = true
	o.mu.Unlock()
	fe := &feState{attempt: 1, v: canonical}
	w.ck.mu.Lock()
	w.ck.fe[o.id] = fe
	w.ck.mu.Unlock()
	w.newAttempt(o, fe)
	w.feRun(o, id)
}

func (w *world) newAttempt(o *order, fe *feState) {
	fe.key = w.feKey(o, fe.attempt)
	w.ck.mu.Lock()
	w.ck.keys[fe.key] = &ckKey{o: o, v: fe.v}
	w.ck.mu.Unlock()
}

// feRun is the frontend sending o's checkout until a final answer, a
// timeout, or feSends sends; then it waits for later.
func (w *world) feRun(o *order, id string) {
	fe := w.ck.fe[o.id]
	for n := 0; n < feSends && fe.final == 0; n++ {
		fe.sends++
		rid := fmt.Sprintf("%s.%d", id, fe.sends)
		a := w.feSend(o, fe, rid)
		switch {
		case a.late:
			w.tr.add(o.id, "fe/"+rid, "the frontend gave up waiting; it tries again later")
			return
		case a.lost:
			continue
		}
		switch a.status {
		case http.StatusOK, http.StatusAccepted:
			fe.final, fe.chargeID = a.status, a.ans.ChargeID
		case http.StatusPaymentRequired:
			if fe.attempt == 1 && w.d.chance(0.8, "fe-other-card", o.id) {
				w.tr.add(o.id, "fe/"+rid, "declined: the customer tries another card (a new key)")
				fe.attempt, fe.v = 2, otherParams
				w.newAttempt(o, fe)
				continue
			}
			fe.final = a.status
		case http.StatusConflict, http.StatusServiceUnavailable, http.StatusInternalServerError:
			w.advance(min(max(a.retry, time.Second), 15*time.Second), "the frontend waits Retry-After")
		default:
			return
		}
	}
}

// feSend is one send of the frontend, with its faults: it returns the
// answer the frontend takes.
func (w *world) feSend(o *order, fe *feState, rid string) feAnswer {
	live := w.live()
	inst := live[w.d.intn(len(live), "fe-inst", o.id, rid)]
	u := w.d.u("fe-fault", o.id, rid)
	if !w.faultsOn.Load() {
		u = 1
	}
	switch {
	case u < pFeLost:
		w.feRequest(o, inst, fe.key, fe.v, rid, nil)
		w.tr.add(o.id, "fe/"+rid, "FAULT the answer is lost on the way to the frontend")
		return feAnswer{lost: true}
	case u < pFeLost+pFeTimeout:
		w.feRequest(o, inst, fe.key, fe.v, rid, nil)
		w.tr.add(o.id, "fe/"+rid, "FAULT the frontend timed out before the answer came")
		return feAnswer{lost: true, late: true}
	case u < pFeLost+pFeTimeout+pFeDouble:
		return w.doubleClick(o, fe, inst, rid)
	}
	return w.feRequest(o, inst, fe.key, fe.v, rid, nil)
}

// doubleClick sends two requests with the same key: the second while the
// first holds the key (its handler has started), to the same instance or
// another, and sometimes only once the first's guard lease ran out.
func (w *world) doubleClick(o *order, fe *feState, inst *instance, rid string) feAnswer {
	second := inst
	if w.d.chance(0.5, "fe-double-other", o.id, rid) {
		second = w.other(inst, w.d.intn(4, "fe-double-pick", o.id, rid))
	}
	lapse := w.d.chance(0.3, "fe-double-lapse", o.id, rid)
	var b feAnswer
	ran := false
	hold := func() {
		ran = true
		if lapse {
			w.advance(guard.DefaultLease+w.d.between(time.Second, 5*time.Second, "fe-double-past", o.id, rid),
				"the first click stalls past its guard lease")
		}
		b = w.feRequest(o, second, fe.key, fe.v, rid+"b", nil)
	}
	w.tr.add(o.id, "fe/"+rid, "FAULT double click (second to %s, lapse=%v)", second.name, lapse)
	a := w.feRequest(o, inst, fe.key, fe.v, rid+"a", hold)
	if !ran {
		b = w.feRequest(o, second, fe.key, fe.v, rid+"b", nil)
	}
	// The frontend takes a final answer over one that is not.
	if !final(a) && final(b) {
		return b
	}
	return a
}

func final(a feAnswer) bool {
	return !a.lost && (a.status == http.StatusOK || a.status == http.StatusAccepted || a.status == http.StatusPaymentRequired)
}

// checkoutStep is one step of a checkout world's story.
func (w *world) checkoutStep(ctx context.Context, i int) {
	id := fmt.Sprintf("s%d", i)
	if un := w.unstarted(); len(un) > 0 && (len(un) >= w.cfg.steps-i || w.rng.Float64() < 0.5) {
		w.startCheckout(un[0], id)
		return
	}
	switch u := w.rng.Float64(); {
	case u < 0.30: // the frontend tries a waiting checkout again
		if o := w.pickOrder(func(o *order) bool { fe := w.ck.fe[o.id]; return fe != nil && fe.final == 0 }); o != nil {
			w.feRun(o, id)
		}
	case u < 0.55:
		w.ckJump()
	case u < 0.65:
		w.customer(ctx, id)
	case u < 0.80:
		w.reconcile(ctx, w.pickInst(), id, false)
	case u < 0.88:
		if o := w.pickOrder(nil); o != nil {
			w.settle(ctx, w.pickInst(), o, id)
		}
	case u < 0.92:
		if w.crash != nil && w.rng.Float64() < 0.6 { // (no draw in other worlds: their stories stay)
			w.storeCrash(ctx)
			return
		}
		w.kill(w.pickInst(), "the host dies")
	default:
		w.advance(time.Duration(1+w.rng.IntN(20))*time.Second, "the world goes on")
	}
}

// reconcile is a BFF's worker for its locked keys: it asks the Client
// what became of each one's charge and records that answer with
// Guard.Settle. Once the faults stopped (final), a key Settle cannot tell
// is reopened: its retry runs the handler, which charges under the key.
func (w *world) reconcile(ctx context.Context, inst *instance, id string, final bool) {
	b := w.bffOf(inst)
	var keys []string
	for u, err := range b.g.Unsettled(ctx) {
		if err != nil {
			w.tr.add("", "bff-"+inst.name+"/"+id, "Unsettled: %v", err)
			break
		}
		keys = append(keys, u.Key)
	}
	for n, key := range keys {
		w.ck.mu.Lock()
		k := w.ck.keys[key]
		w.ck.mu.Unlock()
		if k == nil {
			continue
		}
		cid := fmt.Sprintf("%s.r%d", id, n)
		res := w.settle(ctx, inst, k.o, cid)
		status, ans := answerOf(k.o, res)
		who := "bff-" + inst.name + "/" + cid
		if status == http.StatusServiceUnavailable || (status != http.StatusOK && res.key != key) {
			if final {
				err := b.g.Reopen(ctx, "-", key)
				if err == nil {
					w.ck.mu.Lock()
					k.promised = false
					w.ck.mu.Unlock()
				}
				w.tr.add(k.o.id, who, "reconcile %s: Settle cannot tell (%s, key %s); Reopen: %v", key, res.out, res.key, err)
			}
			continue
		}
		w.ckStorable(key, status, ans)
		body := ckJSON(ans)
		if ckBroken.settleOtherBody {
			body = append(body, ' ')
		}
		err := b.g.Settle(ctx, "-", key, guard.Response{Status: status,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: body})
		w.tr.add(k.o.id, who, "reconcile %s: Guard.Settle %d: %v", key, status, err)
	}
}

// checkoutStory is a checkout world's seed, after start: the steps, the
// world's quiet phase (the Clients resume), then the BFFs' and the
// frontends' (reconcile, and every checkout without a final answer sent
// again with its key), then the checks.
func (w *world) checkoutStory(ctx context.Context) {
	for _, o := range w.orders {
		o.frontendKey = "" // the frontend's key is the guard's, passed through
	}
	for i := range w.cfg.steps {
		w.checkoutStep(ctx, i)
		w.webhookStep(i)
		w.settleStep()
	}
	w.quiet(ctx)
	for round := range 3 {
		for _, inst := range w.live() {
			w.reconcile(ctx, inst, fmt.Sprintf("q%d.%s", round, inst.name), true)
		}
		for _, o := range w.orders {
			if fe := w.ck.fe[o.id]; fe != nil && fe.final == 0 {
				w.feRun(o, fmt.Sprintf("q%d", round))
			}
		}
		w.bg.Wait()
		w.advance(guard.DefaultLease+time.Second, "past every guard lease")
	}
}

// checkoutFinal judges the whole seed's checkouts.
func (o *oracle) checkoutFinal() {
	w := o.w
	for _, ord := range w.orders {
		if n := w.prov.charges(ord); n > 1 {
			o.report(checkCheckoutDouble, ord.id, w.doubleHint(ord), "the provider made %d charges for one checkout (keys %v)", n, w.prov.chargedKeys(ord))
		}
		fe := w.ck.fe[ord.id]
		if fe == nil {
			continue
		}
		w.ck.mu.Lock()
		var declined []string
		for key, k := range w.ck.keys {
			if k.o == ord && k.declined {
				declined = append(declined, key)
			}
		}
		w.ck.mu.Unlock()
		slices.Sort(declined)
		for _, key := range declined {
			if n := w.prov.chargedKeys(ord)[key]; n > 0 {
				o.report(checkCheckoutFalse, ord.id, "", "the BFF answered 402 declined for key %s, and the provider holds %d charge(s) made with it", key, n)
			}
		}
		switch t := w.prov.truth(ord); {
		case t == truthCharged && !w.bffCharged(ord):
			// Only the world's other callers (a pause's same-process or
			// takeover charge, with keys of their own) charged the order;
			// the BFF's answers were true of its own attempts.
		case t == truthCharged && fe.final != http.StatusOK && fe.final != http.StatusAccepted:
			o.report(checkCheckoutSettled, ord.id, "", "the money moved, and after the quiet phase the frontend's last answer is %d (key %s)", fe.final, fe.key)
		case t == truthCharged && w.prov.chargeTruth(ord, fe.chargeID) != truthCharged:
			o.report(checkCheckoutSettled, ord.id, "", "the money moved, and the frontend was told %d for charge %q, which the provider shows %s",
				fe.final, fe.chargeID, w.prov.chargeTruth(ord, fe.chargeID))
		}
		// (A checkout the provider shows no charge for may stay without a
		// final answer: a Stripe key whose first answer was a 500 is
		// answered that 500 for a day, and its search lags; the key stays
		// locked, unknown, rather than risk a second charge.)
	}
}

// ckJump moves time on as a checkout sees it: seconds, past a guard lease,
// past a client lease, an hour or two; never past the keys' day-long
// windows, which no frontend retries across (a checkout is minutes).
func (w *world) ckJump() {
	r := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(w.rng.Float64()*float64(hi-lo)) }
	var d time.Duration
	switch u := w.rng.Float64(); {
	case u < 0.45:
		d = r(time.Second, 9*time.Second)
	case u < 0.70:
		d = guard.DefaultLease + r(time.Second, 20*time.Second)
	case u < 0.92:
		d = simLease + r(time.Second, 2*time.Minute)
	default:
		d = r(time.Hour, 3*time.Hour)
	}
	w.advance(d, "the world goes on")
}

// bffCharged reports whether a charge of o was made with a key a BFF's
// handler sent (the frontend's, or one idempay chose for a keyless charge).
func (w *world) bffCharged(o *order) bool {
	w.ck.mu.Lock()
	defer w.ck.mu.Unlock()
	for key, n := range w.prov.chargedKeys(o) {
		if n > 0 && (w.ck.sent[key] || w.ck.keys[key] != nil) {
			return true
		}
	}
	return false
}
