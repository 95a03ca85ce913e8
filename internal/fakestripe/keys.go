package fakestripe

import (
	"sync"
	"time"
)

// scope is a key within one account's key space.
type scope struct{ account, key string }

// stored is an answer kept under a key for replay.
type stored struct {
	status int
	body   []byte
}

// keyRecord is one key: in flight (claimed under a lease) or done.
type keyRecord struct {
	fingerprint string
	created     time.Time
	done        bool
	token       uint64    // fences the current claim
	leaseUntil  time.Time // while !done
	resp        stored    // when done
}

type claimKind uint8

const (
	claimWon      claimKind = iota // execute, then commit with the token
	claimReplay                    // an answer is stored: send it again
	claimInUse                     // another claim holds a live lease
	claimMismatch                  // the key was used with other parameters
)

type claim struct {
	kind  claimKind
	token uint64
	resp  stored
}

// keyStore holds every key behind one mutex, which makes "is it free? take
// it" a single step.
type keyStore struct {
	mu        sync.Mutex
	records   map[scope]*keyRecord
	lastToken uint64
	lease     time.Duration
	retention time.Duration
}

func newKeyStore(lease, retention time.Duration) *keyStore {
	return &keyStore{records: map[scope]*keyRecord{}, lease: lease, retention: retention}
}

func (ks *keyStore) claim(sc scope, fp string, now time.Time) claim {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	rec := ks.records[sc]
	if rec != nil && now.Sub(rec.created) >= ks.retention {
		rec = nil // forgotten: the request runs as new, and charges again
	}
	switch {
	case rec == nil:
		rec = &keyRecord{fingerprint: fp, created: now}
		ks.records[sc] = rec
		return claim{kind: claimWon, token: ks.take(rec, now)}
	case rec.fingerprint != fp:
		return claim{kind: claimMismatch}
	case rec.done:
		return claim{kind: claimReplay, resp: rec.resp}
	case now.Before(rec.leaseUntil):
		return claim{kind: claimInUse}
	}
	return claim{kind: claimWon, token: ks.take(rec, now)} // the lease ran out: take over
}

func (ks *keyStore) take(rec *keyRecord, now time.Time) uint64 {
	ks.lastToken++
	rec.token, rec.leaseUntil = ks.lastToken, now.Add(ks.lease)
	return rec.token
}

// commit stores resp under sc and runs effect (recording the charge) in
// the same critical section, so that an answer never exists without its
// effect nor the reverse. It does neither and returns false when token is
// no longer the key's claim: another request took the key over and acts
// instead.
func (ks *keyStore) commit(sc scope, token uint64, resp stored, effect func()) bool {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	rec := ks.records[sc]
	if rec == nil || rec.done || rec.token != token {
		return false
	}
	if effect != nil {
		effect()
	}
	rec.done, rec.resp = true, resp
	return true
}
