package guard

import (
	"context"
	"errors"
	"net/http"

	"github.com/idempay/idempay"
)

// run calls the handler under the claim and records what it answered. The
// handler's context ends early, with idempay.ErrLeaseLost as its cause, if
// the lease is lost (the store was out of reach for a whole lease, and
// another request may be running the handler now). A panic or
// runtime.Goexit releases the key, or keeps it locked if the handler
// marked the request unsettled, and goes on.
func (g *Guard) run(w http.ResponseWriter, r *http.Request, next http.Handler, claim *idempay.Claim, ev *Event) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	stop := context.AfterFunc(claim.Context(), func() { cancel(context.Cause(claim.Context())) })
	defer stop()
	req := fromContext(ctx)
	// Held: every answer below 500 (it may be stored: a 2xx, or a 4xx whose
	// MarkFinal comes late) and every answer of an unsettled request.
	hold := func(status int) bool { return req.unsettled.Load() || status < 500 }
	locked := false // pin wrote the lock before the answer streamed
	pin := func(status int) bool {
		switch {
		case req.unsettled.Load():
			return false // it waits for its lock
		case !storable(status, req.final.Load()):
			return true // released at the end: nothing to stand by
		}
		locked = g.pin(r.Context(), claim, req, r) == nil
		return locked
	}
	cw := newCapture(w, g.cfg.maxResponse, hold, pin)
	returned := false
	defer func() {
		if !returned {
			status, _ := cw.result()
			ev.Outcome, ev.Status = g.giveBack(r.Context(), claim, req, r), max(status, http.StatusInternalServerError)
		}
	}()
	next.ServeHTTP(cw, r.WithContext(ctx))
	returned = true
	ev.Outcome = g.record(r.Context(), claim, req, r, cw, locked)
	ev.Status, _ = cw.result()
	g.answerHeld(w, cw, ev)
}

// answerHeld sends the response held while its record was written, or,
// if the record's final state could not be written, drops it and answers
// 503 in its place: the client must not take the handler's answer while
// its retry could run the handler again. A response that was not held (a
// released one, or one that streamed once its key was locked) is out
// already.
func (g *Guard) answerHeld(w http.ResponseWriter, cw *capture, ev *Event) {
	if ev.Outcome != Unrecorded || !cw.discard() {
		cw.send()
		return
	}
	p := plainProblem(http.StatusServiceUnavailable, CodeStoreDown,
		"The outcome of this request could not be recorded yet; retry with the same key, never with a new one.")
	p.retryAfter = g.cfg.lease
	ev.Status = p.Status
	p.write(w)
}

// record closes the claim with the response if it is one to store, and
// gives the key back otherwise. locked: the key was locked before the
// answer streamed, and stays so if the close fails.
func (g *Guard) record(ctx context.Context, claim *idempay.Claim, req *request, r *http.Request, cw *capture, locked bool) Outcome {
	status, header := cw.result()
	if !storable(status, req.final.Load()) {
		return g.giveBack(ctx, claim, req, r)
	}
	s := stored{Kind: kindResponse, Status: status, Header: keepHeaders(header, g.cfg.replay, g.cfg.secret), Body: cw.body}
	o := Stored
	if cw.overflow {
		s, o = stored{Kind: kindNotStored, Status: status}, NotStored
	}
	if s.Body == nil && s.Kind == kindResponse {
		s.Body = []byte{}
	}
	// Written again after a store error while the lease can be kept: the
	// client is answered only once this lands (capture held it), or the
	// key was locked before the answer streamed.
	err := g.persist(ctx, claim, final{state: closedState(status), result: s.encode()}, true)
	switch {
	case err == nil:
		return o
	case locked:
		g.warn(ctx, "guard: streamed response not recorded; the key stays locked as unsettled until Settle", claim.Record().ID, err)
		return Unsettled
	}
	g.warn(ctx, "guard: response not recorded; answered 503 in its place", claim.Record().ID, err)
	return Unrecorded
}

// pin locks the key while the handler still runs, before a response the
// guard would store streams to the client: the lock an unsettled request
// leaves, written durably, so that whatever becomes of the close (a store
// out of reach for a lease, a crash), a retry is refused until Settle
// instead of running the handler again. The store's write gives the lease
// back, so the claim takes it again at once as the same owner; a retry
// that claims the record in between finds the lock and is refused. A
// write that failed may have landed: the lease is taken again either way.
func (g *Guard) pin(ctx context.Context, claim *idempay.Claim, req *request, r *http.Request) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.cfg.lease)
	defer cancel()
	rec := claim.Record()
	err := g.store.Resolve(ctx, idempay.Resolution{Namespace: g.ns, ID: rec.ID, Key: rec.Key,
		State: idempay.StateOpen, Result: g.lock(req, r), LeaseOwner: claim.Owner(), Durable: true})
	claim.Renew()
	if err != nil {
		g.warn(ctx, "guard: key not locked before streaming; the response is held until it is recorded", rec.ID, err)
	}
	return err
}

// lock is the Result of a record locked as unsettled.
func (g *Guard) lock(req *request, r *http.Request) []byte {
	return stored{Kind: kindUnsettled, Identity: req.identity, Method: r.Method, Path: r.URL.Path,
		At: g.cfg.clock().UTC()}.encode()
}

// giveBack releases the key for a retry, or keeps it locked as unsettled.
func (g *Guard) giveBack(ctx context.Context, claim *idempay.Claim, req *request, r *http.Request) Outcome {
	if !req.unsettled.Load() {
		g.release(ctx, claim)
		return Released
	}
	if err := g.persist(ctx, claim, final{state: idempay.StateOpen, result: g.lock(req, r)}, true); err != nil {
		// Not locked: a retry that finds the lease run out runs the
		// handler again. Say so to whoever watches.
		g.warn(ctx, "guard: unsettled request not locked; a retry may run the handler again", claim.Record().ID, err)
		return Unrecorded
	}
	return Unsettled
}

// release gives a claimed key back for a retry: the record is closed as
// released (so that Expire deletes it in time), and the next request with
// the key begins its next attempt. Taken over after the lease ran out is
// fine: nothing left to give back. Anything else frees itself with the
// lease.
func (g *Guard) release(ctx context.Context, claim *idempay.Claim) {
	err := claim.CloseAsOwner(ctx, idempay.StateFailed, releasedResult)
	if err != nil && !errors.Is(err, idempay.ErrLeaseLost) {
		g.warn(ctx, "guard: key not given back; it frees itself when the lease runs out", claim.Record().ID, err)
	}
}

var releasedResult = stored{Kind: kindReleased}.encode()

// storable reports whether a response is the request's final answer: a
// 2xx, or below 500 and marked final.
func storable(status int, final bool) bool {
	return (status >= 200 && status < 300) || (final && status < 500)
}

func closedState(status int) idempay.State {
	if status < 300 {
		return idempay.StateSucceeded
	}
	return idempay.StateFailed
}
