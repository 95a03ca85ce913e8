package refserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/idempay/idempay/internal/faults"
)

// TestChargeContract checks each line of the contract with one request
// against a fresh server.
func TestChargeContract(t *testing.T) {
	valid := body("ord_1", 1500, "tok_visa")
	auth := map[string]string{"sk_test_a": "acct_a"}
	cases := []struct {
		name      string
		cfg       Config
		key       string
		payload   string
		headers   []string
		status    int
		errType   string // for error responses
		errCode   string
		param     string
		storedKey string // for 201: the key the charge is recorded under
	}{
		{name: "success", key: "k1", payload: valid, status: 201, storedKey: "k1"},
		{name: "structured-field key is unquoted", key: `"k1"`, payload: valid, status: 201, storedKey: "k1"},
		{name: "structured-field escapes", key: `"a\"b\\c"`, payload: valid, status: 201, storedKey: `a"b\c`},
		{name: "key of 255 characters", key: strings.Repeat("k", 255), payload: valid, status: 201,
			storedKey: strings.Repeat("k", 255)},
		{name: "metadata accepted", key: "k1", status: 201, storedKey: "k1",
			payload: `{"order_id":"ord_1","amount_jpy":1500,"omise_token":"tok_visa","metadata":{"cart":"c9"}}`},
		{name: "missing key", payload: valid, status: 400, errType: faults.TypeInvalid, errCode: "parameter_missing"},
		{name: "blank key", key: "   ", payload: valid, status: 400, errType: faults.TypeInvalid, errCode: "parameter_missing"},
		{name: "empty quoted key", key: `""`, payload: valid, status: 400, errType: faults.TypeInvalid, errCode: "parameter_invalid"},
		{name: "unterminated quoted key", key: `"abc`, payload: valid, status: 400, errType: faults.TypeInvalid, errCode: "parameter_invalid"},
		{name: "bad escape in quoted key", key: `"a\nb"`, payload: valid, status: 400, errType: faults.TypeInvalid, errCode: "parameter_invalid"},
		{name: "key of 256 characters", key: strings.Repeat("k", 256), payload: valid, status: 400,
			errType: faults.TypeInvalid, errCode: "parameter_invalid"},
		{name: "zero amount", key: "k1", payload: body("ord_1", 0, "tok_visa"), status: 400,
			errType: faults.TypeInvalid, errCode: "parameter_invalid", param: "amount_jpy"},
		{name: "negative amount", key: "k1", payload: body("ord_1", -5, "tok_visa"), status: 400,
			errType: faults.TypeInvalid, errCode: "parameter_invalid", param: "amount_jpy"},
		{name: "fractional amount", key: "k1", status: 400, errType: faults.TypeInvalid, errCode: "parameter_invalid", param: "amount_jpy",
			payload: `{"order_id":"ord_1","amount_jpy":1500.5,"omise_token":"tok_visa"}`},
		{name: "amount as string", key: "k1", status: 400, errType: faults.TypeInvalid, errCode: "parameter_invalid", param: "amount_jpy",
			payload: `{"order_id":"ord_1","amount_jpy":"1500","omise_token":"tok_visa"}`},
		{name: "missing order", key: "k1", payload: `{"amount_jpy":1500,"omise_token":"tok_visa"}`, status: 400,
			errType: faults.TypeInvalid, errCode: "parameter_invalid", param: "order_id"},
		{name: "missing token", key: "k1", payload: `{"order_id":"ord_1","amount_jpy":1500}`, status: 400,
			errType: faults.TypeInvalid, errCode: "parameter_invalid", param: "omise_token"},
		{name: "metadata not strings", key: "k1", status: 400, errType: faults.TypeInvalid, errCode: "parameter_invalid", param: "metadata",
			payload: `{"order_id":"ord_1","amount_jpy":1500,"omise_token":"tok_visa","metadata":{"n":1}}`},
		{name: "not JSON", key: "k1", payload: `order_id=ord_1`, status: 400, errType: faults.TypeInvalid, errCode: "parameter_invalid"},
		{name: "JSON array", key: "k1", payload: `[1,2]`, status: 400, errType: faults.TypeInvalid, errCode: "parameter_invalid"},
		{name: "trailing data", key: "k1", payload: valid + `{}`, status: 400, errType: faults.TypeInvalid, errCode: "parameter_invalid"},
		{name: "decline", key: "k1", payload: body("ord_1", 1500, "tok_decline"), status: 402,
			errType: faults.TypeCard, errCode: "card_declined"},
		{name: "decline by prefix", key: "k1", payload: body("ord_1", 1500, "tok_decline_insufficient_funds"), status: 402,
			errType: faults.TypeCard, errCode: "card_declined"},
		{name: "no secret configured, any bearer", key: "k1", payload: valid, headers: []string{"Authorization", "Bearer whatever"},
			status: 201, storedKey: "k1"},
		{name: "secret missing", cfg: Config{Auth: auth}, key: "k1", payload: valid, status: 401,
			errType: faults.TypeAuth, errCode: "unauthorized"},
		{name: "secret wrong", cfg: Config{Auth: auth}, key: "k1", payload: valid, status: 401,
			headers: []string{"Authorization", "Bearer sk_test_b"}, errType: faults.TypeAuth, errCode: "unauthorized"},
		{name: "secret as basic auth", cfg: Config{Auth: auth}, key: "k1", payload: valid, status: 401,
			headers: []string{"Authorization", "Basic c2tfdGVzdF9hOg=="}, errType: faults.TypeAuth, errCode: "unauthorized"},
		{name: "secret right", cfg: Config{Auth: auth}, key: "k1", payload: valid, status: 201, storedKey: "k1",
			headers: []string{"Authorization", "Bearer sk_test_a"}},
		{name: "401 before key validation", cfg: Config{Auth: auth}, payload: valid, status: 401,
			errType: faults.TypeAuth, errCode: "unauthorized"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, ts := newTest(t, tc.cfg)
			r := post(t, ts.Client(), ts.URL, tc.key, tc.payload, tc.headers...)
			mustStatus(t, r, tc.status)
			if !strings.HasPrefix(r.header.Get("Request-Id"), "req_") {
				t.Errorf("Request-Id = %q, want req_...", r.header.Get("Request-Id"))
			}
			if r.replayed() {
				t.Error("a first request must not be marked replayed")
			}
			if tc.status == http.StatusCreated {
				checkCreated(t, s, r, tc.storedKey)
				return
			}
			mustCharges(t, s, 0)
			e := r.apiError(t)
			if e.Type != tc.errType || e.Code != tc.errCode || e.Param != tc.param {
				t.Errorf("error = %+v, want type %q code %q param %q", e, tc.errType, tc.errCode, tc.param)
			}
			if tc.status == http.StatusPaymentRequired && e.DeclineCode != "generic_decline" {
				t.Errorf("decline_code = %q, want generic_decline", e.DeclineCode)
			}
		})
	}
}

