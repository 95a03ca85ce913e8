package idempay_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panicky is the own API with a switch to panic in one of its methods.
type panicky struct {
	idempay.OwnAPI
	where string
}

func (p panicky) NewChargeRequest(ctx context.Context, t idempay.Target, req idempay.ChargeRequest, key string) (*http.Request, error) {
	if p.where == "build" {
		panic("adapter bug while building tokn_PANIC_SECRET")
	}
	return p.OwnAPI.NewChargeRequest(ctx, t, req, key)
}

func (p panicky) ReadCharge(resp *http.Response, body []byte) idempay.Verdict {
	switch p.where {
	case "read":
		panic("adapter bug while reading")
	case "succeeded-without-charge":
		return idempay.Verdict{Kind: idempay.KindSucceeded}
	}
	return p.OwnAPI.ReadCharge(resp, body)
}

// panickyStore panics in one of its methods once armed.
type panickyStore struct {
	idempay.KeyStore
	where string
	armed atomic.Bool
}

func (s *panickyStore) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if s.where == "reserve" && s.armed.Load() {
		panic("store bug in Reserve")
	}
	return s.KeyStore.Reserve(ctx, r)
}

func (s *panickyStore) Resolve(ctx context.Context, res idempay.Resolution) error {
	if s.where == "resolve" && s.armed.Load() {
		panic("store bug in Resolve")
	}
	return s.KeyStore.Resolve(ctx, res)
}

// Rule: a panic anywhere in a flight ends that call with outcome unknown
// and a *PanicError; the process lives, the intent stays open (or was never
// reserved), and the next call resumes it.
func TestPanicsInAFlightAreContained(t *testing.T) {
	cases := []struct {
		name      string
		provider  string
		store     string
		newKey    bool
		clock     bool
		reserved  bool // the record exists after the panic
		wantPanic bool
	}{
		{name: "adapter builds", provider: "build", reserved: true, wantPanic: true},
		{name: "adapter reads", provider: "read", reserved: true, wantPanic: true},
		{name: "OwnAPI.Encode", provider: "encode", reserved: true, wantPanic: true},
		{name: "succeeded without a charge", provider: "succeeded-without-charge", reserved: true},
		{name: "store Reserve", store: "reserve", wantPanic: true},
		{name: "store Resolve", store: "resolve", reserved: true, wantPanic: true},
		{name: "NewKey", newKey: true, wantPanic: true},
		{name: "Clock", clock: true, wantPanic: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memstore.New()
			store := &panickyStore{KeyStore: mem, where: tc.store}
			store.armed.Store(true)
			s := newStub(t, mem, created("ch_p"))
			var logs syncBuffer
			var clockArmed atomic.Bool
			clockArmed.Store(tc.clock)
			c := newClient(t, s.server.URL, store, func(cfg *idempay.Config) {
				cfg.Provider = panicky{where: tc.provider}
				if tc.provider == "encode" {
					cfg.Provider = idempay.OwnAPI{Encode: func(idempay.ChargeRequest) ([]byte, string, error) { panic("encoder bug") }}
				}
				cfg.Retry.MaxAttempts = 1
				cfg.Lease = idempay.MinLease
				cfg.Logger = newTextLogger(&logs)
				if tc.newKey {
					cfg.NewKey = func() string { panic("key generator bug") }
				}
				cfg.Clock = func() time.Time {
					if clockArmed.Load() {
						panic("clock bug")
					}
					return time.Now()
				}
			})
			req := order("o")
			req.Source = "tokn_PANIC_SECRET"
			_, err := c.Charge(context.Background(), req)
			require.Error(t, err)
			assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
			var pe *idempay.PanicError
			if tc.wantPanic {
				require.ErrorAs(t, err, &pe)
				assert.NotEmpty(t, pe.Stack)
				assert.Contains(t, logs.String(), "panic in a flight")
			}
			assert.NotContains(t, err.Error()+logs.String(), "SECRET", "the panic value is redacted")
			rec, lerr := mem.Load(context.Background(), c.Namespace(), "o")
			if !tc.reserved {
				if lerr == nil {
					assert.NotEqual(t, idempay.StateFailed, rec.State)
				}
				return
			}
			require.NoError(t, lerr)
			assert.False(t, rec.State.Closed(), "the record stays open: nothing proved")

			// Healthy again: the next call resumes with the same key, at
			// once if the lease could be given back, else once it runs out.
			store.armed.Store(false)
			clockArmed.Store(false)
			c2 := newClient(t, s.server.URL, mem)
			var ch *idempay.Charge
			require.Eventually(t, func() bool {
				ch, err = c2.Charge(context.Background(), req)
				return !errors.Is(err, idempay.ErrInProgress)
			}, 2*time.Second, 10*time.Millisecond)
			require.NoError(t, err)
			assert.Equal(t, rec.Key, ch.Key)
		})
	}
}

func newTextLogger(w *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
