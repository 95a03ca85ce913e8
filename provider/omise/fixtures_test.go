package omise_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/fixtures"
	"github.com/idempay/idempay/provider/omise"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func upstream(t *testing.T, name string) []byte { return fixtures.Upstream(t, name) }

// replay serves body with status to every request, as Omise answered it.
func replay(t *testing.T, status int, body []byte) idempay.Target {
	return idempay.Target{BaseURL: fixtures.Replay(t, status, nil, body), Credentials: secret, Namespace: ns}
}

// readCharge sends a charge request to a server replaying body and reads
// the answer the way the Client does.
func readCharge(t *testing.T, status int, body []byte) idempay.Verdict {
	t.Helper()
	req, err := omise.Provider{}.NewChargeRequest(context.Background(), replay(t, status, body), thb("o1", "tokn_test_1"), "k1")
	require.NoError(t, err)
	return fixtures.ReadCharge(t, omise.Provider{}, req)
}

// omiseMeant is what a charge object says about the money.
type omiseMeant struct {
	kind      idempay.Kind
	id        string
	amount    int64
	currency  string
	state     idempay.State
	status    string // Charge.Status, or the refusal's Code
	authorize bool   // an AuthorizeURL to send the customer to
}

func (m omiseMeant) check(t *testing.T, name string, v idempay.Verdict) {
	t.Helper()
	require.Equal(t, m.kind, v.Kind, name)
	switch m.kind {
	case idempay.KindSucceeded, idempay.KindPending:
		require.NotNil(t, v.Charge, name)
		assert.Equal(t, m.id, v.Charge.ID, name)
		assert.Equal(t, m.amount, v.Charge.Amount, name)
		assert.Equal(t, m.currency, v.Charge.Currency, name)
		assert.Equal(t, m.state, v.Charge.State, name)
		assert.Equal(t, m.status, v.Charge.Status, name)
		assert.Equal(t, m.authorize, v.Charge.AuthorizeURL != "", name)
	case idempay.KindDeclined, idempay.KindInvalid:
		require.NotNil(t, v.Err, name)
		assert.Equal(t, m.status, v.Err.Code, name)
	}
}

// TestOmiseFixturesCharges reads every charge object and error in the
// upstream fixtures through ReadCharge, with the verdict Omise meant.
func TestOmiseFixturesCharges(t *testing.T) {
	succeeded, pending, declined := idempay.KindSucceeded, idempay.KindPending, idempay.KindDeclined
	ok, wait := idempay.StateSucceeded, idempay.StatePending
	for file, want := range map[string]omiseMeant{
		"omise-go_charges-post.json": {succeeded, "chrg_test_4yq7duw15p9hdrjp8oq", 100000, "THB", ok, "successful", false},
		// An old charge object without status: captured is what it says.
		"omise-go_chrg_test_4yq7duw15p9hdrjp8oq-get.json": {succeeded, "chrg_test_4yq7duw15p9hdrjp8oq", 100000, "THB", ok, "", false},
		// Waiting for the customer (3-D Secure, an offsite source).
		"omise-go_chrg_test_5kdpo8ie121323la8ew-get.json": {pending, "chrg_test_5kdpo8ie121323la8ew", 400000, "THB", wait, "pending", false},
		"omise-go_chrg_test_5nvdpnapyle90ejudk8-get.json": {pending, "chrg_test_5nvdpnapyle90ejudk8", 400000, "SGD", wait, "pending", false},
		// Authorised, not captured: the authorisation succeeded.
		"omise-php_charges-post.json":                     {succeeded, "chrg_test_63444wyfsg4mtvvck1z", 100000, "THB", ok, omise.StatusAuthorized, false},
		"omise-go_chrg_test_5x1753iuub61dfe41q4-get.json": {succeeded, "chrg_test_5x1753iuub61dfe41q4", 10000, "THB", ok, "successful", false},
		// Released or never completed: no money moved.
		"omise-php_reverse-post.json": {kind: declined, status: "reversed"},
		"omise-php_expire-post.json":  {kind: declined, status: "expired"},
	} {
		want.check(t, file, readCharge(t, http.StatusOK, upstream(t, file)))
	}
	// Omise's 404 error body on POST /charges names a missing object: the
	// parameters are wrong.
	v := readCharge(t, http.StatusNotFound, upstream(t, "omise-go_charges_404-get.json"))
	omiseMeant{kind: idempay.KindInvalid, status: "not_found"}.check(t, "404", v)
	assert.Equal(t, "customer missing was not found", v.Err.Message)
}

// TestOmiseFixturesListPage reads the page recorded from Omise's staging
// account: twenty charges from other integrations, ten with numbers in
// their metadata. Each one reads as what it is, declines included, and a
// lookup reads past the whole page (no idempay tag: no charge of the
// intent, after a complete pass).
func TestOmiseFixturesListPage(t *testing.T) {
	body := upstream(t, "omise-php_charges-get.json")
	var page struct {
		Total int               `json:"total"`
		Data  []json.RawMessage `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &page))
	require.Len(t, page.Data, 20)
	kinds := map[idempay.Kind]int{}
	for i, raw := range page.Data {
		v := readCharge(t, http.StatusOK, raw)
		kinds[v.Kind]++
		assert.NotEqual(t, idempay.KindUnknown, v.Kind, "charge %d of the page reads as unknown", i)
	}
	assert.Equal(t, map[idempay.Kind]int{idempay.KindSucceeded: 14, idempay.KindDeclined: 6}, kinds)

	rec := idempay.Record{Namespace: ns, ID: "order-1", CreatedAt: time.Now()}
	v, err := omise.Provider{}.FindCharge(context.Background(), nil, replay(t, http.StatusOK, body), rec)
	require.NoError(t, err, "the page is readable")
	assert.Equal(t, idempay.KindNotFound, v.Kind)

	// The other list fixture is readable too.
	v, err = omise.Provider{}.FindCharge(context.Background(), nil,
		replay(t, http.StatusOK, upstream(t, "omise-go_charges-get.json")), rec)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindNotFound, v.Kind)
}

// TestOmiseFixturesDeclineCodes: the page's declines carry Omise's
// failure codes.
func TestOmiseFixturesDeclineCodes(t *testing.T) {
	var page struct{ Data []json.RawMessage }
	require.NoError(t, json.Unmarshal(upstream(t, "omise-php_charges-get.json"), &page))
	codes := map[string]int{}
	for _, raw := range page.Data {
		if v := readCharge(t, http.StatusOK, raw); v.Kind == idempay.KindDeclined {
			codes[v.Err.Code]++
		}
	}
	assert.Equal(t, map[string]int{"expired": 4, "insufficient_fund": 1, "failed_fraud_check": 1}, codes)
}
