// Command quickstart charges twenty orders through idempay against a
// payment API that fails on purpose, and shows that each order was charged
// exactly once.
//
//	go run ./examples/quickstart
//
// Everything runs in this process: the reference payment API (from
// internal/refserver) on a loopback port, with about a third of its
// requests lost before, during or after processing or refused with a 503,
// and the durable file KeyStore in a temporary directory. Nothing to
// install.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
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
	api, url, stop := refserver.Start(refserver.Config{
		Faults: refserver.FaultRates{Pre: 0.1, Mid: 0.1, Post: 0.1, Unavailable: 0.05},
		Seed:   uint64(time.Now().UnixNano()),
		Lease:  50 * time.Millisecond,
	})
	defer stop()

	dir, err := os.MkdirTemp("", "idempay-quickstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	store, err := filestore.Open(dir + "/keys.db")
	if err != nil {
		return err
	}
	defer store.Close()

	client, err := idempay.New(idempay.Config{
		BaseURL: url,
		Store:   store,
		Retry:   idempay.RetryPolicy{MaxAttempts: 4, InitialInterval: 20 * time.Millisecond},
	})
	if err != nil {
		return err
	}

	ctx := context.Background()
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "INTENT\tKEY\tATTEMPTS\tREPLAYED\tOUTCOME")
	for i := range orders {
		req := idempay.ChargeRequest{
			IntentID: fmt.Sprintf("order-%03d", i+1),
			Amount:   1500 + int64(i)*100, // yen: JPY has no minor unit
			Currency: "JPY",
			Source:   "tokn_test_visa",
		}
		// An unknown outcome is resumed with the same key until it settles:
		// the provider answers the retry from its record of the first one.
		for try := 1; ; try++ {
			ch, err := client.Charge(ctx, req)
			printRow(w, req.IntentID, ch, err, try)
			if !errors.Is(err, idempay.ErrOutcomeUnknown) || try == 20 {
				break
			}
		}
	}
	w.Flush()

	ledger := api.Ledger()
	duplicates := 0
	var dup *refserver.DuplicateChargeError
	if err := ledger.Check(); errors.As(err, &dup) {
		duplicates = len(dup.Duplicates)
	}
	fmt.Printf("\nledger: %d intents, %d charges, %d duplicates; server saw %d requests, %v\n",
		orders, ledger.Len(), duplicates, api.Stats().Requests, api.Stats().Faults)
	if duplicates > 0 || ledger.Len() != orders {
		return fmt.Errorf("expected exactly one charge per intent")
	}
	return nil
}

func printRow(w *tabwriter.Writer, intent string, ch *idempay.Charge, err error, try int) {
	label := intent
	if try > 1 {
		label += fmt.Sprintf(" (resumed, call %d)", try)
	}
	if err != nil {
		var ce *idempay.ChargeError
		key, attempts := "-", 0
		if errors.As(err, &ce) {
			key, attempts = ce.Key, ce.Attempts
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t-\t%s\n", label, key, attempts, idempay.OutcomeOf(err))
		return
	}
	replayed := "no"
	if ch.Replayed {
		replayed = "yes (" + string(ch.ReplayedFrom) + ")"
	}
	fmt.Fprintf(w, "%s\t%s\t%d\t%s\tsucceeded %s\n", label, ch.Key, ch.Attempts, replayed, ch.ID)
}
