package faults

import (
	"net/http"
	"strconv"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// Gate is how every faulted request of one kind starts and ends, in every
// fake: arrival (count it, call the test's hook, draw its fault, end it at
// once on Pre or Unavailable), and its answer (sent and counted, marked as
// a replay, or lost to a Post fault). The fake fills in how its provider
// spells the 503 and the headers; the zero values do without.
type Gate struct {
	Faults  *fakes.Script // draws each request's fault
	Traffic *Counter      // counts what arrived and what was answered
	// Reset ends dropped connections with a TCP reset instead of a close.
	Reset bool
	// RetryAfter is sent, in whole seconds, with the 503 of Unavailable;
	// zero is sent as "0" unless QuietRetryAfter.
	RetryAfter      time.Duration
	QuietRetryAfter bool // send no Retry-After when RetryAfter is zero
	// Unavailable writes the provider's 503 (status included), after
	// Retry-After is set. Nil: a bare 503.
	Unavailable func(w http.ResponseWriter)
	// Mark sets the provider's headers on an answer about to be sent (a
	// replay mark, retry advice). Nil: none.
	Mark func(h http.Header, status int, replayed bool)
	// Write writes an answer's status and body. Nil: JSON.
	Write func(w http.ResponseWriter, status int, body []byte)
}

// Arrive runs the start of a request carrying key for id (an intent or an
// operation ID): it counts it, calls hook (if not nil), draws its fault
// (scripts by key, then by each of ids, then the next-request queue, then
// chance) and ends the request on Pre (the connection dropped) or
// Unavailable (503). It returns the fault, and whether the request goes on.
func (g *Gate) Arrive(w http.ResponseWriter, key, id string, hook func(), ids ...string) (fakes.Fault, bool) {
	g.Traffic.Arrive(key, id)
	if hook != nil {
		hook()
	}
	f := g.Faults.Draw(key, append([]string{id}, ids...)...)
	switch f {
	case fakes.Pre:
		g.Drop(w, f)
		return f, false
	case fakes.Unavailable:
		g.Traffic.Fault(f)
		if g.RetryAfter > 0 || !g.QuietRetryAfter {
			w.Header().Set("Retry-After", strconv.Itoa(int(g.RetryAfter/time.Second)))
		}
		if g.Unavailable != nil {
			g.Unavailable(w)
		} else {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		g.Traffic.Answered(id, http.StatusServiceUnavailable, "", false)
		return f, false
	}
	return f, true
}

// Drop counts fault f and drops the connection without answering. Nothing
// may have been written to w.
func (g *Gate) Drop(w http.ResponseWriter, f fakes.Fault) {
	g.Traffic.Fault(f)
	Drop(w, g.Reset)
}

// Send writes an answer for id and counts it: status, body, the error code
// it carries (empty for none), whether it is a replay.
func (g *Gate) Send(w http.ResponseWriter, id string, status int, body []byte, code string, replayed bool) {
	if g.Mark != nil {
		g.Mark(w.Header(), status, replayed)
	}
	g.Traffic.Answered(id, status, code, replayed)
	if g.Write != nil {
		g.Write(w, status, body)
		return
	}
	WriteJSON(w, status, body)
}

// Reply sends a stored answer for id, unless fault f is Post: the answer
// exists, and is lost.
func (g *Gate) Reply(w http.ResponseWriter, id string, resp Stored, replayed bool, f fakes.Fault) {
	if f == fakes.Post {
		g.Drop(w, f)
		return
	}
	g.Send(w, id, resp.Status, resp.Body, "", replayed)
}
