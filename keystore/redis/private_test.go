package redis

import (
	"errors"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/testenv"
)

// privateStore is a Store on a private redis-server, which a test may kill
// and restart with other settings, and its client.
func privateStore(t *testing.T, srv *testenv.Redis, opts ...Option) *Store {
	t.Helper()
	c := newClientAt(t, srv.Addr(), 0)
	s, err := New(c, append([]Option{WithLogger(nil)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Rule: by default the Store refuses to write where the server cannot keep
// what it acknowledges (no persistence at all; or an AOF fsynced every
// second on a Redis without WAITAOF, which cannot be waited for): a key
// lost after its charge was sent is a second charge under a new key. A
// caller opts in with WithLossyServer (the project's tests: the shared CI
// server keeps nothing on disk).
func TestLossyServerIsRefusedByDefault(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no persistence", testenv.NoPersistence},
		{"AOF everysec without WAITAOF", testenv.AOFEverySec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testenv.PrivateRedis(t, tc.args...)
			s := privateStore(t, srv)
			d, err := s.Durability(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if d.WaitAOF && tc.name != "no persistence" {
				t.Skipf("this redis-server has WAITAOF: an everysec AOF is waited for (%+v)", d)
			}
			_, err = s.Reserve(t.Context(), request("ns", "order-1", "owner"))
			var de *DurabilityError
			if !errors.Is(err, ErrNotDurable) || !errors.As(err, &de) {
				t.Fatalf("Reserve on a server that loses acknowledged writes = %v; want a *DurabilityError", err)
			}
			if _, err := s.Load(t.Context(), "ns", "order-1"); !errors.Is(err, idempay.ErrNotFound) {
				t.Errorf("Load after the refused Reserve = %v; want ErrNotFound (nothing written)", err)
			}

			lossy := privateStore(t, srv, WithLossyServer())
			if _, err := lossy.Reserve(t.Context(), request("ns", "order-1", "owner")); err != nil {
				t.Errorf("Reserve under WithLossyServer = %v; want the write", err)
			}
		})
	}
}
