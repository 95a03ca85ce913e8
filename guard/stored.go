package guard

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// What a record's Result holds. It is JSON, so a person reading the store
// can tell the kinds apart; the body is kept as base64, byte for byte.
const (
	kindResponse  = "response"   // closed: replay it
	kindNotStored = "not_stored" // closed: the response outgrew the limit; replay 500
	kindUnsettled = "unsettled"  // open: money may have moved; 409 until settled
	kindReopened  = "reopened"   // open: settled as "run it again" (records of earlier versions)
	// closed failed: given back for a retry, which begins the record's
	// next attempt and runs the handler again. Closed, so that Expire
	// deletes it like any other: a released key is not kept for good.
	kindReleased = "released"
)

// stored is the encoded content of a record's Result.
type stored struct {
	V      int                 `json:"v"`
	Kind   string              `json:"kind"`
	Status int                 `json:"status,omitempty"`
	Header map[string][]string `json:"header,omitempty"`
	Body   []byte              `json:"body,omitempty"`
	// Unsettled requests keep what Guard.Unsettled lists: who sent them,
	// where, and when the handler gave up. No header, no body.
	Identity string    `json:"identity,omitempty"`
	Method   string    `json:"method,omitempty"`
	Path     string    `json:"path,omitempty"`
	At       time.Time `json:"at,omitzero"`
}

var errUnreadable = errors.New("guard: stored result unreadable")

func (s stored) encode() []byte {
	s.V = 1
	b, err := json.Marshal(s)
	if err != nil {
		// Only strings, ints, bytes and a time: Marshal cannot fail.
		panic("guard: encode stored result: " + err.Error())
	}
	return b
}

// decodeStored reads a record's Result; nil (a record released before any
// result) decodes to the zero stored, whose Kind is empty.
func decodeStored(b []byte) (stored, error) {
	var s stored
	if b == nil {
		return s, nil
	}
	if err := json.Unmarshal(b, &s); err != nil || s.V != 1 {
		return stored{}, errUnreadable
	}
	switch s.Kind {
	case kindResponse, kindNotStored, kindUnsettled, kindReopened, kindReleased:
		return s, nil
	}
	return stored{}, errUnreadable
}

// keepHeaders returns the headers of h that are in allow and not in deny,
// with their own copies of the values. A Content-Type set to no value is
// kept as such: it is how a handler asks net/http not to sniff one, and
// the replay must ask the same.
func keepHeaders(h http.Header, allow, deny []string) map[string][]string {
	var out map[string][]string
	for name, vs := range h {
		name = http.CanonicalHeaderKey(name)
		if !slices.Contains(allow, name) || slices.Contains(deny, name) || (len(vs) == 0 && name != "Content-Type") {
			continue
		}
		if out == nil {
			out = make(map[string][]string)
		}
		out[name] = slices.Clone(vs)
	}
	return out
}

// replay writes a stored response to w: its headers over whatever w holds
// already, the replay mark, its length, its status and its body as stored.
func replay(w http.ResponseWriter, s stored) {
	h := w.Header()
	for name, vs := range s.Header {
		h[name] = slices.Clone(vs)
	}
	h.Set(HeaderReplayed, "true")
	h.Set("Content-Length", strconv.Itoa(len(s.Body)))
	w.WriteHeader(s.Status)
	_, _ = w.Write(s.Body)
}
