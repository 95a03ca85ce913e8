package filestore

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/idempay/idempay"
)

// Record formats: the first byte of every encoded record. A new layout gets
// a new number, and decodeRecord keeps reading the old ones, so that records
// written by an earlier version stay readable after an upgrade.
const (
	// recordFormat1 is the layout written up to the KeyStore contract v2:
	// no attempt, creator, closing time or history. It is only read.
	recordFormat1 byte = 1
	// recordFormat is the layout encodeRecord writes.
	recordFormat byte = 2
)

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
// the bucket key, in format 2:
//
//	format byte (2)
//	state byte
//	Attempt                      uvarint
//	Key, Fingerprint             string
//	CreatedAt, UpdatedAt         time
//	ClosedAt                     time
//	Creator, LeaseOwner          string
//	LeaseUntil                   time
//	ProviderRef                  string
//	Result                       bytes
//	History                      uvarint count, then per attempt:
//	  Attempt uvarint, state byte, Key, Fingerprint string,
//	  CreatedAt, ClosedAt time, ProviderRef string, Result bytes
//
// A string is its uvarint length and its bytes. Bytes are uvarint 0 for
// nil, else length+1, then the bytes. A time is uvarint 0 for the zero
// time, else uvarint 1, varint Unix seconds and uvarint nanoseconds: full
// precision, location dropped (times come back in UTC). A typical record
// with no history is about 130 bytes plus its Result.
func encodeRecord(r idempay.Record) []byte {
	b := make([]byte, 0, 96+len(r.Key)+len(r.Fingerprint)+len(r.Creator)+len(r.LeaseOwner)+len(r.ProviderRef)+len(r.Result))
	b = append(b, recordFormat, stateCodes[r.State])
	b = binary.AppendUvarint(b, uint64(r.Attempt))
	b = appendString(b, r.Key)
	b = appendString(b, r.Fingerprint)
	b = appendTime(b, r.CreatedAt)
	b = appendTime(b, r.UpdatedAt)
	b = appendTime(b, r.ClosedAt)
	b = appendString(b, r.Creator)
	b = appendString(b, r.LeaseOwner)
	b = appendTime(b, r.LeaseUntil)
	b = appendString(b, r.ProviderRef)
	b = appendBytes(b, r.Result)
	b = binary.AppendUvarint(b, uint64(len(r.History)))
	for _, p := range r.History {
		b = appendPast(b, p)
	}
	return b
}

func appendPast(b []byte, p idempay.PastAttempt) []byte {
	b = binary.AppendUvarint(b, uint64(p.Attempt))
	b = append(b, stateCodes[p.State])
	b = appendString(b, p.Key)
	b = appendString(b, p.Fingerprint)
	b = appendTime(b, p.CreatedAt)
	b = appendTime(b, p.ClosedAt)
	b = appendString(b, p.ProviderRef)
	return appendBytes(b, p.Result)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendBytes keeps nil apart from empty.
func appendBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	return append(b, v...)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// decodeRecord is the inverse of encodeRecord, and reads format 1 too. It
// copies everything it keeps out of v, which belongs to a bbolt transaction
// and is invalid once the transaction ends. Any damage is an error matching
// ErrCorrupt.
func decodeRecord(ns, id string, v []byte) (idempay.Record, error) {
	return decode(ns, id, decoder{b: v})
}

// skimRecord checks v as decodeRecord does, but returns the record with
// its strings and bytes left empty, which saves their copies.
func skimRecord(ns, id string, v []byte) (idempay.Record, error) {
	return decode(ns, id, decoder{b: v, skim: true})
}

func decode(ns, id string, d decoder) (idempay.Record, error) {
	r := idempay.Record{Namespace: ns, ID: id}
	switch format := d.byte(); {
	case d.err != nil:
	case format == recordFormat:
		d.record2(&r)
	case format == recordFormat1:
		d.record1(&r)
	default:
		d.fail("unknown record format %d", format)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	if d.err == nil {
		d.err = checkRecord(r)
	}
	if d.err != nil {
		return idempay.Record{}, corrupt("record %q/%q: %v", ns, id, d.err)
	}
	return r, nil
}

// record2 reads the fields of format 2 after the format byte.
func (d *decoder) record2(r *idempay.Record) {
	r.State = d.state()
	r.Attempt = d.count()
	r.Key = d.string()
	r.Fingerprint = d.string()
	r.CreatedAt = d.time()
	r.UpdatedAt = d.time()
	r.ClosedAt = d.time()
	r.Creator = d.string()
	r.LeaseOwner = d.string()
	r.LeaseUntil = d.time()
	r.ProviderRef = d.string()
	r.Result = d.bytesOrNil()
	// Every past attempt takes at least 8 bytes, which bounds what a
	// damaged count can make decode allocate.
	n := d.count()
	if n > len(d.b)/8 {
		d.fail("history of %d attempts in %d bytes", n, len(d.b))
		return
	}
	for range n {
		r.History = append(r.History, d.past())
	}
}

func (d *decoder) past() idempay.PastAttempt {
	var p idempay.PastAttempt
	p.Attempt = d.count()
	p.State = d.state()
	p.Key = d.string()
	p.Fingerprint = d.string()
	p.CreatedAt = d.time()
	p.ClosedAt = d.time()
	p.ProviderRef = d.string()
	p.Result = d.bytesOrNil()
	return p
}

// record1 reads the fields of format 1 after the format byte, and fills in
// what format 1 did not keep: it knew one attempt per intent, and the
// Resolve that closed a record set its UpdatedAt, which is therefore its
// closing time. A closed record with neither time (only a caller of the old
// API could write one) is taken as closed at the Unix epoch, so that it
// expires at the first sweep, as format 1 judged it on its zero CreatedAt.
// Its Creator is not known and stays empty, so that no Reserve is told that
// an old key is new.
func (d *decoder) record1(r *idempay.Record) {
	r.State = d.state()
	r.Attempt = 1
	r.Key = d.string()
	r.Fingerprint = d.string()
	r.CreatedAt = d.time()
	r.UpdatedAt = d.time()
	r.LeaseOwner = d.string()
	r.LeaseUntil = d.time()
	r.ProviderRef = d.string()
	r.Result = d.bytesOrNil()
	if r.State.Closed() {
		r.ClosedAt = r.UpdatedAt
		if r.ClosedAt.IsZero() {
			r.ClosedAt = time.Unix(0, 0).UTC()
		}
	}
}

// checkRecord refuses what no Store writes: a record that does not say
// when it closed (Expire would judge it on the zero time and delete it at
// once) or says so while unsettled, or a current attempt numbered below 1.
func checkRecord(r idempay.Record) error {
	switch {
	case r.Attempt < 1:
		return fmt.Errorf("attempt %d", r.Attempt)
	case r.State.Closed() && r.ClosedAt.IsZero():
		return fmt.Errorf("%s with no closing time", r.State)
	case !r.State.Closed() && !r.ClosedAt.IsZero():
		return fmt.Errorf("%s with a closing time", r.State)
	}
	return nil
}
