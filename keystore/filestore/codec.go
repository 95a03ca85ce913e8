package filestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/idempay/idempay"
)

// ErrCorrupt is returned, wrapped, when a record or index entry read from
// the file cannot be decoded or the indexes disagree with the records. It
// means the file was damaged or written by something other than this
// package; the store does not try to repair it.
var ErrCorrupt = errors.New("filestore: corrupt record")

// recordFormat is the first byte of every encoded record. A new layout gets
// a new number, and decode keeps reading the old ones, so that a file
// survives an upgrade without a migration pass.
const recordFormat byte = 1

// State codes of the record layout. They are bytes rather than the State
// strings to keep a record small, and fixed here rather than derived from
// an order of declaration so that the file format cannot drift.
var stateCodes = map[idempay.State]byte{
	idempay.StateOpen:      1,
	idempay.StatePending:   2,
	idempay.StateSucceeded: 3,
	idempay.StateFailed:    4,
}

var codeStates = map[byte]idempay.State{
	1: idempay.StateOpen,
	2: idempay.StatePending,
	3: idempay.StateSucceeded,
	4: idempay.StateFailed,
}

// encodeRecord lays out r without its Namespace and IntentID, which are in
// the bucket key:
//
//	format byte (1)
//	state byte
//	Key, Fingerprint             uvarint length, bytes
//	CreatedAt, UpdatedAt         time
//	LeaseOwner                   uvarint length, bytes
//	LeaseUntil                   time
//	ProviderRef                  uvarint length, bytes
//	Result                       uvarint 0 for nil, else length+1, bytes
//
// A time is uvarint 0 for the zero time, else uvarint 1, varint Unix
// seconds and uvarint nanoseconds: full precision, location dropped (times
// come back in UTC). A typical record is about 100 bytes plus its Result.
func encodeRecord(r idempay.Record) []byte {
	b := make([]byte, 0, 64+len(r.Key)+len(r.Fingerprint)+len(r.LeaseOwner)+len(r.ProviderRef)+len(r.Result))
	b = append(b, recordFormat, stateCodes[r.State])
	b = appendString(b, r.Key)
	b = appendString(b, r.Fingerprint)
	b = appendTime(b, r.CreatedAt)
	b = appendTime(b, r.UpdatedAt)
	b = appendString(b, r.LeaseOwner)
	b = appendTime(b, r.LeaseUntil)
	b = appendString(b, r.ProviderRef)
	if r.Result == nil {
		b = binary.AppendUvarint(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(r.Result))+1)
		b = append(b, r.Result...)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// decodeRecord is the inverse of encodeRecord. It copies everything it
// keeps out of v, which belongs to a bbolt transaction and is invalid once
// the transaction ends.
func decodeRecord(ns, id string, v []byte) (idempay.Record, error) {
	d := decoder{b: v}
	format := d.byte()
	if d.err == nil && format != recordFormat {
		return idempay.Record{}, fmt.Errorf("%w: %q/%q: unknown record format %d", ErrCorrupt, ns, id, format)
	}
	r := idempay.Record{Namespace: ns, IntentID: id}
	code := d.byte()
	r.State = codeStates[code]
	r.Key = d.string()
	r.Fingerprint = d.string()
	r.CreatedAt = d.time()
	r.UpdatedAt = d.time()
	r.LeaseOwner = d.string()
	r.LeaseUntil = d.time()
	r.ProviderRef = d.string()
	if n := d.uvarint(); n > 0 {
		r.Result = append([]byte{}, d.bytes(n-1)...)
	}
	switch {
	case d.err != nil:
		return idempay.Record{}, fmt.Errorf("%w: %q/%q: %v", ErrCorrupt, ns, id, d.err)
	case len(d.b) != 0:
		return idempay.Record{}, fmt.Errorf("%w: %q/%q: %d trailing bytes", ErrCorrupt, ns, id, len(d.b))
	case r.State == "":
		return idempay.Record{}, fmt.Errorf("%w: %q/%q: unknown state code %d", ErrCorrupt, ns, id, code)
	}
	return r, nil
}

// decoder reads the record layout. The first error sticks and every later
// read returns a zero value, so decodeRecord checks once at the end.
type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("record too short")

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) < 1 {
		d.err = cmpErr(d.err, errShort)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errors.New("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errors.New("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) }

func (d *decoder) time() time.Time {
	switch tag := d.uvarint(); {
	case d.err != nil || tag == 0:
		return time.Time{}
	case tag != 1:
		d.err = fmt.Errorf("bad time tag %d", tag)
		return time.Time{}
	}
	sec, nsec := d.varint(), d.uvarint()
	if nsec >= uint64(time.Second) {
		d.err = fmt.Errorf("bad nanoseconds %d", nsec)
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// cmpErr keeps the first error.
func cmpErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

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
		return "", "", fmt.Errorf("%w: bad record key %q", ErrCorrupt, k)
	}
	return string(k[w : w+int(n)]), string(k[w+int(n):]), nil
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

// openKey is the key of the index of open and pending records: by
// namespace, then CreatedAt, then intent ID, which is the order ListOpen
// returns.
func openKey(ns string, created time.Time, id string) []byte {
	return append(timeKey(nsPrefix(ns), created), id...)
}

// closedKey is the key of the index of succeeded and failed records: by
// CreatedAt first, so that Expire reads only the records it deletes, then
// the record key.
func closedKey(created time.Time, ns, id string) []byte {
	return append(timeKey(make([]byte, 0, timeKeyLen+len(ns)+len(id)+2), created), recordKey(ns, id)...)
}
