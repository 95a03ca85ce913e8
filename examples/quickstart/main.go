// Command quickstart charges twenty orders through idempay against a
// payment API that fails on purpose, and shows that each order was charged
// exactly once.
//
//	go run ./examples/quickstart
//
// Everything runs in this process: a fake payment API (idempaytest's
// Server) on a loopback port, with about a third of its requests lost
// before, during or after processing or refused with a 503, and the durable
// file KeyStore in a temporary directory. Nothing to install. It imports
// only public packages, so it can be copied as it is.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/keystore/filestore"
)

const orders = 20

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run() error {
	// A payment API that drops requests before and after charging, crashes
	// mid-way and sheds load: the failures idempay exists for.
	api := idempaytest.NewServer(idempaytest.WithFaultRates(idempaytest.FaultRates{
		Pre: 0.1, Mid: 0.1, Post: 0.1, Unavailable: 0.05,
	}, uint64(time.Now().UnixNano())), idempaytest.WithLease(50*time.Millisecond))
	defer api.Close()

	dir, err := os.MkdirTemp("", "idempay-quickstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	store, err := filestore.Open(filepath.Join(dir, "keys.db"))
	if err != nil {
		return err
	}
	defer store.Close()

	client, err := idempay.New(idempay.Config{
		BaseURL: api.URL,
		Store:   store,
		Retry:   idempay.RetryPolicy{MaxAttempts: 4, InitialInterval: 20 * time.Millisecond},
	})
	if err != nil {
		return err
	}
	defer client.Close(context.Background())

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ORDER\tCALL\tREQUESTS\tKEY\tREPLAYED FROM\tOUTCOME")
	for i := range orders {
		req := idempay.ChargeRequest{
			IntentID: fmt.Sprintf("order-%03d", i+1),
			Amount:   1500 + int64(i)*100, // yen: JPY has no minor unit
			Currency: "JPY",
			Source:   idempaytest.Token,
		}
		if err := chargeUntilKnown(client, w, req); err != nil {
			return err
		}
	}
	w.Flush()
	return report(api)
}

// chargeUntilKnown charges req and, while the outcome is unknown, charges
// it again with the same request: idempay resumes the intent with its key,
// and the provider answers from its record of the first request.
func chargeUntilKnown(client *idempay.Client, w *tabwriter.Writer, req idempay.ChargeRequest) error {
	for call := 1; call <= 20; call++ {
		ch, err := client.Charge(context.Background(), req)
		printRow(w, req.IntentID, call, ch, err)
		switch idempay.OutcomeOf(err) {
		case idempay.OutcomeSucceeded:
			return nil // ship the order
		case idempay.OutcomePending:
			return nil // show the customer ch.AuthorizeURL; settle it later
		case idempay.OutcomeFailed:
			return nil // tell the customer; another card is a new attempt
		case idempay.OutcomeUnknown:
			// money may have moved: never tell the customer "failed"
		}
	}
	return fmt.Errorf("%s: outcome still unknown after 20 calls", req.IntentID)
}

// printRow prints one call: which call of the order it was, the requests
// it sent, the key (one per order, whatever the faults), where a replayed
// answer came from and the outcome.
func printRow(w *tabwriter.Writer, intent string, call int, ch *idempay.Charge, err error) {
	key, requests, from := "-", 0, "-"
	var ce *idempay.ChargeError
	switch {
	case ch != nil:
		key, requests = ch.Key, ch.Requests
		if ch.Replayed {
			from = string(ch.ReplayedFrom)
		}
	case errors.As(err, &ce):
		key, requests = ce.Key, ce.Requests
	}
	outcome := idempay.OutcomeOf(err).String()
	if ch != nil {
		outcome += " " + ch.ID
	}
	fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%s\n", intent, call, requests, key, from, outcome)
}

// report checks the provider's ledger: one charge per order.
func report(api *idempaytest.Server) error {
	charged := 0
	for i := range orders {
		n := api.Charges(fmt.Sprintf("order-%03d", i+1))
		if n != 1 {
			return fmt.Errorf("order-%03d was charged %d times", i+1, n)
		}
		charged += n
	}
	fmt.Printf("\n%d orders, %d charges, %d requests seen by the provider (the rest were retries of lost or refused ones).\n",
		orders, charged, api.TotalRequests())
	fmt.Println("REQUESTS counts what one call sent; REPLAYED FROM says the answer came from the provider's record")
	fmt.Println("of an earlier request (server) or from the KeyStore (store) instead of a fresh charge.")
	return nil
}
