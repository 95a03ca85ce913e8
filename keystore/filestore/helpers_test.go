package filestore_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/keystore/filestore"
)

// open opens a store in a fresh directory and closes it when the test ends.
func open(t testing.TB, opts ...filestore.Option) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(filepath.Join(t.TempDir(), "keys.db"), opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

var t0 = time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)

// newClock is a store clock the test moves by hand, reading t0.
func newClock() *fakes.Clock { return fakes.NewClock(t0) }

// openClocked opens a store on a clock of the test's, without the sweep.
func openClocked(t testing.TB, opts ...filestore.Option) (*filestore.Store, *fakes.Clock) {
	t.Helper()
	c := newClock()
	return open(t, append([]filestore.Option{filestore.WithClock(c.Now), filestore.WithSweepInterval(0)}, opts...)...), c
}

// req is the first attempt of intent id with key, asked by owner.
func req(ns, id, key, owner string) idempay.ReserveRequest {
	return idempay.ReserveRequest{Namespace: ns, ID: id, Attempt: 1, Key: key, Fingerprint: "fp",
		Owner: owner, Lease: time.Minute}
}

// closeWith is the Resolution of the current attempt of r in state st.
func closeWith(r idempay.Record, st idempay.State) idempay.Resolution {
	return idempay.Resolution{Namespace: r.Namespace, ID: r.ID, Key: r.Key, State: st}
}

// mustReserve reserves r and fails the test on an error.
func mustReserve(t testing.TB, s idempay.KeyStore, r idempay.ReserveRequest) idempay.Reservation {
	t.Helper()
	res, err := s.Reserve(t.Context(), r)
	if err != nil {
		t.Fatalf("Reserve(%s/%s): %v", r.Namespace, r.ID, err)
	}
	return res
}

// mustResolve resolves and fails the test on an error.
func mustResolve(t testing.TB, s idempay.KeyStore, res idempay.Resolution) {
	t.Helper()
	if err := s.Resolve(t.Context(), res); err != nil {
		t.Fatalf("Resolve(%s/%s, %s): %v", res.Namespace, res.ID, res.State, err)
	}
}

// listAll pages through the open records of ns, limit at a time.
func listAll(t testing.TB, s idempay.KeyStore, ns string, limit int) []idempay.Record {
	t.Helper()
	var all []idempay.Record
	var after idempay.Cursor
	for {
		page, err := s.ListOpen(t.Context(), ns, after, limit)
		if err != nil {
			t.Fatalf("ListOpen(%s): %v", ns, err)
		}
		all = append(all, page...)
		if len(page) < limit {
			return all
		}
		after = idempay.CursorOf(page[len(page)-1])
	}
}

// reopen opens the store at path on clock c, without the sweep.
func reopen(t testing.TB, path string, c *fakes.Clock) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(path, filestore.WithClock(c.Now), filestore.WithSweepInterval(0))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// openAt is open that also returns the path of the file.
func openAt(t testing.TB, opts ...filestore.Option) (*filestore.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.db")
	s, err := filestore.Open(path, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, path
}
