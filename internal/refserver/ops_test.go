package refserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// opBody builds an operation body.
func opBody(t opType, opID, orderID string, amount int) string {
	if t == opCancel {
		return fmt.Sprintf(`{%q:%q,"order_id":%q}`, t.idField, opID, orderID)
	}
	return fmt.Sprintf(`{%q:%q,"order_id":%q,"amount":%d,"currency":"JPY"}`, t.idField, opID, orderID, amount)
}

func postTo(t *testing.T, c *http.Client, url, path, key, payload string) result {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(DefaultKeyHeader, key)
	}
	return do(c, req)
}

func opAnswer(t *testing.T, r result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d: body %q is not an operation (%v)", r.status, r.body, err)
	}
	return m
}

// chargeFor charges (or, manual, authorises) an order of amount yen.
func chargeFor(t *testing.T, c *http.Client, url, order string, amount int, manual bool) {
	t.Helper()
	payload := body(order, amount, "tok_visa")
	if manual {
		payload = strings.TrimSuffix(payload, "}") + `,"capture":false}`
	}
	r := post(t, c, url, "charge-"+order, payload)
	mustStatus(t, r, http.StatusCreated)
	if want := map[bool]string{false: "succeeded", true: "authorized"}[manual]; r.charge(t).Status != want {
		t.Fatalf("charge status %q, want %q", r.charge(t).Status, want)
	}
}

