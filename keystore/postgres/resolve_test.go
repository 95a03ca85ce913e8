package postgres

import (
	"bytes"
	"errors"
	"testing"

	"github.com/idempay/idempay"
)

// TestResolveStamps checks what a Resolve writes: UpdatedAt and, on
// closing, ClosedAt from the server's clock; the lease freed; a release
// keeps a pending record pending and unsettled; ProviderRef and Result kept
// unless given.
func TestResolveStamps(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	rec := reserve(t, s, request("ns", "a")).Record
	res := idempay.Resolution{Namespace: "ns", ID: "a", Key: rec.Key}
	write := func(st idempay.State, ref string, result []byte) idempay.Record {
		t.Helper()
		res.State, res.ProviderRef, res.Result = st, ref, result
		before := serverNow(t, s)
		if err := s.Resolve(ctx, res); err != nil {
			t.Fatalf("Resolve(%s) = %v", st, err)
		}
		after := serverNow(t, s)
		got, err := s.Load(ctx, "ns", "a")
		if err != nil {
			t.Fatal(err)
		}
		if got.UpdatedAt.Before(before) || got.UpdatedAt.After(after) || got.LeaseOwner != "" || !got.LeaseUntil.IsZero() {
			t.Errorf("after Resolve(%s): UpdatedAt %s, lease %q until %s; want the server's clock between %s and %s, no lease",
				st, got.UpdatedAt, got.LeaseOwner, got.LeaseUntil, before, after)
		}
		return got
	}

	got := write(idempay.StatePending, "pi_1", []byte("pending"))
	reserve(t, s, request("ns", "a"))
	got = write(idempay.StateOpen, "", nil)
	if got.State != idempay.StatePending || !got.ClosedAt.IsZero() || got.ProviderRef != "pi_1" || string(got.Result) != "pending" {
		t.Errorf("after a release of a pending record: %s, closed %s, ref %q, result %q; want pending, unsettled, pi_1, pending",
			got.State, got.ClosedAt, got.ProviderRef, got.Result)
	}
	got = write(idempay.StateSucceeded, "", binaryResult())
	if !got.ClosedAt.Equal(got.UpdatedAt) || got.ProviderRef != "pi_1" || !bytes.Equal(got.Result, binaryResult()) {
		t.Errorf("closed: ClosedAt %s, UpdatedAt %s, ref %q; want ClosedAt = UpdatedAt, ref kept, the result stored",
			got.ClosedAt, got.UpdatedAt, got.ProviderRef)
	}
}

// TestResolveRefusals checks the errors in the contract's order, each with
// nothing changed: a wrong key is reported before the state, a closed
// record before the lease owner.
func TestResolveRefusals(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	reserve(t, s, request("ns", "open"))
	reserve(t, s, request("ns", "closed"))
	resolve(t, s, "ns", "closed", idempay.StateSucceeded)
	for name, tc := range map[string]struct {
		res  idempay.Resolution
		want error
	}{
		"no record":                    {idempay.Resolution{ID: "none", Key: "k"}, idempay.ErrNotFound},
		"other namespace":              {idempay.Resolution{Namespace: "ns2", ID: "open", Key: "key-open"}, idempay.ErrNotFound},
		"wrong key":                    {idempay.Resolution{ID: "open", Key: "k", LeaseOwner: "other"}, idempay.ErrKeyMismatch},
		"wrong key of a closed record": {idempay.Resolution{ID: "closed", Key: "k"}, idempay.ErrKeyMismatch},
		"closed":                       {idempay.Resolution{ID: "closed", Key: "key-closed", LeaseOwner: "other"}, idempay.ErrAlreadyResolved},
		"lease of another owner":       {idempay.Resolution{ID: "open", Key: "key-open", LeaseOwner: "other"}, idempay.ErrLeaseLost},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.res.Namespace == "" {
				tc.res.Namespace = "ns"
			}
			tc.res.State = idempay.StateFailed
			before, _ := s.Load(ctx, "ns", tc.res.ID)
			if err := s.Resolve(ctx, tc.res); !errors.Is(err, tc.want) {
				t.Errorf("Resolve = %v; want %v", err, tc.want)
			}
			if after, _ := s.Load(ctx, "ns", tc.res.ID); !after.UpdatedAt.Equal(before.UpdatedAt) || after.State != before.State {
				t.Errorf("a refused Resolve changed the record: %+v\nwas %+v", after, before)
			}
		})
	}
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "open", Key: "key-open", State: "done"}); err == nil {
		t.Error("Resolve with an invalid state = nil error; want it refused")
	}
}
