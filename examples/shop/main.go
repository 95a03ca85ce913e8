// Command shop is a small backend-for-frontend that charges and refunds
// through idempay with Stripe: POST /checkout (under the guard, charging
// the order once whatever the double clicks and resends), POST /refund
// (refunding once per refund ID, never beyond the charge) and GET
// /orders/{id} (the order's money as idempay's ledger has it).
//
// It talks to the real Stripe API, in test mode, only when
// STRIPE_SECRET_KEY is set; without it, it prints how to run it. Its
// tests (shop_test.go) run the same handlers against the importable
// Stripe fake, with faults, and import only public packages: copy them as
// they are.
//
//	STRIPE_SECRET_KEY=sk_test_... go run ./examples/shop -addr 127.0.0.1:8080
//	curl -H 'Idempotency-Key: 2d6c7a4e-checkout-1001' -d '{"order_id":"order-1001","amount":1500,"currency":"JPY","payment_method":"pm_card_visa"}' localhost:8080/checkout
//	curl -H 'Idempotency-Key: 8f1e0b2a-refund-1001-1' -d '{"order_id":"order-1001","refund_id":"refund-1001-1","amount":500,"currency":"JPY"}' localhost:8080/refund
//	curl localhost:8080/orders/order-1001
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/provider/stripe"
)

const usage = `shop charges and refunds through idempay with Stripe, in test mode.

Set STRIPE_SECRET_KEY to a test-mode secret key (sk_test_..., from
https://dashboard.stripe.com/test/apikeys) and run:

  STRIPE_SECRET_KEY=sk_test_... go run ./examples/shop [-addr 127.0.0.1:8080] [-store shop.db]

Then, with Stripe's test payment methods (pm_card_visa succeeds,
pm_card_chargeDeclined is declined):

  curl -H 'Idempotency-Key: 2d6c7a4e-checkout-1001' \
    -d '{"order_id":"order-1001","amount":1500,"currency":"JPY","payment_method":"pm_card_visa"}' \
    localhost:8080/checkout
  curl -H 'Idempotency-Key: 8f1e0b2a-refund-1001-1' \
    -d '{"order_id":"order-1001","refund_id":"refund-1001-1","amount":500,"currency":"JPY"}' \
    localhost:8080/refund
  curl localhost:8080/orders/order-1001

Send the same request twice, or at once: one charge, one refund.
The tests need no key: go test ./examples/shop
`

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "where to listen")
	path := flag.String("store", "shop.db", "the KeyStore file (idempay's keys and ledgers, the guard's records)")
	live := flag.Bool("live", false, "allow a live-mode secret key (sk_live_...): real money")
	flag.Parse()
	if err := run(os.Stdout, os.Getenv("STRIPE_SECRET_KEY"), *addr, *path, *live); err != nil {
		fmt.Fprintln(os.Stderr, "shop:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, secret, addr, path string, live bool) error {
	switch {
	case secret == "":
		fmt.Fprint(out, usage)
		return nil
	case strings.HasPrefix(secret, "sk_live_") && !live:
		return errors.New("STRIPE_SECRET_KEY is a live-mode key: this example moves real money with it only with -live")
	}
	store, err := filestore.Open(path)
	if err != nil {
		return err
	}
	defer store.Close()
	pay, err := idempay.New(idempay.Config{
		BaseURL:     "https://api.stripe.com",
		Credentials: idempay.Secret(secret),
		Provider:    stripe.Provider{APIVersion: "2024-06-20"},
		Store:       store,
	})
	if err != nil {
		return err
	}
	defer pay.Close(context.Background())
	// One tenant: a real BFF scopes keys by the session's user or merchant.
	g, err := guard.New(store, guard.WithScope("shop"), guard.WithIdentity(guard.SingleTenant))
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: addr, Handler: (&shop{pay: pay}).routes(g), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	fmt.Fprintf(out, "shop listening on http://%s (Stripe test mode, store %s)\n", addr, path)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown) // in-flight charges and refunds finish; then the Client and the store close
}
