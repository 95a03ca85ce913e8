package twoc2p_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/provider/twoc2p"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reading rules, answer by answer: sealed answers are made here with
// the fake's Seal (a second JOSE implementation) under a stand-in 2C2P
// key, so that every respCode, status and mismatch can be tried.

const (
	readIntent = "ORDER1" // its invoiceNo is ORDER1 too
	readKey    = "key-0001"
)

func readTarget(raw string) idempay.Target {
	u, _ := url.Parse(raw)
	return idempay.Target{BaseURL: u, Credentials: tc2pSecret, Namespace: tc2pNS}
}

func readOp(t idempay.OpType) idempay.OpRequest {
	return idempay.OpRequest{Type: t, ID: "op-1", IntentID: readIntent, ChargeRef: "004000001", Amount: 50000, Currency: "THB"}
}

// sealed is an answer as 2C2P seals it: encrypted to the merchant, signed
// by 2C2P (the stand-in key).
func sealed(t *testing.T, xmlText string) string {
	t.Helper()
	tok, err := twoc2ptest.Seal([]byte(xmlText), &opsMerchantKey().PublicKey, opsGatewayKey())
	require.NoError(t, err)
	return tok
}

// answerXML is a PaymentProcessResponse with the given fields, in order.
func answerXML(fields ...string) string {
	var b strings.Builder
	b.WriteString("<PaymentProcessResponse><version>3.8</version><timeStamp>010125000000</timeStamp>")
	for i := 0; i+1 < len(fields); i += 2 {
		fmt.Fprintf(&b, "<%s>%s</%s>", fields[i], fields[i+1], fields[i])
	}
	b.WriteString("</PaymentProcessResponse>")
	return b.String()
}

// ours is an answer about the test's request: its invoice, processType
// and idempotencyID, then fields.
func ours(process string, fields ...string) string {
	return answerXML(append([]string{"processType", process, "invoiceNo", readIntent, "idempotencyID", readKey}, fields...)...)
}

// readWith reads body (HTTP status) as the answer to op's request.
func readWith(t *testing.T, op idempay.OpRequest, status int, body string) idempay.Verdict {
	t.Helper()
	p := opsProvider(&opsGatewayKey().PublicKey)
	var req *http.Request
	var err error
	switch op.Type {
	case idempay.OpRefund:
		req, err = p.NewOpRequest(context.Background(), readTarget("https://pgw.test"), op, readKey)
	case idempay.OpCapture:
		req, err = p.NewOpRequest(context.Background(), readTarget("https://pgw.test"), op, readKey)
	case idempay.OpCancel:
		req, err = p.NewOpRequest(context.Background(), readTarget("https://pgw.test"), op, readKey)
	}
	require.NoError(t, err)
	resp := &http.Response{StatusCode: status, Header: http.Header{}, Request: req, Body: io.NopCloser(strings.NewReader(body))}
	switch op.Type {
	case idempay.OpCapture:
		return p.ReadOp(idempay.OpCapture, resp, []byte(body))
	case idempay.OpCancel:
		return p.ReadOp(idempay.OpCancel, resp, []byte(body))
	}
	return p.ReadOp(idempay.OpRefund, resp, []byte(body))
}

type readCase struct {
	name   string
	status int    // default 200
	body   string // the answer as sent
	want   idempay.Kind
}

func runReadCases(t *testing.T, typ idempay.OpType, cases []readCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := readWith(t, readOp(typ), max(tc.status, 200), tc.body)
			assert.Equal(t, tc.want, v.Kind, "%+v", v.Err)
			if v.Kind == idempay.KindSucceeded || v.Kind == idempay.KindPending {
				require.NotNil(t, v.Operation)
				assert.NotEmpty(t, v.Operation.ID)
				assert.Equal(t, int64(50000), v.Operation.Amount)
				assert.Equal(t, "THB", v.Operation.Currency)
			} else {
				assert.Nil(t, v.Operation)
			}
		})
	}
}

