package guard_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/rpc"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// A KeyStore served to other processes over net/rpc on loopback: what a
// shared database is to a fleet, for the crash test, where a child process
// dies holding a lease and the parent must find it after. The parent keeps
// the store (a memstore) alive; the children reach it by address.

// StoreRPC is the net/rpc service in front of a KeyStore.
type StoreRPC struct{ s idempay.KeyStore }

// ResolveArgs and friends are the RPC's messages.
type (
	ReserveReply struct{ Res idempay.Reservation }
	ResolveReply struct{}
	LoadArgs     struct{ Namespace, IntentID string }
	ListArgs     struct {
		Namespace string
		After     idempay.Cursor
		Limit     int
	}
)

// Reserve is KeyStore.Reserve over RPC.
func (s *StoreRPC) Reserve(r idempay.ReserveRequest, out *ReserveReply) (err error) {
	out.Res, err = s.s.Reserve(context.Background(), r)
	return err
}

// Resolve is KeyStore.Resolve over RPC.
func (s *StoreRPC) Resolve(r idempay.Resolution, _ *ResolveReply) error {
	return s.s.Resolve(context.Background(), r)
}

// Load is KeyStore.Load over RPC.
func (s *StoreRPC) Load(a LoadArgs, out *idempay.Record) (err error) {
	*out, err = s.s.Load(context.Background(), a.Namespace, a.IntentID)
	return err
}

// ListOpen is KeyStore.ListOpen over RPC.
func (s *StoreRPC) ListOpen(a ListArgs, out *[]idempay.Record) (err error) {
	*out, err = s.s.ListOpen(context.Background(), a.Namespace, a.After, a.Limit)
	return err
}

// Expire is KeyStore.Expire over RPC.
func (s *StoreRPC) Expire(d time.Duration, out *int) (err error) {
	*out, err = s.s.Expire(context.Background(), d)
	return err
}

// serveStore serves s on a loopback port until t ends and returns the
// address.
func serveStore(t *testing.T, s idempay.KeyStore) string {
	srv := rpc.NewServer()
	if err := srv.Register(&StoreRPC{s}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return // closed when t ends
			}
			go srv.ServeConn(conn)
		}
	}()
	return ln.Addr().String()
}

// remoteStore is the KeyStore a child process uses.
type remoteStore struct{ c *rpc.Client }

var _ idempay.KeyStore = remoteStore{}

func dialStore(addr string) (remoteStore, error) {
	c, err := rpc.Dial("tcp", addr)
	return remoteStore{c}, err
}

func (r remoteStore) Reserve(ctx context.Context, req idempay.ReserveRequest) (idempay.Reservation, error) {
	var out ReserveReply
	err := r.c.Call("StoreRPC.Reserve", req, &out)
	return out.Res, remoteErr(err)
}

func (r remoteStore) Resolve(ctx context.Context, res idempay.Resolution) error {
	return remoteErr(r.c.Call("StoreRPC.Resolve", res, &ResolveReply{}))
}

func (r remoteStore) Load(ctx context.Context, ns, id string) (idempay.Record, error) {
	var out idempay.Record
	err := r.c.Call("StoreRPC.Load", LoadArgs{ns, id}, &out)
	return out, remoteErr(err)
}

func (r remoteStore) ListOpen(ctx context.Context, ns string, after idempay.Cursor, limit int) ([]idempay.Record, error) {
	var out []idempay.Record
	err := r.c.Call("StoreRPC.ListOpen", ListArgs{ns, after, limit}, &out)
	return out, remoteErr(err)
}

func (r remoteStore) Expire(ctx context.Context, d time.Duration) (int, error) {
	var n int
	err := r.c.Call("StoreRPC.Expire", d, &n)
	return n, remoteErr(err)
}

// remoteErr gives back the KeyStore sentinels that net/rpc turned into
// strings.
func remoteErr(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{idempay.ErrNotFound, idempay.ErrKeyMismatch, idempay.ErrAlreadyResolved, idempay.ErrLeaseLost} {
		if strings.Contains(err.Error(), s.Error()) {
			return fmt.Errorf("remote store: %w", s)
		}
	}
	return errors.New("remote store: " + err.Error())
}
