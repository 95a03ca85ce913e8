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
	cw := newCapture(w, g.cfg.maxResponse)
	returned := false
	defer func() {
		if !returned {
			status, _ := cw.result()
			ev.Outcome, ev.Status = g.giveBack(r.Context(), claim, req, r), max(status, http.StatusInternalServerError)
		}
	}()
	next.ServeHTTP(cw, r.WithContext(ctx))
	returned = true
	ev.Outcome = g.record(r.Context(), claim, req, r, cw)
	ev.Status, _ = cw.result()
}

// record closes the claim with the response if it is one to store, and
// gives the key back otherwise.
func (g *Guard) record(ctx context.Context, claim *idempay.Claim, req *request, r *http.Request, cw *capture) Outcome {
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
	if err := claim.Close(ctx, closedState(status), "", s.encode()); err != nil {
		g.warn(ctx, "guard: response not recorded; a retry runs the handler again once the lease runs out", claim.Record().IntentID, err)
		return Unrecorded
	}
	return o
}

// giveBack releases the key for a retry, or keeps it locked as unsettled.
func (g *Guard) giveBack(ctx context.Context, claim *idempay.Claim, req *request, r *http.Request) Outcome {
	o, result := Released, []byte(nil)
	if req.unsettled.Load() {
		o = Unsettled
		result = stored{Kind: kindUnsettled, Identity: req.identity, Method: r.Method, Path: r.URL.Path,
			At: g.cfg.clock().UTC()}.encode()
	}
	err := claim.ReleaseWith(ctx, result)
	switch {
	case err == nil:
	case errors.Is(err, idempay.ErrLeaseLost) && o == Released:
		// Taken over after the lease ran out: nothing left to give back.
	default:
		g.warn(ctx, "guard: key not given back; it frees itself when the lease runs out", claim.Record().IntentID, err)
		if o == Unsettled {
			// Not locked: a retry after the lease runs out runs the
			// handler again. Say so to whoever watches.
			return Unrecorded
		}
	}
	return o
}

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
