package omise_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/provider/omise"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The operations' reading rules against Omise's own objects
// (testdata/upstream, sources in SOURCES.txt): the charges a capture and a
// reverse answer and a lookup retrieves, a refund as Omise's API returned
// it, Omise's 404.

// readOp sends the request build makes to a server replaying body with
// status and reads the answer with read, as the Client does.
func readOp(t *testing.T, status int, body []byte, op idempay.OpRequest, p omise.Provider) idempay.Verdict {
	t.Helper()
	req, err := p.NewOpRequest(context.Background(), replay(t, status, body), op, "k1")
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return p.ReadOp(op.Type, resp, b)
}

func fixtureOp(t idempay.OpType, chargeID string, amount int64) idempay.OpRequest {
	return idempay.OpRequest{Type: t, ID: string(t) + "-1", IntentID: "o1", ChargeRef: chargeID, Amount: amount, Currency: "THB"}
}

// taggedAs is the fixture with idempay's tags for intent o1 in its
// metadata (Omise's recorded charges carry other integrations' metadata,
// or none), everything else as Omise answered it.
func taggedAs(t *testing.T, body []byte) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m))
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[omise.IntentMetadataKey], meta[omise.NamespaceMetadataKey], meta[omise.KeyMetadataKey] = "o1", ns, "k0"
	m["metadata"] = meta
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

// chargeOf returns the charge id of the list fixture file.
func chargeOf(t *testing.T, file, id string) []byte {
	t.Helper()
	var page struct{ Data []json.RawMessage }
	require.NoError(t, json.Unmarshal(upstream(t, file), &page))
	for _, raw := range page.Data {
		var c struct{ ID string }
		require.NoError(t, json.Unmarshal(raw, &c))
		if c.ID == id {
			return raw
		}
	}
	t.Fatalf("%s has no charge %s", file, id)
	return nil
}

// TestOmiseFixturesCaptureAndReverse: each of Omise's charges as the answer
// to a capture and a reverse, and as what a lookup of either retrieves.
func TestOmiseFixturesCaptureAndReverse(t *testing.T) {
	p := omise.Provider{}
	succeeded, declined, notFound, unknown := idempay.KindSucceeded, idempay.KindDeclined, idempay.KindNotFound, idempay.KindUnknown
	for _, tc := range []struct {
		name, id              string
		body                  []byte
		amount                int64 // asked of the capture
		readCapture, findCapt idempay.Kind
		readCancel, findCanc  idempay.Kind
		captured              int64 // what a succeeded capture reports
	}{
		// Authorised with capture=false, waiting: an answer of it proves
		// nothing; a lookup finds neither a capture nor a reverse.
		{"authorised", "chrg_test_63444wyfsg4mtvvck1z", upstream(t, "omise-php_charges-post.json"), 100000,
			unknown, notFound, unknown, notFound, 0},
		// Reversed: the reverse succeeded; no capture can be made.
		{"reversed", "chrg_test_63444l54oepthq098px", upstream(t, "omise-php_reverse-post.json"), 100000,
			declined, declined, succeeded, succeeded, 0},
		// Expired: neither can be made.
		{"expired", "chrg_test_6344b4koui4cepimfzl", upstream(t, "omise-php_expire-post.json"), 100000,
			declined, declined, declined, declined, 0},
		// A pre-authorisation captured in part: captured_amount 5000 of
		// 10000 is what the capture moved, and no reverse can be made.
		{"captured in part", "chrg_test_5x1753iuub61dfe41q4", upstream(t, "omise-go_chrg_test_5x1753iuub61dfe41q4-get.json"), 5000,
			succeeded, succeeded, declined, declined, 5000},
		// Omise's own capture answer (2025): a pre_auth charge of 100000
		// captured 50000 (authorized_amount 100000, captured_amount 50000).
		{"capture answer, in part", "chrg_test_6344625jbi1u9z0m01z", upstream(t, "omise-php_capture-post.json"), 50000,
			succeeded, succeeded, declined, declined, 50000},
		// A pre_auth charge of 100000 captured 3000 (omise-ruby, 2023).
		{"captured in part, 2023", "chrg_test_5x8glktwl62j63dr3me", upstream(t, "omise-ruby_chrg_test_5x8glktwl62j63dr3me-get.json"), 3000,
			succeeded, succeeded, declined, declined, 3000},
		// Captured whole, from the staging page.
		{"captured whole", "chrg_test_62f161x7rdkm4u7pibg", chargeOf(t, "omise-php_charges-get.json", "chrg_test_62f161x7rdkm4u7pibg"), 31000,
			succeeded, succeeded, declined, declined, 31000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp, cn := fixtureOp(idempay.OpCapture, tc.id, tc.amount), fixtureOp(idempay.OpCancel, tc.id, tc.amount)
			v := readOp(t, http.StatusOK, tc.body, cp, p)
			require.Equal(t, tc.readCapture, v.Kind, "capture answered")
			if v.Kind == succeeded {
				assert.Equal(t, tc.captured, v.Operation.Amount)
				assert.Equal(t, tc.id, v.Operation.ID)
			}
			v = readOp(t, http.StatusOK, tc.body, cn, p)
			require.Equal(t, tc.readCancel, v.Kind, "reverse answered")

			target := replay(t, http.StatusOK, taggedAs(t, tc.body))
			v, _ = p.FindOp(context.Background(), nil, target, cp, idempay.Record{ID: cp.ID, Key: "k1"})
			assert.Equal(t, tc.findCapt, v.Kind, "capture looked up")
			v, _ = p.FindOp(context.Background(), nil, target, cn, idempay.Record{ID: cn.ID, Key: "k1"})
			assert.Equal(t, tc.findCanc, v.Kind, "reverse looked up")

			// As Omise stores them, untagged, they are no intent's: a
			// lookup refuses to settle with them.
			_, err := p.FindOp(context.Background(), nil, replay(t, http.StatusOK, tc.body), cp, idempay.Record{})
			assert.ErrorIs(t, err, omise.ErrForeignCharge)
		})
	}
	// A capture found for another amount than it asked is no proof.
	body := taggedAs(t, upstream(t, "omise-go_chrg_test_5x1753iuub61dfe41q4-get.json"))
	v, err := p.FindOp(context.Background(), nil, replay(t, http.StatusOK, body),
		fixtureOp(idempay.OpCapture, "chrg_test_5x1753iuub61dfe41q4", 10000), idempay.Record{})
	assert.ErrorIs(t, err, omise.ErrCaptureMismatch)
	assert.Equal(t, idempay.KindUnknown, v.Kind)
}

