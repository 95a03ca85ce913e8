package faults

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A dropped request reaches the client as an error, never as an answer.
func TestDrop(t *testing.T) {
	for _, reset := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { Drop(w, reset) }))
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("x"))
		if err == nil {
			resp.Body.Close()
			t.Errorf("reset %v: got an answer %d", reset, resp.StatusCode)
		}
		srv.Close()
	}
}
