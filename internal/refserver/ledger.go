package refserver

import "github.com/idempay/idempay/idempaytest/fakes"

// Charge is one real charge: money that moved, or an authorisation held
// (Authorized, for a charge sent with "capture": false). It is the record
// every fake shares (idempaytest/fakes): Intent is the body's order_id, ID
// the charge_id answered, Amount the minor units charged in Currency, Key
// the idempotency key it was made under. Merchant is the tenant the key was
// scoped to: the merchant ID that Config.Auth maps the bearer secret to
// (or the bearer secret itself when Auth is empty), joined by "/" with the
// Merchant-Id header when both are present; empty when neither was sent.
type Charge = fakes.Charge

// Ledger is the server's books: every charge and every refund, capture and
// cancel it made, each in the same critical section as its stored answer.
// Ledger.Check returns a *fakes.MoneyError naming every way money moved
// wrong (an order charged twice, a refund made twice, refunds beyond the
// charge, ...), and nil otherwise; Ledger.Find returns a merchant's first
// charge for an order.
type Ledger = fakes.Ledger

// Op is one refund, capture or cancel the server carried out: ID is re_...
// for a refund and the charge's ID otherwise, OpID the body's refund_id,
// capture_id or cancel_id, Intent its order_id, Amount what was refunded or
// captured (the authorised amount for a cancel), in JPY.
type Op = fakes.Op