// checkCreated checks a 201 against the one charge in the ledger.
func checkCreated(t *testing.T, s *Server, r result, key string) {
	t.Helper()
	got := r.charge(t)
	mustCharges(t, s, 1)
	c := s.Ledger().Charges()[0]
	want := chargeResult{OrderID: "ord_1", ChargeID: c.ID, Status: "succeeded", AmountJPY: 1500, Amount: 1500, Currency: "JPY"}
	if got != want || !strings.HasPrefix(got.ChargeID, "ch_") {
		t.Errorf("body = %+v, want %+v", got, want)
	}
	if c.Key != key || c.Intent != "ord_1" || c.Amount != 1500 {
		t.Errorf("ledger charge = %+v, want key %q", c, key)
	}
	if echoed := r.header.Get(DefaultKeyHeader); echoed != key {
		t.Errorf("echoed key = %q, want %q", echoed, key)
	}
}

// TestValidationErrorsAreNotStored: a request refused as invalid leaves
// its key free, so the corrected request with the same key charges.
func TestValidationErrorsAreNotStored(t *testing.T) {
	invalid := []string{body("ord_1", 0, "tok_visa"), `{"order_id":"ord_1"}`, `nonsense`}
	for _, payload := range invalid {
		s, ts := newTest(t, Config{})
		mustStatus(t, post(t, ts.Client(), ts.URL, "k1", payload), 400)
		r := post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
		mustStatus(t, r, 201)
		if r.replayed() {
			t.Errorf("after %s: the corrected request was answered by a replay", payload)
		}
		mustCharges(t, s, 1)
	}
}

