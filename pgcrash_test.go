package idempay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/internal/testenv"
	"github.com/idempay/idempay/keystore/postgres"
)

// crashPostgres is a private PostgreSQL server whose WAL writer flushes
// only every 10 s, and which a test freezes before the write it judges, so
// that an immediate stop after a commit made without a flush loses it, as
// a power cut within the WAL window would, however slow the machine.
type crashPostgres struct {
	t  *testing.T
	pg *testenv.Postgres
}

func newCrashPostgres(t *testing.T) *crashPostgres {
	return &crashPostgres{t: t, pg: testenv.PrivatePostgres(t, testenv.LossySettings...)}
}

// store opens a store on the server, closed when the test ends.
func (c *crashPostgres) store(table string) *postgres.Store {
	c.t.Helper()
	s, err := postgres.Open(context.Background(), c.pg.DSN(), postgres.WithTable(table))
	require.NoError(c.t, err)
	c.t.Cleanup(s.Close)
	return s
}

// crash stops the server with -m immediate, starts it again and returns a
// new store on the same table.
func (c *crashPostgres) crash(old *postgres.Store, table string) *postgres.Store {
	c.t.Helper()
	old.Close()
	c.pg.Crash()
	c.pg.Start()
	return c.store(table)
}

// Rule: a failure told to the caller for an attempt that sent nothing
// survives a crash of the store's server. Its loss would reopen the
// record with the attempt's key, which no provider has ever seen:
// resuming it, as Unresolved invites, would send it for the first time and
// charge (refund, capture, cancel) what the caller was told had failed.
func TestFailedSurvivesPostgresCrash(t *testing.T) {
	pg := newCrashPostgres(t)
	ctx := context.Background()
	dead := fmt.Sprintf("http://127.0.0.1:%d", testenv.FreePort(t)) // nothing listens: nothing is sent

	t.Run("charge", func(t *testing.T) {
		table := "charge_failed"
		store := pg.store(table)
		c := newClient(t, dead, store)
		pg.pg.FreezeWALWriter() // a power cut from here: only what was flushed survives
		_, err := c.Charge(ctx, order("o-charge"))
		require.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "%v", err)

		store = pg.crash(store, table)
		rec, err := store.Load(ctx, "ownapi:default", "o-charge")
		require.NoError(t, err)
		require.Equal(t, idempay.StateFailed, rec.State, "the failure told to the caller is kept after the crash")
	})

	ops := []struct {
		name   string
		manual bool
		do     func(c *idempay.Client) error
		ns, id string
	}{
		{"refund", false, func(c *idempay.Client) error {
			_, err := c.Refund(ctx, refundOf("o-refund", "rf-1", 500))
			return err
		}, "ownapi:default/refund", "rf-1"},
		{"capture", true, func(c *idempay.Client) error {
			_, err := c.Capture(ctx, capture("cp-1", "o-capture", 0))
			return err
		}, "ownapi:default/capture", "cp-1"},
		{"cancel", true, func(c *idempay.Client) error {
			_, err := c.Cancel(ctx, idempay.CancelRequest{CancelID: "cn-1", IntentID: "o-cancel"})
			return err
		}, "ownapi:default/cancel", "cn-1"},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			table := op.name + "_failed"
			store := pg.store(table)
			s := startOps(t, store, refserver.Config{Lenient: true})
			c := opsClient(t, s, store)
			charged(t, c, "o-"+op.name, 1500, op.manual)
			// Refused before processing: the operation moved nothing.
			s.answer(op.id, status(400, `{"error":{"type":"invalid_request_error","message":"refused"}}`))
			pg.pg.FreezeWALWriter()

			err := op.do(c)
			require.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "%v", err)

			store = pg.crash(store, table)
			rec, err := store.Load(ctx, op.ns, op.id)
			require.NoError(t, err)
			require.Equal(t, idempay.StateFailed, rec.State, "the failed %s told to the caller is kept after the crash", op.name)
		})
	}
}

