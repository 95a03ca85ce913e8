package stripetest

import (
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
	r, err := c.Do(method, path, key, form, func(r *http.Request) {
		r.Header.Set("Authorization", "Bearer sk_test")
		if account != "" {
			r.Header.Set("Stripe-Account", account)
		}
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return r
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
	if a.Status != 200 {
		t.Fatalf("charge on acct_A: %d %v", a.Status, a.Body)
	}
	id := a.Body["id"].(string)
	if r := c.as("acct_A", http.MethodGet, "/v1/payment_intents/"+id, "", nil); r.Status != 200 {
		t.Fatalf("acct_A retrieves its own: %d", r.Status)
	}
	for _, other := range []string{"acct_B", ""} {
		if r := c.as(other, http.MethodGet, "/v1/payment_intents/"+id, "", nil); r.Status != 404 {
			t.Fatalf("%q sees acct_A's PaymentIntent: %d", other, r.Status)
		}
	}
	// The same key on another account is another request.
	if b := c.as("acct_B", http.MethodPost, "/v1/payment_intents", "k1", pay("o1")); b.Status != 200 || b.Body["id"] == id ||
		b.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("acct_B under acct_A's key: %d %v", b.Status, b.Body)
	}
	if r := c.as("not-an-account", http.MethodGet, "/v1/payment_intents/"+id, "", nil); r.Status != 403 {
		t.Fatalf("a malformed Stripe-Account: %d %v", r.Status, r.Body)
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
