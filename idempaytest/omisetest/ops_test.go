package omisetest

import (
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/idempay/idempay/idempaytest/fakes"
)

func (c *client) post(path, key string, form url.Values) reply {
	c.t.Helper()
	r, err := c.do(http.MethodPost, path, key, form, "skey_test", "")
	if err != nil {
		c.t.Fatalf("POST %s: %v", path, err)
	}
	return r
}

// paid charges 150000 for intent (an authorisation with auth) and returns
// the charge's ID.
func (c *client) paid(intent string, auth bool) string {
	c.t.Helper()
	f := pay(intent, "tokn_"+intent)
	if auth {
		f.Set("capture", "false")
	}
	r := c.charge("", f)
	if r.Status != 200 {
		c.t.Fatalf("charge %s: %d %v", intent, r.Status, r.Body)
	}
	return r.Body["id"].(string)
}

func refund(opID, amount string) url.Values {
	return url.Values{"amount": {amount}, "metadata[idempay_op]": {opID}}
}

// Refunds of a paid charge add up to it and no further; the charge says
// what was refunded; the refunds are listed and retrieved by the charge.
func TestRefundRules(t *testing.T) {
	c := newClient(t)
	ch := c.paid("o1", false)
	r := c.post("/charges/"+ch+"/refunds", "", refund("rf-1", "100000"))
	if r.Status != 200 || r.Body["object"] != "refund" || r.Body["status"] != "closed" || r.Body["charge"] != ch {
		t.Fatalf("refund: %d %v", r.Status, r.Body)
	}
	if r := c.post("/charges/"+ch+"/refunds", "", refund("rf-2", "50001")); r.Status != 400 || r.Body["code"] != "invalid_amount" {
		t.Fatalf("beyond: %d %v", r.Status, r.Body)
	}
	if r := c.post("/charges/"+ch+"/refunds", "", url.Values{"metadata[x]": {"y"}}); r.Body["code"] != "invalid_amount" {
		t.Fatalf("no amount: %v", r.Body)
	}
	c.post("/charges/"+ch+"/refunds", "", refund("rf-3", "50000"))
	got := c.get("/charges/" + ch)
	if got.Body["refunded_amount"] != 150000.0 || got.Body["refundable"] != false {
		t.Fatalf("charge after refunds: %v", got.Body)
	}
	list := c.get("/charges/" + ch + "/refunds?order=reverse_chronological&limit=1")
	data := list.Body["data"].([]any)
	if list.Body["total"] != 2.0 || len(data) != 1 || data[0].(map[string]any)["metadata"].(map[string]any)["idempay_op"] != "rf-3" {
		t.Fatalf("list: %v", list.Body)
	}
	id := data[0].(map[string]any)["id"].(string)
	if r := c.get("/charges/" + ch + "/refunds/" + id); r.Status != 200 || r.Body["amount"] != 50000.0 {
		t.Fatalf("retrieve: %d %v", r.Status, r.Body)
	}
	if r := c.post("/charges/chrg_test_missing/refunds", "", refund("x", "1")); r.Status != 404 {
		t.Fatalf("unknown charge: %d", r.Status)
	}
	if c.srv.Ledger().Refunded("o1") != 150000 || c.srv.CheckMoney() != nil {
		t.Fatalf("books: %d %v", c.srv.Ledger().Refunded("o1"), c.srv.CheckMoney())
	}
}