// TestReplay: the same request again gets the stored status and body,
// marked replayed, and charges nothing more.
func TestReplay(t *testing.T) {
	s, ts := newTest(t, Config{})
	first := post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
	mustStatus(t, first, 201)
	// Same request, spelt differently: key quoted, fields reordered,
	// whitespace and an escaped character.
	again := post(t, ts.Client(), ts.URL, `"k1"`,
		"{ \"omise_token\": \"tok_\\u0076isa\",\n \"amount_jpy\": 1500, \"order_id\": \"ord_1\" }")
	mustStatus(t, again, 201)
	if !again.replayed() {
		t.Fatalf("second response lacks %s: true; headers %v", DefaultReplayHeader, again.header)
	}
	if string(again.body) != string(first.body) {
		t.Errorf("replayed body %s, want %s", again.body, first.body)
	}
	if first.header.Get("Request-Id") == again.header.Get("Request-Id") {
		t.Error("two responses share a Request-Id")
	}
	mustCharges(t, s, 1)
	st := s.Stats()
	if st.Replays != 1 || st.ByKey["k1"] != 2 || st.ByOrder["ord_1"] != 2 || len(st.KeysByOrder["ord_1"]) != 1 {
		t.Errorf("stats: replays %d, requests for k1 %d, for ord_1 %d, keys for ord_1 %q; want 1, 2, 2, [k1]",
			st.Replays, st.ByKey["k1"], st.ByOrder["ord_1"], st.KeysByOrder["ord_1"])
	}
}

