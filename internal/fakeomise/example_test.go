package fakeomise_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/idempay/idempay/internal/fakeomise"
)

// A card token can be charged once: a second charge with it is refused
// with used_token, whatever the Idempotency-Key.
func Example() {
	_, base, stop := fakeomise.Start(fakeomise.Config{})
	defer stop()
	form := url.Values{"amount": {"150000"}, "currency": {"thb"}, "card": {"tokn_test_1"},
		"metadata[idempay_intent]": {"order-1"}}
	for range 2 {
		r, _ := http.NewRequest(http.MethodPost, base+"/charges", strings.NewReader(form.Encode()))
		r.SetBasicAuth("skey_test_123", "")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, strings.Contains(string(body), `"used_token"`))
	}
	// Output:
	// 200 false
	// 400 true
}
