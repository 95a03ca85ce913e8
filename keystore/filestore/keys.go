package filestore

import (
	"encoding/binary"
	"time"

	"github.com/idempay/idempay"
)

// Keys. A record lives in bucket records under recordKey(ns, id). The
// namespace is length-prefixed rather than joined with a separator, so that
// no choice of namespace and intent ID can make two intents share a key, and
// so that all records of a namespace share the prefix nsPrefix(ns).

func nsPrefix(ns string) []byte {
	return appendString(make([]byte, 0, binary.MaxVarintLen64+len(ns)), ns)
}

func recordKey(ns, id string) []byte {
	return append(nsPrefix(ns), id...)
}

// splitRecordKey is the inverse of recordKey.
func splitRecordKey(k []byte) (ns, id string, err error) {
	n, w := binary.Uvarint(k)
	if w <= 0 || n > uint64(len(k)-w) {
		return "", "", corrupt("bad record key %q", k)
	}
	return string(k[w : w+int(n)]), string(k[w+int(n):]), nil
}

// splitOpenKey is the inverse of openKey, but for the time.
func splitOpenKey(k []byte) (ns, id string, err error) {
	n, w := binary.Uvarint(k)
	if w <= 0 || n > uint64(len(k)-w) || len(k)-w-int(n) < timeKeyLen {
		return "", "", corrupt("bad open index key %q", k)
	}
	return string(k[w : w+int(n)]), string(k[w+int(n)+timeKeyLen:]), nil
}

// timeKeyLen is the length of timeKey's output.
const timeKeyLen = 12

// timeKey encodes t so that byte order is time order: Unix seconds with the
// sign bit flipped (so negative seconds sort first), then nanoseconds, both
// big-endian.
func timeKey(b []byte, t time.Time) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(t.Unix())^(1<<63))
	return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
}

// parseTimeKey is the inverse of timeKey, on the first timeKeyLen bytes
// of b; ok is false for nanoseconds out of range.
func parseTimeKey(b []byte) (t time.Time, ok bool) {
	sec := int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
	nsec := int64(binary.BigEndian.Uint32(b[8:]))
	return time.Unix(sec, nsec).UTC(), nsec < int64(time.Second)
}

// openKey is the key of the index of open and pending records: namespace,
// CreatedAt, intent ID. Its byte order is ListOpen's (CreatedAt, IntentID)
// order within a namespace, since timeKey sorts as time does and Go
// compares intent IDs bytewise too. The layout is the same in file
// formats 1 and 2.
func openKey(ns string, created time.Time, id string) []byte {
	return append(timeKey(nsPrefix(ns), created), id...)
}

// openKeyOf is the open index key of record r.
func openKeyOf(r idempay.Record) []byte { return openKey(r.Namespace, r.CreatedAt, r.ID) }

// closedKey is the key of the index of succeeded and failed records:
// ClosedAt first, so that Expire reads only the records it deletes, then
// the record key. (File format 1 keyed it by CreatedAt.)
func closedKey(closed time.Time, ns, id string) []byte {
	return append(timeKey(make([]byte, 0, timeKeyLen+len(ns)+len(id)+2), closed), recordKey(ns, id)...)
}

// closedKeyOf is the closed index key of record r.
func closedKeyOf(r idempay.Record) []byte { return closedKey(r.ClosedAt, r.Namespace, r.ID) }
