package faults

import (
	"sync"
	"time"
)

// KeyTable is a fake provider's idempotency-key table: the state a
// provider that honours keys keeps per (account, key). A key is bound to
// the fingerprint of its first request; a claim on it carries a lease, so
// a handler that crashed blocks the key only until the lease ends; and
// storing the answer is fenced by the claim's token, so a handler whose
// lease was taken over can neither store nor charge. Keys past their
// retention are forgotten, and swept from memory every few thousand
// claims. It is safe for concurrent use.
type KeyTable struct {
	mu        sync.Mutex
	records   map[keyScope]*keyRecord
	lastToken uint64
	claims    int // since the last sweep
	lease     time.Duration
	retention time.Duration
}

type keyScope struct{ account, key string }

// Stored is an answer kept under a key for replay.
type Stored struct {
	Status int    // HTTP status
	Body   []byte // the whole body
}

type keyRecord struct {
	fingerprint string
	created     time.Time
	done        bool
	token       uint64
	leaseUntil  time.Time // while !done
	resp        Stored    // when done
}

// ClaimKind is what a claim found.
type ClaimKind uint8

// The outcomes of KeyTable.Claim.
const (
	// ClaimWon: the caller holds the key and must execute, then Commit or
	// Release with the token.
	ClaimWon ClaimKind = iota
	// ClaimReplay: an answer is stored under the key: send it again.
	ClaimReplay
	// ClaimInUse: another claim holds a live lease.
	ClaimInUse
	// ClaimMismatch: the key was used with another fingerprint.
	ClaimMismatch
)

// Claim is the result of KeyTable.Claim.
type Claim struct {
	Kind      ClaimKind // what the claim found
	Token     uint64    // for ClaimWon
	Reclaimed bool      // for ClaimWon: a claim whose lease ran out was taken over
	Resp      Stored    // for ClaimReplay
}

// NewKeyTable returns a table whose claims last lease and whose keys are
// forgotten retention after their first claim.
func NewKeyTable(lease, retention time.Duration) *KeyTable {
	return &KeyTable{records: map[keyScope]*keyRecord{}, lease: lease, retention: retention}
}

// Claim tries to take (account, key) for a request with fingerprint fp at
// now. A key past its retention is forgotten: the request runs as new,
// which is how a provider charges twice for a key resent too late.
func (kt *KeyTable) Claim(account, key, fp string, now time.Time) Claim {
	kt.mu.Lock()
	defer kt.mu.Unlock()
	kt.maybeSweep(now)
	sc := keyScope{account, key}
	rec := kt.live(sc, now)
	switch {
	case rec == nil:
		rec = &keyRecord{fingerprint: fp, created: now}
		kt.records[sc] = rec
		return Claim{Kind: ClaimWon, Token: kt.take(rec, now)}
	case rec.fingerprint != fp:
		// Checked before the lease: the key is bound to its first
		// request whatever state that request is in.
		return Claim{Kind: ClaimMismatch}
	case rec.done:
		return Claim{Kind: ClaimReplay, Resp: rec.resp}
	case now.Before(rec.leaseUntil):
		return Claim{Kind: ClaimInUse}
	}
	return Claim{Kind: ClaimWon, Token: kt.take(rec, now), Reclaimed: true} // the lease ran out: take over
}

// live returns sc's record, forgetting it first if its retention is over.
func (kt *KeyTable) live(sc keyScope, now time.Time) *keyRecord {
	rec := kt.records[sc]
	if rec != nil && now.Sub(rec.created) >= kt.retention {
		delete(kt.records, sc)
		return nil
	}
	return rec
}

// sweepEvery bounds how many claims pass between sweeps of keys past their
// retention, so that a long chaos run does not keep every key it ever saw.
const sweepEvery = 4096

func (kt *KeyTable) maybeSweep(now time.Time) {
	if kt.claims++; kt.claims < sweepEvery {
		return
	}
	kt.claims = 0
	for sc := range kt.records {
		kt.live(sc, now)
	}
}

// take gives rec a new claim. The fresh token fences off the previous
// holder, whose lease ran out but who may still be running.
func (kt *KeyTable) take(rec *keyRecord, now time.Time) uint64 {
	kt.lastToken++
	rec.token, rec.leaseUntil = kt.lastToken, now.Add(kt.lease)
	return rec.token
}

// Commit stores resp under the key and runs effect (recording the charge)
// in the same critical section, so that an answer never exists without its
// effect nor the reverse. It does neither and returns false when token is
// no longer the key's claim: another request took the key over and acts
// instead.
func (kt *KeyTable) Commit(account, key string, token uint64, resp Stored, effect func()) bool {
	kt.mu.Lock()
	defer kt.mu.Unlock()
	rec := kt.records[keyScope{account, key}]
	if rec == nil || rec.done || rec.token != token {
		return false
	}
	if effect != nil {
		effect()
	}
	rec.done, rec.resp = true, resp
	return true
}

// Release forgets the key if token is still its claim, so that the next
// request with it executes afresh (a provider that does not store
// failures).
func (kt *KeyTable) Release(account, key string, token uint64) {
	kt.mu.Lock()
	defer kt.mu.Unlock()
	sc := keyScope{account, key}
	if rec := kt.records[sc]; rec != nil && !rec.done && rec.token == token {
		delete(kt.records, sc)
	}
}

// InFlight reports whether (account, key) is claimed and its answer not
// yet stored, for tests that must act while a request is being processed.
func (kt *KeyTable) InFlight(account, key string) bool {
	kt.mu.Lock()
	defer kt.mu.Unlock()
	rec := kt.records[keyScope{account, key}]
	return rec != nil && !rec.done
}
