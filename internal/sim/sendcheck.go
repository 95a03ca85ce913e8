package sim

import (
	"context"
	"time"
)

// handOff runs the checks of the moment the client hands a charge request
// to the network (its last chance to hold it back): the store holds the
// key it carries, and its sender holds the intent's lease by the store's
// clock (true time). It returns whether the lease was held, and until when.
func (w *world) handOff(c *call, rq reqInfo) (held bool, until time.Time) {
	now := w.storeNow()
	intent := c.intent()
	st := c.get()
	rec, ok, err := w.load(context.Background(), intent)
	switch {
	case err != nil:
		c.trace("(send check: store unreadable: %v)", err)
	case !ok:
		w.or.report(checkKeyNotStored, intent, "", "%s sent key %s before the store held any record of the intent", c.who(), rq.key)
	case rec.key != rq.key:
		w.or.report(checkKeyNotStored, intent, "", "%s sent key %s but the store holds key %s for the intent", c.who(), rq.key, rec.key)
	case rec.state == "succeeded":
		// Closed as a success (a Settle learnt it while this flight ran):
		// no one else can send the intent any more, and the provider answers
		// this key from its record. A wasted request, not a second sender.
		c.trace("(sends a key the store already holds succeeded)")
	case rec.state == "pending" && rec.owner == "" && st.owner != "":
		// The same: a flight of this key, whose lease had run out, closed it
		// pending with the provider's answer after this sender claimed it
		// (seed 13 under a busy scheduler): the provider holds this key's
		// result and replays it. Not a second sender of a new request.
		c.trace("(sends a key the store already holds pending, closed by the provider's answer)")
	case rec.owner != st.owner || st.owner == "" || !now.Before(rec.leaseUntil):
		w.or.report(checkLeaseAtSend, intent, w.leaseHint(c, rec), "%s sent key %s without holding the lease: %s; the store's time is %s",
			c.who(), rq.key, w.leaseWords(rec), fmtAt(now))
	default:
		w.noteSent(c, rq.key, rec.attempt)
		return true, rec.leaseUntil
	}
	if err == nil && ok && rec.key == rq.key {
		w.noteSent(c, rq.key, rec.attempt)
	}
	return false, time.Time{}
}

// leave runs the checks of the moment a charge request is written (after
// any stall in the network stack): no other flight's request of the
// intent is on the wire under a lease still running, and the provider has
// not forgotten the key (a key resent after that charges again).
func (w *world) leave(c *call, rq reqInfo, held bool, until time.Time) *sending {
	s := &sending{c: c, key: rq.key, held: held, until: until}
	w.checkOverlap(c, s)
	w.checkStaleKey(c, rq.key)
	w.mu.Lock()
	w.inflight[c.intent()] = append(w.inflight[c.intent()], *s)
	w.mu.Unlock()
	return s
}

// checkOverlap flags a request leaving while another flight's request of
// the intent is on the wire under a lease that has not run out: two
// senders at once, which the lease (across instances) and the single
// flight (within one) exist to prevent.
func (w *world) checkOverlap(c *call, s *sending) {
	now := w.storeNow()
	var clash []*call
	w.mu.Lock()
	for _, o := range w.inflight[c.intent()] {
		if o.c != c && o.held && now.Before(o.until) {
			clash = append(clash, o.c)
		}
	}
	w.mu.Unlock()
	for _, other := range clash {
		w.or.report(checkConcurrentSend, c.intent(), w.overlapHint(c, other), "%s sent key %s while %s's request was still on the wire under its lease",
			c.who(), s.key, other.who())
	}
}

// checkStaleKey flags a key resent to a provider that de-duplicates by key
// once that provider has forgotten it. (Omise and 2C2P are not judged:
// the adapter looks up before any resend there, and does not rely on the
// key.)
func (w *world) checkStaleKey(c *call, key string) {
	if w.prov.name() != "ownapi" && w.prov.name() != "stripe" {
		return
	}
	w.mu.Lock()
	first, ok := w.processed[key]
	w.mu.Unlock()
	if age := w.clock.Now().Sub(first); ok && age >= providerRetention {
		if w.askedBeforeResend(c, key) {
			c.trace("(resends key %s, which the provider has forgotten, after its lookup showed nothing done under it)", key)
			return
		}
		w.mu.Lock()
		w.staleKeys[c.intent()] = true
		w.mu.Unlock()
		hint := hintSkewKey
		if w.storeOff.Load() < 0 {
			hint = hintStoreClockBack
		}
		w.or.report(checkStaleKey, c.intent(), hint, "%s resent key %s %s after the provider first processed it: the provider has forgotten it and executes it again",
			c.who(), key, age.Round(60e9))
	}
}

// askedBeforeResend reports whether a resend of a key the provider has
// forgotten is harmless: the call asked the provider first, and nothing is
// done under the key (no charge, nothing awaiting the customer), so the
// provider executing it again is executing it once. The client looks a key
// up before resending it once it reads an hour old (staleResume), which is
// what makes a store clock set back while nobody read it harmless wherever
// the provider can be asked.
func (w *world) askedBeforeResend(c *call, key string) bool {
	c.mu.Lock()
	asked := c.lookups > 0
	c.mu.Unlock()
	return asked && w.prov.chargedKeys(c.o)[key] == 0 && w.prov.truth(c.o) != truthPending
}

func (w *world) arrived(intent string, s *sending) {
	w.mu.Lock()
	defer w.mu.Unlock()
	list := w.inflight[intent]
	for i := range list {
		if list[i].c == s.c && list[i].key == s.key {
			w.inflight[intent] = append(list[:i], list[i+1:]...)
			return
		}
	}
}