// Rule: a refund succeeded only on a sealed 00 with status RF about this
// invoice, processType and idempotencyID; pending on RP or 42; refused for
// this request only (KindInvalid, so that the Client says failed only when
// nothing sent before may have moved money) on the refusal codes;
// configuration on 96/13/03 (plain, as 2C2P cannot seal to a request it
// cannot open); and unknown on everything else.
func TestReadRefundRules(t *testing.T) {
	var cases []readCase
	add := func(name string, want idempay.Kind, body string) {
		cases = append(cases, readCase{name: name, body: body, want: want})
	}
	add("00 RF", idempay.KindSucceeded, sealed(t, ours("R", "respCode", "00", "status", "RF", "referenceNo", "R000001", "amount", "500.00")))
	add("00 RF without echoes", idempay.KindSucceeded, sealed(t, answerXML("respCode", "00", "invoiceNo", readIntent, "status", "RF")))
	add("00 RP", idempay.KindPending, sealed(t, ours("R", "respCode", "00", "status", "RP")))
	add("42 refund pending", idempay.KindPending, sealed(t, ours("R", "respCode", "42")))
	for _, st := range []string{"", "RFF", "RR", "S", "A", "V", "XX"} {
		add("00 status "+st, idempay.KindUnknown, sealed(t, ours("R", "respCode", "00", "status", st)))
	}
	for _, code := range []string{"02", "10", "11", "12", "15", "16", "17", "18", "21", "29", "30", "39", "40", "41", "43", "46", "49", "54"} {
		add("refusal "+code, idempay.KindInvalid, sealed(t, ours("R", "respCode", code)))
	}
	add("50 key used for another type", idempay.KindKeyConflict, sealed(t, ours("R", "respCode", "50")))
	add("51 key pending", idempay.KindInFlight, sealed(t, ours("R", "respCode", "51")))
	for _, code := range []string{"95", "98", "99"} {
		add("may have acted "+code, idempay.KindServerError, sealed(t, ours("R", "respCode", code)))
	}
	for _, code := range []string{"25", "44", "45", "52", "65", "01", "77", ""} {
		add("says nothing "+code, idempay.KindUnknown, sealed(t, ours("R", "respCode", code)))
	}
	add("sealed 13", idempay.KindConfig, sealed(t, ours("R", "respCode", "13")))
	for _, code := range []string{"96", "13", "03", "14"} {
		add("plain "+code, idempay.KindConfig, answerXML("respCode", code))
	}
	add("plain 00 RF", idempay.KindUnknown, ours("R", "respCode", "00", "status", "RF"))
	add("plain 40", idempay.KindUnknown, ours("R", "respCode", "40"))
	add("plain 99", idempay.KindUnknown, answerXML("respCode", "99"))

	// An answer not about this request.
	add("other invoice", idempay.KindUnknown, sealed(t, answerXML("respCode", "00", "invoiceNo", "ORDER2", "status", "RF")))
	add("no invoice", idempay.KindUnknown, sealed(t, answerXML("respCode", "00", "status", "RF")))
	add("refusal of no invoice", idempay.KindUnknown, sealed(t, answerXML("respCode", "40")))
	add("other processType", idempay.KindUnknown, sealed(t, ours("S", "respCode", "00", "status", "RF")))
	add("other idempotencyID", idempay.KindUnknown, sealed(t, answerXML("respCode", "00", "invoiceNo", readIntent,
		"idempotencyID", "key-other", "status", "RF")))
	add("other idempotencyID refused", idempay.KindUnknown, sealed(t, answerXML("respCode", "49", "invoiceNo", readIntent,
		"idempotencyID", "key-other")))
	add("other merchant", idempay.KindUnknown, sealed(t, ours("R", "respCode", "00", "status", "RF", "merchantID", "JT99")))

	// Answers that cannot be trusted or read.
	forged, err := twoc2ptest.Seal([]byte(ours("R", "respCode", "00", "status", "RF")), &opsMerchantKey().PublicKey, opsMerchantKey())
	require.NoError(t, err)
	add("signed by another key", idempay.KindUnknown, forged)
	misaddressed, err := twoc2ptest.Seal([]byte(ours("R", "respCode", "00", "status", "RF")), &opsGatewayKey().PublicKey, opsGatewayKey())
	require.NoError(t, err)
	add("encrypted to another key", idempay.KindUnknown, misaddressed)
	good := sealed(t, ours("R", "respCode", "00", "status", "RF"))
	add("signature altered", idempay.KindUnknown, good[:len(good)-3]+flip(good[len(good)-3:]))
	parts := strings.Split(good, ".")
	add("unsigned (alg none)", idempay.KindUnknown, "eyJhbGciOiJub25lIn0."+parts[1]+".")
	for _, b := range []string{"", "{}", "abc.def.ghi", "<html>ok</html>", "<PaymentProcessResponse>", `"` + good + `"`} {
		add(fmt.Sprintf("unreadable %.12q", b), idempay.KindUnknown, b)
	}
	runReadCases(t, idempay.OpRefund, cases)

	// HTTP statuses decide before the body.
	runReadCases(t, idempay.OpRefund, []readCase{
		{name: "500 with a sealed success", status: 500, body: good, want: idempay.KindServerError},
		{name: "503 page", status: 503, body: "<html>busy</html>", want: idempay.KindServerError},
		{name: "500 plain 99", status: 500, body: answerXML("respCode", "99"), want: idempay.KindServerError},
		{name: "404 page", status: 404, body: "not found", want: idempay.KindConfig},
		{name: "302", status: 302, body: "", want: idempay.KindUnknown},
	})
}

