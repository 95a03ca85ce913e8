package redis

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/idempay/idempay"
)

// Hash fields of a record. Short names: there is one hash per intent and
// Redis keeps every field name in every hash.
const (
	fNamespace   = "ns"
	fIntentID    = "id"
	fKey         = "k"
	fFingerprint = "fp"
	fState       = "st"
	fCreatedAt   = "ca"
	fUpdatedAt   = "ua"
	fLeaseOwner  = "lo"
	fLeaseUntil  = "lu"
	fProviderRef = "pr"
	fResult      = "res" // absent when Result is nil, so nil and empty differ
)

// timeWidth is the number of digits of a time field: every non-negative
// int64 fits in 19, and fixed width makes string order equal time order,
// which is how the Lua scripts compare leases without losing precision
// (Lua numbers are doubles and cannot hold nanoseconds since 1970).
const timeWidth = 19

var maxTime = time.Unix(0, math.MaxInt64)

// encodeTime returns t as fixed-width Unix nanoseconds, or "" for the zero
// time.
func encodeTime(t time.Time) (string, error) {
	if t.IsZero() {
		return "", nil
	}
	if t.Before(time.Unix(0, 0)) || t.After(maxTime) {
		return "", fmt.Errorf("redis: time %v outside the storable range 1970 to 2262", t)
	}
	return fmt.Sprintf("%0*d", timeWidth, t.UnixNano()), nil
}

// encodeCutoff is encodeTime for Expire's cutoff, where a time outside the
// range is meaningful: before 1970 nothing storable is older, after 2262
// everything is.
func encodeCutoff(t time.Time) string {
	switch {
	case t.Before(time.Unix(0, 0)):
		return fmt.Sprintf("%0*d", timeWidth, 0)
	case t.After(maxTime):
		return fmt.Sprintf("%0*d", timeWidth, uint64(math.MaxInt64))
	}
	s, _ := encodeTime(t)
	return s
}

func decodeTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("redis: bad time field %q", s)
	}
	return time.Unix(0, n).UTC(), nil
}

// score is the sorted-set score of a record created at t: microseconds,
// which a double holds exactly until the year 2255.
func score(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMicro())
}

// encoded is a Record as the scripts take it.
type encoded struct {
	createdAt, updatedAt, leaseUntil string
}

func encodeRecord(r idempay.Record) (encoded, error) {
	var (
		e   encoded
		err error
	)
	if e.createdAt, err = encodeTime(r.CreatedAt); err != nil {
		return e, err
	}
	if e.updatedAt, err = encodeTime(r.UpdatedAt); err != nil {
		return e, err
	}
	if e.leaseUntil, err = encodeTime(r.LeaseUntil); err != nil {
		return e, err
	}
	return e, nil
}

// decodeRecord builds a Record from the fields of its hash.
func decodeRecord(h map[string]string) (idempay.Record, error) {
	r := idempay.Record{
		Namespace:   h[fNamespace],
		IntentID:    h[fIntentID],
		Key:         h[fKey],
		Fingerprint: h[fFingerprint],
		State:       idempay.State(h[fState]),
		LeaseOwner:  h[fLeaseOwner],
		ProviderRef: h[fProviderRef],
	}
	if res, ok := h[fResult]; ok {
		r.Result = []byte(res)
	}
	var err error
	if r.CreatedAt, err = decodeTime(h[fCreatedAt]); err != nil {
		return r, err
	}
	if r.UpdatedAt, err = decodeTime(h[fUpdatedAt]); err != nil {
		return r, err
	}
	if r.LeaseUntil, err = decodeTime(h[fLeaseUntil]); err != nil {
		return r, err
	}
	return r, nil
}

// pairsToMap turns a flat HGETALL reply returned by a script into a map.
func pairsToMap(v any) (map[string]string, error) {
	list, ok := v.([]any)
	if !ok || len(list)%2 != 0 {
		return nil, fmt.Errorf("redis: unexpected script reply %T", v)
	}
	m := make(map[string]string, len(list)/2)
	for i := 0; i < len(list); i += 2 {
		k, ok1 := list[i].(string)
		val, ok2 := list[i+1].(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("redis: unexpected script reply element %T %T", list[i], list[i+1])
		}
		m[k] = val
	}
	return m, nil
}
