package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
)

// truth is what a provider shows about an intent: the ground the oracle
// judges outcomes on.
type truth int

const (
	truthNone     truth = iota // no charge, or none the provider can show
	truthPending               // accepted, money not moved (3-D Secure, a payment page)
	truthCharged               // money moved
	truthDeclined              // definitely refused
)

func (t truth) String() string { return [...]string{"none", "pending", "charged", "declined"}[t] }

// reqInfo is what the transport reads from a request before it sends it.
type reqInfo struct {
	charge   bool   // a charge attempt
	op       bool   // a refund, capture or cancel attempt; neither: a lookup
	opLookup bool   // on an operation's path, but only reading (2C2P's inquiry): no lease is asked of it
	key      string // the idempotency key a charge carries
	invoice  string // 2C2P: the invoiceNo a charge carries
}

// synthKind is an answer the transport gives in the provider's place,
// before the provider sees the request.
type synthKind int

const (
	synthConflict    synthKind = iota + 1 // 409: the key is in flight
	synthRateLimit                        // 429
	synthUnavailable                      // 503, fresh
	synthEcho                             // 502 from a proxy whose page echoes the request
)

// provider is the simulator's view of one fake provider: its handler, the
// adapter that speaks to it, and the ground truth of its ledger.
type provider interface {
	name() string
	handler() http.Handler
	adapter(clock func() time.Time) idempay.Provider
	credentials() string
	request(o *order, v variant) idempay.ChargeRequest
	inspect(r *http.Request, body []byte) reqInfo
	// observe learns the provider's objects from an answer it gave (lost
	// or not) and may rewrite the body the client gets, as the real
	// provider's answer would read.
	observe(o *order, status int, body []byte) []byte
	// inject scripts a fault the fake itself must play (mid, internal).
	inject(o *order, rq reqInfo, f fakes.Fault)
	synth(k synthKind, body []byte) (int, []byte)
	charges(o *order) int
	// chargedKeys counts the charges of o by the key they were made with.
	chargedKeys(o *order) map[string]int
	truth(o *order) truth
	chargeTruth(o *order, chargeID string) truth
	complete(o *order, chargeID string, succeed bool)
	secrets() []string // secrets the provider handed out (client secrets)
	// ledger is the fake's books of charges and operations.
	ledger() *fakes.Ledger
	// currency is the currency of its charges; authExtra the Extra that
	// makes a charge an authorisation (nil: the world plays none).
	currency() string
	authExtra() map[string]string
}

// objects remembers, per intent, the IDs of the provider objects (payment
// intents, charges) its answers carried.
type objects struct {
	mu  sync.Mutex
	ids map[string][]string
}

func (ob *objects) add(intent, id string) {
	if id == "" {
		return
	}
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.ids == nil {
		ob.ids = map[string][]string{}
	}
	for _, have := range ob.ids[intent] {
		if have == id {
			return
		}
	}
	ob.ids[intent] = append(ob.ids[intent], id)
}

func (ob *objects) of(intent string) []string {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return append([]string(nil), ob.ids[intent]...)
}

// best is the strongest truth among several objects of one intent.
func best(ts ...truth) truth {
	out := truthNone
	for _, t := range ts {
		if t == truthCharged || (t == truthPending && out != truthCharged) ||
			(t == truthDeclined && out == truthNone) {
			out = t
		}
	}
	return out
}

// jsonErr builds {"error": {...}} bodies, the shape the own API and Stripe share.
func jsonErr(typ, code, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"type": typ, "code": code, "message": msg}})
	return b
}

// echoPage is a proxy's error page that quotes the request it failed to
// pass on, padded so that the first 200 bytes of the page (what the
// adapters keep of a body they cannot read) end cut characters into the
// secret: providers and proxies do echo what they refuse.
func echoPage(body []byte, secret string, cut int) []byte {
	const head, mid = "<html><body>502 Bad Gateway: upstream closed the connection.", " request was: "
	pad := 0
	if i := strings.Index(string(body), secret); i >= 0 {
		pad = max(200-len(head)-len(mid)-i-cut, 0)
	}
	return []byte(head + strings.Repeat(" ", pad) + mid + string(body) + "</body></html>")
}

// ledgerKeys counts a fake ledger's charges of intent by their key: those
// that moved money or hold it. An authorisation whose cancel succeeded
// moved none (the hold was released): a caller told "failed" for it was
// told the truth (seed 301227). A cancel that may still be pending leaves
// the authorisation counted.
func ledgerKeys(l *fakes.Ledger, intent string) map[string]int {
	released := map[[2]string]bool{}
	for _, op := range l.Ops() {
		if op.Type == fakes.OpCancel && op.Status == fakes.OpSucceeded && op.Intent == intent {
			released[[2]string{op.Merchant, op.ChargeID}] = true
		}
	}
	out := map[string]int{}
	for _, c := range l.Charges() {
		if c.Intent == intent && !(c.Authorized && released[[2]string{c.Merchant, c.ID}]) {
			out[c.Key]++
		}
	}
	return out
}
