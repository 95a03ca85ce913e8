package idempaytest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/idempay/idempay"
)

// This file signs webhooks the way the providers do, for tests of code
// behind package webhook. It does not import package webhook: a signer
// that shared the verifier's code would agree with it even if both were
// wrong. Header names are spelled out here for the same reason.

// SignStripeWebhook returns the headers Stripe would send with body,
// signed at t with the endpoint signing secret: Stripe-Signature
// "t=<unix>,v1=<hex>" and Content-Type application/json. Each secret in
// more adds one v1 signature after the first, as Stripe sends while an
// endpoint's secret is being rolled. Pass a body byte for byte as the
// request will carry it.
func SignStripeWebhook(body []byte, secret idempay.Secret, t time.Time, more ...idempay.Secret) http.Header {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + ts)
	for _, s := range append([]idempay.Secret{secret}, more...) {
		b.WriteString(",v1=" + hmacHex([]byte(s.Reveal()), ts, body))
	}
	h := make(http.Header)
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Stripe-Signature", b.String())
	return h
}

// SignOmiseWebhook returns the headers Omise would send with body, signed
// at t with the webhook secret as the dashboard shows it (base64):
// Omise-Signature (hex), Omise-Signature-Timestamp (unix seconds) and
// Content-Type application/json. Each secret in more adds a signature,
// comma-separated, as during a secret rotation. The scheme follows
// independent implementations, not official Omise text (see package
// webhook). It panics if a secret is not base64, as a fixture built wrong
// should stop the test at once; the panic does not quote the secret.
func SignOmiseWebhook(body []byte, secret idempay.Secret, t time.Time, more ...idempay.Secret) http.Header {
	ts := strconv.FormatInt(t.Unix(), 10)
	sigs := make([]string, 0, 1+len(more))
	for i, s := range append([]idempay.Secret{secret}, more...) {
		key, err := base64.StdEncoding.DecodeString(s.Reveal())
		if err != nil { // the dashboard's form is padded; accept a copy that lost its "="
			key, err = base64.RawStdEncoding.DecodeString(s.Reveal())
		}
		if err != nil || len(key) == 0 {
			panic(fmt.Sprintf("idempaytest: SignOmiseWebhook: secret %d is not base64", i))
		}
		sigs = append(sigs, hmacHex(key, ts, body))
	}
	h := make(http.Header)
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Omise-Signature", strings.Join(sigs, ","))
	h.Set("Omise-Signature-Timestamp", ts)
	return h
}

// hmacHex is hex(HMAC-SHA256(key, ts + "." + body)), the signature both
// providers use.
func hmacHex(key []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(ts + "."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// WebhookRequest returns a POST request to target carrying body and the
// header (from SignStripeWebhook or SignOmiseWebhook), ready for a
// Handler's ServeHTTP with an httptest.ResponseRecorder. Like
// httptest.NewRequest, it panics if target cannot be parsed.
func WebhookRequest(target string, body []byte, header http.Header) *http.Request {
	r := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	for k, v := range header {
		r.Header[k] = append([]string(nil), v...)
	}
	return r
}

// StripeEvent returns the body of a Stripe event: {"id": id, "object":
// "event", "type": eventType, "livemode": false, "data": {"object":
// object}}, with object encoded by encoding/json ({} if nil). It panics
// if object cannot be encoded.
func StripeEvent(id, eventType string, object any) []byte {
	return mustJSON(struct {
		ID       string `json:"id"`
		Object   string `json:"object"`
		Type     string `json:"type"`
		Livemode bool   `json:"livemode"`
		Data     struct {
			Object any `json:"object"`
		} `json:"data"`
	}{ID: id, Object: "event", Type: eventType, Data: struct {
		Object any `json:"object"`
	}{orEmpty(object)}})
}

// OmiseEvent returns the body of an Omise event: {"object": "event",
// "id": id, "livemode": false, "key": key, "data": object}, with object
// encoded by encoding/json ({} if nil). It panics if object cannot be
// encoded.
func OmiseEvent(id, key string, object any) []byte {
	return mustJSON(struct {
		Object   string `json:"object"`
		ID       string `json:"id"`
		Livemode bool   `json:"livemode"`
		Key      string `json:"key"`
		Data     any    `json:"data"`
	}{Object: "event", ID: id, Key: key, Data: orEmpty(object)})
}

func orEmpty(v any) any {
	if v == nil {
		return struct{}{}
	}
	return v
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("idempaytest: event object cannot be encoded: " + err.Error())
	}
	return b
}
