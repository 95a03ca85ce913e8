package idempaytest_test

import (
	"fmt"
	"time"

	"github.com/idempay/idempay/idempaytest"
)

// The headers Stripe would send; the signature is reproducible for a
// fixed body, secret and time.
func ExampleSignStripeWebhook() {
	body := idempaytest.StripeEvent("evt_1", "payment_intent.succeeded", map[string]string{"id": "pi_1"})
	h := idempaytest.SignStripeWebhook(body, "whsec_example", time.Unix(1767225600, 0))
	fmt.Println(h.Get("Stripe-Signature"))
	// Output:
	// t=1767225600,v1=4475d49a8d3063ea2bfb3034496d368ecdd124f7eab840500a96be586fecc384
}

// Omise's headers, signed with two secrets as during a rotation.
func ExampleSignOmiseWebhook() {
	body := idempaytest.OmiseEvent("evnt_test_1", "charge.complete", map[string]string{"object": "charge", "id": "chrg_test_1"})
	h := idempaytest.SignOmiseWebhook(body, "bmV3IHNlY3JldCBrZXk=", time.Unix(1767225600, 0), "b2xkIHNlY3JldCBrZXk=")
	fmt.Println(h.Get("Omise-Signature-Timestamp"))
	fmt.Println(len(h.Get("Omise-Signature")))
	// Output:
	// 1767225600
	// 129
}
