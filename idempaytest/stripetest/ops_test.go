package stripetest

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults/faultstest"
)

// post sends a POST and fails the test if the connection drops.
func (c *client) post(path, key string, form url.Values) reply {
	c.t.Helper()
	r, err := c.do(http.MethodPost, path, key, form)
	if err != nil {
		c.t.Fatalf("POST %s: %v", path, err)
	}
	return r
}

func (c *client) get(path string) reply {
	c.t.Helper()
	r, err := c.do(http.MethodGet, path, "", nil)
	if err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
	return r
}

// charged creates a succeeded (or, auth, requires_capture) PaymentIntent
// of 1500 for intent and returns its ID.
func (c *client) charged(intent string, auth bool) string {
	c.t.Helper()
	f := pay(intent)
	if auth {
		f.Set("capture_method", "manual")
	}
	r := c.create("charge-"+intent, f)
	if r.Status != 200 {
		c.t.Fatalf("charge %s: %d %v", intent, r.Status, r.Body)
	}
	return r.Body["id"].(string)
}

func refundForm(pi, opID string, amount string) url.Values {
	f := url.Values{"payment_intent": {pi}, "metadata[idempay_op]": {opID}}
	if amount != "" {
		f.Set("amount", amount)
	}
	return f
}

// isOverRefund reports whether r is Stripe's refusal of a refund beyond the
// charge, as a real one shows it (testdata/upstream,
// pay-connector_refund_error_greater_amount.json): invalid_request_error,
// param amount, no code, "Refund amount (...) is greater than ...".
func isOverRefund(r reply) bool {
	e, _ := r.Body["error"].(map[string]any)
	_, hasCode := e["code"]
	return e["type"] == "invalid_request_error" && e["param"] == "amount" && !hasCode &&
		overRefundMessage.MatchString(errField(r, "message"))
}

var overRefundMessage = regexp.MustCompile(`^Refund amount \(.+\) is greater than (charge amount|unrefunded amount on charge) \(.+\)$`)

func errField(r reply, name string) string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e[name].(string)
	return s
}

func errCode(r reply) string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// Partial refunds add up to the charge and no further; a refusal is
// stored under its key like any answer Stripe gave once it executed; the
// refunds are listed newest first with their metadata.
func TestRefundRules(t *testing.T) {
	c := newClient(t)
	pi := c.charged("o1", false)
	if r := c.post("/v1/refunds", "r1", refundForm(pi, "rf-1", "1000")); r.Status != 200 || r.Body["status"] != "succeeded" ||
		r.Body["object"] != "refund" || r.Body["payment_intent"] != pi || r.Body["amount"] != 1000.0 {
		t.Fatalf("refund: %d %v", r.Status, r.Body)
	}
	over := c.post("/v1/refunds", "r2", refundForm(pi, "rf-2", "501"))
	if over.Status != 400 || !isOverRefund(over) {
		t.Fatalf("beyond the charge: %d %v", over.Status, over.Body)
	}
	if again := c.post("/v1/refunds", "r2", refundForm(pi, "rf-2", "501")); again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("the refusal was not stored under its key")
	}
	if r := c.post("/v1/refunds", "r3", refundForm(pi, "rf-3", "")); r.Status != 200 || r.Body["amount"] != 500.0 {
		t.Fatalf("the rest: %d %v", r.Status, r.Body)
	}
	if r := c.post("/v1/refunds", "r4", refundForm(pi, "rf-4", "1")); errCode(r) != "charge_already_refunded" {
		t.Fatalf("fully refunded: %d %v", r.Status, r.Body)
	}
	list := c.get("/v1/refunds?payment_intent=" + pi + "&limit=1")
	data := list.Body["data"].([]any)
	if list.Status != 200 || len(data) != 1 || list.Body["has_more"] != true {
		t.Fatalf("list: %d %v", list.Status, list.Body)
	}
	newest := data[0].(map[string]any)
	if md := newest["metadata"].(map[string]any); md["idempay_op"] != "rf-3" {
		t.Fatalf("newest first, with metadata: %v", newest)
	}
	if r := c.get("/v1/refunds/" + newest["id"].(string)); r.Status != 200 || r.Body["amount"] != 500.0 {
		t.Fatalf("retrieve: %d %v", r.Status, r.Body)
	}
	if c.srv.Ledger().Refunded("o1") != 1500 || c.srv.CheckMoney() != nil {
		t.Fatalf("books: refunded %d, %v", c.srv.Ledger().Refunded("o1"), c.srv.CheckMoney())
	}
}

