package sim

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/provider/stripe"
)

// stripeFake is idempaytest/stripetest behind provider/stripe. The fake keeps
// Stripe's key semantics (stored 5xx, 409 while in flight, keys forgotten
// after 24 h); what it leaves out of its PaymentIntents, the client_secret
// Stripe returns to a secret-key caller, the simulator adds on the way out,
// because that secret must not end up in the store either.
type stripeFake struct {
	srv   *stripetest.Server
	creds string
	d     dice
	pis   objects

	mu      sync.Mutex
	clients map[string]string // PaymentIntent ID -> the random part of its client secret
	order   []string          // the client secrets, in the order they were handed out
}

func newStripe(d dice, clock *simClock) *stripeFake {
	opts := []stripetest.Option{stripetest.WithSettings(fakes.Settings{Clock: clock.Now})}
	if d.chance(0.5, "stripe-should-retry") {
		opts = append(opts, stripetest.WithShouldRetry())
	}
	return &stripeFake{d: d, creds: "sk_test_" + secretToken(d, "creds", 0), clients: map[string]string{},
		srv: stripetest.NewUnstartedServer(opts...)}
}

func (p *stripeFake) name() string                              { return "stripe" }
func (p *stripeFake) handler() http.Handler                     { return p.srv }
func (p *stripeFake) credentials() string                       { return p.creds }
func (p *stripeFake) adapter(func() time.Time) idempay.Provider { return stripe.Provider{} }
func (p *stripeFake) charges(o *order) int                      { return p.srv.Ledger().Count(o.id) }

func (p *stripeFake) request(o *order, v variant) idempay.ChargeRequest {
	pm := "pm_card_"
	req := idempay.ChargeRequest{IntentID: o.id, Amount: o.amount, Currency: "USD"}
	switch o.kindOf(v) {
	case "decline":
		pm += "decline_"
	case "3ds":
		pm += "3ds_"
		req.ReturnURL = "https://shop.example/return"
	}
	req.Source = idempay.Secret(pm + o.token(v))
	return keyed(req, o, v)
}

func (p *stripeFake) inspect(r *http.Request, _ []byte) reqInfo {
	post := r.Method == http.MethodPost
	charge := post && r.URL.Path == "/v1/payment_intents"
	return reqInfo{charge: charge, op: post && !charge, key: r.Header.Get("Idempotency-Key")}
}

func (p *stripeFake) inject(_ *order, rq reqInfo, f fakes.Fault) { p.srv.FailKey(rq.key, f) }

func (p *stripeFake) synth(k synthKind, _ []byte) (int, []byte) {
	switch k {
	case synthConflict:
		return http.StatusConflict, jsonErr("idempotency_error", "idempotency_key_in_use", "another request with this key is in progress")
	case synthRateLimit:
		return http.StatusTooManyRequests, jsonErr("invalid_request_error", "rate_limit", "too many requests")
	}
	return http.StatusServiceUnavailable, jsonErr("api_error", "", "Stripe is temporarily unavailable.")
}

// observe records the PaymentIntents an answer carries and gives each the
// client_secret real Stripe would include.
func (p *stripeFake) observe(o *order, _ int, body []byte) []byte {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	changed := p.decorate(o, m)
	if e, ok := m["error"].(map[string]any); ok {
		if pi, ok := e["payment_intent"].(map[string]any); ok {
			changed = p.decorate(o, pi) || changed
		}
	}
	if data, ok := m["data"].([]any); ok {
		for _, x := range data {
			if pi, ok := x.(map[string]any); ok {
				changed = p.decorate(o, pi) || changed
			}
		}
	}
	if !changed {
		return nil
	}
	out, _ := json.Marshal(m)
	return out
}

func (p *stripeFake) decorate(o *order, pi map[string]any) bool {
	id, _ := pi["id"].(string)
	if pi["object"] != "payment_intent" || id == "" {
		return false
	}
	p.pis.add(o.id, id)
	pi["client_secret"] = p.clientSecret(id)
	return true
}

func (p *stripeFake) clientSecret(id string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.clients[id]; ok {
		return id + "_secret_" + s
	}
	s := secretToken(p.d, "client-secret"+id, len(p.clients))
	p.clients[id] = s
	p.order = append(p.order, s)
	return id + "_secret_" + s
}

func (p *stripeFake) secrets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.order...)
}

func (p *stripeFake) truth(o *order) truth {
	var ts []truth
	for _, id := range p.pis.of(o.id) {
		ts = append(ts, p.chargeTruth(o, id))
	}
	return best(ts...)
}

func (p *stripeFake) chargeTruth(o *order, id string) truth {
	pi, ok := p.srv.PaymentIntent(id)
	if !ok || pi.Metadata[fakes.IntentMetadataKey] != o.id {
		return truthNone
	}
	switch pi.Status {
	case "succeeded", "requires_capture":
		return truthCharged
	case "requires_action", "processing", "requires_confirmation":
		return truthPending
	case "requires_payment_method":
		if pi.LastPaymentError != nil {
			return truthDeclined
		}
		return truthPending
	case "canceled":
		return truthDeclined
	}
	return truthNone
}

func (p *stripeFake) complete(o *order, id string, succeed bool) { p.srv.Complete(id, succeed) }

func (p *stripeFake) chargedKeys(o *order) map[string]int { return ledgerKeys(p.srv.Ledger(), o.id) }

func (p *stripeFake) ledger() *fakes.Ledger { return p.srv.Ledger() }
func (p *stripeFake) currency() string      { return "USD" }
func (p *stripeFake) authExtra() map[string]string {
	return map[string]string{stripe.ExtraCaptureMethod: "manual"}
}
