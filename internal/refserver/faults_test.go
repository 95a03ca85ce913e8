package refserver

import (
	"errors"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/idempay/idempay/internal/faults"
)

// TestPreFault: the connection is closed before the handler's logic;
// nothing is claimed, so a retry charges afresh.
func TestPreFault(t *testing.T) {
	s, ts := newTest(t, Config{})
	c := freshClient()
	s.InjectKey("k1", Pre)
	r := post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
	mustDrop(t, r)
	if !errors.Is(r.err, io.EOF) {
		t.Errorf("client error %v, want one wrapping io.EOF", r.err)
	}
	mustCharges(t, s, 0)
	retry := post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
	mustStatus(t, retry, 201)
	if retry.replayed() {
		t.Error("retry after a Pre fault was a replay: something was stored")
	}
	mustCharges(t, s, 1)
	if st := s.Stats(); st.Faults[Pre] != 1 || st.ByKey["k1"] != 2 {
		t.Errorf("stats: %+v", st)
	}
}

// TestMidFaultLeaseReclaim: a crash after the claim blocks the key with
// 409 until the lease expires; then the next request charges, once.
func TestMidFaultLeaseReclaim(t *testing.T) {
	clock := NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	s, ts := newTest(t, Config{Lease: 50 * time.Millisecond, Now: clock.Now})
	c := freshClient()
	s.InjectKey("k1", Mid)
	mustDrop(t, post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa")))
	mustCharges(t, s, 0)

	clock.Advance(49 * time.Millisecond)
	blocked := post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
	mustStatus(t, blocked, 409)
	if e := blocked.apiError(t); e.Type != faults.TypeConflict || e.Code != "idempotency_key_in_use" {
		t.Errorf("409 error = %+v", e)
	}
	// The claim is bound to its request even while crashed.
	mustStatus(t, post(t, c, ts.URL, "k1", body("ord_1", 999, "tok_visa")), 422)

	clock.Advance(time.Millisecond)
	r := post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
	mustStatus(t, r, 201)
	if r.replayed() {
		t.Error("the reclaiming request was answered by a replay")
	}
	mustCharges(t, s, 1)
	if st := s.Stats(); st.Reclaims != 1 || st.Faults[Mid] != 1 {
		t.Errorf("stats: reclaims %d, mid faults %d; want 1 and 1", st.Reclaims, st.Faults[Mid])
	}
}

// TestMidFaultLeaseRealClock: the same with the default clock and a
// short lease, as chaos tests run it.
func TestMidFaultLeaseRealClock(t *testing.T) {
	s, ts := newTest(t, Config{Lease: 30 * time.Millisecond})
	c := freshClient()
	s.InjectKey("k1", Mid)
	mustDrop(t, post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa")))
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
		if r.err == nil && r.status == http.StatusCreated && !r.replayed() {
			break
		}
		if r.err != nil || r.status != http.StatusConflict || time.Now().After(deadline) {
			t.Fatalf("waiting for the lease: status %d, err %v", r.status, r.err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mustCharges(t, s, 1)
}

// TestPostFaultThenReplay: the charge is made and stored, the answer is
// lost; the retry gets the replay and no second charge.
func TestPostFaultThenReplay(t *testing.T) {
	s, ts := newTest(t, Config{})
	c := freshClient()
	s.InjectKey("k1", Post)
	mustDrop(t, post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa")))
	mustCharges(t, s, 1)
	r := post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
	mustStatus(t, r, 201)
	if !r.replayed() {
		t.Fatal("the retry after a Post fault was not marked replayed")
	}
	if got, want := r.charge(t).ChargeID, s.Ledger().Charges()[0].ID; got != want {
		t.Errorf("replayed charge %s, ledger has %s", got, want)
	}
	mustCharges(t, s, 1)
	if st := s.Stats(); st.Faults[Post] != 1 || st.Replays != 1 {
		t.Errorf("stats: post faults %d, replays %d; want 1 and 1", st.Faults[Post], st.Replays)
	}
}

// TestPostFaultOnDecline: a lost decline is still the decline.
func TestPostFaultOnDecline(t *testing.T) {
	s, ts := newTest(t, Config{})
	s.InjectKey("k1", Post)
	mustDrop(t, post(t, freshClient(), ts.URL, "k1", body("ord_1", 1500, "tok_decline")))
	r := post(t, freshClient(), ts.URL, "k1", body("ord_1", 1500, "tok_decline"))
	mustStatus(t, r, 402)
	if !r.replayed() {
		t.Error("the decline was not replayed")
	}
	mustCharges(t, s, 0)
}

// TestUnavailable: 503 with Retry-After before anything is claimed.
func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		retryAfter time.Duration
		want       string
	}{{0, "0"}, {3 * time.Second, "3"}} {
		s, ts := newTest(t, Config{RetryAfter: tc.retryAfter})
		s.InjectNext(Unavailable)
		r := post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
		mustStatus(t, r, 503)
		if got := r.header.Get("Retry-After"); got != tc.want {
			t.Errorf("Retry-After = %q, want %q", got, tc.want)
		}
		if e := r.apiError(t); e.Type != faults.TypeAPI {
			t.Errorf("503 error = %+v", e)
		}
		retry := post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
		mustStatus(t, retry, 201)
		if retry.replayed() {
			t.Error("a 503 was stored under the key")
		}
		mustCharges(t, s, 1)
	}
}

// TestInternalErrorReleasesKey: by default a 500 forgets the key (it
// charged nothing), so the retry executes.
func TestInternalErrorReleasesKey(t *testing.T) {
	s, ts := newTest(t, Config{})
	s.InjectKey("k1", Internal)
	r := post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
	mustStatus(t, r, 500)
	mustCharges(t, s, 0)
	retry := post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
	mustStatus(t, retry, 201)
	if retry.replayed() {
		t.Error("retry after a released 500 was a replay")
	}
	mustCharges(t, s, 1)
}

// TestInternalErrorStored: with StoreServerErrors the 500 is the key's
// answer for good, replayed and marked.
func TestInternalErrorStored(t *testing.T) {
	s, ts := newTest(t, Config{StoreServerErrors: true})
	s.InjectKey("k1", Internal)
	mustStatus(t, post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa")), 500)
	for range 2 {
		r := post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
		mustStatus(t, r, 500)
		if !r.replayed() || r.apiError(t).Code != "internal_error" {
			t.Errorf("replayed %v, body %s", r.replayed(), r.body)
		}
	}
	mustCharges(t, s, 0)
}

// TestFaultsThatDoNotApply: Mid and Internal need a claim; on a completed
// key there is none, so the replay is sent and nothing is counted.
func TestFaultsThatDoNotApply(t *testing.T) {
	s, ts := newTest(t, Config{})
	mustStatus(t, post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa")), 201)
	s.InjectKey("k1", Mid, Internal)
	for range 2 {
		r := post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
		mustStatus(t, r, 201)
		if !r.replayed() {
			t.Error("not a replay")
		}
	}
	if f := s.Stats().Faults; len(f) != 0 {
		t.Errorf("faults counted: %v", f)
	}
	mustCharges(t, s, 1)
}

// TestScriptPrecedence: key scripts, then order scripts, then the next
// request's script; NoFault lets one request through.
func TestScriptPrecedence(t *testing.T) {
	s, ts := newTest(t, Config{})
	c := freshClient()
	s.InjectNext(Unavailable)
	s.InjectOrder("ord_2", Internal)
	s.InjectKey("k1", NoFault, Pre)

	mustStatus(t, post(t, c, ts.URL, "k1", body("ord_1", 1, "tok")), 201) // key: NoFault
	mustDrop(t, post(t, c, ts.URL, "k1", body("ord_1", 1, "tok")))        // key: Pre
	mustStatus(t, post(t, c, ts.URL, "k2", body("ord_2", 1, "tok")), 500) // order
	mustStatus(t, post(t, c, ts.URL, "k3", body("ord_3", 1, "tok")), 503) // next
	mustStatus(t, post(t, c, ts.URL, "k4", body("ord_4", 1, "tok")), 201) // nothing left
	mustStatus(t, post(t, c, ts.URL, "k1", body("ord_1", 1, "tok")), 201) // script used up
	want := map[Fault]int{Pre: 1, Internal: 1, Unavailable: 1}
	if got := s.Stats().Faults; len(got) != len(want) || got[Pre] != 1 || got[Internal] != 1 || got[Unavailable] != 1 {
		t.Errorf("faults %v, want %v", got, want)
	}
}

// TestRandomFaults: rates drive the faults; Pre at rate 1 drops every
// request, and the ledger stays empty.
func TestRandomFaults(t *testing.T) {
	s, ts := newTest(t, Config{Faults: FaultRates{Pre: 1}})
	c := freshClient()
	for range 5 {
		mustDrop(t, post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa")))
	}
	mustCharges(t, s, 0)
	if err := s.SetFaults(FaultRates{}); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa")), 201)
	if got := s.Stats().Faults[Pre]; got != 5 {
		t.Errorf("Pre faults %d, want 5", got)
	}
}

// TestDropErrors: how a dropped connection looks to a net/http client.
func TestDropErrors(t *testing.T) {
	for _, tc := range []struct {
		reset bool
		want  error
	}{{false, io.EOF}, {true, syscall.ECONNRESET}} {
		s, ts := newTest(t, Config{DropWithReset: tc.reset})
		s.InjectNext(Post)
		r := post(t, freshClient(), ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
		if !errors.Is(r.err, tc.want) {
			t.Errorf("reset %v: client error %v, want %v", tc.reset, r.err, tc.want)
		}
	}
}

// TestTransportRetriesDropsOnReusedConnections documents a trap: on a
// kept-alive connection, net/http re-sends a dropped request that carries
// an Idempotency-Key, so the caller sees the retry's answer, not the drop.
// CloseConnections turns this off.
func TestTransportRetriesDropsOnReusedConnections(t *testing.T) {
	s, ts := newTest(t, Config{})
	c := ts.Client() // keeps connections alive
	mustStatus(t, post(t, c, ts.URL, "warm", body("ord_0", 1, "tok")), 201)
	s.InjectKey("k1", Post)
	r := post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
	mustStatus(t, r, 201)
	if !r.replayed() || s.Stats().ByKey["k1"] != 2 {
		t.Errorf("want a hidden retry answered by a replay: replayed %v, requests %d",
			r.replayed(), s.Stats().ByKey["k1"])
	}

	// After Mid the hidden retry meets the live claim.
	s.InjectKey("k2", Mid)
	mustStatus(t, post(t, c, ts.URL, "k2", body("ord_2", 1500, "tok_visa")), 409)
	if n := s.Stats().ByKey["k2"]; n != 2 {
		t.Errorf("server saw %d requests for k2, want 2", n)
	}

	s, ts = newTest(t, Config{CloseConnections: true})
	c = ts.Client()
	mustStatus(t, post(t, c, ts.URL, "warm", body("ord_0", 1, "tok")), 201)
	s.InjectKey("k1", Post)
	mustDrop(t, post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa")))
	if n := s.Stats().ByKey["k1"]; n != 1 {
		t.Errorf("with CloseConnections the server saw %d requests, want 1", n)
	}
}

// TestLeaseExpiresDuringProcessing: a handler slower than its lease is
// fenced off: the request that took the key over charges, the slow one
// does not, and it answers 409.
func TestLeaseExpiresDuringProcessing(t *testing.T) {
	clock := NewManualClock(time.Now())
	// The taker must claim within the slow request's latency: a whole
	// second leaves room for a loaded -race run.
	s, ts := newTest(t, Config{Lease: time.Second, Now: clock.Now, Latency: time.Second})
	slow := make(chan result, 1)
	go func() { slow <- post(t, freshClient(), ts.URL, "k1", body("ord_1", 1500, "tok_visa")) }()
	waitInFlight(t, s, "", "k1")
	clock.Advance(time.Second)
	taker := post(t, freshClient(), ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
	mustStatus(t, taker, 201)
	if taker.replayed() || s.Stats().Reclaims != 1 {
		t.Fatalf("the taker did not reclaim the key: replayed %v, reclaims %d", taker.replayed(), s.Stats().Reclaims)
	}
	mustStatus(t, <-slow, 409)
	mustCharges(t, s, 1)
	if got := s.Ledger().Charges()[0].ID; got != taker.charge(t).ChargeID {
		t.Errorf("ledger charge %s is not the taker's", got)
	}
}

// TestOnRequestHook: called for every charge request, before faults and
// before processing, with the unquoted key and the order.
func TestOnRequestHook(t *testing.T) {
	type seen struct {
		key, order string
		charges    int
	}
	calls := make(chan seen, 10)
	var s *Server
	s, ts := newTest(t, Config{OnRequest: func(ri RequestInfo) {
		calls <- seen{ri.Key, ri.OrderID, s.Ledger().Len()}
	}})
	s.InjectNext(Pre)
	mustDrop(t, post(t, freshClient(), ts.URL, `"k1"`, body("ord_1", 1500, "tok_visa")))
	mustStatus(t, post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa")), 201)
	mustStatus(t, post(t, ts.Client(), ts.URL, `"bad`, `junk`), 400)
	want := []seen{{"k1", "ord_1", 0}, {"k1", "ord_1", 0}, {`"bad`, "", 1}}
	for i, w := range want {
		if got := <-calls; got != w {
			t.Errorf("call %d: %+v, want %+v", i, got, w)
		}
	}
}

// TestConfigValidation: bad configs are refused.
func TestConfigValidation(t *testing.T) {
	bad := []Config{
		{Faults: FaultRates{Pre: -0.1}},
		{Faults: FaultRates{Mid: 1.1}},
		{Faults: FaultRates{Pre: 0.6, Post: 0.6}},
		{Lease: -time.Second},
		{Path: "charges"},
		{MaxKeyLength: -1},
	}
	for i, cfg := range bad {
		if cfg.Validate() == nil {
			t.Errorf("config %d accepted", i)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New accepted config %d", i)
				}
			}()
			New(cfg)
		}()
	}
	if New(Config{}).SetFaults(FaultRates{Post: 2}) == nil {
		t.Error("SetFaults accepted a rate of 2")
	}
	if got := Fault(42).String(); got != "fault(42)" {
		t.Errorf("String = %q", got)
	}
}

// waitInFlight waits until the merchant's key is claimed and not finished.
func waitInFlight(t *testing.T, s *Server, merchant, key string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if s.keys.InFlight(merchant, key) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("key %q of merchant %q never claimed", key, merchant)
		}
		time.Sleep(time.Millisecond)
	}
}