func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

// Rule: a settlement succeeded on 00 with status S, pending on RS (ready
// for settlement), refused on 30/39/29/31/33; a void succeeded on 00 with
// V, pending on VP, refused on 21/29; anything else unknown.
func TestReadCaptureCancelRules(t *testing.T) {
	runReadCases(t, idempay.OpCapture, []readCase{
		{name: "00 S", body: sealed(t, ours("S", "respCode", "00", "status", "S")), want: idempay.KindSucceeded},
		{name: "00 RS", body: sealed(t, ours("S", "respCode", "00", "status", "RS")), want: idempay.KindPending},
		{name: "00 A", body: sealed(t, ours("S", "respCode", "00", "status", "A")), want: idempay.KindUnknown},
		{name: "00 RF", body: sealed(t, ours("S", "respCode", "00", "status", "RF")), want: idempay.KindUnknown},
		{name: "30 beyond", body: sealed(t, ours("S", "respCode", "30")), want: idempay.KindInvalid},
		{name: "39 already settled: captured, as FindCapture reads S", body: sealed(t, ours("S", "respCode", "39")), want: idempay.KindSucceeded},
		{name: "29 already voided: never to be captured, as FindCapture reads V", body: sealed(t, ours("S", "respCode", "29")), want: idempay.KindDeclined},
		{name: "35 settlement failed", body: sealed(t, ours("S", "respCode", "35")), want: idempay.KindUnknown},
		{name: "42 is a refund's", body: sealed(t, ours("S", "respCode", "42")), want: idempay.KindUnknown},
		{name: "answer to a void", body: sealed(t, ours("V", "respCode", "00", "status", "S")), want: idempay.KindUnknown},
	})
	runReadCases(t, idempay.OpCancel, []readCase{
		{name: "00 V", body: sealed(t, ours("V", "respCode", "00", "status", "V")), want: idempay.KindSucceeded},
		{name: "00 VP", body: sealed(t, ours("V", "respCode", "00", "status", "VP")), want: idempay.KindPending},
		{name: "00 S", body: sealed(t, ours("V", "respCode", "00", "status", "S")), want: idempay.KindUnknown},
		{name: "21 settled", body: sealed(t, ours("V", "respCode", "21")), want: idempay.KindInvalid},
		{name: "29 already voided: voided, as FindCancel reads V", body: sealed(t, ours("V", "respCode", "29")), want: idempay.KindSucceeded},
		{name: "39 already settled: never to be voided, as FindCancel reads S", body: sealed(t, ours("V", "respCode", "39")), want: idempay.KindDeclined},
		{name: "25 void failed", body: sealed(t, ours("V", "respCode", "25")), want: idempay.KindUnknown},
	})
}

