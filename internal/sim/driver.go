package sim

// This file is the simulator's only contact with the parts of idempay's API
// that are being redesigned: the KeyStore methods and their Record,
// Reservation and Resolution, the stores' constructors, Config.Lease,
// Client.Unresolved and Client.Settle, and the outcomes. The rest of the
// simulator speaks the types below (result, recView, storeCall), so that a
// port to the new API rewrites this file and nothing else.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/hostclock"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/keystore/postgres"
	rstore "github.com/idempay/idempay/keystore/redis"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"
)

// outcome is what a call told its caller about the money, read the way the
// README tells callers to read it: idempay.OutcomeOf(err) alone.
type outcome int

const (
	outUnknown outcome = iota
	outSucceeded
	outPending
	outFailed
)

func (o outcome) String() string {
	return [...]string{"unknown", "succeeded", "pending", "failed"}[o]
}

// result is one Charge or Settle as the simulator records it.
type result struct {
	out            outcome
	chargeID       string // the provider's ID on a returned charge
	chargePending  bool   // the returned charge says it is pending (Charge.State)
	key            string // the key the charge or the error names
	attempt        int    // the attempt the charge or the error names (0: none)
	inProgress     bool   // errors.Is(err, ErrInProgress)
	attemptOpen    bool   // errors.Is(err, ErrAttemptOpen): another attempt of the intent is unsettled
	mismatch       bool   // refused as the intent's other parameters (today: attemptOpen)
	storeFailed    bool   // errors.Is(err, ErrStore) or ErrClosed: the answer rests on no record
	refusedLocally bool   // an operation refused before anything was sent (amount, state)
	err            error
}

func classify(ch *idempay.Charge, err error) result {
	r := result{err: err, inProgress: errors.Is(err, idempay.ErrInProgress), attemptOpen: errors.Is(err, idempay.ErrAttemptOpen)}
	r.mismatch = r.attemptOpen
	r.storeFailed = errors.Is(err, idempay.ErrStore) || errors.Is(err, idempay.ErrClosed)
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded:
		r.out = outSucceeded
	case idempay.OutcomePending:
		r.out = outPending
	case idempay.OutcomeFailed:
		r.out = outFailed
	}
	if ch != nil {
		r.chargeID, r.key, r.chargePending = ch.ID, ch.Key, ch.State == idempay.StatePending
		r.attempt = ch.Attempt
	}
	var ce *idempay.ChargeError
	if errors.As(err, &ce) {
		r.key = ce.Key
	}
	return r
}

// simLease is the lease the clients of a virtual-time world take. It is
// far longer than the 5 s default for one reason: the heartbeat renews
// every Lease/3 of real time, and a renewal at a moment the scheduler
// chooses would make a seed tell two stories. At 10 min no renewal falls
// inside a seed, even under the race detector on a loaded machine, so a
// lease is only ever lost the way the seed says: virtual time passing
// past it. (What a crash costs with the default lease is measured by the
// crash tests; here stale-lease judges it against this lease.)
// PostgreSQL and Redis keep real time, so their worlds run a short real
// lease (realLease), renewed for real, and sleep past it where time passes
// a lease (see newRealClock); they replay less exactly.
const (
	simLease  = 10 * time.Minute
	realLease = 400 * time.Millisecond
)

// clientSpec is what the simulator gives each client instance.
type clientSpec struct {
	baseURL, creds, account string
	provider                idempay.Provider
	store                   idempay.KeyStore
	http                    *http.Client
	clock                   func() time.Time
	newKey                  func() string
	logger                  *slog.Logger
	maxAttempts             int
	lease                   time.Duration // 0: the default
	instance                string
}

// client is one idempay.Client instance.
type client struct{ c *idempay.Client }

func newClient(s clientSpec) (*client, error) {
	c, err := idempay.New(idempay.Config{
		BaseURL: s.baseURL, Credentials: idempay.Secret(s.creds), Account: s.account,
		Provider: s.provider, Store: s.store, HTTPClient: s.http, Logger: s.logger,
		Clock: s.clock, NewKey: s.newKey, Lease: s.lease, Instance: s.instance,
		// Real sleeps between retries, kept tiny: virtual time moves only
		// when the simulator moves it. MaxElapsed keeps its default.
		Retry: idempay.RetryPolicy{MaxAttempts: s.maxAttempts, InitialInterval: 50 * time.Microsecond,
			MaxInterval: 200 * time.Microsecond, MaxRetryAfter: 200 * time.Microsecond},
	})
	if err != nil {
		return nil, err
	}
	return &client{c: c}, nil
}

func (c *client) namespace() string { return c.c.Namespace() }

