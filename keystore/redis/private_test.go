package redis

import (
	"errors"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/testenv"
	"github.com/idempay/idempay/keystore/storetest"
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

// Rule: a Store notices that the server lost writes it had acknowledged
// (here a restart without persistence): from then on, for the loss window,
// every reservation of the namespace is Unproven, for this Store and for
// every other Store of the fleet, even one started after the loss was
// noticed; after the window, reservations are proven again.
func TestLostDataSetMakesReservationsUnproven(t *testing.T) {
	srv := testenv.PrivateRedis(t, testenv.NoPersistence...)
	s := privateStore(t, srv, WithLossyServer())
	res := mustReserve(t, s, request("ns", "order-1", "owner"))
	if res.Unproven {
		t.Fatal("a first Reserve on a new data set is Unproven; want proven")
	}

	srv.Restart()
	if res = mustReserve(t, s, request("ns", "order-1", "owner")); !res.Unproven || !res.Created {
		t.Errorf("Reserve after the data set was lost: Created %t Unproven %t; want a new record, Unproven", res.Created, res.Unproven)
	}
	later := privateStore(t, srv, WithLossyServer())
	if res = mustReserve(t, later, request("ns", "order-2", "owner")); !res.Unproven {
		t.Error("a Store started after the loss was noticed: Unproven false; want true (the marker says so)")
	}
	if res = mustReserve(t, later, request("other-ns", "order-1", "owner")); res.Unproven {
		t.Error("another namespace, never written before: Unproven; want proven")
	}

	later.offset = DefaultLossWindow + time.Minute
	if res = mustReserve(t, later, request("ns", "order-3", "owner")); res.Unproven {
		t.Error("past the loss window: Unproven; want proven")
	}
}

// TestDurabilityClaims kills a private redis-server with SIGKILL after each
// write the store must make durable and checks that the write survived.
// With appendfsync always (durable on any version) every write is kept;
// with everysec, on a server without WAITAOF the store refuses the writes
// (the cases skip, saying so), and with WAITAOF it waits for the fsync.
func TestDurabilityClaims(t *testing.T) {
	for _, fsync := range []string{"always", "everysec"} {
		t.Run("appendfsync "+fsync, func(t *testing.T) {
			storetest.RunDurability(t, func(t *testing.T) storetest.Crashable {
				srv := testenv.PrivateRedis(t, "--appendonly", "yes", "--appendfsync", fsync, "--save", "")
				s := privateStore(t, srv)
				return storetest.Crashable{Store: s, Crash: func(t *testing.T) idempay.KeyStore {
					srv.Restart()
					return privateStore(t, srv)
				}}
			})
		})
	}
}
