package idempaytest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/idempay/idempay"
)

// FakeCharger is a scripted idempay.Charger for tests of code that takes
// a Charger and should not talk to any server. It behaves like a Client
// where it matters to the caller's retry logic:
//
//   - Bad input is refused first, with the *idempay.ValidationError that
//     ChargeRequest.Validate returns, and is not remembered.
//   - The first call for an intent that passes validation fixes its
//     parameters and key. A later call with other parameters (or another
//     non-empty Key) fails with idempay.ErrIntentMismatch, before any
//     script step is spent.
//   - Each call spends the next step scripted with OnIntent. Without one,
//     a settled intent (a success or a decline) answers its first result
//     again, as the KeyStore would: the charge marked Replayed with
//     ReplayedFrom idempay.ReplayFromStore and Attempts 0, or the same
//     error with Attempts 0. An intent not settled yet succeeds with a
//     synthetic charge: ID FakeChargeID(intent), key FakeKey(intent)
//     unless the request carried one.
//
// Its errors are built like the Client's, so errors.Is, errors.As and
// idempay.OutcomeOf answer the same for both.
//
// The zero value is ready for use. A FakeCharger is safe for concurrent
// use. It answers one call at a time, so concurrent calls for an intent
// get one fresh result and replays of it; a Client differs only in that
// callers joining one flight all get the fresh result. It must not be
// copied after first use.
type FakeCharger struct {
	mu      sync.Mutex
	scripts map[string][]step
	intents map[string]*fakeIntent
	calls   []Call
}

var _ idempay.Charger = (*FakeCharger)(nil)

// Call is one call the FakeCharger answered, for assertions.
type Call struct {
	Request idempay.ChargeRequest // as passed in (maps copied)
	Charge  *idempay.Charge       // the result, nil on error
	Err     error                 // the error returned, if any
}

// fakeIntent is what the fake remembers of an intent, like a KeyStore
// record: its fingerprint, key and, once settled, its first result.
type fakeIntent struct {
	fp      string
	key     string
	settled *result
}

type result struct {
	charge *idempay.Charge
	err    *idempay.ChargeError
}

// Charge answers req from the script, or as described on FakeCharger.
// A ctx already done ends the call, outcome unknown (the real client has
// not looked at the store, so it cannot rule out an earlier charge), before
// anything is remembered.
func (f *FakeCharger) Charge(ctx context.Context, req idempay.ChargeRequest) (*idempay.Charge, error) {
	// One lock over the whole call keeps Calls in the order the calls
	// were answered, which is the order a test reasons about.
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, err := f.charge(ctx, req)
	req.Metadata, req.Extra = maps.Clone(req.Metadata), maps.Clone(req.Extra)
	f.calls = append(f.calls, Call{Request: req, Charge: copyCharge(ch), Err: err})
	return ch, err
}

// charge answers one call; f.mu is held.
func (f *FakeCharger) charge(ctx context.Context, req idempay.ChargeRequest) (*idempay.Charge, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if s, ok := f.peek(req.IntentID); ok && s.kind == stepInvalid {
		// A validation refusal happens before the store: nothing is
		// remembered, so it is answered before the mismatch check.
		f.pop(req.IntentID)
		return nil, s.answer(req, "").err
	}
	if err := ctx.Err(); err != nil {
		return nil, &idempay.ChargeError{IntentID: req.IntentID, Key: req.Key, Outcome: idempay.OutcomeUnknown,
			Err: fmt.Errorf("idempay: not sent, intent not looked up: %w", err)}
	}
	in := f.remember(req)
	if in.fp != fakeFingerprint(req) || (req.Key != "" && req.Key != in.key) {
		return nil, &idempay.ChargeError{IntentID: req.IntentID, Key: in.key, Outcome: idempay.OutcomeUnknown,
			Err: idempay.ErrIntentMismatch}
	}
	s, scripted := f.pop(req.IntentID)
	if !scripted && in.settled != nil {
		return in.settled.replay()
	}
	if !scripted {
		s = step{kind: stepSucceed}
	}
	r := s.answer(req, in.key)
	if r.settles && in.settled == nil {
		in.settled = &result{charge: copyCharge(r.charge), err: r.chargeErr()}
	}
	if r.err != nil {
		return nil, r.err
	}
	return copyCharge(r.charge), nil
}