// Rule: an answer to a request the adapter did not build, or read as
// another operation's, cannot be opened for want of keys: unknown.
func TestReadForeignRequest(t *testing.T) {
	p := opsProvider(&opsGatewayKey().PublicKey)
	body := sealed(t, ours("R", "respCode", "00", "status", "RF"))
	resp := &http.Response{StatusCode: 200, Header: http.Header{}}
	assert.Equal(t, idempay.KindUnknown, p.ReadOp(idempay.OpRefund, resp, []byte(body)).Kind)
	req, err := p.NewOpRequest(context.Background(), readTarget("https://pgw.test"), readOp(idempay.OpRefund), readKey)
	require.NoError(t, err)
	resp.Request = req
	assert.Equal(t, idempay.KindSucceeded, p.ReadOp(idempay.OpRefund, resp, []byte(body)).Kind)
	assert.Equal(t, idempay.KindUnknown, p.ReadOp(idempay.OpCapture, resp, []byte(body)).Kind, "a refund's answer read as a capture's")
}

// lookupServer answers every maintenance lookup with answer and hands each
// request, opened, to seen.
func lookupServer(t *testing.T, status int, answer string, seen func(twoc2ptest.PaymentProcessRequest)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		plain, err := twoc2ptest.Open(string(raw), &opsMerchantKey().PublicKey, opsGatewayKey())
		if err != nil {
			t.Errorf("lookup request does not open: %v", err)
		}
		var req twoc2ptest.PaymentProcessRequest
		_ = xml.Unmarshal(plain, &req)
		if seen != nil {
			seen(req)
		}
		if r.URL.Path != twoc2ptest.MaintenancePath {
			t.Errorf("lookup sent to %s", r.URL.Path)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv
}

type findCase struct {
	name   string
	status int
	body   string
	want   idempay.Kind
}

func runFindCases(t *testing.T, typ idempay.OpType, cases []findCase) {
	t.Helper()
	p := opsProvider(&opsGatewayKey().PublicKey)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := map[idempay.OpType]string{idempay.OpRefund: "RS", idempay.OpCapture: "I", idempay.OpCancel: "I"}[typ]
			srv := lookupServer(t, max(tc.status, 200), tc.body, func(r twoc2ptest.PaymentProcessRequest) {
				assert.Equal(t, want, r.ProcessType)
				assert.Equal(t, readIntent, r.InvoiceNo)
				assert.Empty(t, r.IdempotencyID, "a lookup carries no key: it must not meet the operation's under de-duplication")
				assert.Empty(t, r.ActionAmount)
				assert.Equal(t, "4.3", r.Version, "2C2P's parameter table and sample")
				assert.Equal(t, tc2pMerchant, r.MerchantID)
			})
			rec := idempay.Record{Namespace: tc2pNS + "/" + string(typ), ID: "op-1", Attempt: 1, Key: readKey}
			var v idempay.Verdict
			var err error
			switch typ {
			case idempay.OpRefund:
				v, err = p.FindOp(context.Background(), srv.Client(), readTarget(srv.URL), readOp(typ), rec)
			case idempay.OpCapture:
				v, err = p.FindOp(context.Background(), srv.Client(), readTarget(srv.URL), readOp(typ), rec)
			case idempay.OpCancel:
				v, err = p.FindOp(context.Background(), srv.Client(), readTarget(srv.URL), readOp(typ), rec)
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, v.Kind, "%+v", v.Err)
			if v.Kind == idempay.KindSucceeded || v.Kind == idempay.KindPending {
				require.NotNil(t, v.Operation)
				assert.NotEmpty(t, v.Operation.ID)
			}
		})
	}
}

// rsAnswer is a Refund Status answer about the test's invoice listing
// refunds, each "referenceNo amount status idempotencyID" ("-" for none).
func rsAnswer(t *testing.T, code string, refunds ...string) string {
	var list strings.Builder
	for _, r := range refunds {
		f := strings.Fields(r)
		fmt.Fprintf(&list, "<refund><referenceNo>%s</referenceNo><amount>%s</amount><status>%s</status>", f[0], f[1], f[2])
		if f[3] != "-" {
			fmt.Fprintf(&list, "<idempotencyID>%s</idempotencyID>", f[3])
		}
		list.WriteString("<dateTime>010125000000</dateTime></refund>")
	}
	x := answerXML("respCode", code, "processType", "RS", "invoiceNo", readIntent, "status", "S", "referenceNo", "004000001")
	if list.Len() > 0 {
		x = strings.Replace(x, "</PaymentProcessResponse>", "<refundList>"+list.String()+"</refundList></PaymentProcessResponse>", 1)
	}
	return sealed(t, x)
}

