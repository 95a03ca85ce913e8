package omisetest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/idempay/idempay/idempaytest/omisetest"
)

// A card token can be charged once: a second charge with it is refused
// with used_token, whatever the Idempotency-Key.
func Example() {
	srv := omisetest.NewServer()
	defer srv.Close()
	form := url.Values{"amount": {"150000"}, "currency": {"thb"}, "card": {"tokn_test_1"},
		"metadata[idempay_intent]": {"order-1"}}
	for range 2 {
		r, _ := http.NewRequest(http.MethodPost, srv.URL+"/charges", strings.NewReader(form.Encode()))
		r.SetBasicAuth("skey_test_123", "")
		resp, err := srv.Client().Do(r)
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