// Rule: the writes this round added to a successful charge (the caller
// key's owner, the charge's facts in the intent's ledger, the attempt
// journal) are durable before the charge is answered, so a crash of the
// store's server right after it keeps them all, even when the charge's own
// succeeded close (asynchronous by the durability table) is lost: the key
// stays its intent's, the ledger still knows the charge for a refund weeks
// later, the journal still shows what was sent, and the resumed charge is
// answered by the provider's replay, charged once.
func TestChargeWritesSurvivePostgresCrash(t *testing.T) {
	pg := newCrashPostgres(t)
	ctx := context.Background()
	table := "charge_writes"
	store := pg.store(table)
	s := startOps(t, store, refserver.Config{})
	// A short lease: the one the crash leaves behind must run out before
	// the resumed charge may take the record.
	journal := func(cfg *idempay.Config) { cfg.Journal, cfg.Lease = true, time.Second }
	c := opsClient(t, s, store, journal)
	req := order("o-keyed")
	req.Key = "caller-key-shared-1"
	pg.pg.FreezeWALWriter() // a power cut from here: only what was flushed survives
	_, err := c.Charge(ctx, req)
	require.NoError(t, err)
	require.NoError(t, c.Close(ctx))

	store = pg.crash(store, table)
	_, err = store.Load(ctx, "ownapi:default/key", req.Key)
	require.NoError(t, err, "the key's owner record is kept after the crash")
	c = opsClient(t, s, store, journal)

	led, err := c.Ledger(ctx, "o-keyed")
	require.NoError(t, err)
	require.Equal(t, int64(1500), led.Amount, "the ledger keeps the charge after the crash")
	require.NotEmpty(t, led.ChargeID)

	entries := 0
	for e, err := range c.Journal(ctx, time.Time{}) {
		require.NoError(t, err)
		if e.ID == "o-keyed" && e.Sent {
			entries++
		}
	}
	require.Positive(t, entries, "the journal keeps the request sent before the crash")

	other := order("o-other")
	other.Key = req.Key
	_, err = c.Charge(ctx, other)
	require.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "another intent may not take the key after the crash: %v", err)
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve)

	// The lease the crashed flight held stays until it runs out (one
	// lease); the deadline is a bound on liveness, not part of the verdict.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		_, err = c.Charge(ctx, req)
		if !errors.Is(err, idempay.ErrInProgress) || time.Now().After(deadline) {
			break
		}
	}
	require.NoError(t, err, "the resumed charge is answered")
	require.Equal(t, 1, s.Ledger().Count("o-keyed"), "charged once")
	require.Zero(t, s.Ledger().Count("o-other"), "nothing sent for the other intent")
}

// Rule: what a Client saw of the store's clock (here: the store reading an
// hour ahead of the Client's, so that every later lookup's window must
// start an hour earlier) is durable before anything is sent on the
// reservation that saw it. Lost in a crash, a Client started afterwards,
// with the store's clock set right, would list from a CreatedAt an hour
// after the charge, find nothing and call a paid intent failed.
func TestStoreClockFactsSurvivePostgresCrash(t *testing.T) {
	pg := newCrashPostgres(t)
	ctx := context.Background()
	table := "clock_facts"
	store := pg.store(table)
	slow := func(cfg *idempay.Config) { cfg.Clock = func() time.Time { return time.Now().Add(-time.Hour) } }
	// The process dies right after the fact is written: no later durable
	// commit carries it to the disk.
	dies := &diesAfterClockFact{KeyStore: store}
	c := newClient(t, fmt.Sprintf("http://127.0.0.1:%d", testenv.FreePort(t)), dies, slow)
	pg.pg.FreezeWALWriter() // a power cut from here: only what was flushed survives
	_, _ = c.Charge(ctx, order("o-clock"))
	require.True(t, dies.dead.Load(), "the clock fact was written")

	store = pg.crash(store, table)
	recs, err := store.ListOpen(ctx, "ownapi:default/clock", idempay.Cursor{}, 10)
	require.NoError(t, err)
	var facts []string
	for _, r := range recs {
		facts = append(facts, r.ID)
	}
	require.Len(t, facts, 1, "the store's lead is kept after the crash: %v", facts)
	require.Contains(t, facts[0], "ahead:")
}

// diesAfterClockFact is a store whose process dies once it has written a
// clock fact: every later call fails.
type diesAfterClockFact struct {
	idempay.KeyStore
	dead atomic.Bool
}

var errProcessDied = errors.New("the process died")

func (s *diesAfterClockFact) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if s.dead.Load() {
		return idempay.Reservation{}, errProcessDied
	}
	res, err := s.KeyStore.Reserve(ctx, r)
	if strings.HasSuffix(r.Namespace, "/clock") && err == nil {
		s.dead.Store(true)
	}
	return res, err
}

func (s *diesAfterClockFact) Resolve(ctx context.Context, r idempay.Resolution) error {
	if s.dead.Load() {
		return errProcessDied
	}
	return s.KeyStore.Resolve(ctx, r)
}