// Rule: Refund Status finds the refund by the idempotencyID it was sent
// with (RF succeeded, RP pending, RFF/RR failed for good); it proves the
// refund absent only from a sealed list of this invoice in which no refund
// carries the key and none without an idempotencyID has the refund's
// amount (it could be this one, unnamed), or from 16 (no transaction, no
// refund); everything else is unknown, never not found.
func TestFindRefundRules(t *testing.T) {
	runFindCases(t, idempay.OpRefund, []findCase{
		{name: "found RF", body: rsAnswer(t, "00", "R1 100.00 RF key-a", "R2 500.00 RF "+readKey), want: idempay.KindSucceeded},
		{name: "found RP", body: rsAnswer(t, "00", "R2 500.00 RP "+readKey), want: idempay.KindPending},
		{name: "found RFF", body: rsAnswer(t, "00", "R2 500.00 RFF "+readKey), want: idempay.KindDeclined},
		{name: "found RR2", body: rsAnswer(t, "00", "R2 500.00 RR2 "+readKey), want: idempay.KindDeclined},
		{name: "found, status unknown", body: rsAnswer(t, "00", "R2 500.00 ZZ "+readKey), want: idempay.KindUnknown},
		{name: "twice under the key", body: rsAnswer(t, "00", "R1 500.00 RF "+readKey, "R2 500.00 RF "+readKey), want: idempay.KindUnknown},
		{name: "empty list", body: rsAnswer(t, "00"), want: idempay.KindNotFound},
		{name: "others' refunds, named", body: rsAnswer(t, "00", "R1 500.00 RF key-a", "R2 1.00 RF key-b"), want: idempay.KindNotFound},
		{name: "unnamed refund of another amount", body: rsAnswer(t, "00", "R1 100.00 RF -"), want: idempay.KindNotFound},
		{name: "unnamed refund of the same amount", body: rsAnswer(t, "00", "R1 500.00 RF -"), want: idempay.KindUnknown},
		{name: "unnamed refund, amount unreadable", body: rsAnswer(t, "00", "R1 5,00 RF -"), want: idempay.KindUnknown},
		{name: "no such transaction", body: sealed(t, answerXML("respCode", "16", "processType", "RS", "invoiceNo", readIntent)), want: idempay.KindNotFound},
		{name: "16 unsealed", body: answerXML("respCode", "16", "invoiceNo", readIntent), want: idempay.KindUnknown},
		{name: "empty list unsealed", body: answerXML("respCode", "00", "processType", "RS", "invoiceNo", readIntent), want: idempay.KindUnknown},
		{name: "another invoice's list", body: sealed(t, answerXML("respCode", "00", "processType", "RS", "invoiceNo", "ORDER2")), want: idempay.KindUnknown},
		{name: "a list naming no invoice", body: sealed(t, answerXML("respCode", "00", "processType", "RS")), want: idempay.KindUnknown},
		{name: "an inquiry's answer", body: sealed(t, answerXML("respCode", "00", "processType", "I", "invoiceNo", readIntent)), want: idempay.KindUnknown},
		{name: "echoing a key", body: sealed(t, answerXML("respCode", "00", "processType", "RS", "invoiceNo", readIntent, "idempotencyID", readKey)), want: idempay.KindUnknown},
		{name: "99", body: sealed(t, answerXML("respCode", "99", "processType", "RS", "invoiceNo", readIntent)), want: idempay.KindUnknown},
		{name: "500", status: 500, body: rsAnswer(t, "00"), want: idempay.KindUnknown},
		{name: "plain 96", body: answerXML("respCode", "96"), want: idempay.KindUnknown},
		{name: "garbage", body: "nope", want: idempay.KindUnknown},
	})
}

