package redis

import (
	"fmt"
	"sync"
	"time"

	"github.com/idempay/idempay"
)

// A Redis server can lose writes it acknowledged: a restart without
// persistence loses the whole data set, a failover to a replica loses what
// it had not received. Every record then lost is an intent whose key may
// have been sent, and whose next charge would get a new key: a second
// charge. So each namespace has a marker hash, <prefix>{ns}:marker, whose
// field seq every Reserve advances in its script. A Store remembers the
// highest seq it has seen per namespace; a Reserve that finds the marker
// below it (gone, or rolled back) knows the server lost writes, and stamps
// the marker's field lost with the server's clock, for every Store of the
// fleet to read. For WithLossWindow after that instant every reservation
// of the namespace is Unproven: the Client asks the provider before it
// sends a key it cannot prove new.
//
// A loss that happens while no process of the fleet is running cannot be
// noticed this way (nobody remembers a higher seq), which is one reason
// the Store refuses a server without persistence unless WithLossyServer.

// marks is what a Store has seen of its namespaces' markers.
type marks struct {
	mu  sync.Mutex
	seq map[string]int64
}

// seen is the highest write sequence seen for namespace.
func (m *marks) seen(namespace string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seq[namespace]
}

// read takes the marker's part of reserveScript's reply into res and
// remembers its sequence.
func (m *marks) read(namespace string, reply any, res *idempay.Reservation, window time.Duration) error {
	list := reply.([]any) // checked by reservation
	seq, ok := list[3].(int64)
	if !ok {
		return fmt.Errorf("unexpected marker sequence %v", list[3])
	}
	lostField, _ := list[4].(string)
	if lostField != "" {
		lost, err := decodeTime(lostField)
		if err != nil {
			return err
		}
		res.Unproven = res.Now.Sub(lost) < window
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seq == nil {
		m.seq = map[string]int64{}
	}
	m.seq[namespace] = max(m.seq[namespace], seq)
	return nil
}
