package refserver

import (
	"encoding/json"
	"net/http"
	"testing"
)

func TestParseKey(t *testing.T) {
	cases := []struct {
		values []string
		key    string // "" means refused
	}{
		{[]string{"abc"}, "abc"},
		{[]string{" abc "}, "abc"},
		{[]string{`"abc"`}, "abc"},
		{[]string{`"a\"b"`}, `a"b`},
		{[]string{`"a\\b"`}, `a\b`},
		{[]string{`"a"b"`}, ""},
		{[]string{`"a\b"`}, ""},
		{[]string{`"abc\"`}, ""},
		{[]string{`"é"`}, ""},
		{[]string{`"`}, ""},
		{[]string{`""`}, ""},
		{[]string{""}, ""},
		{nil, ""},
		{[]string{"a", "b"}, ""},
		{[]string{"12345"}, ""}, // longer than the limit of 4
	}
	for _, tc := range cases {
		key, err := parseKey(tc.values, 4)
		if tc.key == "" && err == nil {
			t.Errorf("%q accepted as %q", tc.values, key)
		}
		if tc.key != "" && (err != nil || key != tc.key) {
			t.Errorf("%q: got %q, %v; want %q", tc.values, key, err, tc.key)
		}
	}
}

func TestFingerprint(t *testing.T) {
	base := `{"order_id":"o","amount_jpy":1500,"omise_token":"t","metadata":{"a":"1","b":"2"}}`
	same := []string{
		"{\n  \"metadata\": {\"b\":\"2\", \"a\":\"1\"},\n  \"omise_token\": \"\\u0074\",\n  \"amount_jpy\": 1500,\n  \"order_id\": \"o\"\n}",
		`{"order_id":"o","amount_jpy":1500.0,"omise_token":"t","metadata":{"a":"1","b":"2"}}`,
		`{"order_id":"o","amount_jpy":1.5e3,"omise_token":"t","metadata":{"a":"1","b":"2"}}`,
	}
	different := []string{
		`{"order_id":"o","amount_jpy":1501,"omise_token":"t","metadata":{"a":"1","b":"2"}}`,
		`{"order_id":"o","amount_jpy":1500,"omise_token":"t","metadata":{"a":"1"}}`,
		`{"order_id":"o","amount_jpy":1500,"omise_token":"t","metadata":{"a":"1","b":"2"},"x":null}`,
		`{"order_id":"o","amount_jpy":"1500","omise_token":"t","metadata":{"a":"1","b":"2"}}`,
	}
	want, err := fingerprint(http.MethodPost, "/p", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range same {
		if got, _ := fingerprint(http.MethodPost, "/p", []byte(b)); got != want {
			t.Errorf("%s: fingerprint differs from the canonical request", b)
		}
	}
	for _, b := range different {
		if got, _ := fingerprint(http.MethodPost, "/p", []byte(b)); got == want {
			t.Errorf("%s: fingerprint equals another request's", b)
		}
	}
	if got, _ := fingerprint(http.MethodPut, "/p", []byte(base)); got == want {
		t.Error("the method is not fingerprinted")
	}
	if got, _ := fingerprint(http.MethodPost, "/q", []byte(base)); got == want {
		t.Error("the path is not fingerprinted")
	}
	if _, err := fingerprint(http.MethodPost, "/p", []byte(base+"{}")); err == nil {
		t.Error("trailing data accepted")
	}
}

func TestCanonicalNumber(t *testing.T) {
	cases := map[string]string{
		"1500": "1500", "1500.0": "1500", "1.5e3": "1500", "15E2": "1500", "-0": "0", "-0.0": "0",
		"0.5": "0.5", "5e-1": "0.5", "123456789012345678901234567890": "123456789012345678901234567890",
		"1e300": "1e+300",
	}
	for in, want := range cases {
		if got := canonicalNumber(json.Number(in)); string(got) != want {
			t.Errorf("%s -> %s, want %s", in, got, want)
		}
	}
}

func TestParseChargeMoney(t *testing.T) {
	for _, tc := range []struct {
		body     string
		amount   int64
		currency string
		param    string // refused with this param
	}{
		{`{"order_id":"o","amount_jpy":1500,"omise_token":"t"}`, 1500, "JPY", ""},
		{`{"order_id":"o","amount":1500,"currency":"JPY","amount_jpy":1500,"omise_token":"t"}`, 1500, "JPY", ""},
		{`{"order_id":"o","amount":1999,"currency":"USD","omise_token":"t"}`, 1999, "USD", ""},
		{`{"order_id":"o","amount":1999,"currency":"usd","omise_token":"t"}`, 0, "", "currency"},
		{`{"order_id":"o","amount":1999,"currency":"USD","amount_jpy":1999,"omise_token":"t"}`, 0, "", "amount"},
		{`{"order_id":"o","amount":1500,"currency":"JPY","amount_jpy":1501,"omise_token":"t"}`, 0, "", "amount"},
		{`{"order_id":"o","currency":"USD","omise_token":"t"}`, 0, "", "amount"},
		{`{"order_id":"o","omise_token":"t"}`, 0, "", "amount_jpy"},
	} {
		req, err := parseCharge([]byte(tc.body))
		if tc.param != "" {
			if err == nil || err.Param != tc.param {
				t.Errorf("%s: want refused on %s, got %+v", tc.body, tc.param, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.body, err.Message)
			continue
		}
		if a, c := req.money(); a != tc.amount || c != tc.currency {
			t.Errorf("%s: got %d %s", tc.body, a, c)
		}
	}
}
