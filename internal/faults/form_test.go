package faults

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReadForm(t *testing.T) {
	r := httptest.NewRequest("POST", "/charges", strings.NewReader("amount=100&metadata%5Bidempay_intent%5D=order-1"))
	r.Header.Set("Idempotency-Key", "  k1 ")
	in, err := ReadForm(r, "idempay_intent")
	if err != nil || in.Key != "k1" || in.Intent != "order-1" || in.Form.Get("amount") != "100" || in.Request != r {
		t.Fatalf("ReadForm = %+v, %v", in, err)
	}
	// A body that does not parse is an error, but what parsed is kept.
	r = httptest.NewRequest("POST", "/charges", strings.NewReader("metadata%5Bidempay_intent%5D=order-2&bad=%zz"))
	in, err = ReadForm(r, "idempay_intent")
	if err == nil || in.Intent != "order-2" {
		t.Fatalf("bad body: %+v, %v", in, err)
	}
}
