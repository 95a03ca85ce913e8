package idempay

import (
	"context"
	"sync/atomic"
	"time"
)

// haltedStore is the Client's view of its KeyStore: once Close has given up
// waiting for the flights still running, every call fails with ErrClosed,
// so that nothing this client runs writes to the store after the
// application closed it (a flight whose caller left would go on renewing
// its lease and recording its outcome). Those flights send nothing more
// either (see flight.mayStillSend); their leases run out within one Lease
// and the next instance resumes the intents.
type haltedStore struct {
	KeyStore
	halted *atomic.Bool
}

func (s haltedStore) err() error {
	if s.halted.Load() {
		return ErrClosed
	}
	return nil
}

func (s haltedStore) Reserve(ctx context.Context, r ReserveRequest) (Reservation, error) {
	if err := s.err(); err != nil {
		return Reservation{}, err
	}
	return s.KeyStore.Reserve(ctx, r)
}

func (s haltedStore) Resolve(ctx context.Context, res Resolution) error {
	if err := s.err(); err != nil {
		return err
	}
	return s.KeyStore.Resolve(ctx, res)
}

func (s haltedStore) Load(ctx context.Context, namespace, intentID string) (Record, error) {
	if err := s.err(); err != nil {
		return Record{}, err
	}
	return s.KeyStore.Load(ctx, namespace, intentID)
}

func (s haltedStore) ListOpen(ctx context.Context, namespace string, after Cursor, limit int) ([]Record, error) {
	if err := s.err(); err != nil {
		return nil, err
	}
	return s.KeyStore.ListOpen(ctx, namespace, after, limit)
}

func (s haltedStore) Expire(ctx context.Context, retention time.Duration) (int, error) {
	if err := s.err(); err != nil {
		return 0, err
	}
	return s.KeyStore.Expire(ctx, retention)
}
