package filestore

import (
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Meta entries of the store's clock (file format 2 ignores unknown meta
// entries, so older versions still read the file).
var (
	// metaLastSeen is the store's clock when it last wrote this entry
	// (at Close and at each Expire): with the records' instants, the
	// latest instant the file knows of.
	metaLastSeen = []byte("last-seen")
	// metaDowntimes lists the gaps of the store's timeline (see
	// downtime).
	metaDowntimes = []byte("downtimes")
)

// A downtime is a gap in the store's timeline: at an Open at instant at,
// the host's clock was gap ahead of the latest instant in the file. The
// file cannot tell whether that time passed (the store was closed) or the
// clock is fast, so Expire counts none of it (see expireBefore): an age it
// acts on is never longer than the time the store was open.
type downtime struct {
	at  time.Time
	gap time.Duration
}

const downtimeLen = timeKeyLen + 8

func readDowntimes(tx *bolt.Tx) ([]downtime, error) {
	v := tx.Bucket(bucketMeta).Get(metaDowntimes)
	if len(v)%downtimeLen != 0 {
		return nil, corrupt("meta entry %q is %d bytes", metaDowntimes, len(v))
	}
	var out []downtime
	for ; len(v) > 0; v = v[downtimeLen:] {
		at, ok := parseTimeKey(v)
		gap := time.Duration(binary.BigEndian.Uint64(v[timeKeyLen:]))
		if gap < 0 || !ok {
			return nil, corrupt("meta entry %q holds a bad downtime", metaDowntimes)
		}
		out = append(out, downtime{at: at, gap: gap})
	}
	return out, nil
}

func writeDowntimes(tx *bolt.Tx, downs []downtime) error {
	meta := tx.Bucket(bucketMeta)
	if len(downs) == 0 {
		return meta.Delete(metaDowntimes)
	}
	b := make([]byte, 0, len(downs)*downtimeLen)
	for _, d := range downs {
		b = timeKey(b, d.at)
		b = binary.BigEndian.AppendUint64(b, uint64(d.gap))
	}
	return meta.Put(metaDowntimes, b)
}

func readLastSeen(tx *bolt.Tx) time.Time {
	v := tx.Bucket(bucketMeta)
	if v == nil {
		return time.Time{}
	}
	b := v.Get(metaLastSeen)
	if len(b) != timeKeyLen {
		return time.Time{}
	}
	t, _ := parseTimeKey(b)
	return t
}

func writeLastSeen(tx *bolt.Tx, t time.Time) error {
	return tx.Bucket(bucketMeta).Put(metaLastSeen, timeKey(nil, t))
}

// expireBefore returns the instant before which a record must have closed
// to have been closed more than retention of the store's open time at now:
// the time of every downtime after its closing is left out. Downtimes are
// in order of at, all at or before now.
func expireBefore(now time.Time, retention time.Duration, downs []downtime) time.Time {
	var total time.Duration
	for _, d := range downs {
		total += d.gap
	}
	// On the scale of open time, an instant c reads c minus the
	// downtimes at or before it, and now reads now minus all of them.
	target := now.Add(-total - retention)
	// Stamps before downtime d are at or before d.at−d.gap (the latest
	// instant of the file when it began), those after it from d.at on.
	var offset time.Duration
	for _, d := range downs {
		if c := target.Add(offset); !c.After(d.at.Add(-d.gap)) {
			return c
		}
		offset += d.gap
	}
	return target.Add(offset)
}

// pruneDowntimes drops the downtimes that no closed record precedes
// (earliest is the earliest ClosedAt, zero if there is none): they shift
// the open time of now and of every record alike.
func pruneDowntimes(downs []downtime, earliest time.Time, none bool) []downtime {
	i := 0
	for i < len(downs) && (none || !downs[i].at.After(earliest)) {
		i++
	}
	return downs[i:]
}