// An authorisation is captured once (in part or whole) or reversed; only
// what was captured is refunded.
func TestCaptureAndReverse(t *testing.T) {
	c := newClient(t)
	auth := c.paid("auth", true)
	if r := c.post("/charges/"+auth+"/refunds", "", refund("rf-0", "1")); r.Body["code"] != "failed_refund" {
		t.Fatalf("refund of an authorisation: %v", r.Body)
	}
	if r := c.post("/charges/"+auth+"/capture", "", url.Values{"capture_amount": {"150001"}}); r.Body["code"] != "invalid_amount" {
		t.Fatalf("capture beyond: %v", r.Body)
	}
	r := c.post("/charges/"+auth+"/capture", "", url.Values{"capture_amount": {"100000"}})
	if r.Status != 200 || r.Body["status"] != "successful" || r.Body["paid"] != true || r.Body["capturable"] != false {
		t.Fatalf("capture: %d %v", r.Status, r.Body)
	}
	// A partial capture says what it moved, as Omise's do.
	if r.Body["authorized_amount"] != 150000.0 || r.Body["captured_amount"] != 100000.0 {
		t.Fatalf("capture amounts: %v of %v", r.Body["captured_amount"], r.Body["authorized_amount"])
	}
	if got := c.get("/charges/" + auth); got.Body["captured_amount"] != 100000.0 {
		t.Fatalf("captured charge: %v", got.Body)
	}
	if r := c.post("/charges/"+auth+"/capture", "", nil); r.Body["code"] != "failed_capture" {
		t.Fatalf("second capture: %v", r.Body)
	}
	if r := c.post("/charges/"+auth+"/reverse", "", nil); r.Body["code"] != "invalid_charge" {
		t.Fatalf("reverse after capture: %v", r.Body)
	}
	if r := c.post("/charges/"+auth+"/refunds", "", refund("rf-1", "100001")); r.Body["code"] != "invalid_amount" {
		t.Fatalf("refund beyond the capture: %v", r.Body)
	}
	held := c.paid("held", true)
	if r := c.post("/charges/"+held+"/reverse", "", nil); r.Status != 200 || r.Body["status"] != "reversed" || r.Body["reversed"] != true {
		t.Fatalf("reverse: %d %v", r.Status, r.Body)
	}
	if r := c.post("/charges/"+held+"/capture", "", nil); r.Body["code"] != "failed_capture" {
		t.Fatalf("capture after reverse: %v", r.Body)
	}
	paid := c.paid("paid", false)
	if r := c.post("/charges/"+paid+"/reverse", "", nil); r.Body["code"] != "invalid_charge" {
		t.Fatalf("reverse of a paid charge: %v", r.Body)
	}
	if err := c.srv.CheckMoney(); err != nil {
		t.Fatal(err)
	}
}

// Omise documents no de-duplication: a refund sent twice is made twice,
// which the check reports; with keys honoured the second is the first's
// answer.
func TestRefundResentAndKeys(t *testing.T) {
	c := newClient(t)
	ch := c.paid("o1", false)
	c.post("/charges/"+ch+"/refunds", "k", refund("rf-1", "100"))
	c.post("/charges/"+ch+"/refunds", "k", refund("rf-1", "100"))
	var me *fakes.MoneyError
	if err := c.srv.CheckMoney(); !errors.As(err, &me) || !me.Has(fakes.RefundedTwice) {
		t.Fatalf("CheckMoney = %v", err)
	}

	h := newClient(t, WithIdempotencyKeys())
	ch = h.paid("o1", false)
	first := h.post("/charges/"+ch+"/refunds", "k", refund("rf-1", "100"))
	again := h.post("/charges/"+ch+"/refunds", "k", refund("rf-1", "100"))
	if first.Body["id"] != again.Body["id"] || h.srv.Ledger().OpCount("rf-1") != 1 {
		t.Fatalf("honoured key: %v then %v", first.Body["id"], again.Body["id"])
	}
	if r := h.post("/charges/"+ch+"/refunds", "k", refund("rf-1", "101")); r.Status != 422 || r.Body["code"] != "idempotency_key_reused" {
		t.Fatalf("other body: %d %v", r.Status, r.Body)
	}
}

// The charge's faults strike operations, scripted by operation ID or
// charge.
func TestOperationFaults(t *testing.T) {
	c := newClient(t)
	ch := c.paid("o1", false)
	send := func(opID string) (reply, error) {
		return c.do(http.MethodPost, "/charges/"+ch+"/refunds", "", refund(opID, "100"), "skey_test", "")
	}
	for _, tc := range []struct {
		f      fakes.Fault
		drops  bool
		status int
		made   int
	}{
		{fakes.Pre, true, 0, 0}, {fakes.Mid, true, 0, 0}, {fakes.Post, true, 0, 1},
		{fakes.Unavailable, false, 503, 0}, {fakes.Internal, false, 500, 0},
	} {
		id := "rf-" + tc.f.String()
		c.srv.Fail(id, tc.f)
		r, err := send(id)
		if (err != nil) != tc.drops || (!tc.drops && r.Status != tc.status) {
			t.Errorf("%v: %v %d", tc.f, err, r.Status)
		}
		if n := c.srv.Ledger().OpCount(id); n != tc.made {
			t.Errorf("%v: made %d times, want %d", tc.f, n, tc.made)
		}
	}
	auth := c.paid("auth", true)
	c.srv.Fail(auth, fakes.Post)
	if _, err := c.do(http.MethodPost, "/charges/"+auth+"/capture", "", nil, "skey_test", ""); err == nil {
		t.Fatal("a capture scripted by its charge answered")
	}
	if got, _ := c.srv.Charge(auth); got.Status != "successful" {
		t.Fatalf("after Post the capture was made: %s", got.Status)
	}
	if st := c.srv.Stats().Ops; st.Faults[fakes.Post] != 2 || st.Statuses[503] != 1 {
		t.Errorf("op stats %+v", st)
	}
}