// TestKeyReuseWithOtherRequest: a key is bound to its first request.
func TestKeyReuseWithOtherRequest(t *testing.T) {
	others := map[string]string{
		"amount":   body("ord_1", 1501, "tok_visa"),
		"order":    body("ord_2", 1500, "tok_visa"),
		"token":    body("ord_1", 1500, "tok_mastercard"),
		"metadata": `{"order_id":"ord_1","amount_jpy":1500,"omise_token":"tok_visa","metadata":{"a":"b"}}`,
		"extra":    `{"order_id":"ord_1","amount_jpy":1500,"omise_token":"tok_visa","note":"x"}`,
	}
	for name, other := range others {
		t.Run(name, func(t *testing.T) {
			s, ts := newTest(t, Config{})
			mustStatus(t, post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa")), 201)
			r := post(t, ts.Client(), ts.URL, "k1", other)
			mustStatus(t, r, 422)
			if e := r.apiError(t); e.Type != faults.TypeIdempotency || e.Code != "idempotency_key_reused" {
				t.Errorf("error = %+v", e)
			}
			mustCharges(t, s, 1)
		})
	}
}

// TestDeclineIsStoredAndReplayed: a decline is final for its key.
func TestDeclineIsStoredAndReplayed(t *testing.T) {
	s, ts := newTest(t, Config{})
	declined := body("ord_1", 1500, "tok_decline")
	mustStatus(t, post(t, ts.Client(), ts.URL, "k1", declined), 402)
	r := post(t, ts.Client(), ts.URL, "k1", declined)
	mustStatus(t, r, 402)
	if !r.replayed() || r.apiError(t).Code != "card_declined" {
		t.Errorf("second decline: replayed %v, body %s", r.replayed(), r.body)
	}
	// Another card under the same key is refused: a new attempt needs a
	// new key.
	mustStatus(t, post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa")), 422)
	mustCharges(t, s, 0)
}

// TestStripeReplayHeaderSpelling: the replay header name is configurable.
func TestStripeReplayHeaderSpelling(t *testing.T) {
	_, ts := newTest(t, Config{ReplayHeader: "Idempotent-Replayed"})
	mustStatus(t, post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa")), 201)
	r := post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
	if r.header.Get("Idempotent-Replayed") != "true" || r.header.Get("Idempotency-Replayed") != "" {
		t.Errorf("replay headers: %v", r.header)
	}
}

// TestCustomPathAndKeyHeader: an API with its own spelling.
func TestCustomPathAndKeyHeader(t *testing.T) {
	s, ts := newTest(t, Config{Path: "/v2/pay", KeyHeader: "X-Request-Key", MaxKeyLength: 8})
	send := func(key string) result {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v2/pay", strings.NewReader(body("o", 1, "tok")))
		req.Header.Set("X-Request-Key", key)
		return do(ts.Client(), req)
	}
	mustStatus(t, send("123456789"), 400)
	mustStatus(t, send("12345678"), 201)
	mustStatus(t, post(t, ts.Client(), ts.URL, "k", body("o", 1, "tok")), 404)
	mustCharges(t, s, 1)
}

// TestRequestIDOnEveryResponse, whatever the route or outcome.
func TestRequestIDOnEveryResponse(t *testing.T) {
	_, ts := newTest(t, Config{})
	c := ts.Client()
	responses := []result{
		post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa")),
		post(t, c, ts.URL, "", body("ord_1", 1500, "tok_visa")),
		get(t, c, http.MethodGet, ts.URL+DefaultPath+"?order_id=ord_1"),
		get(t, c, http.MethodGet, ts.URL+DefaultPath+"?order_id=none"),
		get(t, c, http.MethodGet, ts.URL+"/elsewhere"),
		get(t, c, http.MethodDelete, ts.URL+DefaultPath),
	}
	seen := map[string]bool{}
	for i, r := range responses {
		id := r.header.Get("Request-Id")
		if r.err != nil || !strings.HasPrefix(id, "req_") || len(id) < 20 || seen[id] {
			t.Errorf("response %d (status %d, err %v): Request-Id %q", i, r.status, r.err, id)
		}
		seen[id] = true
	}
	if st := responses[5].status; st != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: status %d, want 405", st)
	}
	if st := responses[4].status; st != http.StatusNotFound {
		t.Errorf("unknown path: status %d, want 404", st)
	}
}

// TestLookup: GET by order_id finds the tenant's charge, for settling.
func TestLookup(t *testing.T) {
	s, ts := newTest(t, Config{})
	c := ts.Client()
	url := ts.URL + DefaultPath + "?order_id=ord_1"
	mustStatus(t, get(t, c, http.MethodGet, url), 404)
	mustStatus(t, post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa")), 201)
	r := get(t, c, http.MethodGet, url)
	mustStatus(t, r, 200)
	want := resultOf(s.Ledger().Charges()[0])
	if got := r.charge(t); got != want {
		t.Errorf("lookup = %+v, want %+v", got, want)
	}
	mustStatus(t, get(t, c, http.MethodGet, url, MerchantHeader, "other"), 404)
	mustStatus(t, get(t, c, http.MethodGet, ts.URL+DefaultPath), 400)
	// A declined order has no charge to find.
	mustStatus(t, post(t, c, ts.URL, "k2", body("ord_2", 1500, "tok_decline")), 402)
	mustStatus(t, get(t, c, http.MethodGet, ts.URL+DefaultPath+"?order_id=ord_2"), 404)
	if st := s.Stats(); st.Lookups != 5 {
		t.Errorf("lookups counted %d, want 5", st.Lookups)
	}
}

// TestLookupNeedsAuth when a secret is configured.
func TestLookupNeedsAuth(t *testing.T) {
	_, ts := newTest(t, Config{Auth: map[string]string{"sk": "acct"}})
	mustStatus(t, get(t, ts.Client(), http.MethodGet, ts.URL+DefaultPath+"?order_id=o"), 401)
	mustStatus(t, get(t, ts.Client(), http.MethodGet, ts.URL+DefaultPath+"?order_id=o",
		"Authorization", "Bearer sk"), 404)
}
