package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/stripe"
)

// attempts is each Client's retry budget: a script of that many lost
// answers leaves a charge or refund unknown for one call of the handler.
const attempts = 4

// world is the shop as it runs in production, in one test: Stripe (the
// importable fake, whose books check that no money moved twice when the
// test ends), and instances of the shop sharing one store, as instances
// behind a load balancer share a database.
type world struct {
	t      *testing.T
	stripe *stripetest.Server
	shops  []*httptest.Server
}

func newWorld(t *testing.T, instances int, opts ...stripetest.Option) *world {
	t.Helper()
	w := &world{t: t, stripe: stripetest.NewServer(append(opts, stripetest.WithTest(t),
		stripetest.WithAPIKey("sk_test_shop"), stripetest.WithSettings(fakes.Settings{Lease: 50 * time.Millisecond}))...)}
	store := memstore.New()
	for range instances {
		pay, err := idempay.New(idempay.Config{BaseURL: w.stripe.URL, HTTPClient: w.stripe.Client(),
			Credentials: "sk_test_shop", Provider: stripe.Provider{}, Store: store,
			Retry: idempay.RetryPolicy{MaxAttempts: attempts, InitialInterval: time.Millisecond, MaxInterval: 10 * time.Millisecond,
				MaxElapsed: 5 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		g, err := guard.New(store, guard.WithScope("shop"), guard.WithIdentity(guard.SingleTenant))
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer((&shop{pay: pay}).routes(g))
		t.Cleanup(func() { hs.Close(); _ = pay.Close(context.Background()) })
		w.shops = append(w.shops, hs)
	}
	return w
}

// answer is what the frontend got back.
type answer struct {
	status   int
	replayed bool
	body     map[string]any
}

func (a answer) str(k string) string { s, _ := a.body[k].(string); return s }

// post sends one request to shop instance i, with hc (nil: a plain client).
func (w *world) post(hc *http.Client, i int, path, key string, body any) (answer, error) {
	b, _ := json.Marshal(body)
	r, _ := http.NewRequest(http.MethodPost, w.shops[i].URL+path, bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Idempotency-Key", key)
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(r)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, replayed: resp.Header.Get("Idempotency-Replayed") == "true"}
	_ = json.NewDecoder(resp.Body).Decode(&a.body)
	return a, nil
}

// until sends the request, with the same key, until the answer is final,
// as a frontend resends after a lost answer, a 503 or a 409.
func (w *world) until(hc *http.Client, i int, path, key string, body any) answer {
	w.t.Helper()
	for range 200 {
		a, err := w.post(hc, i, path, key, body)
		if err == nil && a.status != http.StatusServiceUnavailable && a.status != http.StatusConflict {
			return a
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.t.Fatalf("%s %s: no final answer", path, key)
	return answer{}
}

func checkout(order string, amount int64, pm string) checkoutRequest {
	return checkoutRequest{OrderID: order, Amount: amount, Currency: "JPY", PaymentMethod: pm}
}

func refundOf(order, id string, amount int64) refundRequest {
	return refundRequest{OrderID: order, RefundID: id, Amount: amount, Currency: "JPY"}
}

// key is a frontend's Idempotency-Key for one click.
func key(s string) string { return "click-0000000000-" + s }

// concurrently runs n copies of fn at once and returns their answers.
func concurrently(n int, fn func(i int) answer) []answer {
	out := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i] = fn(i) })
	}
	wg.Wait()
	return out
}

func (w *world) order(id string) orderAnswer {
	w.t.Helper()
	resp, err := http.Get(w.shops[0].URL + "/orders/" + id)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	var o orderAnswer
	if err := json.NewDecoder(resp.Body).Decode(&o); err != nil {
		w.t.Fatal(err)
	}
	return o
}

// A double click sends one checkout twice at once, and the frontend
// resends it later: one charge; the later answer is the stored one.
func TestCheckoutDoubleClickChargesOnce(t *testing.T) {
	w := newWorld(t, 1)
	req := checkout("order-1", 1500, "pm_card_visa")
	for _, a := range concurrently(5, func(int) answer { return w.until(nil, 0, "/checkout", key("o1"), req) }) {
		if a.status != http.StatusCreated || a.str("status") != "paid" {
			t.Errorf("a click answered %d %v", a.status, a.body)
		}
	}
	again, _ := w.post(nil, 0, "/checkout", key("o1"), req)
	if again.status != http.StatusCreated || !again.replayed {
		t.Errorf("the resend: %d replayed %v", again.status, again.replayed)
	}
	if n := w.stripe.Ledger().Count("order-1"); n != 1 {
		t.Fatalf("charged %d times", n)
	}
	if n := w.stripe.Stats().Requests; n != 1 {
		t.Errorf("Stripe got %d charge requests, want 1", n)
	}
}

// Stripe charges and every answer to the shop is lost: the shop answers
// 503, the frontend resends with its key, the charge is resumed under the
// same key and Stripe's replay settles it. One charge, one key end to end.
func TestCheckoutLostAnswersFromStripe(t *testing.T) {
	w := newWorld(t, 1)
	w.stripe.Fail("order-1", slices.Repeat([]fakes.Fault{fakes.Post}, attempts)...)
	req := checkout("order-1", 1500, "pm_card_visa")
	first, err := w.post(nil, 0, "/checkout", key("o1"), req)
	if err != nil || first.status != http.StatusServiceUnavailable || first.str("status") != "unknown" {
		t.Fatalf("first: %d %v %v", first.status, first.body, err)
	}
	a := w.until(nil, 0, "/checkout", key("o1"), req)
	if a.status != http.StatusCreated {
		t.Fatalf("resent: %d %v", a.status, a.body)
	}
	if n := w.stripe.Ledger().Count("order-1"); n != 1 {
		t.Fatalf("charged %d times", n)
	}
	if keys := w.stripe.Stats().Keys["order-1"]; len(keys) != 1 || keys[0] != key("o1") {
		t.Errorf("Stripe saw keys %v, want the frontend's", keys)
	}
}

// Stripe answers 503 twice: the Client retries within the one call.
func TestCheckoutStripeUnavailable(t *testing.T) {
	w := newWorld(t, 1)
	w.stripe.Fail("order-1", fakes.Unavailable, fakes.Unavailable)
	a, err := w.post(nil, 0, "/checkout", key("o1"), checkout("order-1", 1500, "pm_card_visa"))
	if err != nil || a.status != http.StatusCreated {
		t.Fatalf("%d %v %v", a.status, a.body, err)
	}
	if n := w.stripe.Ledger().Count("order-1"); n != 1 {
		t.Fatalf("charged %d times", n)
	}
}

// loseFirst loses the first answer of every request path it is given,
// after the shop has handled the request: the frontend's timeout.
type loseFirst struct {
	mu   sync.Mutex
	lost map[string]bool
}

func (l *loseFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if k := r.URL.Path + r.Header.Get("Idempotency-Key"); !l.lost[k] {
		l.lost[k] = true
		resp.Body.Close()
		return nil, errors.New("answer lost")
	}
	return resp, nil
}

// The shop's answer to the frontend is lost: the resend gets the stored
// answer, replayed by the guard; Stripe is asked once.
func TestCheckoutAnswerLostToFrontend(t *testing.T) {
	w := newWorld(t, 1)
	hc := &http.Client{Transport: &loseFirst{lost: map[string]bool{}}}
	req := checkout("order-1", 1500, "pm_card_visa")
	if _, err := w.post(hc, 0, "/checkout", key("o1"), req); err == nil {
		t.Fatal("the first answer was not lost")
	}
	a := w.until(hc, 0, "/checkout", key("o1"), req)
	if a.status != http.StatusCreated || !a.replayed {
		t.Fatalf("%d replayed %v", a.status, a.replayed)
	}
	if n := w.stripe.Stats().Requests; n != 1 {
		t.Errorf("Stripe got %d charge requests, want 1", n)
	}
}

// A decline is final: the resend of the same click gets it again, and
// Stripe is not asked again; another card is another click.
func TestCheckoutDeclineIsFinal(t *testing.T) {
	w := newWorld(t, 1)
	a, _ := w.post(nil, 0, "/checkout", key("o1"), checkout("order-1", 1500, "pm_card_chargeDeclined"))
	if a.status != http.StatusPaymentRequired || a.str("status") != "declined" {
		t.Fatalf("%d %v", a.status, a.body)
	}
	again, _ := w.post(nil, 0, "/checkout", key("o1"), checkout("order-1", 1500, "pm_card_chargeDeclined"))
	if again.status != http.StatusPaymentRequired || !again.replayed {
		t.Errorf("resend: %d replayed %v", again.status, again.replayed)
	}
	other := w.until(nil, 0, "/checkout", key("o1-card2"), checkout("order-1", 1500, "pm_card_visa"))
	if other.status != http.StatusCreated {
		t.Fatalf("another card: %d %v", other.status, other.body)
	}
	if n := w.stripe.Ledger().Count("order-1"); n != 1 {
		t.Fatalf("charged %d times", n)
	}
}

// paid checks an order out for good.
func (w *world) paid(order string, amount int64) {
	w.t.Helper()
	if a := w.until(nil, 0, "/checkout", key(order), checkout(order, amount, "pm_card_visa")); a.status != http.StatusCreated {
		w.t.Fatalf("checkout %s: %d %v", order, a.status, a.body)
	}
}

// A double click on "refund", and the same refund sent from a second tab
// (another Idempotency-Key) and the other instance: refunded once.
func TestRefundDoubleClickRefundsOnce(t *testing.T) {
	w := newWorld(t, 2)
	w.paid("order-1", 1500)
	req := refundOf("order-1", "refund-1", 500)
	answers := concurrently(6, func(i int) answer {
		return w.until(nil, i%2, "/refund", key("r1-tab"+strconv.Itoa(i%3)), req)
	})
	ids := map[string]bool{}
	for _, a := range answers {
		if a.status != http.StatusOK || a.str("status") != "refunded" {
			t.Errorf("a click answered %d %v", a.status, a.body)
		}
		ids[a.str("stripe_refund_id")] = true
	}
	if len(ids) != 1 {
		t.Errorf("answered with refunds %v, want one", ids)
	}
	if n := w.stripe.Ledger().OpCount("refund-1"); n != 1 {
		t.Fatalf("refunded %d times", n)
	}
	if o := w.order("order-1"); o.Refunded != 500 || o.Refundable != 1000 {
		t.Errorf("order: %+v", o)
	}
}

// Ten refunds of one order at once, each for 400 of its 1,500, from two
// instances: three are made, the rest refused with what is left; never
// more than was charged.
func TestConcurrentRefundsNeverBeyondTheCharge(t *testing.T) {
	w := newWorld(t, 2)
	w.paid("order-1", 1500)
	answers := concurrently(10, func(i int) answer {
		id := fmt.Sprintf("refund-%d", i)
		return w.until(nil, i%2, "/refund", key(id), refundOf("order-1", id, 400))
	})
	refunded, refused := 0, 0
	for _, a := range answers {
		switch {
		case a.status == http.StatusOK:
			refunded++
		case a.status == http.StatusUnprocessableEntity && a.str("status") == "refused":
			refused++
			if left, _ := a.body["available"].(float64); left != 300 {
				t.Errorf("refused, saying %v is left: %v", left, a.body)
			}
		default:
			t.Errorf("answered %d %v", a.status, a.body)
		}
	}
	if refunded != 3 || refused != 7 {
		t.Errorf("%d refunded, %d refused; want 3 and 7", refunded, refused)
	}
	if got := w.stripe.Ledger().Refunded("order-1"); got != 1200 {
		t.Errorf("Stripe refunded %d, want 1200", got)
	}
}

// Stripe refunds and every answer is lost, then it answers 503: the shop
// answers 503 (unknown), and the resend resumes the same refund, settled
// by Stripe's replay. Refunded once.
func TestRefundLostAnswersAndUnavailable(t *testing.T) {
	w := newWorld(t, 1)
	w.paid("order-1", 1500)
	w.stripe.Fail("refund-1", slices.Repeat([]fakes.Fault{fakes.Post}, attempts)...)
	w.stripe.Fail("refund-1", fakes.Unavailable)
	req := refundOf("order-1", "refund-1", 1500)
	first, err := w.post(nil, 0, "/refund", key("r1"), req)
	if err != nil || first.status != http.StatusServiceUnavailable {
		t.Fatalf("first: %d %v %v", first.status, first.body, err)
	}
	if o := w.order("order-1"); o.InFlight != 1500 || o.Refundable != 0 {
		t.Errorf("the unknown refund does not count: %+v", o)
	}
	if a := w.until(nil, 0, "/refund", key("r1-again"), refundOf("order-1", "refund-2", 1)); a.str("status") != "refused" {
		t.Errorf("a refund beside the unknown one: %d %v", a.status, a.body)
	}
	a := w.until(nil, 0, "/refund", key("r1"), req)
	if a.status != http.StatusOK {
		t.Fatalf("resent: %d %v", a.status, a.body)
	}
	if n := w.stripe.Ledger().OpCount("refund-1"); n != 1 {
		t.Fatalf("refunded %d times", n)
	}
}

// flaky loses answers between the frontend and the shop: before the
// request reaches it, or after the shop handled it.
type flaky struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func (f *flaky) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	u := f.rng.Float64()
	f.mu.Unlock()
	if u < 0.1 {
		return nil, errors.New("not sent")
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && u < 0.25 {
		resp.Body.Close()
		return nil, errors.New("answer lost")
	}
	return resp, err
}

// Faults everywhere: Stripe loses requests before and after acting,
// crashes mid-request and answers 503 at random; the network loses the
// shop's answers; customers double-click checkout; the back office
// double-clicks refunds and sends refunds of one order from both
// instances at once, adding up to more than was charged. Every order is
// charged once; every refund is made at most once, and exactly once when
// the shop said refunded; no order is refunded beyond its charge; the
// shop's ledger agrees with Stripe's books.
func TestShopUnderFaults(t *testing.T) {
	w := newWorld(t, 2, stripetest.WithFaultRates(fakes.Rates{Pre: 0.1, Mid: 0.1, Post: 0.1, Unavailable: 0.05}, 3))
	hc := &http.Client{Transport: &flaky{rng: rand.New(rand.NewPCG(3, 4))}}
	const orders, refundsPer, amount = 12, 4, 1000
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcome := map[string]answer{}
	for o := range orders {
		wg.Go(func() {
			order := fmt.Sprintf("order-%02d", o)
			req := checkout(order, amount, "pm_card_visa")
			for _, a := range concurrently(2, func(i int) answer { return w.until(hc, i, "/checkout", key(order), req) }) {
				if a.status != http.StatusCreated {
					t.Errorf("checkout %s: %d %v", order, a.status, a.body)
					return
				}
			}
			answers := concurrently(2*refundsPer, func(i int) answer {
				id := fmt.Sprintf("%s-refund-%d", order, i/2) // each refund clicked twice, on both instances
				return w.until(hc, i%2, "/refund", key(id), refundOf(order, id, 300))
			})
			mu.Lock()
			defer mu.Unlock()
			for i, a := range answers {
				id := fmt.Sprintf("%s-refund-%d", order, i/2)
				if prev, ok := outcome[id]; ok && prev.str("status") != a.str("status") {
					t.Errorf("refund %s answered %v and %v", id, prev.body, a.body)
				}
				outcome[id] = a
			}
		})
	}
	wg.Wait()
	made := 0
	for id, a := range outcome {
		n := w.stripe.Ledger().OpCount(id)
		switch a.str("status") {
		case "refunded":
			made++
			if n != 1 {
				t.Errorf("refund %s answered refunded, made %d times", id, n)
			}
		case "refused":
			if n != 0 {
				t.Errorf("refund %s answered refused, made %d times", id, n)
			}
		default:
			t.Errorf("refund %s ended %d %v", id, a.status, a.body)
		}
	}
	for o := range orders {
		order := fmt.Sprintf("order-%02d", o)
		if n := w.stripe.Ledger().Count(order); n != 1 {
			t.Errorf("%s charged %d times", order, n)
		}
		got, books := w.order(order), w.stripe.Ledger().Refunded(order)
		if books > amount || got.Refunded != books || got.InFlight != 0 {
			t.Errorf("%s: Stripe refunded %d of %d, the shop's ledger says %+v", order, books, amount, got)
		}
	}
	if err := w.stripe.CheckMoney(); err != nil {
		t.Error(err)
	}
	st := w.stripe.Stats()
	t.Logf("%d orders, %d refunds made of %d asked; Stripe saw %d charge and %d refund POSTs, faults %v and %v",
		orders, made, len(outcome), st.Requests, st.Ops.Requests, st.Faults, st.Ops.Faults)
}

// What a user copies must build on its own: the example imports no
// package under internal/.
func TestImportsOnlyPublicPackages(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if slices.Contains(strings.Split(p, "/"), "internal") {
				t.Errorf("%s imports %s", name, p)
			}
		}
	}
}

// Without STRIPE_SECRET_KEY the command says how to run it, and does not
// reach for Stripe.
func TestMainWithoutKeyPrintsUsage(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, "", "127.0.0.1:0", filepath.Join(t.TempDir(), "shop.db"), false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "STRIPE_SECRET_KEY") {
		t.Errorf("usage: %q", out.String())
	}
	if err := run(&out, "sk_live_x", "127.0.0.1:0", filepath.Join(t.TempDir(), "shop.db"), false); err == nil {
		t.Error("a live key was taken without -live")
	}
}
