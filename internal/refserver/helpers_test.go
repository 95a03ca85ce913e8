package refserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// result is what a test client saw for one request.
type result struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// errorObject is the "error" member of an error body.
type errorObject struct {
	Type        string `json:"type"`
	Code        string `json:"code"`
	DeclineCode string `json:"decline_code"`
	Param       string `json:"param"`
	Message     string `json:"message"`
}

func (r result) apiError(t *testing.T) errorObject {
	t.Helper()
	var e struct {
		Error *errorObject `json:"error"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == nil {
		t.Fatalf("status %d: body %q is not an error object (%v)", r.status, r.body, err)
	}
	return *e.Error
}

func (r result) charge(t *testing.T) chargeResult {
	t.Helper()
	var c chargeResult
	if err := json.Unmarshal(r.body, &c); err != nil {
		t.Fatalf("status %d: body %q is not a charge (%v)", r.status, r.body, err)
	}
	return c
}

func (r result) replayed() bool { return r.header.Get(DefaultReplayHeader) == "true" }

// freshClient opens a new connection for every request, so a dropped
// connection reaches the caller instead of being retried by the transport.
func freshClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{DisableKeepAlives: true},
		Timeout:   10 * time.Second,
	}
}

// newTest starts s on an httptest server closed at the end of the test.
func newTest(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s := New(cfg)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

// body builds a charge body.
func body(orderID string, amount int, token string) string {
	return fmt.Sprintf(`{"order_id":%q,"amount_jpy":%d,"omise_token":%q}`, orderID, amount, token)
}

// post sends a charge. headers are name, value pairs; a key of "" sends
// no Idempotency-Key header.
func post(t *testing.T, c *http.Client, url, key, payload string, headers ...string) result {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+DefaultPath, strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(DefaultKeyHeader, key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(c, req)
}

// get sends a request without a body to path (with query).
func get(t *testing.T, c *http.Client, method, url string, headers ...string) result {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(c, req)
}

func do(c *http.Client, req *http.Request) result {
	resp, err := c.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return result{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// mustStatus fails the test unless r is a response with the given status.
func mustStatus(t *testing.T, r result, want int) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("want status %d, got error %v", want, r.err)
	}
	if r.status != want {
		t.Fatalf("want status %d, got %d: %s", want, r.status, r.body)
	}
}

// mustDrop fails the test unless the request ended without a response.
func mustDrop(t *testing.T, r result) {
	t.Helper()
	if r.err == nil {
		t.Fatalf("want a dropped connection, got status %d: %s", r.status, r.body)
	}
}

func mustCharges(t *testing.T, s *Server, want int) {
	t.Helper()
	if got := s.Ledger().Len(); got != want {
		t.Fatalf("ledger holds %d charges, want %d: %+v", got, want, s.Ledger().Charges())
	}
}
