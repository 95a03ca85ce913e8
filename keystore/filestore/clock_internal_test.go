package filestore

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// hostT0 is the true time at which the clock tests start.
var hostT0 = time.Date(2031, 3, 1, 9, 0, 0, 0, time.UTC)

// fakeHost is a host whose wall clock and elapsed-time counter the test
// sets: the wall clock can be wrong (set fast or slow, stepped), the
// counter counts true elapsed time, suspend included, as CLOCK_BOOTTIME
// does.
type fakeHost struct {
	mu      sync.Mutex
	truth   time.Duration // true time since hostT0
	wallErr time.Duration // how far the wall clock is off
}

func (h *fakeHost) src() clockSource {
	return clockSource{
		wall: func() time.Time {
			h.mu.Lock()
			defer h.mu.Unlock()
			return hostT0.Add(h.truth + h.wallErr)
		},
		elapsed: func() time.Duration {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.truth
		},
	}
}

// pass lets true time pass (the host running, or suspended).
func (h *fakeHost) pass(d time.Duration) { h.mu.Lock(); h.truth += d; h.mu.Unlock() }

// setWallError sets how far the host's wall clock is off.
func (h *fakeHost) setWallError(d time.Duration) { h.mu.Lock(); h.wallErr = d; h.mu.Unlock() }

// openOnHost opens the store at path on host h, without the sweep, logging
// into log.
func openOnHost(t *testing.T, path string, h *fakeHost, log *bytes.Buffer) *Store {
	t.Helper()
	cfg := defaultConfig()
	cfg.sweepInterval = 0
	cfg.src = h.src()
	cfg.logger = slog.New(slog.NewTextHandler(log, nil))
	s, err := open(path, cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	s.startSweep()
	return s
}

func hostReq(id, owner string) idempay.ReserveRequest {
	return idempay.ReserveRequest{Namespace: "ns", ID: id, Attempt: 1, Key: "key-" + id, Fingerprint: "fp",
		Owner: owner, Lease: time.Minute}
}

// TestFastStartDoesNotShortenRetention: one Open while the host clock is 30
// days fast must not make the store delete a record settled a minute
// before, neither during that run nor on later starts with the clock put
// right, and the store must say that it saw the jump. Records stamped by
// the fast run must not read younger than they are once the clock is right.
func TestFastStartDoesNotShortenRetention(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keys.db")
	h := &fakeHost{}
	var log bytes.Buffer

	s := openOnHost(t, path, h, &log)
	r := mustReserveIn(t, s, hostReq("paid", "o1")).Record
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "paid", Key: r.Key, State: idempay.StateSucceeded}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// A minute later the host starts with its clock 30 days fast.
	h.pass(time.Minute)
	h.setWallError(30 * 24 * time.Hour)
	s = openOnHost(t, path, h, &log)
	if n, err := s.Expire(ctx, DefaultRetention); err != nil || n != 0 {
		t.Errorf("fast start: Expire(DefaultRetention) = %d, %v; want 0: the record was settled a minute ago", n, err)
	}
	mustReserveIn(t, s, hostReq("fast", "o2"))
	s.Close()

	// A minute later the clock is right again.
	h.pass(time.Minute)
	h.setWallError(0)
	s = openOnHost(t, path, h, &log)
	defer s.Close()
	if n, err := s.Expire(ctx, DefaultRetention); err != nil || n != 0 {
		t.Errorf("start with the clock right: Expire(DefaultRetention) = %d, %v; want 0", n, err)
	}
	if _, err := s.Load(ctx, "ns", "paid"); err != nil {
		t.Errorf("the paid intent's record is gone two minutes after it settled: %v", err)
	}
	res := mustReserveIn(t, s, hostReq("later", "o3"))
	if ahead := res.Now.Sub(hostT0.Add(2 * time.Minute)); ahead > time.Second || ahead < -time.Second {
		t.Errorf("store clock on the third start is %v off the true time; want it back on the host's clock", ahead)
	}
	fast := mustReserveIn(t, s, hostReq("fast", "o4"))
	if age := fast.Now.Sub(fast.Record.CreatedAt); age < time.Minute {
		t.Errorf("a key reserved a minute ago by the fast run reads %v old; an age must never read younger than it is", age)
	}
	if s.ClockJumps() == 0 {
		t.Error("ClockJumps() = 0 after a 30-day jump of the host clock; want it counted")
	}
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "clock") {
		t.Errorf("no warning about the clock in the log:\n%s", log.String())
	}

	// Retention still ends: eight days later the record goes.
	h.pass(8 * 24 * time.Hour)
	if n, err := s.Expire(ctx, DefaultRetention); err != nil || n != 1 {
		t.Errorf("eight days later: Expire(DefaultRetention) = %d, %v; want the paid record deleted", n, err)
	}

	// The next start, with the clock still right, sees no jump: the fast
	// run left nothing behind.
	s.Close()
	h.pass(time.Minute)
	s = openOnHost(t, path, h, &log)
	defer s.Close()
	if n := s.ClockJumps(); n != 0 {
		t.Errorf("ClockJumps on the start after the one that put the clock right = %d; want 0", n)
	}
}

