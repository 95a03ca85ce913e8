package fleet

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/memstore"
)

// TestFailedOnlyWhenNoCallCouldHaveCharged guards two answers that were once
// "failed" and must be "unknown". Instance A of a fleet charges an intent; the
// server charges it and the answer is lost, so A reports unknown and leaves
// the key open, as it should. Instance B then charges the same intent (a
// retry landing on another instance), and B's call ends before it reaches
// the store:
//
//   - reserve error: B's Reserve fails (a timeout or a failover of the
//     shared store; what makes a store shared also makes it remote).
//     Client.charge once reported every Reserve error as OutcomeFailed;
//   - finished context: B is called with a context that is already done
//     (the caller's own deadline passed). Client.Charge once reported
//     OutcomeFailed before looking at the store.
//
// "Nothing was sent" is true of B's call only. The intent's key was sent
// by an earlier call, and here the money moved. A caller told "failed" may
// ask for another card under a new intent and charge the customer twice.
// B cannot know whether a record exists, so the outcome is unknown (the
// outcome rules: failed only if no attempt, of any call, could have moved
// money), unless the store proves that it holds no record for the intent.
func TestFailedOnlyWhenNoCallCouldHaveCharged(t *testing.T) {
	cases := []struct {
		name string
		cut  func(*reserveFails) context.Context
	}{
		{"reserve error", func(s *reserveFails) context.Context {
			s.fail.Store(true)
			return context.Background()
		}},
		{"finished context", func(*reserveFails) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, url, stop := refserver.Start(refserver.Config{})
			defer stop()
			shared := memstore.New()
			one := func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 }
			a := newClient(t, url, shared, time.Minute, one)
			flaky := &reserveFails{KeyStore: shared}
			b := newClient(t, url, flaky, time.Minute, one)
			req := request("bug", 0)

			srv.InjectNext(refserver.Post) // charged, and the answer lost
			_, err := a.Charge(context.Background(), req)
			if idempay.OutcomeOf(err) != idempay.OutcomeUnknown {
				t.Fatalf("instance A: %v; want an unknown outcome", err)
			}
			if n := srv.Ledger().Count(req.IntentID); n != 1 {
				t.Fatalf("the ledger holds %d charges for %s, want 1", n, req.IntentID)
			}

			_, err = b.Charge(tc.cut(flaky), req)
			if o := idempay.OutcomeOf(err); o != idempay.OutcomeUnknown {
				t.Errorf("instance B reports %s (%v); the intent was charged (%d charge in the ledger), "+
					"so the outcome is unknown", o, err, srv.Ledger().Count(req.IntentID))
			}
		})
	}
}

// reserveFails is a shared store whose Reserve fails once fail is set, as
// a store behind a network does now and then.
type reserveFails struct {
	idempay.KeyStore
	fail atomic.Bool
}

func (s *reserveFails) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if s.fail.Load() {
		return idempay.Reservation{}, errors.New("i/o timeout")
	}
	return s.KeyStore.Reserve(ctx, r)
}