// TestRefundContract: a refund is made once per key, replayed after, and
// found by its refund_id; one beyond the rest is refused (400) and stored.
func TestRefundContract(t *testing.T) {
	s, ts := newTest(t, Config{})
	c := freshClient()
	chargeFor(t, c, ts.URL, "o", 1500, false)

	r := postTo(t, c, ts.URL, DefaultRefundPath, "k1", opBody(opRefund, "rf-1", "o", 1000))
	mustStatus(t, r, http.StatusCreated)
	a := opAnswer(t, r)
	if a["status"] != "succeeded" || a["refund_id"] != "rf-1" || a["amount"] != 1000.0 || !strings.HasPrefix(a["id"].(string), "re_") {
		t.Fatalf("answer %v", a)
	}
	again := postTo(t, c, ts.URL, DefaultRefundPath, "k1", opBody(opRefund, "rf-1", "o", 1000))
	mustStatus(t, again, http.StatusCreated)
	if !again.replayed() || opAnswer(t, again)["id"] != a["id"] {
		t.Fatalf("not a replay: %s", again.body)
	}
	other := postTo(t, c, ts.URL, DefaultRefundPath, "k1", opBody(opRefund, "rf-1", "o", 999))
	mustStatus(t, other, http.StatusUnprocessableEntity)

	big := postTo(t, c, ts.URL, DefaultRefundPath, "k2", opBody(opRefund, "rf-2", "o", 501))
	mustStatus(t, big, http.StatusBadRequest)
	if e := big.apiError(t); e.Param != "amount" {
		t.Fatalf("error %+v", e)
	}
	if r := postTo(t, c, ts.URL, DefaultRefundPath, "k2", opBody(opRefund, "rf-2", "o", 501)); !r.replayed() {
		t.Fatal("a business refusal is stored under the key")
	}

	found := get(t, c, http.MethodGet, ts.URL+DefaultRefundPath+"?refund_id=rf-1")
	mustStatus(t, found, http.StatusOK)
	if opAnswer(t, found)["id"] != a["id"] {
		t.Fatalf("lookup %s", found.body)
	}
	mustStatus(t, get(t, c, http.MethodGet, ts.URL+DefaultRefundPath+"?refund_id=rf-2"), http.StatusNotFound)
	mustStatus(t, get(t, c, http.MethodGet, ts.URL+DefaultRefundPath+"?refund_id=rf-1&idempotency_key=k1"), http.StatusOK)
	mustStatus(t, get(t, c, http.MethodGet, ts.URL+DefaultRefundPath+"?refund_id=rf-1&idempotency_key=k9"), http.StatusNotFound)
	if s.Ops().Count("rf-1") != 1 || s.Ops().Refunded("o") != 1000 || s.Ops().Check() != nil {
		t.Fatalf("ops %+v, check %v", s.Ops().Ops(), s.Ops().Check())
	}
	if st := s.Stats().Ops; st.Requests != 5 || st.Replays != 2 || st.Lookups != 4 || len(st.KeysByID["rf-1"]) != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestOperationRefusals: what a provider refuses, refused; a missing field
// is a validation error, not stored.
func TestOperationRefusals(t *testing.T) {
	_, ts := newTest(t, Config{})
	c := freshClient()
	chargeFor(t, c, ts.URL, "auto", 1500, false)
	chargeFor(t, c, ts.URL, "auth", 1500, true)
	cases := []struct {
		name, path, body, code string
	}{
		{"refund of nothing", DefaultRefundPath, opBody(opRefund, "r1", "none", 100), "parameter_invalid"},
		{"refund not captured", DefaultRefundPath, opBody(opRefund, "r2", "auth", 100), "payment_intent_unexpected_state"},
		{"capture of a captured charge", DefaultCapturePath, opBody(opCapture, "c1", "auto", 100), "payment_intent_unexpected_state"},
		{"capture beyond the authorisation", DefaultCapturePath, opBody(opCapture, "c2", "auth", 1501), "parameter_invalid"},
		{"cancel of a captured charge", DefaultCancelPath, opBody(opCancel, "x1", "auto", 0), "payment_intent_unexpected_state"},
		{"no refund_id", DefaultRefundPath, `{"order_id":"auto","amount":1,"currency":"JPY"}`, "parameter_invalid"},
		{"not JPY", DefaultRefundPath, `{"refund_id":"r3","order_id":"auto","amount":1,"currency":"USD"}`, "parameter_invalid"},
		{"wrong charge_id", DefaultRefundPath, `{"refund_id":"r4","order_id":"auto","charge_id":"ch_x","amount":1,"currency":"JPY"}`, "parameter_invalid"},
	}
	for i, tc := range cases {
		r := postTo(t, c, ts.URL, tc.path, fmt.Sprint("key-", i), tc.body)
		mustStatus(t, r, http.StatusBadRequest)
		if e := r.apiError(t); e.Code != tc.code {
			t.Errorf("%s: code %q, want %q", tc.name, e.Code, tc.code)
		}
	}
}

// TestCaptureThenCancelRefused: an authorisation is captured in part once;
// after that neither another capture nor a cancel goes through, and only
// the captured amount can be refunded.
func TestCaptureThenCancelRefused(t *testing.T) {
	s, ts := newTest(t, Config{})
	c := freshClient()
	chargeFor(t, c, ts.URL, "auth", 1500, true)
	r := postTo(t, c, ts.URL, DefaultCapturePath, "c1", opBody(opCapture, "cp-1", "auth", 1000))
	mustStatus(t, r, http.StatusOK)
	if a := opAnswer(t, r); a["status"] != "captured" || a["amount"] != 1000.0 {
		t.Fatalf("capture %v", a)
	}
	mustStatus(t, postTo(t, c, ts.URL, DefaultCapturePath, "c2", opBody(opCapture, "cp-2", "auth", 100)), http.StatusBadRequest)
	mustStatus(t, postTo(t, c, ts.URL, DefaultCancelPath, "x1", opBody(opCancel, "cn-1", "auth", 0)), http.StatusBadRequest)
	mustStatus(t, postTo(t, c, ts.URL, DefaultRefundPath, "r1", opBody(opRefund, "rf-1", "auth", 1001)), http.StatusBadRequest)
	mustStatus(t, postTo(t, c, ts.URL, DefaultRefundPath, "r2", opBody(opRefund, "rf-2", "auth", 1000)), http.StatusCreated)
	if err := s.Ops().Check(); err != nil {
		t.Fatal(err)
	}
}

// TestOpLedgerProvesWhatMustNeverHappen: with Lenient, the server carries
// out what a buggy client sends, and Check names each breach: a refund ID
// refunded twice (two keys), refunds beyond the charge, an authorisation
// captured twice, a capture beyond it, a charge both captured and
// cancelled, a capture of a charge that was no authorisation.
func TestOpLedgerProvesWhatMustNeverHappen(t *testing.T) {
	s, ts := newTest(t, Config{Lenient: true})
	c := freshClient()
	for _, o := range []string{"twice", "over", "auto"} {
		chargeFor(t, c, ts.URL, o, 1000, false)
	}
	for _, o := range []string{"cap2", "capbig", "capcancel"} {
		chargeFor(t, c, ts.URL, o, 1000, true)
	}
	send := func(path, key, payload string) {
		want := http.StatusOK
		if path == DefaultRefundPath {
			want = http.StatusCreated
		}
		mustStatus(t, postTo(t, c, ts.URL, path, key, payload), want)
	}
	send(DefaultRefundPath, "a", opBody(opRefund, "rf-twice", "twice", 100))
	send(DefaultRefundPath, "b", opBody(opRefund, "rf-twice", "twice", 100))
	send(DefaultRefundPath, "c", opBody(opRefund, "rf-over-1", "over", 600))
	send(DefaultRefundPath, "d", opBody(opRefund, "rf-over-2", "over", 600))
	send(DefaultCapturePath, "e", opBody(opCapture, "cp-a", "cap2", 100))
	send(DefaultCapturePath, "f", opBody(opCapture, "cp-b", "cap2", 100))
	send(DefaultCapturePath, "g", opBody(opCapture, "cp-big", "capbig", 1001))
	send(DefaultCapturePath, "h", opBody(opCapture, "cp-c", "capcancel", 100))
	send(DefaultCancelPath, "i", opBody(opCancel, "cn-c", "capcancel", 0))
	send(DefaultCapturePath, "j", opBody(opCapture, "cp-auto", "auto", 100))
	err := s.Ops().Check()
	var me *fakes.MoneyError
	if !errors.As(err, &me) {
		t.Fatalf("Check found nothing: %v", err)
	}
	found := map[string]fakes.ViolationKind{}
	for _, v := range me.Violations {
		found[v.Intent+"/"+v.Kind.String()] = v.Kind
	}
	for _, want := range []string{"twice/refunded_twice", "over/refunded_beyond_charge", "cap2/captured_twice",
		"capbig/captured_beyond_authorization", "capcancel/captured_and_cancelled", "auto/captured_non_authorization"} {
		if _, ok := found[want]; !ok {
			t.Errorf("Check missed %s:\n%v", want, err)
		}
	}
	if len(me.Violations) != 6 {
		t.Errorf("Check found %d violations, want 6:\n%v", len(me.Violations), err)
	}
}

// TestOperationFaults: the charge's faults strike operations alike,
// scripted by the operation's ID: Pre sends nothing, Mid holds the key
// until its lease, Post refunds and loses the answer (the retry replays),
// Internal releases the key or, with StoreServerErrors, stores the 500.
func TestOperationFaults(t *testing.T) {
	clock := NewManualClock(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	s, ts := newTest(t, Config{Now: clock.Now})
	c := freshClient()
	chargeFor(t, c, ts.URL, "o", 1500, false)
	s.InjectOrder("rf-pre", Pre)
	mustDrop(t, postTo(t, c, ts.URL, DefaultRefundPath, "k-pre", opBody(opRefund, "rf-pre", "o", 100)))
	mustStatus(t, postTo(t, c, ts.URL, DefaultRefundPath, "k-pre", opBody(opRefund, "rf-pre", "o", 100)), http.StatusCreated)

	s.InjectOrder("rf-mid", Mid)
	mustDrop(t, postTo(t, c, ts.URL, DefaultRefundPath, "k-mid", opBody(opRefund, "rf-mid", "o", 100)))
	mustStatus(t, postTo(t, c, ts.URL, DefaultRefundPath, "k-mid", opBody(opRefund, "rf-mid", "o", 100)), http.StatusConflict)
	clock.Advance(DefaultLease)
	mustStatus(t, postTo(t, c, ts.URL, DefaultRefundPath, "k-mid", opBody(opRefund, "rf-mid", "o", 100)), http.StatusCreated)

	s.InjectOrder("rf-post", Post)
	mustDrop(t, postTo(t, c, ts.URL, DefaultRefundPath, "k-post", opBody(opRefund, "rf-post", "o", 100)))
	if r := postTo(t, c, ts.URL, DefaultRefundPath, "k-post", opBody(opRefund, "rf-post", "o", 100)); !r.replayed() {
		t.Fatalf("after Post, a replay: %d %s", r.status, r.body)
	}
	s.InjectOrder("rf-503", Unavailable)
	mustStatus(t, postTo(t, c, ts.URL, DefaultRefundPath, "k-503", opBody(opRefund, "rf-503", "o", 100)), http.StatusServiceUnavailable)
	s.InjectOrder("rf-500", Internal)
	mustStatus(t, postTo(t, c, ts.URL, DefaultRefundPath, "k-500", opBody(opRefund, "rf-500", "o", 100)), http.StatusInternalServerError)
	mustStatus(t, postTo(t, c, ts.URL, DefaultRefundPath, "k-500", opBody(opRefund, "rf-500", "o", 100)), http.StatusCreated)
	for id, want := range map[string]int{"rf-pre": 1, "rf-mid": 1, "rf-post": 1, "rf-503": 0, "rf-500": 1} {
		if got := s.Ops().Count(id); got != want {
			t.Errorf("%s made %d times, want %d", id, got, want)
		}
	}

	stored, sts := newTest(t, Config{StoreServerErrors: true})
	chargeFor(t, c, sts.URL, "o", 1500, false)
	stored.InjectOrder("rf-500", Internal)
	mustStatus(t, postTo(t, c, sts.URL, DefaultRefundPath, "k", opBody(opRefund, "rf-500", "o", 100)), http.StatusInternalServerError)
	if r := postTo(t, c, sts.URL, DefaultRefundPath, "k", opBody(opRefund, "rf-500", "o", 100)); r.status != 500 || !r.replayed() {
		t.Fatalf("a stored 500 is replayed: %d %v", r.status, r.replayed())
	}
	if stored.Ops().Count("rf-500") != 0 {
		t.Fatal("a 500 refunded")
	}
}

// TestOperationPathsAreConfigurable: custom paths are served; a path that
// collides with another is refused.
func TestOperationPathsAreConfigurable(t *testing.T) {
	_, ts := newTest(t, Config{RefundPath: "/v2/refunds"})
	c := freshClient()
	chargeFor(t, c, ts.URL, "o", 1500, false)
	mustStatus(t, postTo(t, c, ts.URL, "/v2/refunds", "k", opBody(opRefund, "rf", "o", 100)), http.StatusCreated)
	mustStatus(t, postTo(t, c, ts.URL, DefaultRefundPath, "k2", opBody(opRefund, "rf2", "o", 100)), http.StatusNotFound)
	for _, cfg := range []Config{{RefundPath: "refunds"}, {RefundPath: DefaultPath}, {CapturePath: "/x", CancelPath: "/x"}} {
		if cfg.Validate() == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
}
