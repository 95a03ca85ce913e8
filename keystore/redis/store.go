package redis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
)

var _ idempay.KeyStore = (*Store)(nil)

// maxLease bounds ReserveRequest.Lease, so that LeaseUntil stays within
// the instants the store can hold (until 2255).
const maxLease = 100 * 365 * 24 * time.Hour

// Store is an idempay.KeyStore in Redis. It is safe for concurrent use by
// many goroutines and many processes sharing the server. Build one with New;
// the zero Store is not usable.
type Store struct {
	client goredis.UniversalClient
	cfg    config
	wait   time.Duration // WAITAOF's timeout
	dur    durabilityCache
	marks  marks

	// offset moves the server's clock as the scripts read it. Only tests
	// in this package set it, to let time pass without sleeping.
	offset time.Duration
}

// New returns a Store on client. The client stays the caller's: the Store
// never closes it. New sends nothing; the server's durability settings are
// read at the first write (see Store.Durability).
func New(client goredis.UniversalClient, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errors.New("redis: nil client")
	}
	cfg := config{prefix: DefaultPrefix, expireBatch: DefaultExpireBatch,
		durableWait: DefaultDurableWait, lossWindow: DefaultLossWindow, logger: slog.Default()}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	s := &Store{client: client, cfg: cfg, wait: cfg.durableWait}
	if rt := readTimeout(client); rt > 0 && s.wait >= rt {
		if cfg.durableWaitSet {
			return nil, fmt.Errorf("redis: durable wait %v is not shorter than the client's ReadTimeout %v", s.wait, rt)
		}
		s.wait = max(rt*2/3, time.Millisecond)
	}
	return s, nil
}

// readTimeout is the client's ReadTimeout, or 0 when it has none or it is
// not known.
func readTimeout(c goredis.UniversalClient) time.Duration {
	switch c := c.(type) {
	case *goredis.Client:
		return c.Options().ReadTimeout
	case *goredis.ClusterClient:
		return c.Options().ReadTimeout
	}
	return 0
}

// micro is d in whole microseconds, rounded up, as a script argument.
func micro(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Microsecond-1)/time.Microsecond), 10)
}

// Reserve implements idempay.KeyStore in one script call (pipelined with
// WAITAOF when the server has it): the insert, the new attempt, the claim
// or the read, stamped with the server's clock.
func (s *Store) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	// go-redis may serve a cancelled context from a pooled connection;
	// a caller that has given up must not be told a key is reserved.
	if err := ctx.Err(); err != nil {
		return idempay.Reservation{}, err
	}
	if err := idempay.CheckReserveRequest(r); err != nil {
		return idempay.Reservation{}, fmt.Errorf("redis: %w", err)
	}
	if r.Lease > maxLease {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve: lease %v longer than %v", r.Lease, maxLease)
	}
	wait, err := s.durableWait(ctx)
	if err != nil {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve: %w", err)
	}
	k := s.keysOf(r.Namespace, r.ID)
	a, err := s.run(ctx, call{
		script: reserveScript, keys: append(k.list(), k.marker),
		args: []any{r.ID, r.Namespace, strconv.Itoa(r.Attempt), r.Key, r.Fingerprint,
			r.Owner, micro(r.Lease), micro(s.offset), strconv.FormatInt(s.marks.seen(r.Namespace), 10)},
		waitAOF: wait,
	})
	if err != nil {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve: %w", err)
	}
	res, err := reservation(a.reply, r)
	if err != nil {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve: %w", err)
	}
	if err := s.marks.read(r.Namespace, a.reply, &res, s.cfg.lossWindow); err != nil {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve: %w", err)
	}
	if err := s.checkAOF(ctx, wait, a); err != nil {
		return idempay.Reservation{}, fmt.Errorf("redis: reserve %q/%q: %w", r.Namespace, r.ID, err)
	}
	return res, nil
}

