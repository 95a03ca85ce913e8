package twoc2ptest_test

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/idempay/idempay/idempaytest/twoc2ptest"
)

// A refund through Payment Maintenance, sealed as a merchant seals it: the
// XML encrypted to 2C2P's key and signed with the merchant's; the answer
// opened the other way. The payment is settled when paid, so it can be
// refunded at once, in part.
func Example() {
	srv := twoc2ptest.NewServer()
	defer srv.Close()
	// The customer pays an invoice opened by a token request (made by
	// provider/twoc2p in a real test; by hand here).
	if err := srv.OpenTransaction("INV1", "key-1", "1500.00", "THB"); err != nil {
		panic(err)
	}
	if err := srv.Pay("INV1"); err != nil {
		panic(err)
	}
	tok, err := twoc2ptest.Seal(srv.ActionRequest("R", "INV1", "500.00", "refund-1"), srv.GatewayKey(), srv.MerchantKey())
	if err != nil {
		panic(err)
	}
	resp, err := srv.Client().Post(srv.URL+twoc2ptest.MaintenancePath, "text/plain", strings.NewReader(tok))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	sealed, _ := io.ReadAll(resp.Body)
	plain, err := twoc2ptest.Open(string(sealed), srv.GatewayKey(), srv.MerchantKey())
	if err != nil {
		panic(err)
	}
	var a twoc2ptest.PaymentProcessResponse
	_ = xml.Unmarshal(plain, &a)
	fmt.Println(a.RespCode, a.Status, a.Amount, "refunded:", srv.Ledger().Refunded("INV1"))
	// Output: 00 RF 500.00 refunded: 50000
}
