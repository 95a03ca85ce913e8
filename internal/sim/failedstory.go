package sim

import (
	"context"
	"strings"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// A "failed" judged over the whole story (issue 16): a caller told failed
// acts on it (the customer is told, the order is cancelled), so money must
// never move under that attempt's key afterwards, whatever happens later:
// a crash that loses the close, a resume by the recovery worker, a late
// write. atReturn judges the answer at the moment it is given; these
// checks judge it at every later send and once more at the end.

const (
	checkFailedResent  = "failed-resent"       // a request of an attempt its caller was told failed left afterwards
	checkFailedCharged = "failed-charged"      // money moved under the key of an attempt its caller was told failed
	checkOpFailedLater = "op-failed-made"      // an operation told failed was made later under the failed attempt's key
	checkRefusedPaid   = "refund-refused-paid" // a refund refused as "the charge never succeeded" for a charged intent (issue 17 #1)
	hintGuardLock      = "issue16#2 the guard's lock or answer not written, the answer given anyway"
	hintRefundExpired  = "issue17#1 the charge's record expired before its first refund"
	hintLostClose      = "issue16#1 a failed close lost in a store crash"
	hintStoreLoss      = "issue16#5 the store lost acknowledged writes (its data set)"
	hintStoreClock     = "issue16 a store clock that stepped"
	hintStoreClockBack = "issue16 a store clock set back: ages read younger"
)

// failedTell is one "failed" a caller was told: the attempt and the key it
// named.
type failedTell struct {
	intent  string
	opID    string // an operation's ID; empty for a charge
	key     string
	attempt int // 0: not known (an operation, or a refusal before any Reserve)
	who     string
	// reached: the provider had processed the key when the failure was
	// told (a decline): a resend is answered by the provider's replay of
	// it. A failure of a key never sent ("nothing sent") has no replay.
	reached bool
}

// noteFailed records a failed answer of c that names a key.
func (w *world) noteFailed(c *call, res result) {
	if res.out != outFailed || res.key == "" || c.o == nil {
		return
	}
	if c.o.kind == "auth" && c.opID == "" {
		return // a cancelled authorisation answers failed: judged by its operations
	}
	st := c.get()
	t := failedTell{intent: c.o.id, opID: c.opID, key: res.key, who: c.who()}
	if st.rkey == res.key {
		t.attempt = st.rattempt
	}
	w.mu.Lock()
	_, t.reached = w.processed[t.key]
	w.toldFailed = append(w.toldFailed, t)
	w.mu.Unlock()
}

// noteSent records the attempt a charge request was sent for, and judges
// it against the failures told before.
func (w *world) noteSent(c *call, key string, attempt int) {
	intent := c.intent()
	w.mu.Lock()
	byKey := w.sentBy[intent]
	if byKey == nil {
		byKey = map[string]map[int]bool{}
		w.sentBy[intent] = byKey
	}
	if byKey[key] == nil {
		byKey[key] = map[int]bool{}
	}
	byKey[key][attempt] = true
	var told *failedTell
	for i := range w.toldFailed {
		t := &w.toldFailed[i]
		if t.opID == "" && !t.reached && t.intent == intent && t.key == key && (t.attempt == 0 || t.attempt == attempt) {
			told = t
			break
		}
	}
	w.mu.Unlock()
	if told != nil {
		w.or.report(checkFailedResent, intent, w.failedHint(intent), "%s sent key %s of attempt %d, which %s was told failed with nothing sent: the customer told failed may now be charged",
			c.who(), key, attempt, told.who)
	}
}

// finalFailed judges every failure told over the whole story: no charge
// under the key of an attempt told failed (when that key was sent by that
// attempt only: a caller's key may carry a later attempt, judged at its
// send), and no operation made under the key of one told failed.
func (o *oracle) finalFailed(ctx context.Context) {
	w := o.w
	w.mu.Lock()
	tells := append([]failedTell(nil), w.toldFailed...)
	w.mu.Unlock()
	for _, t := range tells {
		ord := w.byID[t.intent]
		if ord == nil {
			continue
		}
		if t.opID != "" {
			o.finalOpFailed(ord, t)
			continue
		}
		n := w.prov.chargedKeys(ord)[t.key]
		w.mu.Lock()
		sent := w.sentBy[t.intent][t.key]
		only := len(sent) == 1 && (t.attempt == 0 || sent[t.attempt])
		w.mu.Unlock()
		if n > 0 && only {
			o.report(checkFailedCharged, t.intent, w.failedHint(t.intent), "%s was told failed (attempt %d, key %s), and the provider holds %d charge(s) made with that key",
				t.who, t.attempt, t.key, n)
		}
	}
}

func (o *oracle) finalOpFailed(ord *order, t failedTell) {
	for _, x := range o.w.prov.ledger().Ops() {
		if x.Key == t.key && x.Intent == ord.id && x.Status != fakes.OpFailed {
			o.report(checkOpFailedLater, t.intent, o.w.failedHint(t.intent), "%s was told %s failed (key %s), and the provider made it with that key",
				t.who, t.opID, t.key)
			return
		}
	}
}

// failedHint names what the story shows: a store crash that lost writes of
// the intent, a store clock that stepped.
func (w *world) failedHint(intent string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, what := range w.lostWrites[intent] {
		if strings.Contains(what, "resolve failed") {
			return hintLostClose
		}
	}
	if len(w.lostWrites[intent]) > 0 {
		return hintStoreLoss
	}
	if w.storeOff.Load() != 0 {
		return hintStoreClock
	}
	return ""
}
