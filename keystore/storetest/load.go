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
			reserve(t, s, request("order-1", "owner-a"))
			if _, err := s.Load(t.Context(), "ns", "order-2"); !errors.Is(err, idempay.ErrNotFound) {
				t.Errorf("Load of another intent of the same namespace = %v; want ErrNotFound", err)
			}
		},
	}, {
		name: "Load/returns what Reserve and Resolve stored, at microsecond precision",
		rule: "Load returns every field of the record as Reserve returned it and Resolve wrote it, History included, instants equal to the microsecond to those Reserve reported; the store's clock has microsecond resolution, not milliseconds",
		run: func(t *testing.T, s idempay.KeyStore) {
			var stamps []time.Time
			// A record with every field set: a failed first attempt in
			// History, a pending second one with a ProviderRef and a
			// Result, claimed by another owner than its creator.
			first := idempay.ReserveRequest{
				Namespace: "omise:acct_1", ID: "order-1", Attempt: 1,
				Key:         "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
				Fingerprint: "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
				Owner:       "host-1/pid-42/flight-1", Lease: 45*time.Second + 3*us,
			}
			got := reserve(t, s, first)
			want := inserted(first, got.Now)
			stamps = append(stamps, got.Now)
			checkStored(t, s, "the first attempt", want)
			res := resolution(want, idempay.StateFailed)
			res.ProviderRef, res.Result = "chrg_test_1", []byte(`{"failure_code":"insufficient_fund"}`)
			want = apply(t, s, "the first attempt, failed", want, res)
			stamps = append(stamps, want.ClosedAt)

			second := first
			second.Attempt, second.Key, second.Fingerprint = 2, "7c9e6679-7425-40de-944b-e07fc1f90ae7", "sha256:other-card"
			got = reserve(t, s, second)
			want = begun(want, second, got.Now)
			stamps = append(stamps, got.Now)
			res = release(want, second.Owner)
			res.State, res.ProviderRef = idempay.StatePending, "chrg_test_2"
			res.Result = []byte(`{"object":"charge","authorize_uri":"https://example.test/3ds"}`)
			want = apply(t, s, "the second attempt, pending", want, res)
			stamps = append(stamps, want.UpdatedAt)

			claim := second
			claim.Owner, claim.Lease = "host-2/pid-7/flight-9", 90*time.Second+7*us
			got = reserve(t, s, claim)
			want = claimed(want, claim, got.Now)
			stamps = append(stamps, got.Now)
			checkRecord(t, "Reserve's answer to a claim of a record with every field set", got.Record, want)
			checkStored(t, s, "a record with every field set", want)

			// Five instants read from a microsecond clock are all
			// whole milliseconds once in 10^15 runs.
			coarse := true
			for _, x := range stamps {
				coarse = coarse && x.Equal(x.Truncate(time.Millisecond))
			}
			if coarse {
				t.Errorf("the store's instants %v are all whole milliseconds: its clock or its columns keep milliseconds, not microseconds", stamps)
			}
		},
	}}
}
