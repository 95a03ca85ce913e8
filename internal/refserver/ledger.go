package refserver

import "github.com/idempay/idempay/internal/faults"

// Charge is one real charge: money that moved. It is the record the fake
// servers share (internal/faults): Intent is the body's order_id, ID the
// charge_id answered, Amount the minor units charged in Currency, Key the
// idempotency key it was made under. Merchant is the tenant the key was
// scoped to: the merchant ID that Config.Auth maps the bearer secret to
// (or the bearer secret itself when Auth is empty), joined by "/" with the
// Merchant-Id header when both are present; empty when neither was sent.
type Charge = faults.Charge

// Ledger records every charge the server makes, each in the same critical
// section as its stored answer. Its methods are safe for concurrent use;
// the zero value is an empty ledger. Ledger.Check returns a
// *DuplicateChargeError if any order of any merchant was charged more
// than once, and nil otherwise; Ledger.Find returns a merchant's first
// charge for an order.
type Ledger = faults.Ledger

// DuplicateChargeError is returned by Ledger.Check when some order was
// charged more than once: one slice of charges per order, oldest first.
type DuplicateChargeError = faults.DuplicateError