// remember returns the intent's record, making it on the first call.
func (f *FakeCharger) remember(req idempay.ChargeRequest) *fakeIntent {
	if f.intents == nil {
		f.intents = map[string]*fakeIntent{}
	}
	in, ok := f.intents[req.IntentID]
	if !ok {
		in = &fakeIntent{fp: fakeFingerprint(req), key: cmp.Or(req.Key, FakeKey(req.IntentID))}
		f.intents[req.IntentID] = in
	}
	return in
}

func (f *FakeCharger) peek(intentID string) (step, bool) {
	q := f.scripts[intentID]
	if len(q) == 0 {
		return step{}, false
	}
	return q[0], true
}

func (f *FakeCharger) pop(intentID string) (step, bool) {
	s, ok := f.peek(intentID)
	if ok {
		f.scripts[intentID] = f.scripts[intentID][1:]
	}
	return s, ok
}

// replay answers a settled intent the way the Client answers from its
// store: nothing sent, so Attempts is 0.
func (r *result) replay() (*idempay.Charge, error) {
	if r.err != nil {
		e := *r.err
		e.Attempts = 0
		return nil, &e
	}
	ch := copyCharge(r.charge)
	ch.Replayed, ch.ReplayedFrom, ch.Attempts = true, idempay.ReplayFromStore, 0
	return ch, nil
}

// Calls returns copies of every call answered so far, oldest first.
func (f *FakeCharger) Calls() []Call { return f.callsWhere(func(Call) bool { return true }) }

// CallsFor returns copies of the calls for one intent, oldest first.
func (f *FakeCharger) CallsFor(intentID string) []Call {
	return f.callsWhere(func(c Call) bool { return c.Request.IntentID == intentID })
}

// callsWhere copies the matching calls, so that a test changing what it
// got cannot change what the next assertion sees.
func (f *FakeCharger) callsWhere(match func(Call) bool) []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Call
	for _, c := range f.calls {
		if match(c) {
			c.Request.Metadata, c.Request.Extra = maps.Clone(c.Request.Metadata), maps.Clone(c.Request.Extra)
			c.Charge = copyCharge(c.Charge)
			out = append(out, c)
		}
	}
	return out
}

// FakeKey is the idempotency key FakeCharger uses for an intent whose
// first request carried no Key. It depends on the intent ID only, so a
// test can assert on it.
func FakeKey(intentID string) string { return "idk_fake_" + digest("key", intentID) }

// FakeChargeID is the charge ID of FakeCharger's synthetic successes for
// an intent. It depends on the intent ID only.
func FakeChargeID(intentID string) string { return "ch_fake_" + digest("charge", intentID) }

func digest(purpose, s string) string {
	sum := sha256.Sum256([]byte(purpose + "\x00" + s))
	return hex.EncodeToString(sum[:12])
}

// fakeFingerprint says which requests are the same payment, by the rule
// the Client applies: every field but Key, the currency in any case.
// Encoding a struct (whose maps encoding/json sorts) makes equal
// requests encode alike.
func fakeFingerprint(r idempay.ChargeRequest) string {
	b, _ := json.Marshal(struct {
		Intent, Currency, Source, Customer, Desc, Return string
		Amount                                           int64
		Meta, Extra                                      map[string]string
	}{r.IntentID, strings.ToUpper(r.Currency), r.Source.Reveal(), r.Customer, r.Description, r.ReturnURL,
		r.Amount, r.Metadata, r.Extra}) // cannot fail: strings, an int and string maps
	sum := sha256.Sum256(b) // hashed, as the Client does: the source is a secret
	return hex.EncodeToString(sum[:])
}

func copyCharge(ch *idempay.Charge) *idempay.Charge {
	if ch == nil {
		return nil
	}
	c := *ch
	c.Raw = bytes.Clone(ch.Raw)
	return &c
}
