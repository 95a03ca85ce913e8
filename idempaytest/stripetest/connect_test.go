package stripetest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// as sends method path with form under the Stripe-Account header account
// ("" for none).
func (c *client) as(account, method, path, key string, form url.Values) reply {
	c.t.Helper()
	r, _ := http.NewRequest(method, c.url+path, strings.NewReader(form.Encode()))
	r.Header.Set("Authorization", "Bearer sk_test")
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if account != "" {
		r.Header.Set("Stripe-Account", account)
	}
	if key != "" {
		r.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.hc.Do(r)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	return reply{resp.StatusCode, resp.Header, body}
}

// Stripe-Account (Connect) makes the request act on that connected
// account: its PaymentIntents, refunds and keys are its own, seen by no
// other account and not by the platform; the header is checked, and each
// POST's is recorded for the hook and every request's in the stats.
func TestConnectedAccounts(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	c := newClient(t, WithHook(func(in RequestInfo) { mu.Lock(); seen = append(seen, in.Account); mu.Unlock() }))
	a := c.as("acct_A", http.MethodPost, "/v1/payment_intents", "k1", pay("o1"))
	if a.status != 200 {
		t.Fatalf("charge on acct_A: %d %v", a.status, a.body)
	}
	id := a.body["id"].(string)
	if r := c.as("acct_A", http.MethodGet, "/v1/payment_intents/"+id, "", nil); r.status != 200 {
		t.Fatalf("acct_A retrieves its own: %d", r.status)
	}
	for _, other := range []string{"acct_B", ""} {
		if r := c.as(other, http.MethodGet, "/v1/payment_intents/"+id, "", nil); r.status != 404 {
			t.Fatalf("%q sees acct_A's PaymentIntent: %d", other, r.status)
		}
	}
	// The same key on another account is another request.
	if b := c.as("acct_B", http.MethodPost, "/v1/payment_intents", "k1", pay("o1")); b.status != 200 || b.body["id"] == id ||
		b.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("acct_B under acct_A's key: %d %v", b.status, b.body)
	}
	if r := c.as("not-an-account", http.MethodGet, "/v1/payment_intents/"+id, "", nil); r.status != 403 {
		t.Fatalf("a malformed Stripe-Account: %d %v", r.status, r.body)
	}
	if got := c.srv.Ledger().Count("o1"); got != 2 {
		t.Fatalf("books: %d charges of o1, want one per account", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, ",") != "acct_A,acct_B" {
		t.Fatalf("hook saw %q", seen)
	}
	if st := c.srv.Stats().ByAccount; st["acct_A"] != 2 || st["acct_B"] != 2 || st[""] != 1 {
		t.Fatalf("by account: %v", st)
	}
}
