package sim

// The Redis models' marker (keystore/redis/marker.go): each namespace has
// a marker in the data set whose sequence every Reserve advances; each
// process's Store remembers the highest sequence it saw. A Reserve that
// finds the marker below what its process saw (the data set lost with it)
// stamps the marker lost, on the server's clock, and for the loss window
// from then every reservation of the namespace is Unproven: the Client
// asks the provider before it sends a key it cannot prove new. A loss no
// running process saw (a power cut restarts them all) goes unnoticed, as
// with the real store.

import (
	"strings"
	"time"

	rstore "github.com/idempay/idempay/keystore/redis"
)

// marker is one namespace's marker, part of the server's data set.
type marker struct {
	seq  int64
	lost time.Time // zero: no loss noticed
}

// markers are a Redis model's markers and what each process saw of them.
type markers struct {
	set  map[string]*marker          // namespace -> marker: lost with the data set
	seen map[string]map[string]int64 // process -> namespace -> highest seq seen
}

// marked reports whether s's model keeps the real Redis store's marker.
func (s *crashStore) marked() bool { return s.model == modelRedis || s.model == modelVolatile }

// markReserve is the marker's part of a Reserve made at now by owner's
// process: it advances the sequence, notes a loss, and reports whether the
// reservation is Unproven. Called under s.mu.
func (s *crashStore) markReserve(namespace, owner string, now time.Time) bool {
	m := &s.marks
	if m.set == nil {
		m.set = map[string]*marker{}
	}
	if m.seen == nil {
		m.seen = map[string]map[string]int64{}
	}
	mk := m.set[namespace]
	if mk == nil {
		mk = &marker{}
		m.set[namespace] = mk
	}
	proc := ownerProcess(owner)
	if m.seen[proc] == nil {
		m.seen[proc] = map[string]int64{}
	}
	if mk.seq < m.seen[proc][namespace] {
		mk.lost = now
	}
	mk.seq++
	m.seen[proc][namespace] = max(m.seen[proc][namespace], mk.seq)
	return !mk.lost.IsZero() && now.Sub(mk.lost) < rstore.DefaultLossWindow
}

// ownerProcess is the process a lease owner belongs to: an owner is the
// instance's name, "/", and a suffix per flight, and every generation of a
// slot has a name of its own, so a restarted process remembers nothing.
func ownerProcess(owner string) string {
	proc, _, _ := strings.Cut(owner, "/")
	return proc
}

// loseMarkers is the data set's markers lost with it (a restart without
// persistence). The processes' memories stay: they are not the server's.
func (s *crashStore) loseMarkers() { s.marks.set = nil }
