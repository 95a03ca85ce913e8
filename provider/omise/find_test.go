package omise_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/provider/omise"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The list is paged: an intent's charge is found past the first page, and
// a list longer than MaxListPages proves nothing.
func TestFindChargePagesTheList(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	f := setupOnClock(t, nil, clock.Now)
	ctx := context.Background()
	for i := range 250 {
		_, err := f.client.Charge(ctx, thb(fmt.Sprintf("bulk-%03d", i), fmt.Sprintf("tokn_test_%03d", i)))
		require.NoError(t, err)
		clock.Advance(time.Millisecond)
	}
	rec, err := f.store.Load(ctx, f.client.Namespace(), "bulk-000")
	require.NoError(t, err)
	hc := &http.Client{}

	for _, id := range []string{"bulk-230", "bulk-120", "bulk-000"} { // newest page, oldest-first pass
		// Each intent's own record: a charge is its current attempt's
		// only under that attempt's key.
		byList, err := f.store.Load(ctx, f.client.Namespace(), id)
		require.NoError(t, err)
		byList.ProviderRef = ""
		v, err := omise.Provider{}.FindCharge(ctx, hc, f.target, byList)
		require.NoError(t, err)
		require.Equal(t, idempay.KindSucceeded, v.Kind, id)
		assert.Equal(t, id, v.Charge.IntentID)
	}

	byList := rec
	byList.ProviderRef, byList.ID = "", "never-charged"
	v, err := omise.Provider{}.FindCharge(ctx, hc, f.target, byList)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindNotFound, v.Kind, "a complete pass is proof")

	_, err = omise.Provider{MaxListPages: 2}.FindCharge(ctx, hc, f.target, byList)
	assert.ErrorIs(t, err, omise.ErrScanIncomplete)

	_, err = omise.Provider{SavedCards: true}.FindCharge(ctx, hc, f.target, byList)
	assert.ErrorIs(t, err, omise.ErrNoProof)
}

// The list starts shortly before the key was reserved: older charges are
// not read, and clock skew is allowed for.
func TestFindChargeListWindow(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	f := setupOnClock(t, nil, clock.Now)
	ctx := context.Background()
	ch, err := f.client.Charge(ctx, thb("old", "tokn_test_old"))
	require.NoError(t, err)
	rec := idempay.Record{Namespace: ns, ID: "old", CreatedAt: clock.Now().Add(time.Minute)}
	v, err := omise.Provider{}.FindCharge(ctx, nil, f.target, rec)
	require.NoError(t, err)
	require.Equal(t, idempay.KindSucceeded, v.Kind, "within the default two-minute skew")
	assert.Equal(t, ch.ID, v.Charge.ID)
	v, err = omise.Provider{ClockSkew: 30 * time.Second}.FindCharge(ctx, nil, f.target, rec)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindNotFound, v.Kind, "created before the window")
}

func TestFindChargeByReference(t *testing.T) {
	f := setup(t, nil)
	ctx := context.Background()
	ch, err := f.client.Charge(ctx, thb("mine", "tokn_test_1"))
	require.NoError(t, err)
	p := omise.Provider{}

	v, err := p.FindCharge(ctx, nil, f.target, idempay.Record{Namespace: ns, ID: "mine", ProviderRef: ch.ID})
	require.NoError(t, err)
	assert.Equal(t, idempay.KindSucceeded, v.Kind)
	assert.Equal(t, 1, f.srv.Stats().Retrievals)

	_, err = p.FindCharge(ctx, nil, f.target, idempay.Record{Namespace: ns, ID: "other", ProviderRef: ch.ID})
	assert.ErrorIs(t, err, omise.ErrForeignCharge)

	v, err = p.FindCharge(ctx, nil, f.target, idempay.Record{Namespace: ns, ID: "mine", ProviderRef: "chrg_test_missing"})
	assert.Equal(t, idempay.KindUnknown, v.Kind, "a missing reference is not proof")
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.Status)
	assert.Equal(t, "not_found", apiErr.Code)
}

func TestIntentOfCharge(t *testing.T) {
	f := setup(t, nil)
	ctx := context.Background()
	ch, err := f.client.Charge(ctx, thb("order-9", "tokn_test_1"))
	require.NoError(t, err)
	intent, err := omise.Provider{}.IntentOfCharge(ctx, nil, f.target, ch.ID)
	require.NoError(t, err)
	assert.Equal(t, "order-9", intent)

	_, err = omise.Provider{}.IntentOfCharge(ctx, nil, f.target, "chrg_test_nope")
	assert.Error(t, err)

	// A charge made outside idempay carries no intent.
	other := postCharge(t, f.target, url.Values{"amount": {"2000"}, "currency": {"thb"}, "card": {"tokn_test_other"}})
	_, err = omise.Provider{}.IntentOfCharge(ctx, nil, f.target, other.ID)
	assert.ErrorIs(t, err, omise.ErrNotIdempay)
	// Nor does it settle an intent whose record names it.
	v, err := omise.Provider{}.FindCharge(ctx, nil, f.target, idempay.Record{Namespace: ns, ID: "order-9", ProviderRef: other.ID})
	assert.ErrorIs(t, err, omise.ErrForeignCharge)
	assert.Equal(t, idempay.KindUnknown, v.Kind)
	bad := f.target
	bad.Credentials = "skey_wrong"
	_, err = omise.Provider{}.IntentOfCharge(ctx, nil, bad, ch.ID)
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "authentication_failure", apiErr.Code)
}

// postCharge creates a charge at the fake by hand, as an integration other
// than the adapter would.
func postCharge(t *testing.T, target idempay.Target, form url.Values) struct{ ID string } {
	t.Helper()
	r, _ := http.NewRequest(http.MethodPost, target.BaseURL.String()+"/charges", strings.NewReader(form.Encode()))
	r.SetBasicAuth(secret, "")
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	var c struct{ ID string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
	return c
}

// Only a real, complete list is proof: a 200 that is not a list (a proxy's
// empty object, an error object) or a list whose pages stop short of its
// total proves nothing.
func TestFindChargeListMustBeProof(t *testing.T) {
	for _, tc := range []struct{ name, newest, page string }{
		{"empty object", `{}`, ``},
		{"error object", `{"object":"error","code":"bad_request","message":"m"}`, ``},
		{"array", `[]`, ``},
		{"empty page short of the total", `{"object":"list","total":150,"data":[]}`, `{"object":"list","total":150,"data":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body := tc.newest
				if r.URL.Query().Get("order") == "chronological" {
					body = tc.page
				}
				_, _ = io.WriteString(w, body)
			}))
			t.Cleanup(ts.Close)
			u, _ := url.Parse(ts.URL)
			v, err := omise.Provider{}.FindCharge(context.Background(), ts.Client(), idempay.Target{BaseURL: u, Credentials: secret},
				idempay.Record{Namespace: ns, ID: "o1", CreatedAt: time.Now()})
			assert.Error(t, err)
			assert.NotEqual(t, idempay.KindNotFound, v.Kind)
		})
	}
}
