package guard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idempay/idempay"
)

// final is the state a claimed request's record ends in: closed with the
// response, or released (StateOpen) keeping result, the lock of an
// unsettled request.
type final struct {
	state  idempay.State
	result []byte
}

// write ends cl with f. Both writes name the claim's owner, so a request
// whose lease was taken over while its handler ran changes nothing of the
// record the other request is running (idempay.ErrLeaseLost). Both are
// durable (the guard's ClaimConfig says Durable).
func (f final) write(ctx context.Context, cl *idempay.Claim) error {
	if f.state == idempay.StateOpen {
		return cl.ReleaseWith(ctx, f.result)
	}
	return cl.CloseAsOwner(ctx, f.state, f.result)
}

// errGaveUp: the store refused the record's final state for a whole lease.
var errGaveUp = errors.New("guard: store did not take the record's final state within a lease")

// firstRetryWait is the wait before the first try again of a final write;
// it doubles up to a third of the lease.
const firstRetryWait = 2 * time.Millisecond

// maxRenewFailures bounds how often in a row the store may refuse to give
// the lease back to persist before it gives up: with the waits doubling,
// about a quarter of a second of a store out of reach.
const maxRenewFailures = 8

// maxWriteFailures bounds how often the store may refuse the write itself
// while it gives the lease back, for a guard's clock that does not move (a
// virtual one): with the waits at a third of the lease, about four leases.
const maxWriteFailures = 16

// persist writes f through claim. If mustLand, a store error does not end
// it: it takes the lease again as the same owner (so no retry of the
// request can take the key meanwhile) and writes again, until f is written
// or the record is another request's. It gives up (errGaveUp) once the
// store has refused the lease maxRenewFailures times in a row, or has not
// taken f within a lease of the first failure on the guard's clock (or
// maxWriteFailures times): the request must end, and its answer says the
// outcome is not recorded. A store that gives the lease back but refuses
// every write would otherwise keep the request, and its client, for ever.
func (g *Guard) persist(ctx context.Context, claim *idempay.Claim, f final, mustLand bool) error {
	ctx = context.WithoutCancel(ctx) // the client gone or not, the record must end right
	err := f.write(ctx, claim)
	if err == nil || !mustLand || errors.Is(err, idempay.ErrLeaseLost) {
		return err
	}
	rec := claim.Record()
	req := idempay.ReserveRequest{Namespace: g.ns, ID: rec.ID, Attempt: rec.Attempt,
		Key: rec.Key, Fingerprint: rec.Fingerprint, Owner: claim.Owner()}
	giveUp, wait, refused, failed := g.cfg.clock().Add(g.cfg.lease), firstRetryWait, 0, 1
	for {
		if errors.Is(err, idempay.ErrAlreadyResolved) {
			return g.landed(ctx, req, f) // an earlier try's reply was lost
		}
		if !g.cfg.clock().Before(giveUp) || refused >= maxRenewFailures || failed >= maxWriteFailures {
			return fmt.Errorf("%w: %w", errGaveUp, err)
		}
		if serr := sleep(ctx, wait); serr != nil {
			return serr
		}
		wait = min(2*wait, g.cfg.lease/3)
		cl, res, rerr := g.claims.Reserve(ctx, req)
		switch {
		case rerr != nil:
			err, refused = rerr, refused+1
			continue
		case cl == nil:
			return written(res.Record, f)
		}
		refused = 0
		if err = f.write(ctx, cl); err == nil || errors.Is(err, idempay.ErrLeaseLost) {
			return err
		}
		failed++
	}
}

// landed reads the record after a write was refused as already resolved.
func (g *Guard) landed(ctx context.Context, req idempay.ReserveRequest, f final) error {
	rec, err := g.store.Load(ctx, req.Namespace, req.ID)
	if err != nil {
		return fmt.Errorf("guard: load after a lost reply: %w", err)
	}
	return written(rec, f)
}

// written reports whether rec, which this request could not claim again,
// already holds f (an earlier try landed and its reply was lost), or is
// another request's now (idempay.ErrLeaseLost).
func written(rec idempay.Record, f final) error {
	if rec.State == f.state && rec.State.Closed() && bytes.Equal(rec.Result, f.result) {
		return nil
	}
	return fmt.Errorf("guard: record taken over while its final state was written: %w", idempay.ErrLeaseLost)
}