func (c *client) charge(ctx context.Context, req idempay.ChargeRequest) result {
	return classify(c.c.Charge(ctx, req))
}

func (c *client) settle(ctx context.Context, intentID string) result {
	return classify(c.c.Settle(ctx, intentID))
}

// unresolved returns every open intent, as Client.Unresolved pages through
// them, up to a bound. The cursor is the iterator's: limit and next are
// kept for the recovery worker's shape.
func (c *client) unresolved(ctx context.Context, limit int, _ string) (ids []string, next string, err error) {
	for rec, err := range c.c.Unresolved(ctx) {
		if err != nil {
			return ids, "", err
		}
		ids = append(ids, rec.ID)
		if len(ids) >= 50*limit {
			break
		}
	}
	return ids, "", nil
}

// close shuts the client down as an application does when it stops:
// new charges are refused, running flights are waited for.
func (c *client) close(ctx context.Context) error { return c.c.Close(ctx) }

// recView is a stored record, as the oracle reads it.
type recView struct {
	key, state, owner string
	attempt           int
	leaseUntil        time.Time
	createdAt         time.Time
	closedAt          time.Time
	closed            bool
	past              []pastView // earlier attempts, oldest first
	blob              []byte     // every byte the store keeps, for the secret check
}

// pastView is an earlier attempt of a record.
type pastView struct {
	attempt    int
	key, state string
}

func view(r idempay.Record) recView {
	blob := fmt.Appendf(nil, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00", r.Namespace, r.ID, r.Key,
		r.Fingerprint, r.LeaseOwner, r.ProviderRef)
	v := recView{key: r.Key, state: string(r.State), owner: r.LeaseOwner, leaseUntil: r.LeaseUntil, attempt: r.Attempt,
		createdAt: r.CreatedAt, closedAt: r.ClosedAt, closed: r.State.Closed(), blob: append(blob, r.Result...)}
	for _, p := range r.History {
		v.past = append(v.past, pastView{attempt: p.Attempt, key: p.Key, state: string(p.State)})
		v.blob = fmt.Appendf(v.blob, "\x00%s\x00%s\x00%s\x00", p.Key, p.Fingerprint, p.ProviderRef)
		v.blob = append(v.blob, p.Result...)
	}
	return v
}

// loadRec reads a record straight from a store; ok is false when there is none.
func loadRec(ctx context.Context, s idempay.KeyStore, namespace, intentID string) (recView, bool, error) {
	r, err := s.Load(ctx, namespace, intentID)
	if errors.Is(err, idempay.ErrNotFound) {
		return recView{}, false, nil
	}
	if err != nil {
		return recView{}, false, err
	}
	return view(r), true, nil
}

// expire runs the store's retention sweep as an operator's cron would:
// closed records older than retention since they closed, by the store's
// clock.
func expire(ctx context.Context, s idempay.KeyStore, retention time.Duration) (int, error) {
	return s.Expire(ctx, retention)
}

// storeConfig is what opening a store needs.
type storeConfig struct {
	kind      string // memstore, filestore, postgres, redis
	path      string // filestore
	clock     func() time.Time
	pg        *pgxpool.Pool
	table     string // postgres
	redisAddr string
	prefix    string                                                            // redis
	dial      func(ctx context.Context, network, addr string) (net.Conn, error) // redis
	host      *hostclock.Host                                                   // filestore on its own clock, on this host (else clock)
}

// openStore opens a store. The closer releases it (the file, the client).
func openStore(ctx context.Context, c storeConfig) (idempay.KeyStore, func() error, error) {
	switch c.kind {
	case "memstore":
		return memstore.New(memstore.WithClock(c.clock)), func() error { return nil }, nil
	case "filestore":
		clock := filestore.WithClock(c.clock)
		if c.host != nil {
			clock = hostclock.FileStore(*c.host).(filestore.Option)
		}
		s, err := filestore.Open(c.path, filestore.WithSweepInterval(0), clock, filestore.WithOpenTimeout(time.Second))
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	case "postgres":
		s, err := postgres.New(ctx, c.pg, postgres.WithTable(c.table))
		if err != nil {
			return nil, nil, err
		}
		return s, func() error { s.Close(); return nil }, nil
	case "redis":
		rc := goredis.NewClient(&goredis.Options{Addr: c.redisAddr, Dialer: c.dial})
		s, err := rstore.New(rc, rstore.WithPrefix(c.prefix), rstore.WithLossyServer()) // the shared test server keeps nothing on disk
		if err != nil {
			rc.Close()
			return nil, nil, err
		}
		return s, rc.Close, nil
	}
	return nil, nil, fmt.Errorf("sim: unknown store %q", c.kind)
}

