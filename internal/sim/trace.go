package sim

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// event is one thing the simulator saw happen to an intent: a reservation,
// a request and its fault, an answer, a charge at the provider, an outcome.
type event struct {
	seq  int
	at   time.Duration // virtual time since the epoch
	who  string        // instance and call, e.g. "i1g0/s4"
	what string
}

// tracer keeps the events of one seed, per intent and in one global list
// (time jumps, sweeps, kills), so that a violation can show the story of
// its intent.
type tracer struct {
	clock *simClock
	mu    sync.Mutex
	seq   int
	by    map[string][]event // by intent ID; "" holds world events
}

func newTracer(c *simClock) *tracer { return &tracer{clock: c, by: map[string][]event{}} }

// add records an event of intent ("" for the world).
func (t *tracer) add(intent, who, format string, args ...any) {
	e := event{at: t.clock.Elapsed(), who: who, what: fmt.Sprintf(format, args...)}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	e.seq = t.seq
	t.by[intent] = append(t.by[intent], e)
}

// story returns the events of intent merged with the world's, in order,
// keeping the last max of them.
func (t *tracer) story(intent string, max int) []event {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, b := t.by[intent], t.by[""]
	if intent == "" {
		a = nil
	}
	out := make([]event, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || (len(a) > 0 && a[0].seq < b[0].seq) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	if len(out) > max {
		// The start says how the intent got where it is, the end what
		// became of it: keep a third of the room for the start.
		head := max / 3
		gap := event{what: fmt.Sprintf("… %d events left out …", len(out)-max)}
		out = append(append(out[:head:head], gap), out[len(out)-(max-head):]...)
	}
	return out
}

// all returns every event of the seed in the order they happened.
func (t *tracer) all() []event {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []event
	for _, evs := range t.by {
		out = append(out, evs...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// render formats events one per line, indented.
func render(evs []event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "\n      %4d %10s %-9s %s", e.seq, fmtDur(e.at), e.who, e.what)
	}
	return b.String()
}

// fmtAt prints an instant as virtual time since the epoch; "-" for none.
func fmtAt(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	if t.Before(epoch) { // a real clock's instant (newRealClock)
		return t.UTC().Format("15:04:05.000")
	}
	return fmtDur(t.Sub(epoch))
}

// fmtDur prints a virtual duration compactly: +3d04h05m06s.
func fmtDur(d time.Duration) string {
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	s := fmt.Sprintf("%02dh%02dm%02ds", int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second))
	if days > 0 {
		s = fmt.Sprintf("%dd", days) + s
	}
	return sign + s
}
