package guard

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"time"

	"github.com/idempay/idempay"
)

// Response is an answer the application records for an unsettled request
// with Guard.Settle: what every retry with the key gets from then on.
type Response struct {
	Status int         // 200 to 499
	Header http.Header // filtered like a handler's: replay headers only, never secret ones
	Body   []byte      // replayed byte for byte
}

// UnsettledRequest is a request whose handler marked it unsettled and did
// not answer it for good: its key is locked until Settle or Reopen.
type UnsettledRequest struct {
	Identity string
	Key      string
	Method   string
	Path     string
	Since    time.Time // when the handler gave up, on the guard's clock
}

// settleTries bounds how often Settle and Reopen try to take a key that a
// retry holds for an instant (it holds it for one store round trip).
const settleTries = 5

// Settle records resp as the answer to the unsettled request of identity
// and key, once the application knows what happened (a payment looked up,
// a reconciliation done): every retry with the key is then answered resp,
// marked replayed. The write is durable. It returns ErrNotFound,
// ErrNotUnsettled (nothing changed: the request is running, was released,
// or is answered already), ErrBusy, an error matching ErrInvalidResponse,
// or the store's error.
func (g *Guard) Settle(ctx context.Context, identity, key string, resp Response) error {
	if resp.Status < 200 || resp.Status > 499 {
		return fmt.Errorf("%w: status %d is not between 200 and 499", ErrInvalidResponse, resp.Status)
	}
	if len(resp.Body) > g.cfg.maxResponse {
		return fmt.Errorf("%w: body of %d bytes is over the limit of %d", ErrInvalidResponse, len(resp.Body), g.cfg.maxResponse)
	}
	body := resp.Body
	if body == nil {
		body = []byte{}
	}
	s := stored{Kind: kindResponse, Status: resp.Status, Header: keepHeaders(resp.Header, g.cfg.replay, g.cfg.secret), Body: body}
	return g.withUnsettled(ctx, identity, key, func(cl *idempay.Claim) error {
		return cl.Close(ctx, closedState(resp.Status), "", s.encode())
	})
}

// Reopen unlocks the unsettled request of identity and key so that its
// next retry runs the handler again: for when the application has made
// sure that running it again cannot repeat its effect (the charge it may
// have made was found not to exist, or is now looked up by the handler).
// Its errors are Settle's.
func (g *Guard) Reopen(ctx context.Context, identity, key string) error {
	return g.withUnsettled(ctx, identity, key, func(cl *idempay.Claim) error {
		return cl.Close(ctx, idempay.StateFailed, "", releasedResult)
	})
}

// withUnsettled takes the lease of an unsettled record, checks under it
// that the record is still unsettled, and calls fn to end the claim.
func (g *Guard) withUnsettled(ctx context.Context, identity, key string, fn func(*idempay.Claim) error) error {
	id := recordID(identity, key)
	rec, err := g.store.Load(ctx, g.ns, id)
	if errors.Is(err, idempay.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("guard: load: %w", err)
	}
	wait := 5 * time.Millisecond
	for try := 1; ; try++ {
		if s, err := decodeStored(rec.Result); err != nil || s.Kind != kindUnsettled || rec.State.Closed() {
			return ErrNotUnsettled
		}
		claim, res, err := g.claims.Reserve(ctx, idempay.ReserveRequest{Namespace: g.ns, ID: id,
			Attempt: 1, Key: rec.Key, Fingerprint: rec.Fingerprint})
		if err != nil {
			return fmt.Errorf("guard: reserve: %w", err)
		}
		if claim != nil {
			return g.endUnsettled(ctx, claim, fn)
		}
		if try == settleTries {
			return ErrBusy
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		rec, wait = res.Record, wait*2
	}
}

// endUnsettled calls fn on a claim of a record that was unsettled when
// loaded, if it still is now that the lease is held.
func (g *Guard) endUnsettled(ctx context.Context, claim *idempay.Claim, fn func(*idempay.Claim) error) error {
	if s, err := decodeStored(claim.Record().Result); err != nil || s.Kind != kindUnsettled {
		_ = claim.Release(ctx)
		return ErrNotUnsettled
	}
	return fn(claim)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Unsettled yields every request of the guard's namespace whose key is
// locked as unsettled, page by page in the store's order, for the
// application to settle. An error ends the sequence.
func (g *Guard) Unsettled(ctx context.Context) iter.Seq2[UnsettledRequest, error] {
	const page = 100
	return func(yield func(UnsettledRequest, error) bool) {
		var after idempay.Cursor
		for {
			recs, err := g.store.ListOpen(ctx, g.ns, after, page)
			if err != nil {
				yield(UnsettledRequest{}, err)
				return
			}
			for _, rec := range recs {
				s, err := decodeStored(rec.Result)
				if err != nil || s.Kind != kindUnsettled {
					continue
				}
				u := UnsettledRequest{Identity: s.Identity, Key: rec.Key, Method: s.Method, Path: s.Path, Since: s.At}
				if !yield(u, nil) {
					return
				}
			}
			if len(recs) < page {
				return
			}
			after = idempay.CursorOf(recs[len(recs)-1])
		}
	}
}
