package twoc2p_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/internal/conformance"
	"github.com/stretchr/testify/require"
)

// The conformance rules of every capability the adapter implements
// (Operator, for refunds, captures and cancels, with lookups), through a Client
// against the fake gateway.
//
// The rules charge and expect the charge settled by the first call; a 2C2P
// payment is made by the customer on 2C2P's page after the token request.
// So the fake here loses every token answer (Post) and the customer has
// paid by the time the Client asks Payment Inquiry, which settles the
// charge in the same call. With manual settlement, the intents of
// Subject.Charge are settled at once from outside idempay (as a merchant
// whose other system settles them would), those of Subject.Manual stay
// authorised.
func TestConformance(t *testing.T) {
	t.Run("manual settlement", func(t *testing.T) { conformanceRun(t, true) })
	t.Run("automatic settlement", func(t *testing.T) { conformanceRun(t, false) })
}

func conformanceRun(t *testing.T, manual bool) {
	var srvp atomic.Pointer[twoc2ptest.Server]
	var held sync.Map // intents charged through Subject.Manual
	hook := func(info twoc2ptest.RequestInfo) {
		srv := srvp.Load()
		if info.Endpoint != twoc2ptest.Inquiry || srv == nil {
			return
		}
		txn, ok := srv.Transaction(info.InvoiceNo)
		if !ok || txn.State == twoc2ptest.Paid || srv.Pay(info.InvoiceNo) != nil {
			return
		}
		intent, _ := idempay.TwoC2PIntentOfInvoiceNo(info.InvoiceNo)
		if _, hold := held.Load(intent); manual && !hold {
			if code := actionByHand(srv, "S", info.InvoiceNo, txn.Amount); code != "00" {
				t.Errorf("settling %s by hand: %s", info.InvoiceNo, code)
			}
		}
	}
	opts := []twoc2ptest.Option{twoc2ptest.WithMerchant(tc2pMerchant, tc2pSecret.Reveal()),
		twoc2ptest.WithMerchantKey(&opsMerchantKey().PublicKey), twoc2ptest.WithHook(hook),
		twoc2ptest.WithFaultRates(fakes.Rates{Post: 1}, 1)}
	if manual {
		opts = append(opts, twoc2ptest.WithManualSettlement())
	}
	srv := twoc2ptest.NewServer(opts...)
	t.Cleanup(srv.Close)
	srvp.Store(srv)

	p := opsProvider(srv.GatewayKey())
	p.ManualSettlement = manual
	order := func(id string) idempay.ChargeRequest {
		return idempay.ChargeRequest{IntentID: id, Amount: 123456, Currency: "THB"}
	}
	s := conformance.Subject{Provider: p, BaseURL: srv.URL, Credentials: tc2pSecret, Amount: 123456, Currency: "THB",
		Charge: order}
	if manual {
		s.Manual = func(id string) idempay.ChargeRequest {
			held.Store(id, true)
			return order(id)
		}
	}
	conformance.TestProvider(t, s)
	require.NoError(t, srv.CheckMoney())
	st := srv.Stats()
	require.Zero(t, st.Existing, "no token request was resent")
	require.NotZero(t, st.Maintenance.Requests)
}

// actionByHand sends a maintenance request for invoiceNo from outside
// idempay and returns 2C2P's respCode, or why it could not; it may be
// called from a handler's goroutine.
func actionByHand(srv *twoc2ptest.Server, processType, invoiceNo, amount string) string {
	tok, err := twoc2ptest.Seal(srv.ActionRequest(processType, invoiceNo, amount, ""), srv.GatewayKey(), opsMerchantKey())
	if err != nil {
		return err.Error()
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, twoc2ptest.MaintenancePath, strings.NewReader(tok)))
	plain, err := twoc2ptest.Open(rec.Body.String(), srv.GatewayKey(), opsMerchantKey())
	if err != nil {
		return err.Error()
	}
	if i := strings.Index(string(plain), "<respCode>"); i >= 0 && len(plain) >= i+12 {
		return string(plain[i+10 : i+12])
	}
	return string(plain)
}
