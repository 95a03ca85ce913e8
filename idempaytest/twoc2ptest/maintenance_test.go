package twoc2ptest_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// act sends a maintenance request sealed as a merchant seals it and opens
// the answer; sealed is false for a plain answer.
func (g *gw) act(processType, invoice, amount, ref string) (a twoc2ptest.PaymentProcessResponse, sealed bool, err error) {
	g.t.Helper()
	tok, err := twoc2ptest.Seal(g.srv.ActionRequest(processType, invoice, amount, ref), g.srv.GatewayKey(), g.srv.MerchantKey())
	require.NoError(g.t, err)
	return g.sendAction(tok)
}

func (g *gw) sendAction(tok string) (a twoc2ptest.PaymentProcessResponse, sealed bool, err error) {
	resp, err := http.Post(g.url+twoc2ptest.MaintenancePath, "text/plain", strings.NewReader(tok))
	if err != nil {
		return a, false, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	plain, oerr := twoc2ptest.Open(string(raw), g.srv.GatewayKey(), g.srv.MerchantKey())
	if oerr != nil {
		plain = raw
	}
	if resp.StatusCode == http.StatusServiceUnavailable {
		return a, false, nil // the gateway's HTML page
	}
	require.NoError(g.t, xml.Unmarshal(plain, &a), "answer %s", raw)
	return a, oerr == nil, nil
}

// must sends a maintenance request that must be answered sealed.
func (g *gw) must(processType, invoice, amount, ref string) twoc2ptest.PaymentProcessResponse {
	g.t.Helper()
	a, sealed, err := g.act(processType, invoice, amount, ref)
	require.NoError(g.t, err)
	require.True(g.t, sealed, "a sealed answer")
	return a
}

// paid opens and pays an invoice of THB 1,234.56.
func (g *gw) paid(invoice string) {
	g.t.Helper()
	g.token(tokenReq(invoice))
	require.NoError(g.t, g.srv.Pay(invoice))
}

// Refunds of a settled payment add up to it and no further; Refund Status
// lists them with their references; the books agree.
func TestMaintenanceRefunds(t *testing.T) {
	g := start(t)
	g.paid("INV1")
	a := g.must("R", "INV1", "1000.00", "rf-1")
	assert.Equal(t, "00", a.RespCode)
	assert.Equal(t, "RF", a.Status)
	assert.Equal(t, "rf-1", a.IdempotencyID)
	assert.NotEmpty(t, a.ReferenceNo)
	assert.Equal(t, "40", g.must("R", "INV1", "234.57", "rf-2").RespCode, "beyond what is left")
	assert.Equal(t, "18", g.must("R", "INV1", "1.234", "rf-3").RespCode, "more decimals than THB has")
	assert.Equal(t, "00", g.must("R", "INV1", "234.56", "rf-4").RespCode)
	assert.Equal(t, "49", g.must("R", "INV1", "0.01", "rf-5").RespCode, "fully refunded")
	rs := g.must("RS", "INV1", "", "")
	require.Len(t, rs.Refunds, 2)
	assert.Equal(t, "rf-4", rs.Refunds[1].IdempotencyID)
	assert.Equal(t, "234.56", rs.Refunds[1].Amount)
	assert.Equal(t, "S", g.must("I", "INV1", "", "").Status)
	assert.Equal(t, "16", g.must("R", "NONE", "1.00", "x").RespCode)
	assert.Equal(t, "17", g.must("X", "INV1", "1.00", "x").RespCode)
	assert.Equal(t, "21", g.must("V", "INV1", "", "").RespCode, "a settled payment is not voided")
	assert.Equal(t, int64(123456), g.srv.Ledger().Refunded("INV1"))
	require.NoError(t, g.srv.CheckMoney())
}

// With manual settlement a payment is an authorisation: settled once (in
// part), voided instead, refunded only once settled and within it.
func TestMaintenanceSettleAndVoid(t *testing.T) {
	g := start(t, twoc2ptest.WithManualSettlement())
	g.paid("AUTH")
	assert.Equal(t, "A", g.must("I", "AUTH", "", "").Status)
	assert.Equal(t, "41", g.must("R", "AUTH", "1.00", "rf-0").RespCode, "refund before settlement")
	assert.Equal(t, "30", g.must("S", "AUTH", "1234.57", "").RespCode, "settle beyond")
	s := g.must("S", "AUTH", "1000.00", "")
	assert.Equal(t, "00", s.RespCode)
	assert.Equal(t, "S", s.Status)
	assert.Equal(t, "39", g.must("S", "AUTH", "1.00", "").RespCode, "settled twice")
	assert.Equal(t, "21", g.must("V", "AUTH", "", "").RespCode, "void after settlement")
	assert.Equal(t, "40", g.must("R", "AUTH", "1000.01", "rf-1").RespCode, "refund beyond the settlement")
	assert.Equal(t, "00", g.must("R", "AUTH", "1000.00", "rf-2").RespCode)

	g.paid("HELD")
	v := g.must("V", "HELD", "", "")
	assert.Equal(t, "00", v.RespCode)
	assert.Equal(t, "V", v.Status)
	assert.Equal(t, "29", g.must("V", "HELD", "", "").RespCode)
	assert.Equal(t, "29", g.must("S", "HELD", "", "").RespCode)
	assert.Equal(t, "41", g.must("R", "HELD", "1.00", "rf-3").RespCode)
	g.token(tokenReq("OPEN"))
	assert.Equal(t, "12", g.must("V", "OPEN", "", "").RespCode, "nothing paid")
	ops := g.srv.Ledger().Ops()
	require.Len(t, ops, 3)
	assert.Equal(t, []fakes.OpType{fakes.OpCapture, fakes.OpRefund, fakes.OpCancel}, []fakes.OpType{ops[0].Type, ops[1].Type, ops[2].Type})
	require.NoError(t, g.srv.CheckMoney())
}

// What the gateway cannot verify, decrypt or place gets a plain answer.
func TestMaintenanceEnvelope(t *testing.T) {
	g := start(t)
	g.paid("INV1")
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	req := g.srv.ActionRequest("R", "INV1", "1.00", "x")
	forged, err := twoc2ptest.Seal(req, g.srv.GatewayKey(), other)
	require.NoError(t, err)
	a, sealed, err := g.sendAction(forged)
	require.NoError(t, err)
	assert.False(t, sealed)
	assert.Equal(t, "13", a.RespCode, "signed with another key")
	misaddressed, err := twoc2ptest.Seal(req, &other.PublicKey, g.srv.MerchantKey())
	require.NoError(t, err)
	a, _, _ = g.sendAction(misaddressed)
	assert.Equal(t, "96", a.RespCode, "encrypted to another key")
	otherMerchant, err := twoc2ptest.Seal([]byte(strings.Replace(string(req), merchant, "JT99", 1)), g.srv.GatewayKey(), g.srv.MerchantKey())
	require.NoError(t, err)
	a, _, _ = g.sendAction(otherMerchant)
	assert.Equal(t, "03", a.RespCode)
	assert.Zero(t, g.srv.Ledger().OpCount("x"))
	assert.Equal(t, 3, g.srv.Stats().Rejected)

	_, err = twoc2ptest.Open(forged, g.srv.GatewayKey(), g.srv.MerchantKey())
	assert.ErrorIs(t, err, twoc2ptest.ErrSignature)
}

// Without WithMaintenanceKeys a refund sent twice is made twice, which the
// check reports; with it the second gets the first's answer, and another
// processType under the key 50.
func TestMaintenanceKeys(t *testing.T) {
	g := start(t)
	g.paid("INV1")
	g.must("R", "INV1", "1.00", "rf-1")
	g.must("R", "INV1", "1.00", "rf-1")
	var me *fakes.MoneyError
	require.True(t, errors.As(g.srv.CheckMoney(), &me))
	assert.True(t, me.Has(fakes.RefundedTwice))

	h := start(t, twoc2ptest.WithMaintenanceKeys())
	h.paid("INV1")
	first := h.must("R", "INV1", "1.00", "rf-1")
	again := h.must("R", "INV1", "1.00", "rf-1")
	assert.Equal(t, first.ReferenceNo, again.ReferenceNo)
	assert.Equal(t, 1, h.srv.Ledger().OpCount("rf-1"))
	assert.Equal(t, "50", h.must("V", "INV1", "", "rf-1").RespCode)
	require.NoError(t, h.srv.CheckMoney())
}

// The token request's faults strike maintenance requests, scripted by
// idempotencyID (or invoiceNo): Post refunds and loses the answer.
func TestMaintenanceFaults(t *testing.T) {
	g := start(t)
	g.paid("INV1")
	for _, tc := range []struct {
		f     fakes.Fault
		drops bool
		made  int
	}{{fakes.Pre, true, 0}, {fakes.Mid, true, 0}, {fakes.Post, true, 1}, {fakes.Unavailable, false, 0}, {fakes.Internal, false, 0}} {
		ref := "rf-" + tc.f.String()
		g.srv.FailMaintenance(ref, tc.f)
		_, _, err := g.act("R", "INV1", "1.00", ref)
		assert.Equal(t, tc.drops, err != nil, tc.f)
		assert.Equal(t, tc.made, g.srv.Ledger().OpCount(ref), tc.f)
	}
	st := g.srv.Stats().Maintenance
	assert.Equal(t, 5, st.Requests)
	assert.Equal(t, 1, st.Statuses[http.StatusServiceUnavailable])
	assert.Equal(t, 1, st.Statuses[http.StatusInternalServerError])
}

// A pending refund (RP) holds its amount until it fails (RFF).
func TestMaintenancePendingRefunds(t *testing.T) {
	g := start(t, twoc2ptest.WithPendingRefunds())
	g.paid("INV1")
	a := g.must("R", "INV1", "1234.56", "rf-1")
	assert.Equal(t, "RP", a.Status)
	assert.Equal(t, "49", g.must("R", "INV1", "0.01", "rf-2").RespCode)
	require.True(t, g.srv.CompleteRefund(a.ReferenceNo, false))
	assert.False(t, g.srv.CompleteRefund(a.ReferenceNo, true), "settled already")
	assert.Equal(t, "RFF", g.must("RS", "INV1", "", "").Refunds[0].Status)
	assert.Equal(t, "00", g.must("R", "INV1", "1234.56", "rf-3").RespCode, "a failed refund frees its amount")
}
