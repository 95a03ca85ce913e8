package postgres

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/testenv"
	"github.com/idempay/idempay/keystore/storetest"
)

// TestDurabilityClaims crashes a private PostgreSQL server (-m immediate,
// its WAL writer frozen, so that a commit made without a flush is lost)
// after each write the store must make durable, and checks that the write
// survived.
func TestDurabilityClaims(t *testing.T) {
	pg := testenv.PrivatePostgres(t, testenv.LossySettings...)
	var n atomic.Int32
	open := func(t *testing.T, table string) *Store {
		t.Helper()
		s, err := Open(context.Background(), pg.DSN(), WithTable(table))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	storetest.RunDurability(t, func(t *testing.T) storetest.Crashable {
		table := fmt.Sprintf("durability_%d", n.Add(1))
		s := open(t, table)
		pg.FreezeWALWriter() // only what a committing backend flushed itself survives
		return storetest.Crashable{Store: s, Crash: func(t *testing.T) idempay.KeyStore {
			s.Close()
			pg.Crash()
			pg.Start()
			return open(t, table)
		}}
	})
}

// TestRelaxedResolveIsLostInACrash shows that the crash above loses what
// PostgreSQL may lose: a Resolve without Durable, committed with
// synchronous_commit off, is gone after the immediate stop. Without it the
// durability claims could pass on a crash that loses nothing.
func TestRelaxedResolveIsLostInACrash(t *testing.T) {
	pg := testenv.PrivatePostgres(t, testenv.LossySettings...)
	ctx := context.Background()
	s, err := Open(ctx, pg.DSN(), WithTable("relaxed"))
	if err != nil {
		t.Fatal(err)
	}
	r := request("ns", "order-1")
	reserve(t, s, r)
	pg.FreezeWALWriter() // nothing unflushed reaches the OS from now on
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "order-1", Key: r.Key,
		State: idempay.StateSucceeded, Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	pg.Crash()
	pg.Start()
	s, err = Open(ctx, pg.DSN(), WithTable("relaxed"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, err := s.Load(ctx, "ns", "order-1")
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != idempay.StateOpen {
		t.Errorf("a relaxed Resolve after an immediate stop inside the WAL window: state %s; want open (lost)", rec.State)
	}
}
