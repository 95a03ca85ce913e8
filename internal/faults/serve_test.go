package faults

import (
	"net/http"
	"strings"
	"testing"
)

// Serve answers on loopback until stopped; stopping twice is harmless.
func TestServe(t *testing.T) {
	url, stop := Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("url %q", url)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Fatalf("status %d", resp.StatusCode)
	}
	stop()
	stop()
	if resp, err := client.Get(url); err == nil {
		resp.Body.Close()
		t.Fatal("answered after stop")
	}
}