// TestWallStepWhileOpen: a step of the host's wall clock while the store
// is open moves neither leases nor ages, and is reported each time.
func TestWallStepWhileOpen(t *testing.T) {
	h := &fakeHost{}
	var log bytes.Buffer
	s := openOnHost(t, filepath.Join(t.TempDir(), "keys.db"), h, &log)
	defer s.Close()
	first := mustReserveIn(t, s, hostReq("a", "o"))
	h.pass(time.Second)
	h.setWallError(2 * time.Hour)
	again := mustReserveIn(t, s, hostReq("a", "o"))
	if d := again.Now.Sub(first.Now); d < time.Second || d > 2*time.Second {
		t.Errorf("store clock moved %v over a second in which the wall clock stepped 2h ahead; want about a second", d)
	}
	if n := s.ClockJumps(); n != 1 {
		t.Errorf("ClockJumps after a 2h step = %d; want 1", n)
	}
	h.setWallError(0)
	mustReserveIn(t, s, hostReq("a", "o"))
	if n := s.ClockJumps(); n != 2 || strings.Count(log.String(), "level=WARN") != 2 {
		t.Errorf("ClockJumps after the step back = %d, log:\n%s\nwant 2 jumps, each logged at warn", n, log.String())
	}
}

// TestSuspendCountsInAges: a host suspended for two days stops Go's
// monotonic clock; the store's ages must count the suspend anyway.
func TestSuspendCountsInAges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	h := &fakeHost{}
	var log bytes.Buffer
	s := openOnHost(t, path, h, &log)
	defer s.Close()
	first := mustReserveIn(t, s, hostReq("a", "o"))
	h.pass(48 * time.Hour) // suspended
	again := mustReserveIn(t, s, hostReq("a", "o"))
	if age := again.Now.Sub(first.Record.CreatedAt); age < 48*time.Hour {
		t.Errorf("after a 48h suspend the key reads %v old; want at least 48h", age)
	}
}

func mustReserveIn(t *testing.T, s *Store, r idempay.ReserveRequest) idempay.Reservation {
	t.Helper()
	res, err := s.Reserve(context.Background(), r)
	if err != nil {
		t.Fatalf("Reserve(%s): %v", r.ID, err)
	}
	return res
}