// reservation reads the reply of reserveScript. The request made the
// current attempt when the script inserted or began it, or, for a claim,
// when the record says so (Record.CreatedFor): a Reserve go-redis sends
// again after losing the reply to the first finds the record the first
// made, under its own lease, and still reports the key new.
func reservation(reply any, r idempay.ReserveRequest) (idempay.Reservation, error) {
	list, ok := reply.([]any)
	if !ok || len(list) != 5 {
		return idempay.Reservation{}, fmt.Errorf("unexpected script reply %v", reply)
	}
	op, _ := list[0].(string)
	nowField, _ := list[1].(string)
	now, err := decodeTime(nowField)
	if err != nil {
		return idempay.Reservation{}, err
	}
	h, err := pairsToMap(list[2])
	if err != nil {
		return idempay.Reservation{}, err
	}
	rec, err := decodeRecord(h)
	if err != nil {
		return idempay.Reservation{}, err
	}
	res := idempay.Reservation{Record: rec, Now: now}
	switch op {
	case "insert", "begin":
		res.Created, res.Claimed = true, true
	case "claim":
		res.Created, res.Claimed = rec.CreatedFor(r), true
	case "read":
	default:
		return idempay.Reservation{}, fmt.Errorf("unexpected script reply %q", op)
	}
	return res, nil
}

// Resolve implements idempay.KeyStore with one compare-and-complete script,
// which also checks res.LeaseOwner when it is set. A closing Resolve adds
// its namespace to the namespaces set in the same round trip, so Expire
// visits it even if the set was lost; a durable one is followed by WAITAOF
// when the server has it.
func (s *Store) Resolve(ctx context.Context, res idempay.Resolution) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !res.State.Valid() {
		return fmt.Errorf("redis: resolve %q/%q: invalid state %q", res.Namespace, res.ID, res.State)
	}
	var wait time.Duration
	if res.Durable {
		var err error
		if wait, err = s.durableWait(ctx); err != nil {
			return fmt.Errorf("redis: resolve %q/%q: %w", res.Namespace, res.ID, err)
		}
	}
	c := call{script: resolveScript, keys: s.keysOf(res.Namespace, res.ID).list(),
		args: []any{res.ID, res.Key, string(res.State), res.ProviderRef,
			boolArg(res.Result != nil), res.Result, s.cfg.closedTTL.Milliseconds(), res.LeaseOwner, micro(s.offset)},
		waitAOF: wait}
	if res.State.Closed() {
		c.register = res.Namespace
	}
	a, err := s.run(ctx, c)
	if err != nil {
		return fmt.Errorf("redis: resolve %q/%q: %w", res.Namespace, res.ID, err)
	}
	if err := resolveAnswer(a.reply); err != nil {
		return fmt.Errorf("redis: resolve %q/%q: %w", res.Namespace, res.ID, err)
	}
	if a.register != nil {
		s.cfg.logger.LogAttrs(ctx, slog.LevelWarn, "idempay redis store: settled record not registered for Expire; the namespace's next settling Resolve registers it",
			slog.String("namespace", res.Namespace), slog.String("error", a.register.Error()))
	}
	if err := s.checkAOF(ctx, wait, a); err != nil {
		return fmt.Errorf("redis: resolve %q/%q: %w", res.Namespace, res.ID, err)
	}
	return nil
}

// resolveAnswer maps resolveScript's reply to the contract's errors.
func resolveAnswer(reply any) error {
	switch reply {
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
	return fmt.Errorf("unexpected script reply %v", reply)
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Load implements idempay.KeyStore.
func (s *Store) Load(ctx context.Context, namespace, intentID string) (idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return idempay.Record{}, err
	}
	h, err := s.client.HGetAll(ctx, s.keysOf(namespace, intentID).record).Result()
	if err != nil {
		return idempay.Record{}, fmt.Errorf("redis: load %q/%q: %w", namespace, intentID, err)
	}
	if len(h) == 0 {
		return idempay.Record{}, fmt.Errorf("redis: load %q/%q: %w", namespace, intentID, idempay.ErrNotFound)
	}
	r, err := decodeRecord(h)
	if err != nil {
		return idempay.Record{}, fmt.Errorf("redis: load %q/%q: %w", namespace, intentID, err)
	}
	return r, nil
}
