package redis

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idempay/idempay"
)

// Hash fields of a record. Short names: there is one hash per intent and
// Redis keeps every field name in every hash. The first eleven are the
// layout written before attempts existed; records in that layout lack the
// others, and decodeRecord fills them in (see legacy.go).
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

	fAttempt  = "at" // absent in the old layout: attempt 1
	fCreator  = "cr" // absent in the old layout: no creator
	fClosedAt = "cl" // absent in the old layout: UpdatedAt, if closed
)

// A past attempt n is kept in the record's hash as the fields
// "h<n>.<field>", with field one of the names above: h1.k, h1.fp, h1.st,
// h1.ca, h1.cl, h1.pr and, if the attempt had a result, h1.res. Plain hash
// fields keep a result's bytes exactly, which JSON written by Lua would not.
const historyPrefix = "h"

// Times are stored as fixed-width Unix nanoseconds (19 digits: every
// non-negative int64 fits, and fixed width makes string order time order).
// The scripts stamp them from the server's clock (Redis TIME), in whole
// microseconds; records in the old layout were stamped from the clients'
// clocks and may carry nanoseconds.
// decodeTime reads a time field, in UTC and truncated to the microsecond:
// the precision every store keeps, and the one the indexes' scores have, so
// that a record's CreatedAt orders it exactly where its index entry is.
// Only records in the old layout had finer times.
func decodeTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("redis: bad time field %q", s)
	}
	return time.Unix(0, n).UTC().Truncate(time.Microsecond), nil
}

// micros is the index score of t: Unix microseconds, which a double (a
// sorted-set score, a Lua number) holds exactly below 2^53, that is until
// the year 2255.
func micros(t time.Time) int64 { return t.UnixMicro() }

// decodeRecord builds a Record from the fields of its hash, in either
// layout.
func decodeRecord(h map[string]string) (idempay.Record, error) {
	r := idempay.Record{
		Namespace:   h[fNamespace],
		ID:          h[fIntentID],
		Key:         h[fKey],
		Fingerprint: h[fFingerprint],
		State:       idempay.State(h[fState]),
		Creator:     h[fCreator],
		LeaseOwner:  h[fLeaseOwner],
		ProviderRef: h[fProviderRef],
		Attempt:     1,
	}
	if !r.State.Valid() {
		return r, fmt.Errorf("redis: bad state field %q", h[fState])
	}
	if res, ok := h[fResult]; ok {
		r.Result = []byte(res)
	}
	if a, ok := h[fAttempt]; ok {
		n, err := strconv.Atoi(a)
		if err != nil || n < 1 {
			return r, fmt.Errorf("redis: bad attempt field %q", a)
		}
		r.Attempt = n
	}
	if err := decodeTimes(&r, h); err != nil {
		return r, err
	}
	hist, err := decodeHistory(h)
	r.History = hist
	return r, err
}

// decodeTimes reads the four instants of a record. A closed record in the
// old layout has no closing time: it was last written by the Resolve that
// closed it, so its UpdatedAt is when it closed.
func decodeTimes(r *idempay.Record, h map[string]string) error {
	var err error
	for _, f := range []struct {
		dst   *time.Time
		field string
	}{
		{&r.CreatedAt, fCreatedAt}, {&r.UpdatedAt, fUpdatedAt},
		{&r.ClosedAt, fClosedAt}, {&r.LeaseUntil, fLeaseUntil},
	} {
		if *f.dst, err = decodeTime(h[f.field]); err != nil {
			return err
		}
	}
	if _, ok := h[fClosedAt]; !ok && r.State.Closed() {
		r.ClosedAt = r.UpdatedAt
	}
	return nil
}

// decodeHistory collects the fields h<n>.* into past attempts, oldest
// first.
func decodeHistory(h map[string]string) ([]idempay.PastAttempt, error) {
	byN := map[int]*idempay.PastAttempt{}
	for name, v := range h {
		n, field, ok := historyField(name)
		if !ok {
			continue
		}
		p := byN[n]
		if p == nil {
			p = &idempay.PastAttempt{Attempt: n}
			byN[n] = p
		}
		if err := setPast(p, field, v); err != nil {
			return nil, err
		}
	}
	if len(byN) == 0 {
		return nil, nil
	}
	out := make([]idempay.PastAttempt, 0, len(byN))
	for _, n := range slices.Sorted(maps.Keys(byN)) {
		out = append(out, *byN[n])
	}
	return out, nil
}

// historyField splits "h<n>.<field>" into n and field.
func historyField(name string) (int, string, bool) {
	rest, ok := strings.CutPrefix(name, historyPrefix)
	if !ok {
		return 0, "", false
	}
	num, field, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, "", false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return 0, "", false
	}
	return n, field, true
}

func setPast(p *idempay.PastAttempt, field, v string) error {
	var err error
	switch field {
	case fKey:
		p.Key = v
	case fFingerprint:
		p.Fingerprint = v
	case fState:
		p.State = idempay.State(v)
	case fProviderRef:
		p.ProviderRef = v
	case fResult:
		p.Result = []byte(v)
	case fCreatedAt:
		p.CreatedAt, err = decodeTime(v)
	case fClosedAt:
		p.ClosedAt, err = decodeTime(v)
	}
	return err
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
