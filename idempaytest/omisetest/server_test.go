package omisetest

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults/faultstest"
)

type reply = faultstest.Reply

type client struct {
	faultstest.Conn
	t   *testing.T
	srv *Server
}

func newClient(t *testing.T, opts ...Option) *client {
	srv := NewServer(append(opts, WithSecretKey("skey_test"))...)
	t.Cleanup(srv.Close)
	return &client{Conn: faultstest.NewConn(srv.URL), t: t, srv: srv}
}

func (c *client) do(method, path, key string, form url.Values, user, pass string) (reply, error) {
	return c.Do(method, path, key, form, func(r *http.Request) { r.SetBasicAuth(user, pass) })
}

func (c *client) charge(key string, form url.Values) reply {
	c.t.Helper()
	r, err := c.do(http.MethodPost, "/charges", key, form, "skey_test", "")
	if err != nil {
		c.t.Fatalf("charge: %v", err)
	}
	return r
}

func (c *client) get(path string) reply {
	c.t.Helper()
	r, err := c.do(http.MethodGet, path, "", nil, "skey_test", "")
	if err != nil {
		c.t.Fatalf("get: %v", err)
	}
	return r
}

func pay(intent, card string) url.Values {
	return url.Values{"amount": {"150000"}, "currency": {"thb"}, "card": {card}, "metadata[idempay_intent]": {intent}}
}

func TestBasicAuth(t *testing.T) {
	c := newClient(t)
	for _, cred := range [][2]string{{"skey_wrong", ""}, {"skey_test", "password"}, {"", ""}} {
		r, err := c.do(http.MethodPost, "/charges", "", pay("o", "tokn_1"), cred[0], cred[1])
		if err != nil || r.Status != 401 || r.Body["code"] != "authentication_failure" || r.Body["object"] != "error" {
			t.Errorf("%v: %v %d %v", cred, err, r.Status, r.Body["code"])
		}
	}
}

func TestDeclineIsFailedCharge(t *testing.T) {
	c := newClient(t)
	r := c.charge("", pay("o", "tokn_test_decline"))
	if r.Status != 200 || r.Body["status"] != "failed" || r.Body["failure_code"] != "insufficient_fund" {
		t.Fatalf("%d %v", r.Status, r.Body)
	}
	if c.srv.Ledger().Len() != 0 {
		t.Error("a decline charged")
	}
}

func TestTokenIsSingleUse(t *testing.T) {
	c := newClient(t)
	if r := c.charge("", pay("o", "tokn_1")); r.Body["status"] != "successful" {
		t.Fatalf("first: %v", r.Body)
	}
	if r := c.charge("", pay("o", "tokn_1")); r.Status != 400 || r.Body["code"] != "used_token" {
		t.Fatalf("second: %d %v", r.Status, r.Body["code"])
	}
	if c.srv.Ledger().Count("o") != 1 {
		t.Error("charged twice")
	}
}

// A saved card can be charged again: it has no natural guard.
func TestSavedCardIsReusable(t *testing.T) {
	c := newClient(t)
	f := pay("o", "card_1")
	f.Set("customer", "cust_1")
	c.charge("", f)
	c.charge("", f)
	if c.srv.Ledger().Count("o") != 2 {
		t.Fatal("a saved card should charge each time")
	}
}

// By default keys are ignored, as Omise documents nothing; honoured, a
// repeat is answered with the stored charge and no replay header.
func TestIdempotencyKey(t *testing.T) {
	c := newClient(t)
	f := pay("o", "card_1")
	f.Set("customer", "cust_1")
	c.charge("k", f)
	c.charge("k", f)
	if c.srv.Ledger().Count("o") != 2 {
		t.Fatal("keys honoured by default")
	}

	h := newClient(t, WithIdempotencyKeys())
	a, b := h.charge("k", f), h.charge("k", f)
	if a.Body["id"] != b.Body["id"] || h.srv.Ledger().Count("o") != 1 {
		t.Fatalf("honoured keys charged %d times", h.srv.Ledger().Count("o"))
	}
	for _, name := range []string{"Idempotent-Replayed", "Idempotency-Replayed"} {
		if b.Header.Get(name) != "" {
			t.Errorf("replay header %s sent", name)
		}
	}
	other := pay("o", "card_2")
	other.Set("customer", "cust_1")
	if r := h.charge("k", other); r.Status != 422 {
		t.Errorf("other parameters under a key: %d", r.Status)
	}
}

