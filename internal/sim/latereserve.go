package sim

// Issue 16 #3: the store's answer to a Reserve arrives after the lease it
// granted ran out. Meanwhile a retry takes the lapsed lease and runs the
// work; the late answer must start nothing (Claim.Held). The guard's side
// is here; the Deduper's is webhooks.go.

import (
	"time"

	"github.com/idempay/idempay/guard"
)

// checkLapsedRun: a guarded handler (the guard's or a Deduper's) started
// while the lease its Reserve was granted had run out by the store's clock.
const checkLapsedRun = "lapsed-run"

// hintLateReserve points at issue 16 #3.
const hintLateReserve = "issue16#3 a Reserve answered after its lease ran out, the work started anyway"

func init() { allChecks = append(allChecks, checkLapsedRun) }

// pLateReserve is the chance, while faults are on, that a guard Reserve
// that claimed the key is answered only after the guard's lease ran out.
const pLateReserve = 0.04

// lateReserve may hold the guard's Reserve answer for r past its lease:
// the frontend, tired of waiting, sends the same key again (to another
// instance or this one), and that request takes the lapsed lease and runs
// the handler before the late answer arrives. It also notes the lease the
// store granted, for judgeLapsedRun.
func (s *guardSide) lateReserve(r *ckReq, ans storeAnswer) {
	w := s.w
	if !ans.claimed {
		return
	}
	r.leaseUntil = ans.rec.leaseUntil
	w.ck.mu.Lock()
	busy := w.ck.late
	w.ck.mu.Unlock()
	if busy || !w.faultsOn.Load() || !w.d.chance(pLateReserve, "guard-late-reserve", r.id, r.nextOp("late-reserve")) {
		return
	}
	who := "bff-" + s.inst.name + "/" + r.id
	w.tr.add(r.o.id, who, "FAULT the guard's Reserve answer is late: it arrives after its lease ran out")
	w.advance(guard.DefaultLease+w.d.between(time.Second, 5*time.Second, "guard-late-by", r.id), "the guard's Reserve answer is on its way")
	retry := s.inst
	if w.d.chance(0.5, "guard-late-other", r.id) {
		retry = w.other(s.inst, w.d.intn(4, "guard-late-pick", r.id))
	}
	w.ck.mu.Lock()
	w.ck.late = true
	k := w.ck.keys[r.key]
	w.ck.mu.Unlock()
	v := canonical
	if k != nil {
		v = k.v
	}
	w.tr.add(r.o.id, "fe/"+r.id, "the frontend gave up waiting and sends the key again")
	w.feRequest(r.o, retry, r.key, v, r.id+"L", nil)
	w.ck.mu.Lock()
	w.ck.late = false
	w.ck.mu.Unlock()
	w.tr.add(r.o.id, who, "the late Reserve answer arrives (claimed, lease until %s)", fmtAt(ans.rec.leaseUntil))
}

// judgeLapsedRun is called as the guard's handler starts for r: its lease
// must still run by the store's clock.
func (w *world) judgeLapsedRun(r *ckReq) {
	if r.leaseUntil.IsZero() {
		return
	}
	if now := w.storeNow(); !now.Before(r.leaseUntil) {
		w.or.report(checkLapsedRun, r.o.id, hintLateReserve, "bff/%s: the guard's handler starts for key %s at %s, after its lease ran out at %s",
			r.id, r.key, fmtAt(now), fmtAt(r.leaseUntil))
	}
}
