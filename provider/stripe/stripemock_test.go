package stripe_test

import (
	"bytes"
	"context"
	"fmt"
	"go/build"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stripeMockVersion is the stripe-mock release .ci/run installs. stripe-mock
// validates requests against Stripe's OpenAPI spec (it keeps no state).
const stripeMockVersion = "v0.203.0"

// TestStripeMockConformance sends every request shape the adapter builds to
// stripe-mock, which refuses any parameter Stripe's spec does not allow:
// all must be accepted.
func TestStripeMockConformance(t *testing.T) {
	base := startStripeMock(t)
	tg := idempay.Target{BaseURL: base, Credentials: "sk_test_123"}
	hc := &http.Client{Timeout: 10 * time.Second}

	minimal := idempay.ChargeRequest{IntentID: "order-1", Amount: 1500, Currency: "JPY", Source: "pm_card_visa"}
	with := func(mod func(*idempay.ChargeRequest)) idempay.ChargeRequest {
		r := minimal
		mod(&r)
		return r
	}
	shapes := map[string]idempay.ChargeRequest{
		"minimal": minimal,
		"metadata": with(func(r *idempay.ChargeRequest) {
			r.Metadata = map[string]string{"shop": "tokyo", "cart": "c-42", "note": strings.Repeat("x", 500)}
		}),
		"customer, description, return_url, capture_method": with(func(r *idempay.ChargeRequest) {
			r.Customer, r.Description, r.ReturnURL = "cus_123", "Order 1", "https://shop.example/return"
			r.Extra = map[string]string{stripe.ExtraCaptureMethod: "manual"}
		}),
		"caller key":                     with(func(r *idempay.ChargeRequest) { r.Key = "frontend-key-0123456789" }),
		"unconfirmed, no payment method": with(func(r *idempay.ChargeRequest) { r.Source = "" }),
		"off-session saved card": with(func(r *idempay.ChargeRequest) {
			r.Customer = "cus_123"
			r.Extra = map[string]string{stripe.ExtraOffSession: "true", stripe.ExtraSetupFutureUsage: "off_session",
				stripe.ExtraStatementDescriptorSuffix: "ORDER1", stripe.ExtraReceiptEmail: "buyer@example.com"}
		}),
		"explicit payment method types": with(func(r *idempay.ChargeRequest) {
			r.Extra = map[string]string{"payment_method_types[0]": "card", stripe.ExtraCaptureMethod: "automatic_async"}
		}),
		"two-decimal USD":   with(func(r *idempay.ChargeRequest) { r.Currency, r.Amount = "usd", 1999 }),
		"three-decimal KWD": with(func(r *idempay.ChargeRequest) { r.Currency, r.Amount = "KWD", 5120 }),
		"ISK rescaled":      with(func(r *idempay.ChargeRequest) { r.Currency, r.Amount = "ISK", 1500 }),
		"largest amount":    with(func(r *idempay.ChargeRequest) { r.Amount = stripe.MaxAmount }),
	}
	for _, version := range []string{"", "2024-06-20"} {
		p := stripe.Provider{APIVersion: version}
		for name, req := range shapes {
			t.Run(fmt.Sprintf("%s/version=%q", name, version), func(t *testing.T) {
				require.NoError(t, req.Validate())
				require.NoError(t, p.Validate(req))
				key := req.Key
				if key == "" {
					key = "5f0e8e2c-6c1b-4a6e-9d0f-3b1c2d3e4f50"
				}
				r, err := p.NewChargeRequest(context.Background(), tg, req, key)
				require.NoError(t, err)
				status, body := send(t, hc, r)
				require.Truef(t, status/100 == 2, "stripe-mock refused the %s shape: %d %s", name, status, body)
				v := p.ReadCharge(&http.Response{StatusCode: status, Header: http.Header{}}, body)
				assert.Contains(t, []idempay.Kind{idempay.KindSucceeded, idempay.KindPending, idempay.KindDeclined}, v.Kind,
					"the answer parses as a PaymentIntent")
			})
		}
	}

	t.Run("lookups", func(t *testing.T) {
		p := stripe.Provider{APIVersion: "2024-06-20"}
		// stripe-mock answers fixtures not tagged with the intent: each
		// request was accepted (else the error would be Stripe's), and
		// nothing settles the intent.
		_, err := p.FindCharge(context.Background(), hc, tg, idempay.Record{Namespace: ns, ID: "order-1", ProviderRef: "pi_123"})
		assert.ErrorIs(t, err, stripe.ErrForeignIntent, "retrieve by ID accepted, fixture not ours")
		_, err = p.FindCharge(context.Background(), hc, tg, idempay.Record{Namespace: ns, ID: `o'1\x`})
		assert.ErrorIs(t, err, stripe.ErrNotIndexed, "search accepted, fixture not ours")
	})

	// Refunds, captures and cancels, with every parameter the adapter
	// sends: stripe-mock accepts each, and its fixture answers read as the
	// operation's object (stripe-mock's PaymentIntent fixture is neither
	// captured nor cancelled, whatever was asked: unknown).
	t.Run("operations", func(t *testing.T) {
		p := stripe.Provider{APIVersion: "2024-06-20"}
		tg := tg
		tg.Namespace = ns
		op := func(typ idempay.OpType, mod func(*idempay.OpRequest)) idempay.OpRequest {
			o := idempay.OpRequest{Type: typ, ID: "op-1", IntentID: "order-1", ChargeRef: "pi_123", Amount: 1500, Currency: "JPY"}
			mod(&o)
			return o
		}
		for name, tc := range map[string]struct {
			op   idempay.OpRequest
			kind idempay.Kind
		}{
			"refund": {op(idempay.OpRefund, func(o *idempay.OpRequest) {
				o.Reason, o.Metadata = stripe.ReasonRequestedByCustomer, map[string]string{"ticket": "T-1"}
			}), idempay.KindSucceeded},
			"refund of ISK":          {op(idempay.OpRefund, func(o *idempay.OpRequest) { o.Currency = "ISK" }), idempay.KindSucceeded},
			"partial capture":        {op(idempay.OpCapture, func(o *idempay.OpRequest) { o.Metadata = map[string]string{"shipment": "S-1"} }), idempay.KindUnknown},
			"cancel":                 {op(idempay.OpCancel, func(o *idempay.OpRequest) { o.Reason = stripe.ReasonAbandoned }), idempay.KindUnknown},
			"cancel without reasons": {op(idempay.OpCancel, func(*idempay.OpRequest) {}), idempay.KindUnknown},
		} {
			t.Run(name, func(t *testing.T) {
				key := map[idempay.OpType]string{idempay.OpRefund: "5f0e8e2c-6c1b-4a6e-9d0f-3b1c2d3e4f51",
					idempay.OpCapture: "5f0e8e2c-6c1b-4a6e-9d0f-3b1c2d3e4f52", idempay.OpCancel: "5f0e8e2c-6c1b-4a6e-9d0f-3b1c2d3e4f53"}[tc.op.Type]
				require.NoError(t, p.ValidateOp(tc.op))
				r, err := p.NewOpRequest(context.Background(), tg, tc.op, key)
				require.NoError(t, err)
				status, body := send(t, hc, r)
				require.Truef(t, status/100 == 2, "stripe-mock refused the %s shape: %d %s", name, status, body)
				assert.Equal(t, tc.kind, p.ReadOp(tc.op.Type, &http.Response{StatusCode: status, Header: http.Header{}}, body).Kind)
			})
		}
		rec := idempay.Record{Namespace: ns + "/refund", ID: "op-1", Attempt: 1, Key: "k"}
		v, err := p.FindOp(context.Background(), hc, tg, op(idempay.OpRefund, func(*idempay.OpRequest) {}), rec)
		assert.NoError(t, err, "list accepted")
		assert.Equal(t, idempay.KindNotFound, v.Kind, "the fixture's refund is not ours")
		rec.ProviderRef = "re_123"
		_, err = p.FindOp(context.Background(), hc, tg, op(idempay.OpRefund, func(*idempay.OpRequest) {}), rec)
		assert.ErrorIs(t, err, stripe.ErrForeignRefund, "retrieve accepted, fixture not ours")
		_, err = p.FindOp(context.Background(), hc, tg, op(idempay.OpCapture, func(*idempay.OpRequest) {}), rec)
		assert.ErrorIs(t, err, stripe.ErrForeignIntent, "retrieve accepted, fixture not ours")
	})

	t.Run("the validator refuses what Stripe refuses", func(t *testing.T) {
		r, _ := http.NewRequest(http.MethodPost, base.JoinPath("/v1/payment_intents").String(),
			strings.NewReader(url.Values{"amount": {"1500"}, "currency": {"jpy"}, "capture_method": {"later"}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Authorization", "Bearer sk_test_123")
		status, _ := send(t, hc, r)
		assert.Equal(t, http.StatusBadRequest, status)
		// What ValidateRefund and ValidateCancel refuse before anything is
		// stored, Stripe's spec refuses too.
		for path, form := range map[string]url.Values{
			"/v1/refunds":                        {"payment_intent": {"pi_123"}, "reason": {"changed_mind"}},
			"/v1/payment_intents/pi_123/cancel":  {"cancellation_reason": {"changed_mind"}},
			"/v1/payment_intents/pi_123/cancel#": {"metadata[a]": {"b"}},
		} {
			path, _, _ = strings.Cut(path, "#")
			r, _ := http.NewRequest(http.MethodPost, base.JoinPath(path).String(), strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Header.Set("Authorization", "Bearer sk_test_123")
			status, body := send(t, hc, r)
			assert.Equal(t, http.StatusBadRequest, status, "%s %v: %s", path, form, body)
		}
	})
}

func send(t *testing.T, hc *http.Client, r *http.Request) (int, []byte) {
	t.Helper()
	resp, err := hc.Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

// startStripeMock runs stripe-mock on two free loopback ports (binding
// both addresses explicitly: -http-port alone listens on every
// interface), waits until it answers, and stops it when the test ends.
func startStripeMock(t *testing.T) *url.URL {
	t.Helper()
	bin := findStripeMock()
	if bin == "" {
		msg := "stripe-mock not found in PATH, $GOBIN or $GOPATH/bin; install it with: go install github.com/stripe/stripe-mock@" + stripeMockVersion
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	httpAddr, httpsAddr := freeAddr(t), freeAddr(t)
	var out bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-http-addr", httpAddr, "-https-addr", httpsAddr)
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	// exited is closed, never sent on, so that both the wait below and the
	// cleanup can wait for the process.
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel() // kills the process this test started
		<-exited
		if t.Failed() {
			t.Logf("stripe-mock output:\n%s", out.String())
		}
	})
	base := &url.URL{Scheme: "http", Host: httpAddr}
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, _ := http.NewRequest(http.MethodGet, base.JoinPath("/v1/payment_intents/pi_123").String(), nil)
		r.Header.Set("Authorization", "Bearer sk_test_123")
		if resp, err := http.DefaultClient.Do(r); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		select {
		case <-exited:
			t.Fatalf("stripe-mock exited before answering: %v\n%s", waitErr, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("stripe-mock did not answer on %s within 20s\n%s", httpAddr, out.String())
		}
	}
}

func findStripeMock() string {
	if p, err := exec.LookPath("stripe-mock"); err == nil {
		return p
	}
	dirs := []string{os.Getenv("GOBIN")}
	for _, gopath := range filepath.SplitList(build.Default.GOPATH) {
		dirs = append(dirs, filepath.Join(gopath, "bin"))
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if p := filepath.Join(d, "stripe-mock"); isExecutable(p) {
			return p
		}
	}
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}
