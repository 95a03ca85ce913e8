package refserver

import (
	"sync"
	"time"
)

// scope identifies a key within one tenant's key space, so that two
// merchants sending the same key never see each other's responses.
type scope struct{ merchant, key string }

// stored is a response kept under a key for replay.
type stored struct {
	status int
	body   []byte
}

// record is the state of one key: in flight (claimed, lease running) or
// done (response stored).
type record struct {
	fingerprint string
	created     time.Time // first claim; retention counts from here
	done        bool
	token       uint64    // fencing token of the current claim
	leaseUntil  time.Time // meaningful while !done
	resp        stored    // meaningful when done
}

type claimKind uint8

const (
	claimWon      claimKind = iota // caller holds the key and must execute
	claimReplay                    // a response is stored: send it again
	claimInUse                     // another claim holds a live lease
	claimMismatch                  // the key was used with another request
)

// claim is the outcome of keyStore.claim.
type claim struct {
	kind      claimKind
	token     uint64 // for claimWon: present it to commit or release
	reclaimed bool   // for claimWon: an expired claim was taken over
	resp      stored // for claimReplay
}

// keyStore holds every key's record. One mutex guards all of them: claims,
// commits and releases are each a single critical section, which is what
// makes "check whether the key is free, then take it" atomic.
type keyStore struct {
	mu        sync.Mutex
	records   map[scope]*record
	lastToken uint64
	claims    int // since the last sweep
	lease     time.Duration
	retention time.Duration
	ledger    *Ledger
}

func newKeyStore(lease, retention time.Duration, ledger *Ledger) *keyStore {
	return &keyStore{
		records:   map[scope]*record{},
		lease:     lease,
		retention: retention,
		ledger:    ledger,
	}
}

// claim tries to take sc for a request with fingerprint fp at now.
func (ks *keyStore) claim(sc scope, fp string, now time.Time) claim {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.maybeSweep(now)
	rec := ks.live(sc, now)
	switch {
	case rec == nil:
		rec = &record{fingerprint: fp, created: now}
		ks.records[sc] = rec
		return claim{kind: claimWon, token: ks.take(rec, now)}
	case rec.fingerprint != fp:
		// Checked before the lease: the key is bound to its first
		// request whatever state that request is in.
		return claim{kind: claimMismatch}
	case rec.done:
		return claim{kind: claimReplay, resp: rec.resp}
	case now.Before(rec.leaseUntil):
		return claim{kind: claimInUse}
	default:
		return claim{kind: claimWon, token: ks.take(rec, now), reclaimed: true}
	}
}

// live returns sc's record, forgetting it first if its retention is over.
func (ks *keyStore) live(sc scope, now time.Time) *record {
	rec := ks.records[sc]
	if rec != nil && now.Sub(rec.created) >= ks.retention {
		delete(ks.records, sc)
		return nil
	}
	return rec
}

// sweepEvery bounds how many claims pass between sweeps of expired keys,
// so that a long chaos run does not keep every key it ever saw.
const sweepEvery = 4096

func (ks *keyStore) maybeSweep(now time.Time) {
	if ks.claims++; ks.claims < sweepEvery {
		return
	}
	ks.claims = 0
	for sc := range ks.records {
		ks.live(sc, now)
	}
}

// take gives rec a new claim. The fresh token fences off the previous
// holder, whose lease expired but who may still be running.
func (ks *keyStore) take(rec *record, now time.Time) uint64 {
	ks.lastToken++
	rec.token = ks.lastToken
	rec.leaseUntil = now.Add(ks.lease)
	return rec.token
}

// commit stores resp under sc and, if ch is not nil, records the charge,
// both in one critical section. It does neither and returns false when
// the claim identified by token is no longer the key's current claim: its
// lease expired and someone else took the key, who will charge instead.
func (ks *keyStore) commit(sc scope, token uint64, resp stored, ch *Charge) bool {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	rec := ks.records[sc]
	if rec == nil || rec.done || rec.token != token {
		return false
	}
	if ch != nil {
		ks.ledger.add(*ch)
	}
	rec.done, rec.resp = true, resp
	return true
}

// release forgets sc if token is still its current claim, so that the
// next request with the key executes afresh.
func (ks *keyStore) release(sc scope, token uint64) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if rec := ks.records[sc]; rec != nil && !rec.done && rec.token == token {
		delete(ks.records, sc)
	}
}
