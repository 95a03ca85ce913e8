package stripetest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults/faultstest"
)

type reply = faultstest.Reply

// client posts forms to a fresh fake; every request uses a new connection
// so that drops reach the test.
type client struct {
	faultstest.Conn
	t   *testing.T
	srv *Server
}

func newClient(t *testing.T, opts ...Option) *client {
	srv := NewServer(append(opts, WithAPIKey("sk_test"))...)
	t.Cleanup(srv.Close)
	return &client{Conn: faultstest.NewConn(srv.URL), t: t, srv: srv}
}

func (c *client) do(method, path, key string, form url.Values) (reply, error) {
	return c.Do(method, path, key, form, func(r *http.Request) { r.Header.Set("Authorization", "Bearer sk_test") })
}

func (c *client) create(key string, form url.Values) reply {
	c.t.Helper()
	r, err := c.do(http.MethodPost, "/v1/payment_intents", key, form)
	if err != nil {
		c.t.Fatalf("create: %v", err)
	}
	if r.Header.Get("Request-Id") == "" {
		c.t.Errorf("answer %d without Request-Id", r.Status)
	}
	return r
}

func pay(intent string) url.Values {
	return url.Values{"amount": {"1500"}, "currency": {"jpy"}, "payment_method": {"pm_card_visa"}, "confirm": {"true"},
		"automatic_payment_methods[enabled]": {"true"}, "automatic_payment_methods[allow_redirects]": {"never"},
		"metadata[idempay_intent]": {intent}}
}

func errType(r reply) string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

func TestReplayOfSuccess(t *testing.T) {
	c := newClient(t)
	first := c.create("k1", pay("o1"))
	again := c.create("k1", pay("o1"))
	if first.Status != 200 || again.Status != 200 || first.Body["id"] != again.Body["id"] {
		t.Fatalf("first %d %v, again %d %v", first.Status, first.Body["id"], again.Status, again.Body["id"])
	}
	if first.Header.Get("Idempotent-Replayed") != "" || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay headers: %q then %q", first.Header.Get("Idempotent-Replayed"), again.Header.Get("Idempotent-Replayed"))
	}
	if n := c.srv.Ledger().Count("o1"); n != 1 {
		t.Errorf("charged %d times", n)
	}
}

// Stripe stores a 500 produced while executing and replays it.
func TestStoredServerError(t *testing.T) {
	c := newClient(t)
	c.srv.FailKey("k1", fakes.Internal)
	first, again := c.create("k1", pay("o1")), c.create("k1", pay("o1"))
	if first.Status != 500 || again.Status != 500 || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("got %d then %d (replayed %q)", first.Status, again.Status, again.Header.Get("Idempotent-Replayed"))
	}
	if c.srv.Ledger().Len() != 0 {
		t.Error("a 500 charged")
	}
}

func TestOtherParametersUnderKey(t *testing.T) {
	c := newClient(t)
	c.create("k1", pay("o1"))
	other := pay("o1")
	other.Set("amount", "1600")
	if r := c.create("k1", other); r.Status != 400 || errType(r) != "idempotency_error" {
		t.Fatalf("got %d %q", r.Status, errType(r))
	}
}

// A crashed request holds its key until the lease ends; then the next
// request takes over and charges once.
func TestLeaseAfterCrash(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := newClient(t, WithSettings(fakes.Settings{Clock: clock.Now}), WithSettings(fakes.Settings{Lease: time.Second}))
	c.srv.FailKey("k1", fakes.Mid)
	if _, err := c.do(http.MethodPost, "/v1/payment_intents", "k1", pay("o1")); err == nil {
		t.Fatal("the Mid fault answered")
	}
	if r := c.create("k1", pay("o1")); r.Status != 409 || errType(r) != "invalid_request_error" || errCode(r) != "idempotency_key_in_use" {
		t.Fatalf("during the lease: %d %v (Stripe: invalid_request_error, code idempotency_key_in_use)", r.Status, r.Body)
	}
	clock.Advance(2 * time.Second)
	if r := c.create("k1", pay("o1")); r.Status != 200 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("after the lease: %d", r.Status)
	}
	if c.srv.Ledger().Count("o1") != 1 {
		t.Error("not charged exactly once")
	}
}

