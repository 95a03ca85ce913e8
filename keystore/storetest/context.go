package storetest

import (
	"context"
	"testing"

	"github.com/idempay/idempay"
)

// cancelled returns a context that is already done, so that a store
// checking ctx.Err() on entry fails deterministically, however fast its
// operation.
func cancelled(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}

func contextCases() []testCase {
	return []testCase{{
		name: "Context/Reserve with a cancelled context fails",
		rule: "Reserve with a context that is already cancelled returns an error, for an absent intent and for one the caller could claim: the caller has given up and must not be told a key is reserved",
		run: func(t *testing.T, s idempay.KeyStore) {
			if _, err := s.Reserve(cancelled(t), request("order-1", "owner-a")); err == nil {
				t.Error("Reserve of an absent intent with a cancelled context returned no error")
			}
			reserve(t, s, request("order-2", "owner-a"))
			if _, err := s.Reserve(cancelled(t), request("order-2", "owner-a")); err == nil {
				t.Error("Reserve by the lease holder with a cancelled context returned no error")
			}
		},
	}, {
		name: "Context/every other operation honours a cancelled context",
		rule: "Resolve, Load, ListOpen and Expire with a context that is already cancelled return an error",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, request("order-1", "owner-a")).Record
			ctx := cancelled(t)
			if err := s.Resolve(ctx, resolution(r, idempay.StateSucceeded)); err == nil {
				t.Error("Resolve with a cancelled context returned no error")
			}
			if _, err := s.Load(ctx, "ns", "order-1"); err == nil {
				t.Error("Load with a cancelled context returned no error")
			}
			if _, err := s.ListOpen(ctx, "ns", idempay.Cursor{}, 10); err == nil {
				t.Error("ListOpen with a cancelled context returned no error")
			}
			if _, err := s.Expire(ctx, 0); err == nil {
				t.Error("Expire with a cancelled context returned no error")
			}
		},
	}}
}
