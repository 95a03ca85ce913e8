package idempay

import (
	"context"
	"fmt"
	"net/http"
)

// operation is one kind of request the engine makes exactly once: a charge,
// or a refund, capture or cancel of a charged intent. The engine (reserve.go,
// flight.go, outcome.go, settle.go, flightgroup.go) runs every kind alike:
// one durable key before the first byte, one flight per record per process,
// the same retries, the same four outcomes. An operation says where its
// record lives, how its request is built and read, how it is looked up, what
// must be true before its first byte leaves, and how a result is answered.
//
// The engine's receipt is a *Charge whatever the kind: the provider's object
// (a charge, a refund) with the fields every kind shares. The public methods
// of the other kinds turn it into an *Operation on the way out.
type operation interface {
	// slot is the record the operation is kept in, its fingerprint and the
	// caller's own key, if any.
	slot() opSlot
	// secrets are taken out of every answer, error and log of the flight.
	secrets() []Secret
	// build makes one attempt carrying key; read interprets its answer.
	build(ctx context.Context, t Target, key string) (*http.Request, error)
	read(resp *http.Response, body []byte) Verdict
	// find looks the operation up at the provider, or fails with ErrNoLookup.
	find(ctx context.Context, hc *http.Client, t Target, rec Record) (Verdict, error)
	// lookupFirst reports whether every resend must be preceded by a lookup.
	lookupFirst() bool
	// prepare reads what the operation needs from the store before its
	// record is reserved. An error (a *ChargeError) ends the call with
	// nothing stored or sent.
	prepare(ctx context.Context) error
	// beforeSend runs under the record's lease, after the reservation and
	// before the first byte. An error stops the flight with nothing sent.
	beforeSend(ctx context.Context, claim *Claim, res Reservation) error
	// answer is the caller's answer for a succeeded or pending receipt.
	answer(ctx context.Context, ch *Charge) (*Charge, error)
	// record writes the outcome st of rec's current attempt where the
	// intent's ledger needs it (out is nil for a failure already closed).
	// The engine calls it before it closes rec with a fact, and fails the
	// close when it fails: a closed record may be deleted by the store's
	// retention, and the ledger must answer without it.
	record(ctx context.Context, rec Record, st State, out *storedOutcome) error
}

// opSlot names an operation's record and what it is reserved with.
type opSlot struct {
	namespace, id string
	fp            string // the fingerprint of the parameters
	key           string // the caller's key, empty for a generated one
	base          bool   // key is a BaseKey: attempt n goes under AttemptKey(key, n)
}

// flightID is the operation's identity in the flight group: one flight
// per record per process.
func (s opSlot) flightID() string { return s.namespace + "\x00" + s.id }

// chargeOp is the charge: the first operation, and the one every other acts on.
type chargeOp struct {
	c   *Client
	req ChargeRequest
	fp  string
}

var _ operation = chargeOp{}

func (o chargeOp) slot() opSlot {
	return opSlot{namespace: o.c.namespace, id: o.req.IntentID, fp: o.fp, key: o.req.Key + o.req.BaseKey,
		base: o.req.BaseKey != ""}
}

func (o chargeOp) secrets() []Secret { return []Secret{o.req.Source} }

func (o chargeOp) build(ctx context.Context, t Target, key string) (*http.Request, error) {
	return o.c.provider.NewChargeRequest(ctx, t, o.req, key)
}

func (o chargeOp) read(resp *http.Response, body []byte) Verdict {
	return o.c.provider.ReadCharge(resp, body)
}

func (o chargeOp) find(ctx context.Context, hc *http.Client, t Target, rec Record) (Verdict, error) {
	finder, ok := o.c.provider.(Finder)
	if !ok {
		return Verdict{}, fmt.Errorf("%w: %s", ErrNoLookup, o.c.provider.Name())
	}
	return finder.FindCharge(ctx, hc, t, rec)
}

func (o chargeOp) lookupFirst() bool { return providerLooksUpFirst(o.c.provider) }

// prepare makes sure a caller's key is this intent's: a key one intent
// was charged with is never sent for another (see claimKey).
func (o chargeOp) prepare(ctx context.Context) error {
	if o.req.Key == "" {
		return nil
	}
	return o.c.claimKey(ctx, o.req.Key, keyOwner{kind: "charge", id: o.req.IntentID})
}

// record writes a succeeded charge's facts into the intent's ledger, which
// refunds weeks later read once the charge's record is gone.
func (o chargeOp) record(ctx context.Context, rec Record, st State, out *storedOutcome) error {
	if st != StateSucceeded || out == nil {
		return nil
	}
	return o.c.enterCharge(ctx, rec, out.Charge)
}

// beforeSend answers from the intent's ledger a charge that succeeded
// under a record a sweep has since deleted: a paid intent is never charged
// again.
func (o chargeOp) beforeSend(ctx context.Context, _ *Claim, res Reservation) error {
	return o.c.chargedBefore(ctx, res.Record)
}

func (o chargeOp) answer(ctx context.Context, ch *Charge) (*Charge, error) {
	return o.c.answerCharge(ctx, ch)
}

// providerLooksUpFirst reports whether p must be asked before any resend.
func providerLooksUpFirst(p Provider) bool {
	g, ok := p.(LookupBeforeResender)
	return ok && g.LookupBeforeResend()
}
