package wire

import (
	"context"
	"io"
	"net/url"
	"testing"

	"github.com/idempay/idempay"
)

func TestNewFormPost(t *testing.T) {
	f := url.Values{"b": {"2"}, "a": {"1"}}
	r, err := NewFormPost(context.Background(), "https://api.example/charges", f, "key-1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	if r.Method != "POST" || r.URL.String() != "https://api.example/charges" || string(body) != "a=1&b=2" ||
		r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || r.Header.Get("Idempotency-Key") != "key-1" {
		t.Errorf("request %s %s %q %v", r.Method, r.URL, body, r.Header)
	}
	if _, err := NewFormPost(context.Background(), "://bad", f, "k"); err == nil {
		t.Error("a bad URL was accepted")
	}
}

func TestSetIfAndMetadata(t *testing.T) {
	f := url.Values{}
	SetIf(f, "customer", "")
	SetIf(f, "description", "d")
	SetTags(f, idempay.Target{Namespace: "stripe:a"}, "o1", "key-1", map[string]string{"k": "v"})
	if got := f.Encode(); got != "description=d&metadata%5Bidempay_intent%5D=o1&metadata%5Bidempay_key%5D=key-1&metadata%5Bidempay_namespace%5D=stripe%3Aa&metadata%5Bk%5D=v" {
		t.Errorf("form %s", got)
	}
}

func TestPrintable(t *testing.T) {
	for s, want := range map[string]bool{"": true, "2024-06-20": true, "2024 06 20": false, "v\x7f": false, "é": false} {
		if Printable(s) != want {
			t.Errorf("Printable(%q) = %v", s, !want)
		}
	}
}

func TestSnippet(t *testing.T) {
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	for in, want := range map[string]string{"": "", "<html>": `"<html>"`, "a\nb": `"a\nb"`,
		string(long): `"` + string(long[:200]) + `"...`} {
		if got := Snippet([]byte(in)); got != want {
			t.Errorf("Snippet(%.20q) = %.30q, want %.30q", in, got, want)
		}
	}
}
