package conformance_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/conformance"
	"github.com/idempay/idempay/internal/refserver"
)

func ownAPISubject(t *testing.T, p idempay.Provider) conformance.Subject {
	srv := httptest.NewServer(refserver.New(refserver.Config{}))
	t.Cleanup(srv.Close)
	charge := func(id string) idempay.ChargeRequest {
		return idempay.ChargeRequest{IntentID: id, Amount: 1500, Currency: "JPY", Source: "tokn_conformance"}
	}
	return conformance.Subject{Provider: p, BaseURL: srv.URL, Amount: 1500, Currency: "JPY", Charge: charge,
		Manual: func(id string) idempay.ChargeRequest {
			r := charge(id)
			r.Extra = map[string]string{"capture": "false"}
			return r
		}}
}

// The own API passes, with its lookups and without.
func TestOwnAPI(t *testing.T) {
	conformance.TestProvider(t, ownAPISubject(t, idempay.OwnAPI{OpLookup: true, LookupPath: refserver.DefaultPath}))
	conformance.TestProvider(t, ownAPISubject(t, idempay.OwnAPI{}))
}

// chargeOnly has no optional capability: only the refusal rules apply.
type chargeOnly struct{ o idempay.OwnAPI }

func (c chargeOnly) Name() string                           { return "ownapi" }
func (c chargeOnly) Validate(r idempay.ChargeRequest) error { return c.o.Validate(r) }
func (c chargeOnly) ReadCharge(r *http.Response, b []byte) idempay.Verdict {
	return c.o.ReadCharge(r, b)
}
func (c chargeOnly) NewChargeRequest(ctx context.Context, t idempay.Target, r idempay.ChargeRequest, k string) (*http.Request, error) {
	return c.o.NewChargeRequest(ctx, t, r, k)
}

func TestChargeOnlyProvider(t *testing.T) {
	conformance.TestProvider(t, ownAPISubject(t, chargeOnly{}))
}

// Broken adapters fail, each for the rule it breaks.
func TestBrokenAdaptersFail(t *testing.T) {
	for name, tc := range map[string]struct {
		p    idempay.Provider
		rule string
	}{
		"a 5xx read as a refusal":             {declinesOn5xx{idempay.OwnAPI{}}, "refund hostile answers"},
		"a lookup without proof: not found":   {notFoundOn5xx{idempay.OwnAPI{OpLookup: true}}, "refund lookup without proof"},
		"a refund without its key":            {keyless{idempay.OwnAPI{}}, "refund request"},
		"a guard that cannot look refunds up": {guardNoRefundLookup{}, "refund lookup for a guard"},
	} {
		t.Run(name, func(t *testing.T) {
			err := conformance.Check(ownAPISubject(t, tc.p))
			if err == nil || !strings.Contains(err.Error(), tc.rule+":") {
				t.Fatalf("want a failure of %q, got %v", tc.rule, err)
			}
		})
	}
}

type declinesOn5xx struct{ idempay.OwnAPI }

func (p declinesOn5xx) ReadOp(t idempay.OpType, resp *http.Response, body []byte) idempay.Verdict {
	if t == idempay.OpRefund && resp.StatusCode >= 500 {
		return idempay.Verdict{Kind: idempay.KindDeclined}
	}
	return p.OwnAPI.ReadOp(t, resp, body)
}

type notFoundOn5xx struct{ idempay.OwnAPI }

func (p notFoundOn5xx) FindOp(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, rec idempay.Record) (idempay.Verdict, error) {
	v, err := p.OwnAPI.FindOp(ctx, hc, t, op, rec)
	if err == nil && op.Type == idempay.OpRefund && v.Kind == idempay.KindServerError {
		v.Kind = idempay.KindNotFound
	}
	return v, err
}

type keyless struct{ idempay.OwnAPI }

func (p keyless) NewOpRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	if op.Type == idempay.OpRefund {
		key = "not-the-key"
	}
	return p.OwnAPI.NewOpRequest(ctx, t, op, key)
}

// guardNoRefundLookup does not de-duplicate and refunds, but cannot look
// refunds up (it hides OwnAPI's lookups), and makes no other operation.
type guardNoRefundLookup struct{ chargeOnly }

func (guardNoRefundLookup) FindCharge(context.Context, *http.Client, idempay.Target, idempay.Record) (idempay.Verdict, error) {
	return idempay.Verdict{Kind: idempay.KindUnknown}, nil
}
func (guardNoRefundLookup) LookupBeforeResend() bool { return true }
func (guardNoRefundLookup) Operates(t idempay.OpType) (makes, finds bool) {
	return t == idempay.OpRefund, false
}
func (g guardNoRefundLookup) ValidateOp(op idempay.OpRequest) error { return g.o.ValidateOp(op) }
func (g guardNoRefundLookup) ReadOp(t idempay.OpType, r *http.Response, b []byte) idempay.Verdict {
	return g.o.ReadOp(t, r, b)
}
func (g guardNoRefundLookup) NewOpRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	return g.o.NewOpRequest(ctx, t, op, key)
}
func (guardNoRefundLookup) FindOp(context.Context, *http.Client, idempay.Target, idempay.OpRequest, idempay.Record) (idempay.Verdict, error) {
	return idempay.Verdict{}, idempay.ErrNoLookup
}

// CheckConfig fails an adapter that accepts what it must refuse, or
// refuses what works, naming the case.
func TestCheckConfigFailsALaxAdapter(t *testing.T) {
	err := conformance.CheckConfig(idempay.OwnAPI{}, []conformance.ConfigCase{
		{Name: "endpoint in the base URL", Path: "/payments/charge", Credentials: "sk", Field: "BaseURL"},
		{Name: "a working one", Credentials: "sk"},
		{Name: "a bad URL", Path: "\x7f", Credentials: "sk"},
	})
	if err == nil {
		t.Fatal("a lax adapter passed")
	}
	msg := err.Error()
	for _, want := range []string{"endpoint in the base URL: accepted; must be refused naming BaseURL",
		"a bad URL: refused a working configuration"} {
		if !strings.Contains(msg, want) {
			t.Errorf("failures %q do not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "a working one") {
		t.Errorf("a working configuration failed: %q", msg)
	}
}
