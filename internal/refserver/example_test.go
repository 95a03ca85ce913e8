package refserver_test

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/idempay/idempay/internal/refserver"
)

// A charge whose response is lost (a Post fault) is retried with the same
// key: the retry is answered by the replay and the order is charged once.
func Example() {
	srv, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	srv.InjectNext(refserver.Post)

	// A fresh connection per request, so that the drop reaches us instead
	// of being retried inside net/http's Transport.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	charge := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, url+refserver.DefaultPath,
			strings.NewReader(`{"order_id":"ord_1","amount_jpy":1500,"omise_token":"tok_visa"}`))
		req.Header.Set("Idempotency-Key", "9f2c-ord_1")
		return client.Do(req)
	}

	_, err := charge()
	fmt.Println("first attempt lost:", err != nil)
	resp, err := charge()
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println("retry:", resp.StatusCode, "replayed:", resp.Header.Get("Idempotency-Replayed"))
	fmt.Println("charges:", srv.Ledger().Count("ord_1"), "duplicates:", srv.Ledger().Check())
	// Output:
	// first attempt lost: true
	// retry: 201 replayed: true
	// charges: 1 duplicates: <nil>
}
