package guard

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"net/http"
)

// recordID is the KeyStore intent ID of a key: a hash of the caller's
// identity and the key, so two callers' equal keys are two records and a
// stored ID reveals neither. Each part is length-prefixed: no two
// (identity, key) pairs hash the same input.
func recordID(identity, key string) string {
	h := sha256.New()
	writeParts(h, "idempay-guard-record/v1", identity, key)
	return hex.EncodeToString(h.Sum(nil))
}

// fingerprint hashes what makes two requests with one key the same request:
// the method, the path and query as sent, the caller and the body's bytes
// as received. Headers are left out (a retry may carry another trace ID or
// date); a client that re-encodes the body differently on a retry sends
// another request, and gets 422.
func fingerprint(r *http.Request, identity string, body []byte) string {
	h := sha256.New()
	writeParts(h, "idempay-guard-request/v1", r.Method, r.URL.EscapedPath(), r.URL.RawQuery, identity)
	writeLen(h, len(body))
	h.Write(body)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func writeParts(h hash.Hash, parts ...string) {
	for _, p := range parts {
		writeLen(h, len(p))
		h.Write([]byte(p))
	}
}

func writeLen(h hash.Hash, n int) {
	var b [binary.MaxVarintLen64]byte
	h.Write(binary.AppendUvarint(b[:0], uint64(n)))
}
