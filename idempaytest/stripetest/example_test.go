package stripetest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/stripetest"
)

// Stripe stores a 500 produced while executing, and answers every retry
// with the same key with it again, marked as a replay.
func Example() {
	srv := stripetest.NewServer()
	defer srv.Close()
	srv.FailNext(fakes.Internal)

	form := url.Values{"amount": {"1500"}, "currency": {"jpy"}, "metadata[idempay_intent]": {"order-1"}}
	for range 2 {
		r, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/payment_intents", strings.NewReader(form.Encode()))
		r.Header.Set("Authorization", "Bearer sk_test_123")
		r.Header.Set("Idempotency-Key", "key-1")
		resp, err := srv.Client().Do(r)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, "replayed:", resp.Header.Get("Idempotent-Replayed") == "true")
	}
	// Output:
	// 500 replayed: false
	// 500 replayed: true
}