// TestOmiseFixturesAuthorisation: Omise's answer to a charge made with
// capture=false is an authorisation (Charge.Authorized), settled, not paid.
func TestOmiseFixturesAuthorisation(t *testing.T) {
	v := readCharge(t, http.StatusOK, upstream(t, "omise-php_charges-post.json"))
	require.Equal(t, idempay.KindSucceeded, v.Kind)
	assert.True(t, v.Charge.Authorized)
	assert.Equal(t, omise.StatusAuthorized, v.Charge.Status)
	for _, file := range []string{"omise-go_charges-post.json", "omise-go_chrg_test_5x1753iuub61dfe41q4-get.json"} {
		v := readCharge(t, http.StatusOK, upstream(t, file))
		assert.False(t, v.Charge.Authorized, "%s moved money", file)
	}
}

// TestOmiseFixturesRefunds: the refund in omise-go's charge fixture, an
// older refund object without status or metadata, reads as a refund made;
// the charge's refunds list, served as GET /charges/{id}/refunds, holds
// no refund of idempay's, which two passes prove; Omise's 404 body on a
// refund is the store's charge not found for this key.
func TestOmiseFixturesRefunds(t *testing.T) {
	var c struct {
		Refunds json.RawMessage `json:"refunds"`
	}
	require.NoError(t, json.Unmarshal(upstream(t, "omise-go_chrg_test_4yq7duw15p9hdrjp8oq-get.json"), &c))
	var l struct{ Data []json.RawMessage }
	require.NoError(t, json.Unmarshal(c.Refunds, &l))
	require.Len(t, l.Data, 1)

	p := quick
	op := fixtureOp(idempay.OpRefund, "chrg_test_4yq7duw15p9hdrjp8oq", 10000)
	v := readOp(t, http.StatusOK, l.Data[0], op, p)
	require.Equal(t, idempay.KindSucceeded, v.Kind)
	assert.Equal(t, "rfnd_test_4yqmv79ahghsiz23y3c", v.Operation.ID)
	assert.Equal(t, int64(10000), v.Operation.Amount)
	assert.Equal(t, "THB", v.Operation.Currency)

	v, err := p.FindOp(context.Background(), nil, replay(t, http.StatusOK, c.Refunds), op,
		idempay.Record{Namespace: ns + "/refund", ID: op.ID, Attempt: 1, Key: "k1"})
	require.NoError(t, err)
	assert.Equal(t, idempay.KindNotFound, v.Kind)

	notFound := upstream(t, "omise-go_charges_404-get.json")
	v = readOp(t, http.StatusNotFound, notFound, op, p)
	assert.Equal(t, idempay.KindConfig, v.Kind)
	assert.Equal(t, "not_found", v.Err.Code)
	v, err = p.FindOp(context.Background(), nil, replay(t, http.StatusNotFound, notFound), op, idempay.Record{Key: "k1"})
	assert.Error(t, err)
	assert.Equal(t, idempay.KindUnknown, v.Kind)
}