// TestDowntimeNotCounted: a record closed before the store was closed for
// three days is kept for seven days of open time, not deleted after four;
// a record closed after the downtime is judged on its own.
func TestDowntimeNotCounted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keys.db")
	h := &fakeHost{}
	var log bytes.Buffer
	s := openOnHost(t, path, h, &log)
	r := mustReserveIn(t, s, hostReq("before", "o")).Record
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "before", Key: r.Key, State: idempay.StateSucceeded}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	h.pass(3 * 24 * time.Hour)
	s = openOnHost(t, path, h, &log)
	defer s.Close()
	r = mustReserveIn(t, s, hostReq("after", "o")).Record
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "after", Key: r.Key, State: idempay.StateSucceeded}); err != nil {
		t.Fatal(err)
	}
	h.pass(6 * 24 * time.Hour)
	if n, err := s.Expire(ctx, 7*24*time.Hour); err != nil || n != 0 {
		t.Errorf("6 days of open time after both closed: Expire = %d, %v; want 0", n, err)
	}
	h.pass(24*time.Hour + time.Second)
	if n, err := s.Expire(ctx, 7*24*time.Hour); err != nil || n != 2 {
		t.Errorf("7 days of open time after both closed: Expire = %d, %v; want 2", n, err)
	}
	if n := s.ClockJumps(); n != 0 {
		t.Errorf("ClockJumps = %d after a plain downtime; want 0", n)
	}
}

func TestExpireBefore(t *testing.T) {
	day := 24 * time.Hour
	at := func(d int) time.Time { return hostT0.Add(time.Duration(d) * day) }
	all := []downtime{{at: at(10), gap: 3 * day}, {at: at(20), gap: 2 * day}}
	var downs []downtime
	// Open time of a stamp c: c minus the gaps at or before it.
	open := func(c time.Time) time.Duration {
		d := c.Sub(hostT0)
		for _, g := range downs {
			if !c.Before(g.at) {
				d -= g.gap
			}
		}
		return d
	}
	for now := 0; now < 40; now++ {
		downs = nil
		for _, d := range all {
			if !d.at.After(at(now)) {
				downs = append(downs, d)
			}
		}
		for _, ret := range []time.Duration{day, 7 * day, 12 * day} {
			cut := expireBefore(at(now), ret, downs)
			// Every stamp before cut is older than ret in open time, and
			// none at or after it (stamps are taken outside the gaps).
			for c := at(-5); c.Before(at(now)); c = c.Add(6 * time.Hour) {
				if in := inGap(c, downs); in {
					continue
				}
				old := open(at(now))-open(c) > ret
				if before := c.Before(cut); before != old && open(at(now))-open(c) != ret {
					t.Errorf("now day %d, retention %v: stamp %v before cutoff %v = %v; open age %v", now, ret, c, cut, before, open(at(now))-open(c))
				}
			}
		}
	}
}

func inGap(c time.Time, downs []downtime) bool {
	for _, d := range downs {
		if c.After(d.at.Add(-d.gap)) && c.Before(d.at) {
			return true
		}
	}
	return false
}

// abandon lets go of the file as a killed process does: without Close's
// last write.
func abandon(s *Store) {
	s.stopSweep()
	<-s.sweepDone
	s.stopWrites()
	s.db.Close()
	s.release()
}

// TestPutRightOnceForGood: a start that puts the clock right after a fast
// one, and then dies, leaves nothing that makes the next start see the
// jump again.
func TestPutRightOnceForGood(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	h := &fakeHost{}
	var log bytes.Buffer
	s := openOnHost(t, path, h, &log)
	mustReserveIn(t, s, hostReq("a", "o"))
	s.Close()
	h.setWallError(30 * 24 * time.Hour)
	s = openOnHost(t, path, h, &log)
	s.Close()
	h.setWallError(0)
	s = openOnHost(t, path, h, &log)
	if n := s.ClockJumps(); n != 1 {
		t.Errorf("ClockJumps on the start that puts the clock right = %d; want 1", n)
	}
	abandon(s)
	s = openOnHost(t, path, h, &log)
	defer s.Close()
	if n := s.ClockJumps(); n != 0 {
		t.Errorf("ClockJumps on the next start = %d; want 0: the jump was dealt with", n)
	}
}
