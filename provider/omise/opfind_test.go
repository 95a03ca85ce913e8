package omise_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/provider/omise"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opServer answers GET /charges/chrg_test_1/refunds with the pages the
// test gives (by call: the n-th list answers pages(n, offset)), GET
// /charges/chrg_test_1/refunds/{id} with refund, GET /charges/chrg_test_1
// with charge, and counts the lists.
type opServer struct {
	pages  func(call, offset int) (status int, body string)
	refund string
	charge string
	lists  atomic.Int64
}

func (s *opServer) start(t *testing.T) idempay.Target {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		status, body := http.StatusNotFound, `{"object":"error","code":"not_found","message":"not found"}`
		switch {
		case r.URL.Path == "/charges/chrg_test_1/refunds" && s.pages != nil:
			offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
			status, body = s.pages(int(s.lists.Add(1)), offset)
		case strings.HasPrefix(r.URL.Path, "/charges/chrg_test_1/refunds/") && s.refund != "":
			status, body = http.StatusOK, s.refund
		case r.URL.Path == "/charges/chrg_test_1" && s.charge != "":
			status, body = http.StatusOK, s.charge
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(ts.Close)
	u, _ := url.Parse(ts.URL)
	return idempay.Target{BaseURL: u, Credentials: secret, Namespace: ns}
}

// list is a refunds page of total refunds holding data.
func list(total int, data ...string) string {
	return fmt.Sprintf(`{"object":"list","total":%d,"limit":100,"offset":0,"data":[%s]}`, total, strings.Join(data, ","))
}

// tagged is a refund with status and metadata.
func tagged(id, status, meta string) string {
	return fmt.Sprintf(`{"object":"refund","id":%q,"amount":5000,"currency":"thb","charge":"chrg_test_1","status":%q,"metadata":{%s}}`,
		id, status, meta)
}

// ours is the metadata idempay tags refund rf-1's attempt under key-1 with.
const ours = `"idempay_op":"rf-1","idempay_intent":"o1","idempay_namespace":"` + ns + `","idempay_key":"key-1"`

func refundOp() idempay.OpRequest {
	return idempay.OpRequest{Type: idempay.OpRefund, ID: "rf-1", IntentID: "o1", ChargeRef: "chrg_test_1", Amount: 5000, Currency: "THB"}
}

func refundRec() idempay.Record {
	return idempay.Record{Namespace: ns + "/refund", ID: "rf-1", Attempt: 1, Key: "key-1"}
}

var quick = omise.Provider{RefundRecheck: time.Millisecond}

// TestFindRefundByTags: a lookup settles the refund only with the refund
// tagged with its ID, the namespace and the attempt's key; refunds of
// other refund IDs, accounts and attempts are passed over, and a pass over
// every page without the refund is a proof only when a second pass agrees.
func TestFindRefundByTags(t *testing.T) {
	other := tagged("rfnd_other", "closed", `"idempay_op":"rf-2","idempay_namespace":"`+ns+`","idempay_key":"key-9"`)
	neighbour := tagged("rfnd_neighbour", "closed", `"order_id":18,"x_test":true`)
	otherAccount := tagged("rfnd_acct", "closed", `"idempay_op":"rf-1","idempay_namespace":"omise:acct_2","idempay_key":"key-1"`)
	otherAttempt := tagged("rfnd_att", "failed", `"idempay_op":"rf-1","idempay_namespace":"`+ns+`","idempay_key":"key-0"`)
	for _, tc := range []struct {
		name  string
		page  string
		kind  idempay.Kind
		err   error
		lists int64
	}{
		{"ours, closed", list(3, other, tagged("rfnd_1", "closed", ours), neighbour), idempay.KindSucceeded, nil, 1},
		{"ours, pending", list(1, tagged("rfnd_1", "pending", ours)), idempay.KindPending, nil, 1},
		{"ours, failed", list(1, tagged("rfnd_1", "failed", ours)), idempay.KindDeclined, nil, 1},
		{"none of ours, twice", list(4, other, neighbour, otherAccount, otherAttempt), idempay.KindNotFound, nil, 2},
		{"no refunds at all", list(0), idempay.KindNotFound, nil, 2},
		{"refund ID without a key tag", list(1, tagged("rfnd_x", "closed", `"idempay_op":"rf-1","idempay_namespace":"`+ns+`"`)), idempay.KindUnknown, omise.ErrAmbiguousRefund, 1},
		{"refund ID without a namespace tag", list(1, tagged("rfnd_x", "closed", `"idempay_op":"rf-1","idempay_key":"key-1"`)), idempay.KindUnknown, omise.ErrAmbiguousRefund, 1},
		{"an element that is not a refund", list(1, `{"object":"charge","id":"chrg_x"}`), idempay.KindUnknown, omise.ErrAmbiguousRefund, 1},
		{"refunded twice", list(2, tagged("rfnd_1", "closed", ours), tagged("rfnd_2", "closed", ours)), idempay.KindUnknown, omise.ErrDuplicateRefund, 1},
		{"a page short of the total", list(5), idempay.KindUnknown, omise.ErrScanIncomplete, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &opServer{pages: func(int, int) (int, string) { return 200, tc.page }}
			v, err := quick.FindOp(context.Background(), nil, s.start(t), refundOp(), refundRec())
			assert.Equal(t, tc.kind, v.Kind)
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.lists, s.lists.Load())
			if tc.kind == idempay.KindSucceeded || tc.kind == idempay.KindPending {
				require.NotNil(t, v.Operation)
				assert.Equal(t, "rfnd_1", v.Operation.ID)
			}
			if tc.kind == idempay.KindDeclined {
				assert.Equal(t, "omise", v.Err.Provider)
			}
		})
	}
}