// A refund names its PaymentIntent or its charge; unknown ones are not
// refunds, and those answers are not stored.
func TestRefundTargets(t *testing.T) {
	c := newClient(t)
	pi := c.charged("o1", false)
	ch := c.get("/v1/payment_intents/" + pi).Body["latest_charge"].(string)
	if r := c.post("/v1/refunds", "k", url.Values{"charge": {ch}, "amount": {"100"}}); r.Status != 200 || r.Body["payment_intent"] != pi {
		t.Fatalf("by charge: %d %v", r.Status, r.Body)
	}
	if r := c.post("/v1/refunds", "k2", refundForm("pi_missing", "x", "1")); r.Status != 400 || errCode(r) != "resource_missing" {
		t.Fatalf("unknown intent: %d %v", r.Status, r.Body)
	}
	if r := c.post("/v1/refunds", "k2", refundForm(pi, "x", "1")); r.Status != 200 {
		t.Fatalf("the key was stored by a refusal of validation: %d", r.Status)
	}
	if r := c.post("/v1/refunds", "k3", url.Values{"amount": {"1"}}); errCode(r) != "parameter_missing" {
		t.Fatalf("no target: %v", r.Body)
	}
	if r := c.post("/v1/refunds", "k4", url.Values{"payment_intent": {pi}, "colour": {"red"}}); errCode(r) != "parameter_unknown" {
		t.Fatalf("unknown parameter: %v", r.Body)
	}
}

// An authorisation is captured once, in part or whole; only what was
// captured can be refunded; nothing after a cancel.
func TestCaptureAndCancel(t *testing.T) {
	c := newClient(t)
	auth := c.charged("auth", true)
	if r := c.post("/v1/refunds", "r0", refundForm(auth, "rf-0", "1")); errCode(r) != "charge_not_refundable" {
		t.Fatalf("refund before capture: %d %v", r.Status, r.Body)
	}
	path := "/v1/payment_intents/" + auth
	r := c.post(path+"/capture", "c1", url.Values{"amount_to_capture": {"1000"}, "metadata[idempay_op]": {"cp-1"}})
	if r.Status != 200 || r.Body["status"] != "succeeded" || r.Body["amount_received"] != 1000.0 || r.Body["amount_capturable"] != 0.0 {
		t.Fatalf("capture: %d %v", r.Status, r.Body)
	}
	if r := c.post(path+"/capture", "c2", nil); errCode(r) != "payment_intent_unexpected_state" {
		t.Fatalf("second capture: %v", r.Body)
	}
	if r := c.post(path+"/cancel", "x1", nil); errCode(r) != "payment_intent_unexpected_state" {
		t.Fatalf("cancel after capture: %v", r.Body)
	}
	if r := c.post("/v1/refunds", "r1", refundForm(auth, "rf-1", "1001")); !isOverRefund(r) ||
		!strings.Contains(errField(r, "message"), "is greater than charge amount") {
		t.Fatalf("refund beyond the capture: %v", r.Body)
	}
	if r := c.post("/v1/refunds", "r2", refundForm(auth, "rf-2", "")); r.Status != 200 || r.Body["amount"] != 1000.0 {
		t.Fatalf("refund of the capture: %v", r.Body)
	}

	big := c.charged("big", true)
	if r := c.post("/v1/payment_intents/"+big+"/capture", "c3", url.Values{"amount_to_capture": {"1501"}}); errCode(r) != "amount_too_large" {
		t.Fatalf("capture beyond: %v", r.Body)
	}
	cancel := c.post("/v1/payment_intents/"+big+"/cancel", "x2", url.Values{"cancellation_reason": {"abandoned"}})
	if cancel.Status != 200 || cancel.Body["status"] != "canceled" || cancel.Body["cancellation_reason"] != "abandoned" {
		t.Fatalf("cancel: %d %v", cancel.Status, cancel.Body)
	}
	if r := c.post("/v1/refunds", "r3", refundForm(big, "rf-3", "1")); errCode(r) != "charge_not_refundable" {
		t.Fatalf("refund after cancel: %v", r.Body)
	}
	paid := c.charged("paid", false)
	if r := c.post("/v1/payment_intents/"+paid+"/capture", "c4", nil); errCode(r) != "payment_intent_unexpected_state" {
		t.Fatalf("capture of a paid intent: %v", r.Body)
	}
	if r := c.post("/v1/payment_intents/pi_missing/cancel", "x3", nil); r.Status != 404 {
		t.Fatalf("cancel of nothing: %d", r.Status)
	}
	// A PaymentIntent that never charged is cancelled with nothing in the
	// books.
	f := pay("3ds")
	f.Set("payment_method", "pm_card_threeDSecure2Required")
	waiting := c.create("k3ds", f).Body["id"].(string)
	if r := c.post("/v1/payment_intents/"+waiting+"/cancel", "x4", nil); r.Status != 200 || r.Body["status"] != "canceled" {
		t.Fatalf("cancel of requires_action: %v", r.Body)
	}
	ops := c.srv.Ledger().Ops()
	if len(ops) != 3 || ops[0].Type != fakes.OpCapture || ops[0].OpID != "cp-1" || ops[2].Type != fakes.OpCancel {
		t.Fatalf("books: %+v", ops)
	}
	if err := c.srv.CheckMoney(); err != nil {
		t.Fatal(err)
	}
}

