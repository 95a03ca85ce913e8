package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/webhook"
)

// A Stripe endpoint: Stripe delivers the same event twice, and the work
// is done once. In production the store is the shared one and the clock
// the real one; the secret comes from the endpoint's settings.
func Example() {
	now := func() time.Time { return time.Unix(1767225600, 0) }
	const secret idempay.Secret = "whsec_example"

	verifier, err := webhook.NewStripe(secret, webhook.WithClock(now))
	if err != nil {
		log.Fatal(err)
	}
	dedup, err := webhook.NewDeduper(memstore.New(), "stripe", "acct_123", webhook.WithClock(now))
	if err != nil {
		log.Fatal(err)
	}
	h, err := webhook.NewHandler(verifier, dedup, func(ctx context.Context, ev webhook.Event) error {
		var e struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(ev.Body, &e); err != nil {
			return err
		}
		// Re-fetch the payment intent the event names before acting on it.
		fmt.Println("handling", ev.ID, e.Type)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	body := idempaytest.StripeEvent("evt_1", "payment_intent.succeeded", map[string]string{"id": "pi_1"})
	for range 2 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, idempaytest.WebhookRequest("/webhooks/stripe", body, idempaytest.SignStripeWebhook(body, secret, now())))
		fmt.Print(w.Code, " ", w.Body.String())
	}
	// Output:
	// handling evt_1 payment_intent.succeeded
	// 200 handled
	// 200 duplicate
}

// Verify tells an altered body from a stale signature.
func ExampleStripe_Verify() {
	now := func() time.Time { return time.Unix(1767225600, 0) }
	v, err := webhook.NewStripe("whsec_example", webhook.WithClock(now))
	if err != nil {
		log.Fatal(err)
	}
	body := []byte(`{"id":"evt_1","object":"event"}`)

	header := idempaytest.SignStripeWebhook(body, "whsec_example", now())
	fmt.Println(v.Verify(header, body))
	fmt.Println(errors.Is(v.Verify(header, []byte(`{"id":"evt_2","object":"event"}`)), webhook.ErrBadSignature))

	old := idempaytest.SignStripeWebhook(body, "whsec_example", now().Add(-time.Hour))
	var te *webhook.TimestampError
	if errors.As(v.Verify(old, body), &te) {
		fmt.Println("signed", now().Sub(te.Signed), "ago, tolerance", te.Tolerance)
	}
	// Output:
	// <nil>
	// true
	// signed 1h0m0s ago, tolerance 5m0s
}

// Omise signs with the base64-decoded webhook secret; during a rotation
// the header carries two signatures and either verifies.
func ExampleOmise_Verify() {
	now := func() time.Time { return time.Unix(1767225600, 0) }
	const oldSecret, newSecret idempay.Secret = "b2xkIHNlY3JldCBrZXk=", "bmV3IHNlY3JldCBrZXk="
	v, err := webhook.NewOmise(newSecret, webhook.WithClock(now))
	if err != nil {
		log.Fatal(err)
	}
	body := idempaytest.OmiseEvent("evnt_test_1", "charge.complete", map[string]string{"object": "charge", "id": "chrg_test_1"})
	fmt.Println(v.Verify(idempaytest.SignOmiseWebhook(body, oldSecret, now(), newSecret), body))
	fmt.Println(errors.Is(v.Verify(idempaytest.SignOmiseWebhook(body, oldSecret, now()), body), webhook.ErrBadSignature))
	// Output:
	// <nil>
	// true
}

// A handler that fails does not lock the event: the provider's next
// delivery runs it again, and once it succeeds the event is done.
func ExampleDeduper_Do() {
	d, err := webhook.NewDeduper(memstore.New(), "omise", "acct_th")
	if err != nil {
		log.Fatal(err)
	}
	body := []byte(`{"object":"event","id":"evnt_1"}`)
	attempt := 0
	work := func(ctx context.Context) error {
		attempt++
		if attempt == 1 {
			return errors.New("ledger unavailable")
		}
		return nil
	}
	for range 3 {
		got, err := d.Do(context.Background(), "evnt_1", body, work)
		var herr *webhook.HandlerError
		switch {
		case errors.As(err, &herr):
			fmt.Println("failed:", herr.Err, "-> answer", webhook.HTTPStatus(err))
		case err != nil:
			fmt.Println("error:", err)
		default:
			fmt.Println(got, "-> answer", webhook.HTTPStatus(err))
		}
	}
	// Output:
	// failed: ledger unavailable -> answer 500
	// handled -> answer 200
	// duplicate -> answer 200
}
