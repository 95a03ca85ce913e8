package twoc2p_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/provider/twoc2p"
)

// tc2pRoundTrip answers every request with one canned body.
type tc2pRoundTrip struct {
	status int
	body   []byte
}

func (rt tc2pRoundTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: rt.status, Body: io.NopCloser(bytes.NewReader(rt.body)), Request: r,
		Header: http.Header{}}, nil
}

// tc2pIndependentlySigned reports whether body is {"payload": jwt} whose
// header says HS256 and whose signature is the HMAC-SHA256 of its first two
// segments under the test secret, checked without golang-jwt or idempay.
func tc2pIndependentlySigned(body []byte) bool {
	var outer map[string]json.RawMessage
	if json.Unmarshal(body, &outer) != nil {
		return false
	}
	var tok string
	if json.Unmarshal(outer["payload"], &tok) != nil {
		return false
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return false
	}
	hdr, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return false
	}
	var h struct{ Alg string }
	if json.Unmarshal(hdr, &h) != nil || h.Alg != "HS256" {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(tc2pSecret.Reveal()))
	m.Write([]byte(parts[0] + "." + parts[1]))
	return hmac.Equal(sig, m.Sum(nil))
}

// FuzzTwoC2PResponse feeds arbitrary answer bodies to the parser, to the
// adapter's reading of token answers and to its reading of inquiry
// answers. Whatever the bytes: no panic, and nothing settles a payment as
// made, pending or declined unless the body carries a JWT that an
// independent HS256 check accepts.
func FuzzTwoC2PResponse(f *testing.F) {
	for _, seed := range []string{
		tc2pSigned("0000", `"paymentToken":"tok","webPaymentUrl":"https://pay.example/tok"`),
		tc2pSigned("0001", `"invoiceNo":"ORDER1","amount":1234.56,"currencyCode":"THB","tranRef":"T1"`),
		tc2pSigned("4005", `"invoiceNo":"ORDER1"`),
		tc2pSigned("2002", ""),
		tc2pSigned("0000", `"exp":1000`),
		tc2pPlain("9015"),
		tc2pPlain("0000"),
		`{"payload":"` + twoc2ptest.Forge(`{"alg":"none"}`, `{"respCode":"0000"}`, nil, nil) + `"}`,
		`{"payload":1}`,
		`<html>503</html>`,
		``,
	} {
		f.Add([]byte(seed))
	}
	a := twoc2p.Provider{MerchantID: tc2pMerchant, Now: func() time.Time { return tc2pNow }}
	u, _ := url.Parse("https://pgw.example")
	target := idempay.Target{BaseURL: u, Credentials: tc2pSecret}
	req, err := a.NewChargeRequest(context.Background(), target, tc2pOrder("ORDER1"), "key-1")
	if err != nil {
		f.Fatal(err)
	}
	signer := idempay.TwoC2PSigner{Secret: tc2pSecret, Now: a.Now}
	rec := idempay.Record{ID: "ORDER1", Key: "key-1"}

	f.Fuzz(func(t *testing.T, body []byte) {
		signed := tc2pIndependentlySigned(body)

		r, err := twoc2p.ParseResponse(signer, body)
		if err == nil {
			if r.Signed && !signed {
				t.Fatalf("parser accepted a signature the independent check refuses: %q", body)
			}
			if !r.Signed {
				switch r.RespCode {
				case "", "0000", "0001", "2001", "4200":
					t.Fatalf("unsigned answer accepted with respCode %q: %q", r.RespCode, body)
				}
			}
		}

		v := a.ReadCharge(&http.Response{StatusCode: 200, Request: req}, body)
		switch v.Kind {
		case idempay.KindSucceeded:
			t.Fatalf("a token answer never reads as a completed payment: %q", body)
		case idempay.KindPending:
			if !signed || v.Charge == nil {
				t.Fatalf("pending from an answer that is not signed: %q", body)
			}
		}

		hc := &http.Client{Transport: tc2pRoundTrip{status: 200, body: body}}
		v, err = a.FindCharge(context.Background(), hc, target, rec)
		if err != nil {
			t.Fatalf("an inquiry that was answered must give a verdict, got %v", err)
		}
		switch v.Kind {
		case idempay.KindSucceeded, idempay.KindPending, idempay.KindDeclined:
			if !signed {
				t.Fatalf("inquiry settled (%v) by an answer that is not signed: %q", v.Kind, body)
			}
			if v.Kind != idempay.KindDeclined && (v.Charge == nil || v.Charge.IntentID != "ORDER1") {
				t.Fatalf("found without a charge of the intent: %+v", v)
			}
		}
	})
}
