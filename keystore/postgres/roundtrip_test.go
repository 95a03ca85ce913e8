package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idempay/idempay"
)

// meter counts, on every connection of a pool, the statements pgx runs (its
// QueryTracer) and the writes to the socket. pgconn buffers a whole request
// (Bind, Execute, Sync) and flushes it with one write, then waits for the
// answer, so socket writes count round trips, including any that the
// statement count would hide, such as a Parse on a statement-cache miss or a
// ping.
type meter struct {
	writes atomic.Int64

	mu       sync.Mutex
	sql      []string
	affected []int64
}

func (m *meter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sql = append(m.sql, strings.Join(strings.Fields(data.SQL), " "))
	return ctx
}

func (m *meter) TraceQueryEnd(_ context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.affected = append(m.affected, data.CommandTag.RowsAffected())
}

func (m *meter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sql, m.affected = nil, nil
	m.writes.Store(0)
}

func (m *meter) statements() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.sql...)
}

type countingConn struct {
	net.Conn
	m *meter
}

func (c countingConn) Write(b []byte) (int, error) {
	c.m.writes.Add(1)
	return c.Conn.Write(b)
}

// meteredStore returns a Store on a one-connection pool whose statements
// and socket writes m counts. The pool never pings (ShouldPing), so what is
// counted is the store's own traffic.
func meteredStore(t *testing.T, opts ...Option) (*Store, *meter) {
	t.Helper()
	m := new(meter)
	cfg := poolConfig(t)
	cfg.MaxConns = 1
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	cfg.ConnConfig.Tracer = m
	var d net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, m: m}, nil
	}
	return openStoreIn(t, newPool(t, cfg), opts...), m
}

// charge reserves a new intent and closes it, as a charge on the happy path
// does.
func charge(t *testing.T, s *Store, id string, durable bool) {
	t.Helper()
	res := reserve(t, s, request("ns", id))
	if !res.Created || !res.Claimed {
		t.Fatalf("Reserve(%q) = created %v claimed %v; want a new claimed record", id, res.Created, res.Claimed)
	}
	if err := s.Resolve(t.Context(), idempay.Resolution{Namespace: "ns", ID: id, Key: res.Record.Key,
		State: idempay.StateSucceeded, Result: []byte(`{"ok":true}`), Durable: durable}); err != nil {
		t.Fatalf("Resolve(%q) = %v", id, err)
	}
}

// TestHappyPathTwoRoundTrips proves the cost the package doc promises: a
// charge whose intent is new costs the store two statements and two round
// trips, Reserve (the insert) and Resolve (the conditional update), durable
// or not.
func TestHappyPathTwoRoundTrips(t *testing.T) {
	s, m := meteredStore(t)
	// The first charge on a connection also prepares each statement (pgx's
	// statement cache): one extra round trip per statement, once per
	// connection, not per charge.
	charge(t, s, "warm-up", false)
	for i, durable := range []bool{false, true} {
		m.reset()
		charge(t, s, fmt.Sprint("order-", i), durable)
		if got := m.statements(); len(got) != 2 || !strings.Contains(got[0], " INSERT INTO ") ||
			!strings.Contains(got[1], " done AS ( UPDATE ") {
			t.Errorf("statements for one charge (durable %v) = %q; want exactly [insert, resolve]", durable, got)
		}
		if w := m.writes.Load(); w != 2 {
			t.Errorf("round trips (socket writes) for one charge (durable %v) = %d; want 2", durable, w)
		}
	}
}

// TestRoundTripsPerOperation counts the statements and socket writes of
// every other operation, after a warm-up that prepares them: Reserve of an
// existing record costs two (the insert, then the claim, whatever it
// decides), everything else one, a refused Resolve included.
func TestRoundTripsPerOperation(t *testing.T) {
	s, m := meteredStore(t)
	ctx := t.Context()
	other := request("ns", "a")
	other.Owner = "owner-2"
	next := request("ns", "b")
	next.Attempt, next.Key = 2, "key-b2"
	ops := []struct {
		name string
		want int64
		op   func() error
	}{
		{"Reserve refused (leased to another)", 2, func() error { _, err := s.Reserve(ctx, other); return err }},
		{"Reserve renewing", 2, func() error { _, err := s.Reserve(ctx, request("ns", "a")); return err }},
		{"Reserve beginning attempt 2", 2, func() error { _, err := s.Reserve(ctx, next); return err }},
		{"Resolve refused (wrong key)", 1, func() error {
			err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "a", Key: "other", State: idempay.StateFailed})
			return ignore(err, idempay.ErrKeyMismatch)
		}},
		{"Resolve not found", 1, func() error {
			err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "none", Key: "k", State: idempay.StateFailed})
			return ignore(err, idempay.ErrNotFound)
		}},
		{"Load", 1, func() error { _, err := s.Load(ctx, "ns", "a"); return err }},
		{"ListOpen", 1, func() error { _, err := s.ListOpen(ctx, "ns", idempay.Cursor{}, 10); return err }},
		{"Expire", 1, func() error { _, err := s.Expire(ctx, time.Hour); return err }},
	}
	setup := func() {
		exec(t, s, `DELETE FROM {t}`)
		reserve(t, s, request("ns", "a"))
		reserve(t, s, request("ns", "b"))
		resolve(t, s, "ns", "b", idempay.StateFailed)
	}
	for _, o := range ops { // warm-up: prepare every statement
		setup()
		_ = o.op()
	}
	for _, o := range ops {
		setup()
		m.reset()
		if err := o.op(); err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		if n, w := int64(len(m.statements())), m.writes.Load(); n != o.want || w != o.want {
			t.Errorf("%s: %d statements, %d round trips; want %d", o.name, n, w, o.want)
		}
	}
}

// ignore returns nil if err is want, else err.
func ignore(err, want error) error {
	if errors.Is(err, want) {
		return nil
	}
	return fmt.Errorf("got %v, want %v", err, want)
}
