package idempayotel

import (
	"context"
	"time"

	"github.com/idempay/idempay"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// AttrStoreMethod names the KeyStore method timed in idempay.store.duration.
const AttrStoreMethod = attribute.Key("idempay.store.method")

// Store returns s with every call timed in idempay.store.duration, by
// method and whether it failed. It changes nothing else: every answer and
// error is s's own. If the meter refuses the instrument, s is returned as
// it is.
func Store(s idempay.KeyStore, opts ...Option) idempay.KeyStore {
	in, err := newInstruments(newConfig(opts).meters)
	if err != nil || s == nil {
		return s
	}
	return &timedStore{s: s, h: in.store}
}

type timedStore struct {
	s idempay.KeyStore
	h metric.Float64Histogram
}

var _ idempay.KeyStore = (*timedStore)(nil)

// KeepsWriteOrder is the timed store's own answer (idempay.WriteOrderKeeper):
// timing a store must not cost the syncs its write order saves.
func (t *timedStore) KeepsWriteOrder() bool {
	k, ok := t.s.(idempay.WriteOrderKeeper)
	return ok && k.KeepsWriteOrder()
}

func (t *timedStore) time(ctx context.Context, method string, begun time.Time, err error) {
	t.h.Record(ctx, time.Since(begun).Seconds(), metric.WithAttributes(AttrStoreMethod.String(method),
		attribute.Bool("error", err != nil)))
}

func (t *timedStore) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	begun := time.Now()
	res, err := t.s.Reserve(ctx, r)
	t.time(ctx, "reserve", begun, err)
	return res, err
}

func (t *timedStore) Resolve(ctx context.Context, res idempay.Resolution) error {
	begun := time.Now()
	err := t.s.Resolve(ctx, res)
	t.time(ctx, "resolve", begun, err)
	return err
}

func (t *timedStore) Load(ctx context.Context, namespace, intentID string) (idempay.Record, error) {
	begun := time.Now()
	rec, err := t.s.Load(ctx, namespace, intentID)
	t.time(ctx, "load", begun, err)
	return rec, err
}

func (t *timedStore) ListOpen(ctx context.Context, namespace string, after idempay.Cursor, limit int) ([]idempay.Record, error) {
	begun := time.Now()
	recs, err := t.s.ListOpen(ctx, namespace, after, limit)
	t.time(ctx, "list_open", begun, err)
	return recs, err
}

func (t *timedStore) Expire(ctx context.Context, retention time.Duration) (int, error) {
	begun := time.Now()
	n, err := t.s.Expire(ctx, retention)
	t.time(ctx, "expire", begun, err)
	return n, err
}
