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

// reopen closes the file store of a dead process (waiting for the calls
// inside it) and opens the file again.
func (w *world) reopen(ctx context.Context) {
	if err := w.handle().shut(); err != nil {
		w.tr.add("", "world", "closing the store: %v", err)
	}
	w.damageCheck(ctx)
	if err := w.openStore(ctx); err != nil {
		w.or.fatal("reopen: %v", err)
	}
	w.tr.add("", "world", "the file store is opened again")
}
