package faults_test

import (
	"fmt"

	"github.com/idempay/idempay/internal/faults"
)

// Scripts decide the faults of known requests; the seeded rates decide the
// rest, the same way on every run.
func ExampleInjector() {
	in := faults.NewInjector(faults.Rates{}, 1)
	in.ScriptIntent("order-1", faults.Post, faults.None)
	fmt.Println(in.Draw("key-1", "order-1"), in.Draw("key-1", "order-1"), in.Draw("key-1", "order-1"))
	// Output: post none none
}

// The ledger reports an intent charged twice.
func ExampleLedger_Check() {
	var l faults.Ledger
	l.Add(faults.Charge{Merchant: "m", Intent: "order-1", Key: "k1"})
	l.Add(faults.Charge{Merchant: "m", Intent: "order-1", Key: "k2"})
	fmt.Println(l.Check())
	// Output: faults: intents charged more than once: "order-1" (merchant "m") 2 times under keys ["k1" "k2"]
}