// iAnswer is an inquiry answer about the test's invoice with status.
func iAnswer(t *testing.T, status string) string {
	return sealed(t, answerXML("respCode", "00", "processType", "I", "invoiceNo", readIntent, "amount", "1234.56",
		"status", status, "referenceNo", "004000001"))
}

// Rule: the transaction's status says how a settlement or a void stands:
// settled (or refunded since) is a capture made and a void never to be;
// voided the reverse; still approved (A) proves neither was made; ready for
// settlement (RS) a pending capture; void pending (VP) a pending void;
// every other status or answer unknown.
func TestFindCaptureCancelRules(t *testing.T) {
	common := func(typ idempay.OpType) []findCase {
		return []findCase{
			{name: "16", body: sealed(t, answerXML("respCode", "16", "processType", "I", "invoiceNo", readIntent)), want: idempay.KindNotFound},
			{name: "AP", body: iAnswer(t, "AP"), want: idempay.KindUnknown},
			{name: "PF", body: iAnswer(t, "PF"), want: idempay.KindUnknown},
			{name: "no status", body: iAnswer(t, ""), want: idempay.KindUnknown},
			{name: "unsealed A", body: answerXML("respCode", "00", "processType", "I", "invoiceNo", readIntent, "status", "A"), want: idempay.KindUnknown},
			{name: "other invoice A", body: sealed(t, answerXML("respCode", "00", "processType", "I", "invoiceNo", "ORDER2", "status", "A")), want: idempay.KindUnknown},
			{name: "500", status: 500, body: iAnswer(t, "A"), want: idempay.KindUnknown},
		}
	}
	runFindCases(t, idempay.OpCapture, append(common(idempay.OpCapture),
		findCase{name: "S", body: iAnswer(t, "S"), want: idempay.KindSucceeded},
		findCase{name: "RF", body: iAnswer(t, "RF"), want: idempay.KindSucceeded},
		findCase{name: "RS", body: iAnswer(t, "RS"), want: idempay.KindPending},
		findCase{name: "A", body: iAnswer(t, "A"), want: idempay.KindNotFound},
		findCase{name: "V", body: iAnswer(t, "V"), want: idempay.KindDeclined},
	))
	runFindCases(t, idempay.OpCancel, append(common(idempay.OpCancel),
		findCase{name: "V", body: iAnswer(t, "V"), want: idempay.KindSucceeded},
		findCase{name: "VP", body: iAnswer(t, "VP"), want: idempay.KindPending},
		findCase{name: "A", body: iAnswer(t, "A"), want: idempay.KindNotFound},
		findCase{name: "S", body: iAnswer(t, "S"), want: idempay.KindDeclined},
		findCase{name: "RS", body: iAnswer(t, "RS"), want: idempay.KindDeclined},
	))
}

// Rule: a lookup that gets no answer returns an error (the Client keeps
// the operation unknown), never a verdict of absence.
func TestFindNoAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hj, _ := w.(http.Hijacker)
		c, _, _ := hj.Hijack()
		_ = c.Close()
	}))
	defer srv.Close()
	p := opsProvider(&opsGatewayKey().PublicKey)
	rec := idempay.Record{Attempt: 1, Key: readKey}
	_, err := p.FindOp(context.Background(), srv.Client(), readTarget(srv.URL), readOp(idempay.OpRefund), rec)
	assert.Error(t, err)
	_, err = p.FindOp(context.Background(), srv.Client(), readTarget(srv.URL), readOp(idempay.OpCapture), rec)
	assert.Error(t, err)
	_, err = p.FindOp(context.Background(), srv.Client(), readTarget(srv.URL), readOp(idempay.OpCancel), rec)
	assert.Error(t, err)
}