// corrupt reports whether an error of opening a damaged file store is the
// typed error an operator can act on.
func corrupt(err error) bool {
	return errors.Is(err, filestore.ErrCorrupt) || errors.Is(err, filestore.ErrFormat)
}

// storeCall is one KeyStore call as the hooks see it.
type storeCall struct {
	op     string // reserve, resolve, load, list, expire
	ns     string // the namespace: the charges', or an operation's or the ledger's
	intent string
	key    string
	owner  string // the lease owner a Reserve claims for or a Resolve names
	state  string // the state a Resolve writes
}

// storeAnswer is what the store answered to a Reserve.
type storeAnswer struct {
	created, claimed bool
	rec              recView
}

// storeHooks is the simulator's side of hookedStore: before may fail the
// call (an injected error, a dead process) and after may replace its
// answer with an error (a reply lost after the write) or pause.
type storeHooks interface {
	before(ctx context.Context, sc storeCall) error
	after(ctx context.Context, sc storeCall, ans storeAnswer, err error) error
}

// lateQueue is a storeHooks whose before may postpone a write (errLate):
// the caller is told the store did not answer, and the write is queued
// to land later.
type lateQueue interface {
	queueLate(sc storeCall, apply func() (storeAnswer, error))
}

// hookedStore is the KeyStore an instance's client sees: the shared store,
// reached through enter (which fails once that store was closed), with the
// hooks around every call.
type hookedStore struct {
	enter func() (idempay.KeyStore, func(), error)
	hooks storeHooks
}

var _ idempay.KeyStore = (*hookedStore)(nil)

// do runs one call of the inner store between the hooks.
func (s *hookedStore) do(ctx context.Context, sc storeCall, f func(context.Context, idempay.KeyStore) (storeAnswer, error)) error {
	if err := s.hooks.before(ctx, sc); err != nil {
		if q, ok := s.hooks.(lateQueue); ok && errors.Is(err, errLate) {
			q.queueLate(sc, func() (storeAnswer, error) { // lands after its writer gave up
				inner, leave, err := s.enter()
				if err != nil {
					return storeAnswer{}, err
				}
				defer leave()
				return f(context.Background(), inner)
			})
		}
		return err
	}
	inner, leave, err := s.enter()
	if err != nil {
		return err
	}
	ans, err := f(ctx, inner)
	leave()
	if herr := s.hooks.after(ctx, sc, ans, err); herr != nil {
		return herr
	}
	return err
}

func (s *hookedStore) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	var res idempay.Reservation
	err := s.do(ctx, storeCall{op: "reserve", ns: r.Namespace, intent: r.ID, key: r.Key, owner: r.Owner},
		func(ctx context.Context, in idempay.KeyStore) (storeAnswer, error) {
			var err error
			res, err = in.Reserve(ctx, r)
			return storeAnswer{created: res.Created, claimed: res.Claimed, rec: view(res.Record)}, err
		})
	if err != nil {
		return idempay.Reservation{}, err
	}
	return res, nil
}

func (s *hookedStore) Resolve(ctx context.Context, res idempay.Resolution) error {
	return s.do(ctx, storeCall{op: "resolve", ns: res.Namespace, intent: res.ID, key: res.Key, owner: res.LeaseOwner, state: string(res.State)},
		func(ctx context.Context, in idempay.KeyStore) (storeAnswer, error) {
			return storeAnswer{}, in.Resolve(ctx, res)
		})
}

func (s *hookedStore) Load(ctx context.Context, namespace, intentID string) (idempay.Record, error) {
	var rec idempay.Record
	err := s.do(ctx, storeCall{op: "load", ns: namespace, intent: intentID}, func(ctx context.Context, in idempay.KeyStore) (storeAnswer, error) {
		var err error
		rec, err = in.Load(ctx, namespace, intentID)
		return storeAnswer{rec: view(rec)}, err
	})
	return rec, err
}

func (s *hookedStore) ListOpen(ctx context.Context, namespace string, after idempay.Cursor, limit int) ([]idempay.Record, error) {
	var recs []idempay.Record
	err := s.do(ctx, storeCall{op: "list"}, func(ctx context.Context, in idempay.KeyStore) (storeAnswer, error) {
		var err error
		recs, err = in.ListOpen(ctx, namespace, after, limit)
		return storeAnswer{}, err
	})
	return recs, err
}

func (s *hookedStore) Expire(ctx context.Context, retention time.Duration) (int, error) {
	var n int
	err := s.do(ctx, storeCall{op: "expire"}, func(ctx context.Context, in idempay.KeyStore) (storeAnswer, error) {
		var err error
		n, err = in.Expire(ctx, retention)
		return storeAnswer{}, err
	})
	return n, err
}
