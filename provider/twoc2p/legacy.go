package twoc2p

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// legacyInvoiceNo is the invoiceNo idempay versions before the injective
// mapping gave intentID: letters and digits within the limit as they are,
// a canonical UUID without its hyphens, else the ID's first letters and
// digits and 16 characters of the base32 of its SHA-256. It could give two
// intents one invoice, so what it names is settled only by the intent's own
// key; FindCharge asks for it so that an intent sent by such a version is
// never resent under a new invoice while it may have been paid.
func legacyInvoiceNo(intentID string, qr bool) string {
	limit := 50
	if qr {
		limit = 20
	}
	switch {
	case len(intentID) <= limit && strings.IndexFunc(intentID, notAlnum) < 0:
		return intentID
	case len(intentID) == 36 && strings.Count(intentID, "-") == 4 && limit >= 32 && uuidShaped(intentID):
		return strings.ReplaceAll(intentID, "-", "")
	}
	var b strings.Builder
	for _, r := range intentID {
		if b.Len() == limit-16 {
			break
		}
		if !notAlnum(r) {
			b.WriteRune(r)
		}
	}
	sum := sha256.Sum256([]byte(intentID))
	return b.String() + strings.ToLower(base32.StdEncoding.EncodeToString(sum[:]))[:16]
}

func notAlnum(r rune) bool {
	return !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
}

// uuidShaped reports whether s is 8-4-4-4-12 hexadecimal digits.
func uuidShaped(s string) bool {
	for i, r := range s {
		dash := i == 8 || i == 13 || i == 18 || i == 23
		hex := '0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F'
		if dash != (r == '-') || !dash && !hex {
			return false
		}
	}
	return true
}