// The charge's faults strike operations alike, scripted by the
// operation's ID (a cancel by its PaymentIntent): Pre does nothing, Mid
// holds the key until its lease, Post refunds and loses the answer (the
// retry replays), Unavailable answers 503, Internal stores a 500.
func TestOperationFaults(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := newClient(t, WithSettings(fakes.Settings{Clock: clock.Now}), WithSettings(fakes.Settings{Lease: time.Second}))
	pi := c.charged("o1", false)
	refund := func(opID string) (reply, error) {
		return c.do(http.MethodPost, "/v1/refunds", "k-"+opID, refundForm(pi, opID, "100"))
	}
	c.srv.Fail("rf-pre", fakes.Pre)
	if _, err := refund("rf-pre"); err == nil {
		t.Fatal("Pre answered")
	}
	c.srv.Fail("rf-mid", fakes.Mid)
	if _, err := refund("rf-mid"); err == nil {
		t.Fatal("Mid answered")
	}
	if r, _ := refund("rf-mid"); r.Status != 409 {
		t.Fatalf("during the lease: %d", r.Status)
	}
	clock.Advance(time.Second)
	c.srv.Fail("rf-post", fakes.Post)
	if _, err := refund("rf-post"); err == nil {
		t.Fatal("Post answered")
	}
	if r, _ := refund("rf-post"); r.Status != 200 || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("after Post: %d %v", r.Status, r.Header)
	}
	c.srv.Fail("rf-503", fakes.Unavailable)
	if r, _ := refund("rf-503"); r.Status != 503 {
		t.Fatalf("Unavailable: %d", r.Status)
	}
	c.srv.Fail("rf-500", fakes.Internal)
	if r, _ := refund("rf-500"); r.Status != 500 {
		t.Fatalf("Internal: %d", r.Status)
	}
	if r, _ := refund("rf-500"); r.Status != 500 || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("a stored 500 is replayed: %d", r.Status)
	}
	for _, id := range []string{"rf-pre", "rf-mid"} {
		if r, _ := refund(id); r.Status != 200 {
			t.Fatalf("%s resent: %d", id, r.Status)
		}
	}
	for id, want := range map[string]int{"rf-pre": 1, "rf-mid": 1, "rf-post": 1, "rf-503": 0, "rf-500": 0} {
		if got := c.srv.Ledger().OpCount(id); got != want {
			t.Errorf("%s made %d times, want %d", id, got, want)
		}
	}
	st := c.srv.Stats().Ops
	if st.Faults[fakes.Pre] != 1 || st.Faults[fakes.Mid] != 1 || st.Faults[fakes.Post] != 1 || st.Replays != 2 || len(st.Keys["rf-post"]) != 1 {
		t.Errorf("op stats %+v", st)
	}
	// Another body under a refund's key.
	if r := c.post("/v1/refunds", "k-rf-post", refundForm(pi, "rf-post", "101")); errType(r) != "idempotency_error" {
		t.Fatalf("other body: %v", r.Body)
	}
	auth := c.charged("auth", true)
	c.srv.Fail(auth, fakes.Post)
	if _, err := c.do(http.MethodPost, "/v1/payment_intents/"+auth+"/cancel", "x", nil); err == nil {
		t.Fatal("a cancel scripted by its PaymentIntent answered")
	}
	if got, _ := c.srv.PaymentIntent(auth); got.Status != "canceled" {
		t.Fatalf("after Post the cancel was made: %s", got.Status)
	}
}

