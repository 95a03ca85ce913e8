package sim

import (
	"context"
)

// kill kills inst's process: it sends and stores nothing more, its callers
// are gone, and a new process starts on its slot. A file store belongs to
// one process, so killing any of its clients kills them all and the file
// is closed and opened again, as a restarted service does.
func (w *world) kill(inst *instance, why string) {
	w.mu.Lock()
	w.kills++
	w.mu.Unlock()
	if w.cfg.store != "filestore" {
		w.killOne(inst, why)
		w.restartSlot(inst)
		return
	}
	for _, in := range w.live() {
		w.killOne(in, why)
	}
	w.reopen(context.Background())
	for _, s := range w.slots {
		if err := w.restart(s); err != nil {
			w.or.fatal("restart after kill: %v", err)
		}
	}
}

func (w *world) killOne(inst *instance, why string) {
	inst.dead.Store(true)
	now := w.clock.Elapsed()
	w.mu.Lock()
	calls := append([]*call(nil), w.calls...)
	w.mu.Unlock()
	for _, c := range calls {
		if c.inst == inst {
			c.set(func(c *call) {
				if c.active {
					c.zombie, c.ended = true, now
				}
			})
		}
	}
	for _, o := range w.orders {
		o.mu.Lock()
		if o.caller == inst {
			o.caller = nil // its caller died with it: only the store remembers the order now
		}
		o.mu.Unlock()
	}
	w.tr.add("", inst.name, "KILL: %s", why)
}

// restartSlot starts a new generation on inst's slot, if inst is its
// current one.
func (w *world) restartSlot(inst *instance) {
	if inst.slot.cur != inst {
		return
	}
	if err := w.restart(inst.slot); err != nil {
		w.or.fatal("restart: %v", err)
	}
}

// reopen ends the file store of a dead process and opens the file again.
// A killed process does not Close its store: the file is left as the
// last commit before the kill left it, and the next Open, holding the
// lock, voids the dead process's leases. In process the file's lock can
// only be let go by closing it, so the simulator takes the file as it
// stood at the kill (after the calls inside the store returned: a commit
// is whole or absent), closes the store, and puts that file back: what
// Close wrote (the mark that keeps leases) is undone, as it never
// happened.
func (w *world) reopen(ctx context.Context) {
	sc, _ := w.storeConfig()
	if err := w.handle().shutKilled(sc.path); err != nil {
		w.tr.add("", "world", "ending the store: %v", err)
	}
	w.damageCheck(ctx)
	if err := w.openStore(ctx); err != nil {
		w.or.fatal("reopen: %v", err)
		return
	}
	voided := -1
	if v, ok := w.handle().s.(interface{ VoidedLeases() int }); ok {
		voided = v.VoidedLeases()
	}
	w.tr.add("", "world", "the file store is opened again (it voided %d lease(s) of the dead process)", voided)
}
