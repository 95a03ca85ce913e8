package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/idempay/idempay"
)

// outage is the BFF's road to the provider, which the demo can cut: while
// down, every request is sent to a port nobody listens on, so the BFF
// gets what a provider outage gives, a refused connection, and nothing
// reaches the provider.
type outage struct {
	next http.RoundTripper
	dead string // host:port of a closed listener
	down atomic.Bool
}

func newOutage(next http.RoundTripper) (*outage, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	dead := l.Addr().String()
	l.Close()
	return &outage{next: next, dead: dead}, nil
}

// RoundTrip sends r to the provider, or to the closed port while down.
func (o *outage) RoundTrip(r *http.Request) (*http.Response, error) {
	if o.down.Load() {
		r = r.Clone(r.Context())
		r.URL.Host, r.Host = o.dead, o.dead
	}
	return o.next.RoundTrip(r)
}

// outageStory is one checkout across a provider outage, as the frontend
// lived it: the answer to each request, and the keys the provider saw.
type outageStory struct {
	log     *checkoutLog
	answers []string // "503 retry", "201 paid chrg_..."
	keys    []string // the provider keys the order was charged under
}

// outageCheckout pays order across an outage: the first request finds
// the provider unreachable and is answered 503 (nothing charged, the key
// released, never stored as a decline); the provider comes back; the
// frontend resends with the same key and is answered 201, the charge of
// the next attempt, under the key derived from the frontend's.
func outageCheckout(fe *frontend, road *outage, prov *provider, order string, amountJPY int64) *outageStory {
	st := &outageStory{log: &checkoutLog{order: order, key: rand.Text()}}
	body, _ := json.Marshal(checkoutRequest{OrderID: order, AmountJPY: amountJPY, CardToken: "tokn_test_" + order})
	road.down.Store(true)
	st.answers = append(st.answers, "provider down: "+fe.sendTold(st.log, body))
	road.down.Store(false)
	for st.log.done() == "" && st.log.count() < maxSends {
		st.answers = append(st.answers, "provider up:   "+fe.sendTold(st.log, body))
	}
	st.answers = append(st.answers, "again:         "+fe.sendTold(st.log, body))
	st.keys = prov.keysOf(order)
	return st
}

// sendTold sends one request and says what the frontend was answered.
func (f *frontend) sendTold(log *checkoutLog, body []byte) string {
	before := log.answers()
	f.send(log, body)
	after := log.answers()
	if len(after) == len(before) {
		return "no answer (timeout or network)"
	}
	return after[len(after)-1]
}

// attemptOf says which attempt of the frontend's key a provider key is.
func attemptOf(frontendKey, providerKey string) int {
	for n := 1; n <= 10; n++ {
		if idempay.AttemptKey(frontendKey, n) == providerKey {
			return n
		}
	}
	return 0
}

// print tells the story.
func (st *outageStory) print() {
	fmt.Printf("A provider outage, then a retry with the same Idempotency-Key (%s):\n", st.log.order)
	for i, a := range st.answers {
		fmt.Printf("  request %d, %s\n", i+1, a)
	}
	for _, k := range st.keys {
		fmt.Printf("  charged under provider key %q: attempt %d of the frontend's key %q\n", k, attemptOf(st.log.key, k), st.log.key)
	}
	fmt.Println()
}

// check fails unless the story is the one the package doc tells: 503 while
// the provider is down, then one charge, under a later attempt's key,
// answered 201 and replayed.
func (st *outageStory) check() error {
	switch {
	case len(st.log.statuses) == 0 || st.log.statuses[0] != http.StatusServiceUnavailable:
		return fmt.Errorf("outage: first answers %v, want 503 first", st.log.statuses)
	case !strings.HasPrefix(st.log.done(), "201 paid"):
		return fmt.Errorf("outage: final answer %q, want 201 paid", st.log.done())
	case len(st.keys) != 1 || attemptOf(st.log.key, st.keys[0]) < 2:
		return fmt.Errorf("outage: charged under keys %q, want one charge under a later attempt's key", st.keys)
	}
	return nil
}
