// Package faultstest is what the fakes' own tests share: a form-encoded
// request to a fake, and its JSON answer read back.
package faultstest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Reply is a fake's answer as a test reads it: Body is the JSON object
// answered, nil if there was none.
type Reply struct {
	Status int
	Header http.Header
	Body   map[string]any
}

// Send sends form to target with method, the Idempotency-Key key (none if
// empty), authorised by auth, and reads the answer.
func Send(hc *http.Client, method, target, key string, form url.Values, auth func(*http.Request)) (Reply, error) {
	r, err := http.NewRequest(method, target, strings.NewReader(form.Encode()))
	if err != nil {
		return Reply{}, err
	}
	auth(r)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if key != "" {
		r.Header.Set("Idempotency-Key", key)
	}
	resp, err := hc.Do(r)
	if err != nil {
		return Reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body) // not every answer is JSON: Body stays nil
	return Reply{Status: resp.StatusCode, Header: resp.Header, Body: body}, err
}

// Conn sends to one fake, each request on a new connection, so that every
// drop the fake makes reaches the test (net/http resends a keyed request
// on a reused connection that failed).
type Conn struct {
	URL string
	HC  *http.Client
}

// NewConn returns a Conn to the fake at url.
func NewConn(url string) Conn {
	return Conn{URL: url, HC: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
}

// Do sends form to path as Send does.
func (c Conn) Do(method, path, key string, form url.Values, auth func(*http.Request)) (Reply, error) {
	return Send(c.HC, method, c.URL+path, key, form, auth)
}