// A refund Omise was still making when the first pass read the list
// shows up in the second: it settles the refund, and nothing is resent.
func TestFindRefundSecondPassFindsLateRefund(t *testing.T) {
	s := &opServer{pages: func(call, _ int) (int, string) {
		if call == 1 {
			return 200, list(0)
		}
		return 200, list(1, tagged("rfnd_1", "closed", ours))
	}}
	v, err := omise.Provider{RefundRecheck: 20 * time.Millisecond}.FindOp(context.Background(), nil, s.start(t), refundOp(), refundRec())
	require.NoError(t, err)
	assert.Equal(t, idempay.KindSucceeded, v.Kind)
	assert.EqualValues(t, 2, s.lists.Load())

	// With the default, the pass is read again 2 s later; a caller that
	// stops waiting gets no proof.
	s.lists.Store(0)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	v, err = omise.Provider{}.FindOp(ctx, nil, s.start(t), refundOp(), refundRec())
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, idempay.KindUnknown, v.Kind)

	// A negative RefundRecheck reads once.
	s.lists.Store(0)
	v, err = omise.Provider{RefundRecheck: -1}.FindOp(context.Background(), nil, s.start(t), refundOp(), refundRec())
	require.NoError(t, err)
	assert.Equal(t, idempay.KindNotFound, v.Kind)
	assert.EqualValues(t, 1, s.lists.Load())
}

// The charge's refunds are read page by page, oldest first, to the total;
// a lookup that fails or reads something else than a list proves nothing.
func TestFindRefundPagesAndFailures(t *testing.T) {
	s := &opServer{pages: func(_, offset int) (int, string) {
		if offset == 0 {
			data := make([]string, 100)
			for i := range data {
				data[i] = tagged(fmt.Sprintf("rfnd_%03d", i), "closed", `"idempay_op":"rf-x"`)
			}
			return 200, list(101, data...)
		}
		return 200, list(101, tagged("rfnd_1", "closed", ours))
	}}
	v, err := quick.FindOp(context.Background(), nil, s.start(t), refundOp(), refundRec())
	require.NoError(t, err)
	assert.Equal(t, idempay.KindSucceeded, v.Kind)
	assert.EqualValues(t, 2, s.lists.Load())

	for name, answer := range map[string]struct {
		status int
		body   string
	}{
		"503":         {503, `{"object":"error","code":"service_unavailable","message":"m"}`},
		"not a list":  {200, `{"object":"refund","id":"rfnd_1"}`},
		"a proxy":     {200, `<html>hi</html>`},
		"charge gone": {404, `{"object":"error","code":"not_found","message":"charge was not found"}`},
	} {
		s := &opServer{pages: func(int, int) (int, string) { return answer.status, answer.body }}
		v, err := quick.FindOp(context.Background(), nil, s.start(t), refundOp(), refundRec())
		assert.Error(t, err, name)
		assert.Equal(t, idempay.KindUnknown, v.Kind, name)
	}
	op := refundOp()
	op.ChargeRef = ""
	_, err = quick.FindOp(context.Background(), nil, s.start(t), op, refundRec())
	assert.Error(t, err, "no charge to look in")
}

