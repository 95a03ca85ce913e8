package stripe_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openAPIResources are the resources of Stripe's OpenAPI fixtures, by
// name, sorted.
func openAPIResources(t *testing.T) ([]string, map[string]json.RawMessage) {
	var f struct {
		Resources map[string]json.RawMessage `json:"resources"`
	}
	require.NoError(t, json.Unmarshal(upstream(t, "stripe-openapi_fixtures3.json"), &f))
	names := make([]string, 0, len(f.Resources))
	for name := range f.Resources {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, f.Resources
}

// readOpAnswer sends one operation of type typ to a server replaying
// body with a 200, built and read by the adapter as the Client does.
func readOpAnswer(t *testing.T, typ idempay.OpType, body []byte) idempay.Verdict {
	t.Helper()
	p := stripe.Provider{}
	tg := replay(t, http.StatusOK, nil, body)
	op := idempay.OpRequest{Type: typ, ID: "op-1", IntentID: "o1", ChargeRef: "pi_1PgafyB7WZ01zgkWSjxsAJo3",
		Amount: 100, Currency: "USD"}
	r, err := p.NewOpRequest(context.Background(), tg, op, "k1")
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return p.ReadOp(typ, resp, b)
}

// TestStripeFixturesOperations reads every resource of Stripe's OpenAPI
// fixtures (what stripe-mock answers) as a 200 answer to a refund, a
// capture and a cancel. Only the Refund settles a refund: succeeded,
// amount 100 USD, its ID; the PaymentIntent, in requires_payment_method,
// is neither captured nor cancelled, so it settles neither; every other
// object, not being what the operation answers, settles nothing.
func TestStripeFixturesOperations(t *testing.T) {
	names, res := openAPIResources(t)
	for _, name := range names {
		for _, typ := range []idempay.OpType{idempay.OpRefund, idempay.OpCapture, idempay.OpCancel} {
			v := readOpAnswer(t, typ, res[name])
			if name == "refund" && typ == idempay.OpRefund {
				require.Equal(t, idempay.KindSucceeded, v.Kind)
				require.NotNil(t, v.Operation)
				assert.Equal(t, "re_1Pgc72B7WZ01zgkWqPvrRrPE", v.Operation.ID)
				assert.EqualValues(t, 100, v.Operation.Amount)
				assert.Equal(t, "USD", v.Operation.Currency)
				assert.Equal(t, "succeeded", v.Operation.Status)
				continue
			}
			assert.Equal(t, idempay.KindUnknown, v.Kind, "%s as a %s answer", name, typ)
			assert.Nil(t, v.Operation, "%s as a %s answer", name, typ)
		}
	}
}

// The fixture's Refund and PaymentIntent carry no idempay tag: found by
// a lookup, neither is taken for an operation of idempay's, by reference
// or in a list; tagged as the adapter tags them, the same Refund is found
// and read as its answer was.
func TestStripeFixturesLookups(t *testing.T) {
	_, res := openAPIResources(t)
	re := res["refund"]
	op := idempay.OpRequest{Type: idempay.OpRefund, ID: "op-1", IntentID: "o1", ChargeRef: "pi_1PgafyB7WZ01zgkWSjxsAJo3"}
	rec := idempay.Record{Namespace: ns + "/refund", ID: "op-1", Attempt: 1, Key: "k1"}
	p := stripe.Provider{}

	byRef := rec
	byRef.ProviderRef = "re_1Pgc72B7WZ01zgkWqPvrRrPE"
	v, err := p.FindOp(context.Background(), nil, replay(t, http.StatusOK, nil, re), op, byRef)
	require.ErrorIs(t, err, stripe.ErrForeignRefund)
	assert.Equal(t, idempay.KindUnknown, v.Kind)

	list := func(refund json.RawMessage) []byte {
		b, _ := json.Marshal(map[string]any{"object": "list", "url": "/v1/refunds", "has_more": false,
			"data": []json.RawMessage{refund}})
		return b
	}
	v, err = p.FindOp(context.Background(), nil, replay(t, http.StatusOK, nil, list(re)), op, rec)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindNotFound, v.Kind, "an untagged refund in the list is not the operation's")

	var obj map[string]any
	require.NoError(t, json.Unmarshal(re, &obj))
	obj["payment_intent"] = op.ChargeRef
	obj["metadata"] = map[string]string{stripe.OpMetadataKey: "op-1", stripe.IntentMetadataKey: "o1",
		stripe.NamespaceMetadataKey: ns, stripe.KeyMetadataKey: "k1"}
	ours, _ := json.Marshal(obj)
	v, err = p.FindOp(context.Background(), nil, replay(t, http.StatusOK, nil, list(ours)), op, rec)
	require.NoError(t, err)
	require.Equal(t, idempay.KindSucceeded, v.Kind)
	assert.Equal(t, "re_1Pgc72B7WZ01zgkWqPvrRrPE", v.Operation.ID)
	assert.EqualValues(t, 100, v.Operation.Amount)

	pi := res["payment_intent"]
	for _, typ := range []idempay.OpType{idempay.OpCapture, idempay.OpCancel} {
		o := op
		o.Type = typ
		var err error
		if typ == idempay.OpCapture {
			_, err = p.FindOp(context.Background(), nil, replay(t, http.StatusOK, nil, pi), o, rec)
		} else {
			_, err = p.FindOp(context.Background(), nil, replay(t, http.StatusOK, nil, pi), o, rec)
		}
		assert.ErrorIs(t, err, stripe.ErrForeignIntent, typ)
	}
}
