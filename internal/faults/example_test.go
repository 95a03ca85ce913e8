package faults_test

import (
	"fmt"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// Scripts decide the faults of known requests; the seeded rates decide the
// rest, the same way on every run.
func ExampleInjector() {
	in := faults.NewInjector(fakes.Rates{}, 1)
	in.ScriptIntent("order-1", fakes.Post, fakes.None)
	fmt.Println(in.Draw("key-1", "order-1"), in.Draw("key-1", "order-1"), in.Draw("key-1", "order-1"))
	// Output: post none none
}
