package postgres

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

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

// TestHappyPathTwoRoundTrips proves the cost the package doc promises: a
// charge whose intent is new costs the store two statements and two round
// trips, Reserve (the insert) and Resolve (the conditional update).
func TestHappyPathTwoRoundTrips(t *testing.T) {
	s, m := meteredStore(t)
	ctx := t.Context()

	charge := func(id string) {
		t.Helper()
		r := record("ns", id)
		got, err := s.Reserve(ctx, r)
		if err != nil || !got.Created || !got.Claimed {
			t.Fatalf("Reserve(%q) = created %v claimed %v, %v; want a new claimed record", id, got.Created, got.Claimed, err)
		}
		err = s.Resolve(ctx, idempay.Resolution{Namespace: "ns", IntentID: id, Key: r.Key,
			State: idempay.StateSucceeded, Result: []byte(`{"ok":true}`), At: at.Add(1)})
		if err != nil {
			t.Fatalf("Resolve(%q) = %v", id, err)
		}
	}

	// The first charge on a connection also prepares each statement (pgx's
	// statement cache): one extra round trip per statement, once per
	// connection, not per charge.
	charge("warm-up")
	m.reset()

	charge("order-1")
	if got := m.statements(); len(got) != 2 ||
		!strings.HasPrefix(got[0], "INSERT") || !strings.Contains(got[1], ") UPDATE ") {
		t.Errorf("statements for one charge = %q; want exactly [INSERT ..., WITH ... UPDATE ...]", got)
	}
	if w := m.writes.Load(); w != 2 {
		t.Errorf("round trips (socket writes) for one charge = %d; want 2", w)
	}
}

// TestConflictPathRoundTrips checks the bounds off the happy path: Reserve
// of an existing record costs two round trips (insert, then claim or read),
// and a Resolve that fails costs two (update, then the read that says why).
func TestConflictPathRoundTrips(t *testing.T) {
	s, m := meteredStore(t)
	ctx := t.Context()
	r := record("ns", "order-1")
	if _, err := s.Reserve(ctx, r); err != nil {
		t.Fatal(err)
	}
	// Warm the statement cache for every statement measured below.
	if _, err := s.Reserve(ctx, r); err != nil {
		t.Fatal(err)
	}
	_ = s.Resolve(ctx, idempay.Resolution{Namespace: "ns", IntentID: "order-1", Key: "other", State: idempay.StateOpen, At: at})

	m.reset()
	other := r
	other.LeaseOwner = "owner-2"
	if got, err := s.Reserve(ctx, other); err != nil || got.Created || got.Claimed {
		t.Fatalf("Reserve by another owner during the lease = %+v, %v; want not created, not claimed", got, err)
	}
	if w := m.writes.Load(); w != 2 {
		t.Errorf("round trips for Reserve of an existing record = %d; want 2", w)
	}

	m.reset()
	err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", IntentID: "order-1", Key: "other", State: idempay.StateSucceeded, At: at})
	if err != idempay.ErrKeyMismatch {
		t.Fatalf("Resolve with another key = %v; want ErrKeyMismatch", err)
	}
	if w := m.writes.Load(); w != 2 {
		t.Errorf("round trips for a failed Resolve = %d; want 2", w)
	}
}
