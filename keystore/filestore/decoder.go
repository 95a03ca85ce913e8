package filestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/idempay/idempay"
)

// decoder reads the record layouts. The first error sticks and every later
// read returns a zero value, so that a caller checks once at the end.
type decoder struct {
	b   []byte
	err error
	// skim checks the layout without copying strings and bytes out:
	// they read as empty. Open's verify reads every record this way.
	skim bool
}

var errShort = errors.New("record too short")

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) < 1 {
		if d.err == nil {
			d.err = errShort
		}
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) state() idempay.State {
	code := d.byte()
	s, ok := codeStates[code]
	if !ok {
		d.fail("unknown state code %d", code)
	}
	return s
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return x
}

// count reads a uvarint that must fit an int.
func (d *decoder) count() int {
	x := d.uvarint()
	if x > math.MaxInt32 {
		d.fail("count %d out of range", x)
		return 0
	}
	return int(x)
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
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

func (d *decoder) string() string {
	b := d.bytes(d.uvarint())
	if d.skim {
		return ""
	}
	return string(b)
}

// bytesOrNil reads what appendBytes wrote, as a copy.
func (d *decoder) bytesOrNil() []byte {
	n := d.uvarint()
	if n == 0 || d.err != nil {
		return nil
	}
	b := d.bytes(n - 1)
	if d.skim {
		return nil
	}
	return append([]byte{}, b...)
}

func (d *decoder) time() time.Time {
	switch tag := d.uvarint(); {
	case d.err != nil || tag == 0:
		return time.Time{}
	case tag != 1:
		d.fail("bad time tag %d", tag)
		return time.Time{}
	}
	sec, nsec := d.varint(), d.uvarint()
	if nsec >= uint64(time.Second) {
		d.fail("bad nanoseconds %d", nsec)
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}