// A refund the record names (a pending one) is retrieved by its ID, and
// must be tagged for the record.
func TestFindRefundByID(t *testing.T) {
	rec := refundRec()
	rec.ProviderRef = "rfnd_1"
	s := &opServer{refund: tagged("rfnd_1", "closed", ours)}
	v, err := quick.FindOp(context.Background(), nil, s.start(t), refundOp(), rec)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindSucceeded, v.Kind)
	assert.Zero(t, s.lists.Load())

	s = &opServer{refund: tagged("rfnd_1", "closed", `"idempay_op":"rf-9","idempay_namespace":"`+ns+`","idempay_key":"key-1"`)}
	v, err = quick.FindOp(context.Background(), nil, s.start(t), refundOp(), rec)
	assert.ErrorIs(t, err, omise.ErrForeignRefund)
	assert.Equal(t, idempay.KindUnknown, v.Kind)
}

func chargeWith(extra string) string {
	return `{"object":"charge","id":"chrg_test_1","amount":100000,"currency":"THB","authorized":true,"capture":false,` +
		`"metadata":{"idempay_intent":"o1","idempay_namespace":"` + ns + `","idempay_key":"k"}` + extra + `}`
}

// TestFindCaptureAndCancel: a capture or reverse is looked up by
// retrieving its charge. A charge still authorised proves neither was
// made (Omise captures and reverses a charge once, so the resend this
// allows cannot do it twice), except a multi-capture charge.
func TestFindCaptureAndCancel(t *testing.T) {
	succeeded, declined, notFound, unknown := idempay.KindSucceeded, idempay.KindDeclined, idempay.KindNotFound, idempay.KindUnknown
	for _, tc := range []struct {
		name            string
		charge          string
		capture, cancel idempay.Kind
		captureErr      error
	}{
		{"authorised", chargeWith(`,"status":"pending","capturable":true,"reversible":true`), notFound, notFound, nil},
		{"captured as asked", chargeWith(`,"status":"successful","paid":true,"captured_amount":60000`), succeeded, declined, nil},
		{"captured for another amount", chargeWith(`,"status":"successful","paid":true,"captured_amount":70000`), unknown, declined, omise.ErrCaptureMismatch},
		{"reversed", chargeWith(`,"status":"reversed","reversed":true`), declined, succeeded, nil},
		{"expired", chargeWith(`,"status":"expired","expired":true`), declined, declined, nil},
		{"multi-capture, authorised", chargeWith(`,"status":"pending","multi_capture":true`), unknown, unknown, omise.ErrMultiCapture},
		{"tagged for another intent", strings.Replace(chargeWith(`,"status":"pending"`), `"o1"`, `"o2"`, 1), unknown, unknown, omise.ErrForeignCharge},
		{"not tagged", `{"object":"charge","id":"chrg_test_1","amount":100000,"status":"pending","authorized":true,"capture":false}`, unknown, unknown, omise.ErrForeignCharge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := (&opServer{charge: tc.charge}).start(t)
			cp := idempay.OpRequest{Type: idempay.OpCapture, ID: "cp-1", IntentID: "o1", ChargeRef: "chrg_test_1", Amount: 60000, Currency: "THB"}
			v, err := omise.Provider{}.FindOp(context.Background(), nil, target, cp, idempay.Record{ID: "cp-1", Key: "kc"})
			assert.Equal(t, tc.capture, v.Kind, "capture")
			if tc.captureErr != nil {
				assert.ErrorIs(t, err, tc.captureErr)
			}
			if v.Kind == idempay.KindSucceeded {
				assert.Equal(t, int64(60000), v.Operation.Amount)
			}
			cn := idempay.OpRequest{Type: idempay.OpCancel, ID: "cn-1", IntentID: "o1", ChargeRef: "chrg_test_1", Amount: 100000, Currency: "THB"}
			v, err = omise.Provider{}.FindOp(context.Background(), nil, target, cn, idempay.Record{ID: "cn-1", Key: "kn"})
			assert.Equal(t, tc.cancel, v.Kind, "cancel")
			if v.Kind == idempay.KindUnknown {
				assert.Error(t, err)
			}
			if v.Kind == idempay.KindDeclined {
				assert.Equal(t, "omise", v.Err.Provider)
			}
		})
	}
	// A lookup that cannot retrieve the charge proves nothing.
	target := (&opServer{}).start(t)
	v, err := omise.Provider{}.FindOp(context.Background(), nil, target,
		idempay.OpRequest{Type: idempay.OpCancel, ID: "cn", IntentID: "o1", ChargeRef: "chrg_test_1"}, idempay.Record{})
	assert.Error(t, err)
	assert.Equal(t, idempay.KindUnknown, v.Kind)
}
