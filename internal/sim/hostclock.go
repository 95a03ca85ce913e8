package sim

// Issue 16 #4: the file store on its own clock (the host's wall clock at
// Open, carried by an elapsed-time counter), on a host whose wall clock is
// 30 days fast at one start and right again at the next. The world's
// "filehost" store is a file store opened so (internal/hostclock); every
// start runs the operator's Expire sweep, as a service's hourly sweep
// would soon after. Check: expired-early (Expire deleted a record closed
// less than the retention ago, by true time), and the double charge a
// duplicate of its paid intent then makes.

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/hostclock"
)

// storeFileHost is the name of the world in -sim.stores.
const storeFileHost = "filehost"

// fastStart is how far the host's wall clock is ahead at its fast start.
const fastStart = 30 * 24 * time.Hour

// pFastStart is the chance that a restart of the file store's process,
// until one was, finds the host's wall clock fast.
const pFastStart = 0.5

// checkExpiredEarly: Expire deleted a closed record before the retention
// had passed since it closed (true time).
const checkExpiredEarly = "expired-early"

const hintFastStart = "issue16#4 one fast start of the file store shortened retention"

func init() { allChecks = append(allChecks, checkExpiredEarly) }

// hostWorld is a filehost world's host: its wall clock's error now, and
// whether its fast start has come.
type hostWorld struct {
	wallErr atomic.Int64 // ns the wall clock is ahead of true time
	starts  int
	fasted  bool
}

// hostSpec draws the wall clock of this start of the store's process and
// returns the host the file store reads (the world's true clock, the error
// added to the wall clock only).
func (w *world) hostSpec() *hostclock.Host {
	h := w.host
	if h == nil {
		h = &hostWorld{}
		w.host = h
	}
	h.starts++
	errNow := time.Duration(0)
	if h.starts > 1 && !h.fasted && w.d.chance(pFastStart, "host-fast", h.starts) {
		h.fasted, errNow = true, fastStart
	}
	h.wallErr.Store(int64(errNow))
	return &hostclock.Host{
		Wall:    func() time.Time { return w.clock.Now().Add(time.Duration(h.wallErr.Load())) },
		Elapsed: w.clock.Elapsed,
	}
}

// hostOpened follows an Open of a filehost world's store: the simulator
// judges leases and ages on the store's clock, so it reads where that
// clock stands (a probe record of a namespace of its own), and the
// service's sweep runs.
func (w *world) hostOpened(ctx context.Context) {
	if w.host == nil {
		return
	}
	s, leave, err := w.handle().enter()
	if err != nil {
		return
	}
	res, err := s.Reserve(ctx, idempay.ReserveRequest{Namespace: "sim-hostclock", ID: fmt.Sprintf("start-%d", w.host.starts),
		Attempt: 1, Key: "probe", Fingerprint: "probe", Owner: "sim", Lease: time.Second})
	leave()
	if err != nil {
		w.or.fatal("filehost: probe the store's clock: %v", err)
		return
	}
	off := res.Now.Sub(w.clock.Now())
	w.storeOff.Store(int64(off))
	w.tr.add("", "world", "the file store starts on a host whose wall clock is %s ahead; its clock reads %s ahead of true time",
		time.Duration(w.host.wallErr.Load()), off.Round(time.Second))
	w.sweep(ctx)
}

// judgeExpired is called for each record a sweep deleted: it must have
// been closed at least the retention ago. Judged where the store's clock is
// true time or the host's (crash models step their servers' clocks, which
// they may).
func (w *world) judgeExpired(o *order, closedAt time.Time) {
	if w.crash != nil || closedAt.IsZero() {
		return
	}
	if age := w.clock.Now().Sub(closedAt); age < storeRetention {
		hint := ""
		if w.host != nil && w.host.fasted {
			hint = hintFastStart
		}
		w.or.report(checkExpiredEarly, o.id, hint, "Expire (retention %s) deleted the record closed %s ago",
			storeRetention, age.Round(time.Second))
	}
}
