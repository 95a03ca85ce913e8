package fakes_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// The duplicate-money check names what went wrong: here an order charged
// under two keys (a client that made a new key for a lost answer) and a
// refund made twice.
func ExampleCheck() {
	charges := []fakes.Charge{
		{ID: "ch_1", Merchant: "shop", Intent: "order-1", Key: "k1", Amount: 1500},
		{ID: "ch_2", Merchant: "shop", Intent: "order-1", Key: "k2", Amount: 1500},
	}
	ops := []fakes.Op{
		{Type: fakes.OpRefund, ID: "re_1", OpID: "refund-1", ChargeID: "ch_1", Merchant: "shop", Intent: "order-1", Key: "r1", Amount: 500},
		{Type: fakes.OpRefund, ID: "re_2", OpID: "refund-1", ChargeID: "ch_1", Merchant: "shop", Intent: "order-1", Key: "r2", Amount: 500},
	}
	err := fakes.Check(charges, ops)
	var me *fakes.MoneyError
	if errors.As(err, &me) {
		for _, v := range me.Violations {
			fmt.Println(v.Kind, v.Keys)
		}
	}
	// Output:
	// charged_twice [k1 k2]
	// refunded_twice [r1 r2]
}

// A clock moves only when told: a fake's leases and key retention run out
// without the test sleeping.
func ExampleClock() {
	c := fakes.NewClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	c.Advance(25 * time.Hour)
	fmt.Println(c.Now().Format(time.DateTime))
	// Output: 2026-01-02 10:00:00
}

// Scripts decide the faults of known requests; the seeded rates decide the
// rest, the same way on every run.
func ExampleScript() {
	s := fakes.NewScript(fakes.Rates{}, 1)
	s.Fail("order-1", fakes.Post, fakes.None)
	fmt.Println(s.Draw("key-1", "order-1"), s.Draw("key-1", "order-1"), s.Draw("key-1", "order-1"))
	// Output: post none none
}
