package idempaytest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
)

// FakeCharger is a scripted idempay.Charger for tests of code that takes a
// Charger and should not talk to any server. It is a real idempay.Client,
// with an in-memory store, over an in-process provider that answers each
// request from the intent's script: every rule a caller can observe (the
// four outcomes, attempts and their keys, answers from the store,
// idempay.ErrAttemptOpen, idempay.ErrStoppedWaiting, validation) is the
// Client's own, because it is the Client that answers.
//
// Nothing goes over the network. The provider speaks the own-API contract
// (idempay.OwnAPI) and the client sends each request once, with no retry,
// so one scripted step answers one call that sends: a call that begins an
// attempt, resumes an unknown one, or asks about a pending one. Calls the
// Client answers without sending (a succeeded intent, the same declined
// request again, other parameters while an attempt is open) spend no step.
// Once the script is used up, a call that sends succeeds, and a pending
// charge stays pending.
//
// Keys are made in order ("idk_fake_1", "idk_fake_2", ...) unless the
// request sets Key or BaseKey; a success's charge ID is FakeChargeID.
//
// The zero value is ready for use and is safe for concurrent use; it must
// not be copied after first use. Its client is never closed: a test that
// leaves a WaitFor flight held should close the release channel.
type FakeCharger struct {
	once   sync.Once
	client *idempay.Client
	keys   atomic.Int64

	mu      sync.Mutex
	scripts map[string][]step
	pending map[string]wireCharge // the pending charge of an intent, as the provider keeps it
	byKey   map[string]wireCharge // charges the provider made under a key (a Post fault's)
	sent    map[string][]Sent
	calls   []Call
}

var _ idempay.Charger = (*FakeCharger)(nil)

// Call is one call the FakeCharger answered, for assertions.
type Call struct {
	Request idempay.ChargeRequest // as passed in (maps copied)
	Charge  *idempay.Charge       // the charge returned: nil unless succeeded or pending
	Err     error                 // the error returned, if any
}

// Sent is one request the FakeCharger's provider got: a charge, or a
// lookup of a pending one, under the attempt's idempotency key.
type Sent struct {
	Key    string // the idempotency key
	Lookup bool   // a lookup (GET) rather than a charge (POST)
}

// Sent returns the requests the provider got for an intent, oldest first:
// what the client put on the wire, where Calls is what the caller asked.
func (f *FakeCharger) Sent(intentID string) []Sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent[intentID])
}

// fakeBaseURL is where the fake's client believes it sends.
const fakeBaseURL = "https://charger.idempaytest.invalid"

// start builds the fake's client on first use.
func (f *FakeCharger) start() *idempay.Client {
	f.once.Do(func() {
		retry := FastRetry()
		retry.MaxAttempts = 1 // one request per call: one step per call
		c, err := idempay.New(idempay.Config{
			BaseURL:    fakeBaseURL,
			Provider:   fakeProvider{OwnAPI: idempay.OwnAPI{LookupPath: ChargePath, Encode: encodeFakeBody}, f: f},
			Store:      memstore.New(),
			HTTPClient: &http.Client{Transport: fakeWire{f}},
			Retry:      retry,
			NewKey:     func() string { return fmt.Sprintf("idk_fake_%d", f.keys.Add(1)) },
		})
		if err != nil { // unreachable: the configuration is fixed
			panic("idempaytest: FakeCharger: " + err.Error())
		}
		f.client = c
	})
	return f.client
}

// Charge answers req as the Client does, the provider answering from the
// intent's script.
func (f *FakeCharger) Charge(ctx context.Context, req idempay.ChargeRequest) (*idempay.Charge, error) {
	ch, err := f.start().Charge(ctx, req)
	req.Metadata, req.Extra = maps.Clone(req.Metadata), maps.Clone(req.Extra)
	f.mu.Lock()
	f.calls = append(f.calls, Call{Request: req, Charge: copyCharge(ch), Err: err})
	f.mu.Unlock()
	return ch, err
}

// Record returns the client's record of an intent (Client.Record): an
// error matching idempay.ErrNotFound for an intent never charged.
func (f *FakeCharger) Record(ctx context.Context, intentID string) (idempay.Record, error) {
	return f.start().Record(ctx, intentID)
}

// Unresolved yields every intent whose current attempt is open or
// pending, as Client.Unresolved does.
func (f *FakeCharger) Unresolved(ctx context.Context) iter.Seq2[idempay.Record, error] {
	return f.start().Unresolved(ctx)
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

// FakeChargeID is the charge ID of FakeCharger's successes and pending
// charges for an intent, unless the script names another. It depends on
// the intent ID only: an intent succeeds at most once.
func FakeChargeID(intentID string) string {
	sum := sha256.Sum256([]byte("charge\x00" + intentID))
	return "ch_fake_" + hex.EncodeToString(sum[:12])
}

func copyCharge(ch *idempay.Charge) *idempay.Charge {
	if ch == nil {
		return nil
	}
	c := *ch
	c.Raw = bytes.Clone(ch.Raw)
	return &c
}
