package sim

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/omisetest"
	"github.com/idempay/idempay/provider/omise"
)

// omiseFake is idempaytest/omisetest behind provider/omise. Whether the fake
// honours Idempotency-Key (Omise documents no de-duplication) is drawn per
// seed; the adapter must be safe either way, by its lookup before resend
// and the single-use card token.
type omiseFake struct {
	srv     *omisetest.Server
	creds   string
	charged objects
}

func newOmise(d dice, clock *simClock) *omiseFake {
	return &omiseFake{creds: "skey_test_" + secretToken(d, "creds", 0),
		srv: newOmiseServer(clock.Now, d.chance(0.5, "omise-honour-keys"))}
}

func (p *omiseFake) name() string          { return "omise" }
func (p *omiseFake) handler() http.Handler { return p.srv }
func (p *omiseFake) credentials() string   { return p.creds }
func (p *omiseFake) adapter(func() time.Time) idempay.Provider {
	// The fake writes a refund and its list page in one step: a recheck a
	// millisecond later (not the default 2 s of real time) keeps the
	// adapter's two reads without slowing the seeds.
	return omise.Provider{RefundRecheck: time.Millisecond}
}
func (p *omiseFake) charges(o *order) int { return p.srv.Ledger().Count(o.id) }
func (p *omiseFake) secrets() []string    { return nil }

func (p *omiseFake) request(o *order, v variant) idempay.ChargeRequest {
	tok := "tokn_test_"
	req := idempay.ChargeRequest{IntentID: o.id, Amount: o.amount, Currency: "THB"}
	switch o.kindOf(v) {
	case "decline":
		tok += "decline_"
	case "3ds":
		tok += "3ds_"
		req.ReturnURL = "https://shop.example/return"
	}
	req.Source = idempay.Secret(tok + o.token(v))
	return keyed(req, o, v)
}

func (p *omiseFake) inspect(r *http.Request, _ []byte) reqInfo {
	post := r.Method == http.MethodPost
	charge := post && r.URL.Path == "/charges"
	return reqInfo{charge: charge, op: post && !charge, key: r.Header.Get("Idempotency-Key")}
}

func (p *omiseFake) inject(_ *order, rq reqInfo, f fakes.Fault) { p.srv.FailKey(rq.key, f) }

func (p *omiseFake) synth(k synthKind, _ []byte) (int, []byte) {
	code := map[synthKind]string{synthConflict: "conflict", synthRateLimit: "too_many_requests"}[k]
	status := map[synthKind]int{synthConflict: http.StatusConflict, synthRateLimit: http.StatusTooManyRequests}[k]
	if code == "" {
		code, status = "service_unavailable", http.StatusServiceUnavailable
	}
	b, _ := json.Marshal(map[string]string{"object": "error", "code": code, "message": code})
	return status, b
}

func (p *omiseFake) observe(o *order, _ int, body []byte) []byte {
	var c struct {
		Object string `json:"object"`
		ID     string `json:"id"`
		Data   []struct {
			ID       string            `json:"id"`
			Metadata map[string]string `json:"metadata"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &c) != nil {
		return nil
	}
	if c.Object == "charge" {
		p.charged.add(o.id, c.ID)
	}
	for _, x := range c.Data {
		if x.Metadata[fakes.IntentMetadataKey] == o.id {
			p.charged.add(o.id, x.ID)
		}
	}
	return nil
}

func (p *omiseFake) truth(o *order) truth {
	var ts []truth
	for _, id := range p.charged.of(o.id) {
		ts = append(ts, p.chargeTruth(o, id))
	}
	return best(ts...)
}

func (p *omiseFake) chargeTruth(o *order, id string) truth {
	c, ok := p.srv.Charge(id)
	if !ok || c.Metadata[fakes.IntentMetadataKey] != o.id {
		return truthNone
	}
	switch {
	case c.Reversed:
		return truthDeclined // an authorisation released: no money moved, and none will
	case c.Status == "successful", c.Status == "pending" && c.Authorized:
		return truthCharged
	case c.Status == "pending":
		return truthPending
	case c.Status == "failed":
		return truthDeclined
	}
	return truthNone
}

func (p *omiseFake) complete(o *order, id string, succeed bool) { p.srv.Complete(id, succeed) }

// newOmiseServer is the sim's fake Omise on clock, de-duplicating by key
// when honour says so.
func newOmiseServer(now func() time.Time, honour bool) *omisetest.Server {
	opts := []omisetest.Option{omisetest.WithSettings(fakes.Settings{Clock: now})}
	if honour {
		opts = append(opts, omisetest.WithIdempotencyKeys())
	}
	return omisetest.NewUnstartedServer(opts...)
}

func (p *omiseFake) chargedKeys(o *order) map[string]int { return ledgerKeys(p.srv.Ledger(), o.id) }

func (p *omiseFake) ledger() *fakes.Ledger { return p.srv.Ledger() }
func (p *omiseFake) currency() string      { return "THB" }
func (p *omiseFake) authExtra() map[string]string {
	return map[string]string{omise.ExtraCapture: "false"}
}
