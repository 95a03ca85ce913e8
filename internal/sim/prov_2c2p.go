package sim

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/provider/twoc2p"
)

// twoC2P is idempaytest/twoc2ptest behind provider/twoc2p. Every accepted token
// request is a payment waiting for the customer: money moves only when the
// simulated customer pays on the payment page (Pay), so every charge the
// client reports is pending until then.
type twoC2P struct {
	srv         *twoc2ptest.Server
	creds       string
	merchantKey *rsa.PrivateKey
}

const merchant2c2p = "JT01"

func new2C2P(d dice, clock *simClock) *twoC2P {
	creds := "m2c2p" + secretToken(d, "creds", 0)
	keys := joseKeys()
	return &twoC2P{creds: creds, merchantKey: keys.merchant, srv: twoc2ptest.NewUnstartedServer(twoc2ptest.WithMerchant(merchant2c2p, creds),
		twoc2ptest.WithSettings(fakes.Settings{Clock: clock.Now}), twoc2ptest.WithFaultRates(fakes.Rates{}, d.seed),
		twoc2ptest.WithGatewayKey(keys.gateway), twoc2ptest.WithMerchantKey(&keys.merchant.PublicKey))}
}

// simKeys are the maintenance key pairs every 2C2P world shares: made once
// per process, since two 2048-bit RSA pairs per seed were three quarters
// of the simulator's CPU. No story depends on the keys' bits.
type simKeys struct{ gateway, merchant *rsa.PrivateKey }

var joseKeys = sync.OnceValue(func() simKeys {
	gen := func() *rsa.PrivateKey {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err) // the system's randomness failed: nothing can run
		}
		return k
	}
	return simKeys{gateway: gen(), merchant: gen()}
})

func (p *twoC2P) name() string          { return "2c2p" }
func (p *twoC2P) handler() http.Handler { return p.srv }
func (p *twoC2P) credentials() string   { return p.creds }
func (p *twoC2P) secrets() []string     { return nil }

func (p *twoC2P) adapter(clock func() time.Time) idempay.Provider {
	return twoc2p.Provider{MerchantID: merchant2c2p, Now: clock,
		Maintenance: twoc2p.MaintenanceKeys{Merchant: p.merchantKey, Gateway: p.srv.GatewayKey()}}
}

// request has no Source: the customer pays on 2C2P's page. Other
// parameters are another amount.
func (p *twoC2P) request(o *order, v variant) idempay.ChargeRequest {
	return keyed(idempay.ChargeRequest{IntentID: o.id, Amount: o.amount, Currency: "THB", Description: "order " + o.id}, o, v)
}

// inspect reads the idempotencyID out of the signed payload without
// verifying it: the fake verifies.
func (p *twoC2P) inspect(r *http.Request, body []byte) reqInfo {
	// A maintenance request is sealed (JWE): its key cannot be read here.
	// Refunds, voids and settles carry it in the clear as well
	// (twoc2p.KeyHeader); an inquiry, which carries none, is a lookup.
	rq := reqInfo{charge: r.URL.Path == twoc2p.TokenPath, op: r.URL.Path == twoc2p.MaintenancePath}
	rq.opLookup = rq.op && r.Header.Get(twoc2p.KeyHeader) == ""
	var env struct {
		Payload string `json:"payload"`
	}
	if json.Unmarshal(body, &env) != nil {
		return rq
	}
	parts := strings.Split(env.Payload, ".")
	if len(parts) != 3 {
		return rq
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return rq
	}
	var claims struct {
		IdempotencyID string `json:"idempotencyID"`
		InvoiceNo     string `json:"invoiceNo"`
	}
	_ = json.Unmarshal(raw, &claims)
	rq.key, rq.invoice = claims.IdempotencyID, claims.InvoiceNo
	return rq
}

// maxAttempts2C2P bounds the attempts whose invoices the oracle reads: far
// more than a seed makes.
const maxAttempts2C2P = 12

// invoices are the invoiceNo of every attempt of o, first attempt first:
// each attempt is a transaction of its own at 2C2P.
func (p *twoC2P) invoices(o *order) []string {
	var out []string
	for n := 1; n <= maxAttempts2C2P; n++ {
		if inv, err := idempay.TwoC2PAttemptInvoiceNo(o.id, n, false); err == nil {
			out = append(out, inv)
		}
	}
	return out
}

func (p *twoC2P) inject(_ *order, rq reqInfo, f fakes.Fault) { p.srv.Fail(rq.invoice, f) }

func (p *twoC2P) synth(k synthKind, _ []byte) (int, []byte) {
	status := map[synthKind]int{synthConflict: http.StatusConflict, synthRateLimit: http.StatusTooManyRequests}[k]
	if status == 0 {
		status = http.StatusServiceUnavailable
	}
	return status, []byte(`{"respCode":"9999","respDesc":"try again"}`)
}

func (p *twoC2P) observe(*order, int, []byte) []byte { return nil }

func (p *twoC2P) charges(o *order) int {
	n := 0
	for _, inv := range p.invoices(o) {
		if t, ok := p.srv.Transaction(inv); ok && t.State == twoc2ptest.Paid {
			n++
		}
	}
	return n
}

func (p *twoC2P) chargedKeys(o *order) map[string]int {
	out := map[string]int{}
	for _, inv := range p.invoices(o) {
		if t, ok := p.srv.Transaction(inv); ok && t.State == twoc2ptest.Paid {
			out[t.IdempotencyID]++
		}
	}
	return out
}

func (p *twoC2P) truth(o *order) truth {
	var ts []truth
	for _, inv := range p.invoices(o) {
		ts = append(ts, p.invoiceTruth(inv))
	}
	return best(ts...)
}

func (p *twoC2P) invoiceTruth(inv string) truth {
	t, ok := p.srv.Transaction(inv)
	switch {
	case !ok:
		return truthNone
	case t.State == twoc2ptest.Paid:
		return truthCharged
	case t.State == twoc2ptest.Declined:
		return truthDeclined
	}
	return truthPending
}

// chargeTruth reads the transaction a charge ID stands for: 2C2P answers
// a payment token, a tranRef or the invoice, all of one transaction.
func (p *twoC2P) chargeTruth(o *order, id string) truth {
	for _, inv := range p.invoices(o) {
		if t, ok := p.srv.Transaction(inv); ok && (id == inv || id == t.PaymentToken || (id != "" && id == t.TranRef)) {
			return p.invoiceTruth(inv)
		}
	}
	return p.truth(o)
}

// complete plays the customer on the payment page of the transaction the
// shop showed (the latest open one, when it cannot tell).
func (p *twoC2P) complete(o *order, id string, succeed bool) {
	inv := ""
	for _, x := range p.invoices(o) {
		if t, ok := p.srv.Transaction(x); ok && (id == x || id == t.PaymentToken) {
			inv = x
		}
	}
	if inv == "" {
		return
	}
	if succeed {
		_ = p.srv.Pay(inv)
	} else {
		_ = p.srv.Decline(inv, "4005")
	}
}

func (p *twoC2P) ledger() *fakes.Ledger { return p.srv.Ledger() }
func (p *twoC2P) currency() string      { return "THB" }

// authExtra: 2C2P's charges are paid on its page; the world plays no
// authorisations there.
func (p *twoC2P) authExtra() map[string]string { return nil }