func TestPostFaultChargesThenDrops(t *testing.T) {
	c := newClient(t)
	c.srv.Fail("o", fakes.Post)
	if _, err := c.do(http.MethodPost, "/charges", "", pay("o", "tokn_1"), "skey_test", ""); err == nil {
		t.Fatal("the Post fault answered")
	}
	if c.srv.Ledger().Count("o") != 1 {
		t.Fatal("the Post fault did not charge")
	}
	if r := c.charge("", pay("o", "tokn_1")); r.Body["code"] != "used_token" {
		t.Fatalf("resend: %v", r.Body)
	}
}

func TestListAndRetrieve(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := newClient(t, WithSettings(fakes.Settings{Clock: clock.Now}), WithListDelay(time.Minute))
	var ids []string
	for i := range 5 {
		r := c.charge("", pay("o", "tokn_"+string(rune('a'+i))))
		ids = append(ids, r.Body["id"].(string))
		clock.Advance(time.Second)
	}
	if r := c.get("/charges"); r.Body["total"] != float64(0) {
		t.Fatalf("listed before ListDelay: %v", r.Body["total"])
	}
	clock.Advance(time.Minute)
	r := c.get("/charges?limit=2&offset=1&order=chronological&from=2026-01-01T00:00:01Z")
	data := r.Body["data"].([]any)
	if r.Body["total"] != float64(4) || len(data) != 2 || data[0].(map[string]any)["id"] != ids[2] {
		t.Fatalf("page: total %v, %d items", r.Body["total"], len(data))
	}
	r = c.get("/charges?order=reverse_chronological&limit=1")
	if r.Body["data"].([]any)[0].(map[string]any)["id"] != ids[4] {
		t.Fatal("reverse order")
	}
	if r := c.get("/charges/" + ids[0]); r.Status != 200 || r.Body["id"] != ids[0] {
		t.Fatalf("retrieve: %d", r.Status)
	}
	if r := c.get("/charges/chrg_nope"); r.Status != 404 || r.Body["code"] != "not_found" {
		t.Fatalf("missing: %d %v", r.Status, r.Body["code"])
	}
}

func TestPendingThenComplete(t *testing.T) {
	c := newClient(t)
	r := c.charge("", pay("o", "tokn_3ds"))
	if r.Body["status"] != "pending" || r.Body["authorize_uri"] == nil {
		t.Fatalf("3ds: %v", r.Body)
	}
	id := r.Body["id"].(string)
	if !c.srv.Complete(id, true) || c.srv.Complete(id, true) {
		t.Fatal("Complete should finish a pending charge once")
	}
	if c.get("/charges/" + id).Body["status"] != "successful" || c.srv.Ledger().Count("o") != 1 {
		t.Fatal("not successful after completion")
	}
}

func TestLookupFailures(t *testing.T) {
	c := newClient(t, WithLookupFailures(1))
	if r := c.get("/charges"); r.Status != 503 {
		t.Fatalf("list: %d", r.Status)
	}
	if err := c.srv.SetLookupFailures(2); err == nil {
		t.Fatal("a rate above 1 was accepted")
	}
	if err := c.srv.SetLookupFailures(0); err != nil {
		t.Fatal(err)
	}
	if r := c.get("/charges"); r.Status != 200 {
		t.Fatalf("list: %d", r.Status)
	}
}

// With neighbors, another integration's charges share the account, in
// the shape of Omise's recorded ones: numbers and booleans in metadata.
func TestNeighbors(t *testing.T) {
	c := newClient(t, WithNeighbors(2))
	for i := range 4 {
		c.charge("", pay(fmt.Sprintf("n%d", i), fmt.Sprintf("tokn_test_n%d", i)))
	}
	page := c.get("/charges?limit=100")
	data, _ := page.Body["data"].([]any)
	numeric := 0
	for _, raw := range data {
		meta, _ := raw.(map[string]any)["metadata"].(map[string]any)
		if _, ok := meta["payment_attempt_id"].(float64); ok {
			numeric++
		}
	}
	if len(data) != 6 || numeric != 2 {
		t.Errorf("%d charges, %d with numeric metadata; want 6 and 2", len(data), numeric)
	}
	if n := c.srv.Ledger().Count(""); n != 0 {
		t.Errorf("neighbours' charges are not idempay's, yet the ledger counts %d", n)
	}
}
