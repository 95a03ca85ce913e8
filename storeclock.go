package idempay

import (
	"sync"
	"time"
)

// clockStepSlack is how far below what the store's clock has been seen to
// read a reading may fall before it counts as a step back: the readings
// of concurrent calls arrive out of order by far less.
const clockStepSlack = time.Second

// storeFloor is what one Client has seen of its store's clock: the latest
// reading, carried forward by the holder's own elapsed time (Config.Clock,
// which does not jump back). It is a lower bound of the store's clock now,
// as long as that clock does not step back; a reading below it shows the
// step (NTP, a VM migration, a failover to another host), after which the
// ages of existing records, read on the stepped clock, may be too young.
// It never makes an age older: a store clock that jumped ahead and came
// back only makes existing records' ages unknown until it catches up.
type storeFloor struct {
	mu   sync.Mutex
	set  bool
	base time.Time // the holder's clock at the first reading
	at   time.Time // the floor, on the store's clock, as of base
}

// observe takes the store's reading storeNow, made no earlier than the
// holder's instant local, and reports whether it is below what the store's
// clock has read before (a step back).
func (f *storeFloor) observe(storeNow, local time.Time) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.set {
		f.set, f.base, f.at = true, local, storeNow
		return false
	}
	elapsed := local.Sub(f.base)
	floor := f.at.Add(elapsed)
	if storeNow.After(floor) {
		f.at = storeNow.Add(-elapsed)
	}
	return storeNow.Before(floor.Add(-clockStepSlack))
}