// A pending refund counts against what is left until it fails.
func TestPendingRefunds(t *testing.T) {
	c := newClient(t, WithPendingRefunds())
	pi := c.charged("o1", false)
	r := c.post("/v1/refunds", "r1", refundForm(pi, "rf-1", "1500"))
	id, _ := r.Body["id"].(string)
	if r.Status != 200 || r.Body["status"] != "pending" {
		t.Fatalf("refund: %d %v", r.Status, r.Body)
	}
	if r := c.post("/v1/refunds", "r2", refundForm(pi, "rf-2", "1")); errCode(r) != "charge_already_refunded" {
		t.Fatalf("a pending refund holds its amount: %v", r.Body)
	}
	if !c.srv.CompleteRefund(id, false) || c.srv.CompleteRefund(id, true) {
		t.Fatal("CompleteRefund")
	}
	if re, _ := c.srv.Refund(id); re.Status != "failed" || re.FailureReason == nil {
		t.Fatalf("failed refund %+v", re)
	}
	if r := c.post("/v1/refunds", "r3", refundForm(pi, "rf-3", "1500")); r.Status != 200 {
		t.Fatalf("a failed refund frees its amount: %v", r.Body)
	}
	if got := c.srv.Refunds(pi); len(got) != 2 || got[0].Metadata["idempay_op"] != "rf-3" {
		t.Fatalf("Refunds %+v", got)
	}
}

// The duplicate-money check catches what a client does wrong: a new key
// for a lost charge, one refund sent under two keys, and (with a lenient
// fake) refunds beyond the charge.
func TestCheckMoneyCatches(t *testing.T) {
	c := newClient(t, WithSettings(fakes.Settings{Lenient: true}))
	c.create("k1", pay("twice"))
	c.create("k2", pay("twice"))
	pi := c.charged("o1", false)
	c.post("/v1/refunds", "a", refundForm(pi, "rf-1", "100"))
	c.post("/v1/refunds", "b", refundForm(pi, "rf-1", "100"))
	if r := c.post("/v1/refunds", "c", refundForm(pi, "rf-2", "1400")); r.Status != 200 {
		t.Fatalf("lenient refund: %v", r.Body)
	}
	var me *fakes.MoneyError
	if err := c.srv.CheckMoney(); !errors.As(err, &me) || !me.Has(fakes.ChargedTwice) || !me.Has(fakes.RefundedTwice) ||
		!me.Has(fakes.RefundedBeyondCharge) {
		t.Fatalf("CheckMoney = %v", err)
	}
}

// recorder is a testing.TB that keeps what a WithTest server reports.
type recorder struct {
	testing.TB
	cleanups []func()
	errs     []string
}

func (r *recorder) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Helper()                           {}
func (r *recorder) Errorf(format string, args ...any) { r.errs = append(r.errs, format) }

// WithTest closes the server and runs the check when the test ends.
func TestWithTest(t *testing.T) {
	rec := &recorder{TB: t}
	srv := NewServer(WithTest(rec))
	c := &client{Conn: faultstest.Conn{URL: srv.URL, HC: srv.Client()}, t: t, srv: srv}
	c.create("k1", pay("o"))
	c.create("k2", pay("o"))
	if len(rec.cleanups) != 1 {
		t.Fatalf("%d cleanups", len(rec.cleanups))
	}
	rec.cleanups[0]()
	if len(rec.errs) != 1 {
		t.Fatalf("the cleanup reported %v", rec.errs)
	}
	if _, err := srv.Client().Get(srv.URL); err == nil {
		t.Fatal("the server still answers after the cleanup")
	}
}

// Options check their input.
func TestOptionsRefuseBadInput(t *testing.T) {
	for name, opt := range map[string]Option{
		"rates": WithFaultRates(fakes.Rates{Post: 2}, 1), "retention": WithSettings(fakes.Settings{Retention: -1}),
		"retry-after": WithSettings(fakes.Settings{RetryAfter: -1}), "search delay": WithSearchDelay(-1),
		"api key": WithAPIKey("sk test"), "hook": WithHook(nil), "test": WithTest(nil),
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(p.(string), "stripetest: NewServer") {
					t.Errorf("%s: NewServer did not panic (%v)", name, p)
				}
			}()
			NewUnstartedServer(opt)
		}()
	}
}
