package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
)

var _ idempay.KeyStore = (*Store)(nil)

// Store is an idempay.KeyStore in Redis. It is safe for concurrent use by
// many goroutines and many processes sharing the server. Build one with New;
// the zero Store is not usable.
type Store struct {
	client goredis.UniversalClient
	cfg    config

	// namespaces this Store has added to the namespaces set. The set only
	// grows, so once added a namespace need not be sent again; the cache
	// saves that round trip on every Reserve but the first.
	registered sync.Map
}

// New returns a Store on client. The client stays the caller's: the Store
// never closes it.
func New(client goredis.UniversalClient, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errors.New("redis: nil client")
	}
	cfg := config{prefix: DefaultPrefix, expireBatch: DefaultExpireBatch}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	return &Store{client: client, cfg: cfg}, nil
}

// register adds namespace to the namespaces set before its first record is
// written, so that Expire can never miss a namespace that has records.
func (s *Store) register(ctx context.Context, namespace string) error {
	if _, ok := s.registered.Load(namespace); ok {
		return nil
	}
	if err := s.client.SAdd(ctx, s.namespacesKey(), namespace).Err(); err != nil {
		return err
	}
	s.registered.Store(namespace, struct{}{})
	return nil
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Reserve implements idempay.KeyStore in one script call: the insert, or
// the claim or read of the existing record.
func (s *Store) Reserve(ctx context.Context, r idempay.Record) (idempay.Reservation, error) {
	// go-redis may serve a cancelled context from a pooled connection;
	// a caller that has given up must not be told a key is reserved.
	if err := ctx.Err(); err != nil {
		return idempay.Reservation{}, err
	}
	if !r.State.Valid() {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve: invalid state %q", r.State)
	}
	e, err := encodeRecord(r)
	if err != nil {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve: %w", err)
	}
	if err := s.register(ctx, r.Namespace); err != nil {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve: register namespace: %w", err)
	}
	k := s.keysOf(r.Namespace, r.IntentID)
	reply, err := reserveScript.Run(ctx, s.client, []string{k.record, k.open, k.closed},
		r.IntentID, r.Namespace, r.Key, r.Fingerprint, string(r.State),
		e.createdAt, e.updatedAt, r.LeaseOwner, e.leaseUntil, r.ProviderRef,
		boolArg(r.Result != nil), r.Result, score(r.CreatedAt), s.cfg.closedTTL.Milliseconds(),
	).Slice()
	if err != nil {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve: %w", err)
	}
	if created, _ := reply[0].(int64); created == 1 {
		r.Result = slices.Clone(r.Result) // the caller's slice stays the caller's
		return idempay.Reservation{Record: r, Created: true, Claimed: true}, nil
	}
	if len(reply) != 3 {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve: unexpected script reply %v", reply)
	}
	claimed, _ := reply[1].(int64)
	h, err := pairsToMap(reply[2])
	if err != nil {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve: %w", err)
	}
	rec, err := decodeRecord(h)
	if err != nil {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve: %w", err)
	}
	return idempay.Reservation{Record: rec, Claimed: claimed == 1}, nil
}

// Resolve implements idempay.KeyStore with one compare-and-complete script,
// which also checks res.LeaseOwner when it is set.
func (s *Store) Resolve(ctx context.Context, res idempay.Resolution) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !res.State.Valid() {
		return fmt.Errorf("redis: resolve: invalid state %q", res.State)
	}
	at, err := encodeTime(res.At)
	if err != nil {
		return fmt.Errorf("redis: resolve: %w", err)
	}
	ttl := s.cfg.closedTTL
	trimBelow := float64(0)
	if ttl > 0 {
		trimBelow = score(res.At) - float64(ttl.Microseconds())
	}
	k := s.keysOf(res.Namespace, res.IntentID)
	answer, err := resolveScript.Run(ctx, s.client, []string{k.record, k.open, k.closed},
		res.IntentID, res.Key, string(res.State), res.ProviderRef,
		boolArg(res.Result != nil), res.Result, at, ttl.Milliseconds(), trimBelow, res.LeaseOwner,
	).Text()
	if err != nil {
		return fmt.Errorf("redis: resolve: %w", err)
	}
	switch answer {
	case "ok":
		return nil
	case "notfound":
		return idempay.ErrNotFound
	case "mismatch":
		return idempay.ErrKeyMismatch
	case "resolved":
		return idempay.ErrAlreadyResolved
	case "leaselost":
		return idempay.ErrLeaseLost
	}
	return fmt.Errorf("redis: resolve: unexpected script reply %q", answer)
}

// Load implements idempay.KeyStore.
func (s *Store) Load(ctx context.Context, namespace, intentID string) (idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return idempay.Record{}, err
	}
	h, err := s.client.HGetAll(ctx, s.keysOf(namespace, intentID).record).Result()
	if err != nil {
		return idempay.Record{}, fmt.Errorf("redis: load: %w", err)
	}
	if len(h) == 0 {
		return idempay.Record{}, idempay.ErrNotFound
	}
	r, err := decodeRecord(h)
	if err != nil {
		return idempay.Record{}, fmt.Errorf("redis: load: %w", err)
	}
	return r, nil
}

// ListOpen implements idempay.KeyStore: it reads the namespace's open index
// (oldest first) and then the records, in two round trips. A record settled
// between the two is left out, so fewer than limit records may come back
// while more are open; the listing is a snapshot either way.
func (s *Store) ListOpen(ctx context.Context, namespace string, limit int) ([]idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stop := int64(-1)
	if limit > 0 {
		stop = int64(limit) - 1
	}
	ids, err := s.client.ZRange(ctx, s.keysOf(namespace, "").open, 0, stop).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: list open: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*goredis.MapStringStringCmd, len(ids))
	_, err = s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, s.keysOf(namespace, id).record)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("redis: list open: %w", err)
	}
	out := make([]idempay.Record, 0, len(ids))
	for _, c := range cmds {
		h := c.Val()
		if len(h) == 0 {
			continue
		}
		r, err := decodeRecord(h)
		if err != nil {
			return nil, fmt.Errorf("redis: list open: %w", err)
		}
		if r.State.Closed() {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}
