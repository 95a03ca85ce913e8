package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// frontend is the browser: it makes one key per checkout, double-clicks
// (two requests at once), and resends with the same key whenever it gets
// no final answer: a timeout, a lost answer, a 409, a 503.
type frontend struct {
	url    string
	client *http.Client // with a short timeout and the faulty transport
}

// checkoutLog is what one checkout looked like from the frontend.
type checkoutLog struct {
	order, key string

	mu       sync.Mutex
	sent     int
	unsent   int // lost on the way to the BFF
	lost     int // the BFF answered, the answer was lost
	timeouts int
	statuses []int
	told     []string // each answer: status, status word, charge ID
	replays  int
	final    string
}

// maxSends bounds one checkout's requests: a demo must end.
const maxSends = 40

// checkout pays order once, whatever the network does.
func (f *frontend) checkout(order string, amountJPY int64) *checkoutLog {
	log := &checkoutLog{order: order, key: rand.Text()}
	body, _ := json.Marshal(checkoutRequest{OrderID: order, AmountJPY: amountJPY, CardToken: "tokn_test_" + order})
	var wg sync.WaitGroup
	for range 2 { // the double click
		wg.Go(func() { f.send(log, body) })
	}
	wg.Wait()
	for log.done() == "" && log.count() < maxSends {
		time.Sleep(30 * time.Millisecond) // the frontend's backoff, short for the demo
		f.send(log, body)
	}
	return log
}

// send makes one request with the checkout's key, alternating the bare
// and the structured-field form of the header (one key either way).
func (f *frontend) send(log *checkoutLog, body []byte) {
	n := log.addSent()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, f.url+"/checkout", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer demo-merchant") // the BFF reads the tenant from it
	if n%2 == 0 {
		req.Header.Set("Idempotency-Key", `"`+log.key+`"`)
	} else {
		req.Header.Set("Idempotency-Key", log.key)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		log.failed(err)
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		log.failed(err)
		return
	}
	log.answered(resp, b)
}

func (l *checkoutLog) addSent() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent++
	return l.sent
}

func (l *checkoutLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent
}

func (l *checkoutLog) done() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.final
}

func (l *checkoutLog) failed(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var te interface{ Timeout() bool }
	switch {
	case errors.Is(err, errNotSent):
		l.unsent++
	case errors.Is(err, errAnswerLost):
		l.lost++
	case errors.As(err, &te) && te.Timeout():
		l.timeouts++
	default:
		l.lost++
	}
}

// answered notes an answer; 201, 202 and 4xx other than 409 are final.
func (l *checkoutLog) answered(resp *http.Response, body []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.statuses = append(l.statuses, resp.StatusCode)
	if resp.Header.Get("Idempotency-Replayed") == "true" {
		l.replays++
	}
	var a checkoutAnswer
	_ = json.Unmarshal(body, &a)
	told := strings.TrimSpace(fmt.Sprintf("%d %s %s", resp.StatusCode, a.Status, a.ChargeID))
	if resp.Header.Get("Idempotency-Replayed") == "true" {
		told += " (replayed)"
	}
	l.told = append(l.told, told)
	if resp.StatusCode == http.StatusConflict || resp.StatusCode >= 500 || l.final != "" {
		return
	}
	l.final = fmt.Sprintf("%d %s %s", resp.StatusCode, a.Status, a.ChargeID)
}

func (l *checkoutLog) answers() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.told...)
}

// faultyTransport is the network between the frontend and the BFF: a
// request lost before it arrives, or an answer lost after the BFF sent it.
type faultyTransport struct {
	next   http.RoundTripper
	faults *dice
}

var (
	errNotSent    = errors.New("network: request lost before it reached the BFF")
	errAnswerLost = errors.New("network: connection reset before the answer arrived")
)

// RoundTrip sends r, unless a fault strikes.
func (t faultyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	switch t.faults.roll("frontend->bff: request lost", "bff->frontend: answer lost") {
	case 1:
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errNotSent
	case 2:
		resp, err := t.next.RoundTrip(r)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return nil, errAnswerLost
	}
	return t.next.RoundTrip(r)
}