// A pending refund holds its amount until it fails.
func TestPendingRefunds(t *testing.T) {
	c := newClient(t, WithPendingRefunds())
	ch := c.paid("o1", false)
	r := c.post("/charges/"+ch+"/refunds", "", refund("rf-1", "150000"))
	if r.Body["status"] != "pending" {
		t.Fatalf("refund: %v", r.Body)
	}
	if r := c.post("/charges/"+ch+"/refunds", "", refund("rf-2", "1")); r.Body["code"] != "invalid_amount" {
		t.Fatalf("a pending refund holds its amount: %v", r.Body)
	}
	id := r.Body["id"].(string)
	if !c.srv.CompleteRefund(id, false) || c.srv.CompleteRefund(id, false) {
		t.Fatal("CompleteRefund")
	}
	if r := c.post("/charges/"+ch+"/refunds", "", refund("rf-3", "150000")); r.Status != 200 {
		t.Fatalf("a failed refund frees its amount: %v", r.Body)
	}
	if rs := c.srv.Refunds(ch); len(rs) != 2 || rs[0].Status != "failed" {
		t.Fatalf("Refunds %+v", rs)
	}
}

// With a lenient fake, the check catches refunds beyond the charge and a
// capture of a paid charge.
func TestCheckMoneyCatchesLenient(t *testing.T) {
	c := newClient(t, WithSettings(fakes.Settings{Lenient: true}))
	ch := c.paid("o1", false)
	c.post("/charges/"+ch+"/refunds", "", refund("rf-1", "150001"))
	c.post("/charges/"+ch+"/capture", "", nil)
	var me *fakes.MoneyError
	if err := c.srv.CheckMoney(); !errors.As(err, &me) || !me.Has(fakes.RefundedBeyondCharge) || !me.Has(fakes.CapturedNonAuthorization) {
		t.Fatalf("CheckMoney = %v", err)
	}
}

// Options check their input.
func TestOptionsRefuseBadInput(t *testing.T) {
	for name, opt := range map[string]Option{
		"rates": WithFaultRates(fakes.Rates{Post: 2}, 1), "retention": WithSettings(fakes.Settings{Retention: -1}),
		"retry-after": WithSettings(fakes.Settings{RetryAfter: -1}), "list delay": WithListDelay(-1),
		"neighbours": WithNeighbors(0), "lookup failures": WithLookupFailures(1.5), "secret": WithSecretKey("a:b"),
		"hook": WithHook(nil), "test": WithTest(nil),
	} {
		func() {
			defer func() {
				if p := recover(); p == nil {
					t.Errorf("%s: NewServer did not panic", name)
				}
			}()
			NewUnstartedServer(opt)
		}()
	}
}

// A default (final_auth) charge carries neither authorized_amount nor
// captured_amount, as Omise's answers of such charges do (the charge,
// reverse and expire answers in provider/omise/testdata); a pre_auth
// charge carries both, as Omise's capture answer of one does.
func TestAmountsOnlyOnPreAuth(t *testing.T) {
	c := newClient(t)
	has := func(r reply) (bool, bool) {
		_, a := r.Body["authorized_amount"]
		_, b := r.Body["captured_amount"]
		return a, b
	}
	paid := c.get("/charges/" + c.paid("o1", false))
	if a, b := has(paid); a || b {
		t.Fatalf("a paid default charge: %v", paid.Body)
	}
	auth := c.paid("o2", true)
	if a, b := has(c.get("/charges/" + auth)); a || b {
		t.Fatal("a default authorisation carries the amounts")
	}
	if r := c.post("/charges/"+auth+"/capture", "", nil); r.Status != 200 {
		t.Fatalf("capture: %v", r.Body)
	} else if a, b := has(r); a || b {
		t.Fatalf("a default charge captured whole: %v", r.Body)
	}

	f := pay("o3", "tokn_o3")
	f.Set("capture", "false")
	f.Set("authorization_type", "pre_auth")
	pre := c.charge("", f).Body["id"].(string)
	r := c.post("/charges/"+pre+"/capture", "", url.Values{"capture_amount": {"50000"}})
	if r.Body["authorized_amount"] != 150000.0 || r.Body["captured_amount"] != 50000.0 {
		t.Fatalf("a pre_auth charge captured in part: %v", r.Body)
	}
	f = pay("o4", "tokn_o4")
	f.Set("authorization_type", "nonsense")
	if r := c.charge("", f); r.Status != 400 {
		t.Fatalf("authorization_type nonsense: %d %v", r.Status, r.Body)
	}
}
