package sim

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
)

// twoC2P is idempaytest/twoc2ptest behind idempay.TwoC2P. Every accepted token
// request is a payment waiting for the customer: money moves only when the
// simulated customer pays on the payment page (Pay), so every charge the
// client reports is pending until then.
type twoC2P struct {
	srv   *twoc2ptest.Server
	creds string
}

const merchant2c2p = "JT01"

func new2C2P(d dice, clock *simClock) *twoC2P {
	creds := "m2c2p" + secretToken(d, "creds", 0)
	return &twoC2P{creds: creds, srv: twoc2ptest.NewUnstartedServer(twoc2ptest.WithMerchant(merchant2c2p, creds),
		twoc2ptest.WithSettings(fakes.Settings{Clock: clock.Now}), twoc2ptest.WithFaultRates(fakes.Rates{}, d.seed))}
}

func (p *twoC2P) name() string          { return "2c2p" }
func (p *twoC2P) handler() http.Handler { return p.srv }
func (p *twoC2P) credentials() string   { return p.creds }
func (p *twoC2P) secrets() []string     { return nil }

func (p *twoC2P) adapter(clock func() time.Time) idempay.Provider {
	return idempay.TwoC2P{MerchantID: merchant2c2p, Now: clock}
}

// request has no Source: the customer pays on 2C2P's page. Other
// parameters are another amount.
func (p *twoC2P) request(o *order, v variant) idempay.ChargeRequest {
	return keyed(idempay.ChargeRequest{IntentID: o.id, Amount: o.amount, Currency: "THB", Description: "order " + o.id}, o, v)
}

// inspect reads the idempotencyID out of the signed payload without
// verifying it: the fake verifies.
func (p *twoC2P) inspect(r *http.Request, body []byte) reqInfo {
	rq := reqInfo{charge: r.URL.Path == twoc2ptest.TokenPath}
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
	}
	_ = json.Unmarshal(raw, &claims)
	rq.key = claims.IdempotencyID
	return rq
}

func (p *twoC2P) invoice(o *order) string {
	inv, _ := idempay.TwoC2PInvoiceNo(o.id, false)
	return inv
}

func (p *twoC2P) inject(o *order, _ reqInfo, f fakes.Fault) { p.srv.Fail(p.invoice(o), f) }

func (p *twoC2P) synth(k synthKind, _ []byte) (int, []byte) {
	status := map[synthKind]int{synthConflict: http.StatusConflict, synthRateLimit: http.StatusTooManyRequests}[k]
	if status == 0 {
		status = http.StatusServiceUnavailable
	}
	return status, []byte(`{"respCode":"9999","respDesc":"try again"}`)
}

func (p *twoC2P) observe(*order, int, []byte) []byte { return nil }

func (p *twoC2P) charges(o *order) int {
	if t, ok := p.srv.Transaction(p.invoice(o)); ok && t.State == twoc2ptest.Paid {
		return 1
	}
	return 0
}

func (p *twoC2P) truth(o *order) truth {
	t, ok := p.srv.Transaction(p.invoice(o))
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

// chargeTruth: the charge IDs 2C2P answers (a payment token, a tranRef,
// the invoice) all stand for the invoice's one transaction.
func (p *twoC2P) chargeTruth(o *order, _ string) truth { return p.truth(o) }

// complete plays the customer on the payment page.
func (p *twoC2P) complete(o *order, _ string, succeed bool) {
	if succeed {
		_ = p.srv.Pay(p.invoice(o))
	} else {
		_ = p.srv.Decline(p.invoice(o), "4005")
	}
}