// Validation failures are not stored: the fixed request may reuse the key.
func TestValidationNotStored(t *testing.T) {
	c := newClient(t)
	bad := pay("o1")
	bad.Set("capture_method", "later")
	if r := c.create("k1", bad); r.Status != 400 || errType(r) != "invalid_request_error" {
		t.Fatalf("got %d %q", r.Status, errType(r))
	}
	if r := c.create("k1", pay("o1")); r.Status != 200 {
		t.Fatalf("fixed request: %d", r.Status)
	}
}

func TestParameterRules(t *testing.T) {
	c := newClient(t)
	for name, mod := range map[string]func(url.Values){
		"unknown parameter":        func(f url.Values) { f.Set("colour", "red") },
		"upper-case currency":      func(f url.Values) { f.Set("currency", "JPY") },
		"amount too large":         func(f url.Values) { f.Set("amount", "100000000") },
		"metadata key too long":    func(f url.Values) { f.Set("metadata["+strings.Repeat("k", 41)+"]", "v") },
		"return_url unconfirmed":   func(f url.Values) { f.Del("confirm"); f.Del("payment_method"); f.Set("return_url", "https://x") },
		"redirects, no return_url": func(f url.Values) { f.Del("automatic_payment_methods[allow_redirects]") },
	} {
		f := pay("o1")
		mod(f)
		if r := c.create("", f); r.Status != 400 {
			t.Errorf("%s: got %d, want 400", name, r.Status)
		}
	}
}

func TestRetentionForgetsKeys(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := newClient(t, WithSettings(fakes.Settings{Clock: clock.Now}))
	c.create("k1", pay("o1"))
	clock.Advance(24 * time.Hour)
	c.create("k1", pay("o1"))
	if n := c.srv.Ledger().Count("o1"); n != 2 {
		t.Fatalf("a key resent after 24 h charged %d times, want 2 (what idempay must never do)", n)
	}
}

func TestSearchLagsAndRetrieve(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := newClient(t, WithSettings(fakes.Settings{Clock: clock.Now}), WithSearchDelay(time.Minute))
	id := c.create("k1", pay("o'1"))
	search := func() int {
		q := url.Values{"query": {`metadata['idempay_intent']:'o\'1'`}}
		r, err := c.do(http.MethodGet, "/v1/payment_intents/search?"+q.Encode(), "", nil)
		if err != nil || r.Status != 200 {
			t.Fatalf("search: %v %d", err, r.Status)
		}
		return len(r.Body["data"].([]any))
	}
	if n := search(); n != 0 {
		t.Fatalf("searchable at once: %d", n)
	}
	clock.Advance(time.Minute)
	if n := search(); n != 1 {
		t.Fatalf("after the delay: %d", n)
	}
	r, err := c.do(http.MethodGet, "/v1/payment_intents/"+id.Body["id"].(string), "", nil)
	if err != nil || r.Status != 200 || r.Body["status"] != "succeeded" {
		t.Fatalf("retrieve: %v %d %v", err, r.Status, r.Body["status"])
	}
}

func TestAuthentication(t *testing.T) {
	c := newClient(t)
	r, _ := http.NewRequest(http.MethodPost, c.URL+"/v1/payment_intents", strings.NewReader(pay("o1").Encode()))
	r.Header.Set("Authorization", "Bearer sk_wrong")
	resp, err := c.HC.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("got %d", resp.StatusCode)
	}
}

func TestDeclineAndThreeDSecure(t *testing.T) {
	c := newClient(t)
	f := pay("d")
	f.Set("payment_method", "pm_card_chargeDeclined")
	if r := c.create("k1", f); r.Status != 402 || errType(r) != "card_error" {
		t.Fatalf("decline: %d %q", r.Status, errType(r))
	}
	f = pay("3ds")
	f.Set("payment_method", "pm_card_threeDSecure2Required")
	r := c.create("k2", f)
	if r.Body["status"] != "requires_action" {
		t.Fatalf("3ds: %v", r.Body["status"])
	}
	if !c.srv.Complete(r.Body["id"].(string), true) || c.srv.Ledger().Count("3ds") != 1 {
		t.Fatal("completing 3-D Secure did not charge")
	}
}
