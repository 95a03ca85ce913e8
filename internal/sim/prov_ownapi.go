package sim

import (
	"net/http"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/refserver"
)

// ownAPI is the reference own-API server (internal/refserver) behind
// idempay.OwnAPI, with lookups by order on, so that an intent whose key is
// past retention can be settled.
type ownAPI struct {
	srv      *refserver.Server
	creds    string
	declined objects // intents the server refused with a decline
}

func newOwnAPI(d dice, clock *simClock) *ownAPI {
	return &ownAPI{
		creds: "sk_own_" + secretToken(d, "creds", 0),
		srv: refserver.New(refserver.Config{Now: clock.Now,
			// A stored 5xx (Stripe's behaviour) or a released key (the
			// article's), drawn per seed: both exist in the wild.
			StoreServerErrors: d.chance(0.5, "own-store-5xx")}),
	}
}

func (p *ownAPI) name() string                  { return "ownapi" }
func (p *ownAPI) handler() http.Handler         { return p.srv }
func (p *ownAPI) credentials() string           { return p.creds }
func (p *ownAPI) secrets() []string             { return nil }
func (p *ownAPI) charges(o *order) int          { return p.srv.Ledger().Count(o.id) }
func (p *ownAPI) complete(*order, string, bool) {}

func (p *ownAPI) adapter(func() time.Time) idempay.Provider {
	return idempay.OwnAPI{LookupPath: refserver.DefaultPath, OpLookup: true}
}

func (p *ownAPI) request(o *order, v variant) idempay.ChargeRequest {
	src := "tok_visa_"
	if o.kindOf(v) == "decline" {
		src = refserver.DeclineTokenPrefix + "_"
	}
	req := idempay.ChargeRequest{IntentID: o.id, Amount: o.amount, Currency: "JPY", Source: idempay.Secret(src + o.token(v))}
	return keyed(req, o, v)
}

func (p *ownAPI) inspect(r *http.Request, _ []byte) reqInfo {
	post := r.Method == http.MethodPost
	return reqInfo{charge: post && r.URL.Path == refserver.DefaultPath, op: post && r.URL.Path != refserver.DefaultPath,
		key: r.Header.Get(refserver.DefaultKeyHeader)}
}

func (p *ownAPI) observe(o *order, status int, _ []byte) []byte {
	if status == http.StatusPaymentRequired {
		p.declined.add(o.id, "402")
	}
	return nil
}

func (p *ownAPI) inject(_ *order, rq reqInfo, f fakes.Fault) { p.srv.InjectKey(rq.key, f) }

func (p *ownAPI) synth(k synthKind, _ []byte) (int, []byte) {
	switch k {
	case synthConflict:
		return http.StatusConflict, jsonErr("conflict", "idempotency_key_in_use", "a request with this key is in progress")
	case synthRateLimit:
		return http.StatusTooManyRequests, jsonErr("rate_limit_error", "rate_limited", "too many requests")
	}
	return http.StatusServiceUnavailable, jsonErr("api_error", "service_unavailable", "try again later")
}

func (p *ownAPI) truth(o *order) truth {
	if p.charges(o) > 0 {
		return truthCharged
	}
	if len(p.declined.of(o.id)) > 0 {
		return truthDeclined
	}
	return truthNone
}

func (p *ownAPI) chargeTruth(o *order, id string) truth {
	for _, c := range p.srv.Ledger().Charges() {
		if c.ID == id && c.Intent == o.id {
			return truthCharged
		}
	}
	return truthNone
}

// keyed applies the variant's key choice (and other parameters) to req.
func keyed(req idempay.ChargeRequest, o *order, v variant) idempay.ChargeRequest {
	switch v {
	case canonical:
		req.Key = o.frontendKey
	case otherKey:
		if o.frontendKey == "" {
			req.Key = "fk-other-" + o.id
		}
	case otherParams:
		req.Key = o.frontendKey
		req.Amount += 500
	}
	return req
}

func (p *ownAPI) chargedKeys(o *order) map[string]int { return ledgerKeys(p.srv.Ledger(), o.id) }

func (p *ownAPI) ledger() *fakes.Ledger        { return p.srv.Ledger() }
func (p *ownAPI) currency() string             { return "JPY" }
func (p *ownAPI) authExtra() map[string]string { return map[string]string{"capture": "false"} }