// What a request carries, opened as 2C2P opens it: version 4.3, the
// merchant, the charge's invoice, the amount in major units (none for a
// void), the processType and the key as idempotencyID; the same bytes when
// built twice, other bytes for another key; the key in KeyHeader and never
// in Idempotency-Key (which net/http would resend by itself).
func TestOpRequestShape(t *testing.T) {
	p := opsProvider(&opsGatewayKey().PublicKey)
	target := readTarget("https://pgw.test/base")
	build := func(typ idempay.OpType, key string) (*http.Request, []byte) {
		op := readOp(typ)
		op.Amount = 123456
		var r *http.Request
		var err error
		switch typ {
		case idempay.OpRefund:
			r, err = p.NewOpRequest(context.Background(), target, op, key)
		case idempay.OpCapture:
			r, err = p.NewOpRequest(context.Background(), target, op, key)
		default:
			r, err = p.NewOpRequest(context.Background(), target, op, key)
		}
		require.NoError(t, err)
		b, _ := io.ReadAll(r.Body)
		return r, b
	}
	for typ, want := range map[idempay.OpType][2]string{idempay.OpRefund: {"R", "1234.56"}, idempay.OpCapture: {"S", "1234.56"},
		idempay.OpCancel: {"V", ""}} {
		r, body := build(typ, readKey)
		assert.Equal(t, "https://pgw.test/base"+twoc2p.MaintenancePath, r.URL.String())
		assert.Equal(t, http.MethodPost, r.Method)
		assert.Equal(t, readKey, r.Header.Get(twoc2p.KeyHeader))
		assert.Empty(t, r.Header.Get("Idempotency-Key"))
		assert.Empty(t, r.Header.Get("X-Idempotency-Key"))
		plain, err := twoc2ptest.Open(string(body), &opsMerchantKey().PublicKey, opsGatewayKey())
		require.NoError(t, err, "2C2P opens it")
		var x twoc2ptest.PaymentProcessRequest
		require.NoError(t, xml.Unmarshal(plain, &x))
		assert.Equal(t, twoc2ptest.PaymentProcessRequest{XMLName: x.XMLName, Version: "4.3", MerchantID: tc2pMerchant,
			InvoiceNo: readIntent, ActionAmount: want[1], ProcessType: want[0], IdempotencyID: readKey}, x)
		_, again := build(typ, readKey)
		assert.Equal(t, body, again, "built twice, the same bytes")
		_, other := build(typ, "key-0002")
		assert.NotEqual(t, body, other)
		assert.False(t, bytes.Contains(body, []byte(readKey)), "the key travels sealed in the body")
	}
	_, err := p.NewOpRequest(context.Background(), target, readOp(idempay.OpRefund), strings.Repeat("k", 101))
	assert.ErrorIs(t, err, idempay.ErrInvalidRequest, "a key longer than idempotencyID takes")

	p.MaintenanceURL = "https://demo2.2c2p.test/2C2PFrontend/PaymentAction/2.0/action"
	r, err := p.NewOpRequest(context.Background(), target, readOp(idempay.OpRefund), readKey)
	require.NoError(t, err)
	assert.Equal(t, p.MaintenanceURL, r.URL.String())
}

// The charge's invoice: ChargeRef when it is one of the intent's invoice
// numbers (a later attempt's, say); attempt 1's when it is a tranRef.
func TestOpInvoiceNo(t *testing.T) {
	p := opsProvider(&opsGatewayKey().PublicKey)
	second, err := idempay.TwoC2PAttemptInvoiceNo("ORDER-7", 2, false)
	require.NoError(t, err)
	for ref, want := range map[string]string{second: second, "004000001": invoiceOf(t, "ORDER-7"), "": invoiceOf(t, "ORDER-7")} {
		op := readOp(idempay.OpRefund)
		op.IntentID, op.ChargeRef = "ORDER-7", ref
		r, err := p.NewOpRequest(context.Background(), readTarget("https://pgw.test"), op, readKey)
		require.NoError(t, err)
		b, _ := io.ReadAll(r.Body)
		plain, err := twoc2ptest.Open(string(b), &opsMerchantKey().PublicKey, opsGatewayKey())
		require.NoError(t, err)
		var x twoc2ptest.PaymentProcessRequest
		require.NoError(t, xml.Unmarshal(plain, &x))
		assert.Equal(t, want, x.InvoiceNo, "ChargeRef %q", ref)
	}
}
