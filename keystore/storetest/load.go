package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

func loadCases() []testCase {
	return []testCase{{
		name: "Load/missing record returns ErrNotFound",
		rule: "Load of an intent with no record returns an error matching ErrNotFound",
		run: func(t *testing.T, s idempay.KeyStore) {
			if _, err := s.Load(t.Context(), "ns", "order-1"); !errors.Is(err, idempay.ErrNotFound) {
				t.Errorf("Load from an empty store = %v; want ErrNotFound", err)
			}
			reserve(t, s, newRecord("ns", "order-1", "key-1", "owner", t0))
			if _, err := s.Load(t.Context(), "ns", "order-2"); !errors.Is(err, idempay.ErrNotFound) {
				t.Errorf("Load of another intent of the same namespace = %v; want ErrNotFound", err)
			}
		},
	}, {
		name: "Load/returns every field at microsecond precision",
		rule: "Load returns every field of the record as written, times equal to the microsecond whatever their location",
		run: func(t *testing.T, s idempay.KeyStore) {
			// Times in a zone other than UTC, as time.Now() gives
			// them on most servers: the instant must survive, the
			// location need not.
			jst := time.FixedZone("JST", 9*60*60)
			created := t0.In(jst)
			r := newRecord("omise:acct_1", "order-1", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "host-1/pid-42", created)
			r.Fingerprint = "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
			got := reserve(t, s, r)
			checkRecord(t, "Reserve result", got.Record, r)

			// An open record is used rather than a pending one, so
			// that the claim below does not depend on whether a
			// pending record can be claimed.
			release := resolution(r, idempay.StateOpen, created.Add(1500*us))
			release.ProviderRef = "chrg_test_5x1"
			release.Result = []byte(`{"object":"charge","authorize_uri":"https://example.test/3ds"}`)
			resolve(t, s, release)
			claim := newRecord("omise:acct_1", "order-1", "ignored", "host-2/pid-7", created.Add(2*time.Second+7*us))
			claim.LeaseUntil = claim.UpdatedAt.Add(45*time.Second + 3*us)
			reserve(t, s, claim)

			// Every field now has a non-zero value.
			want := claimed(resolved(r, release), claim)
			checkStored(t, s, "a record with every field set", want)
		},
	}}
}
