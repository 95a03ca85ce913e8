package idempay

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"unicode/utf8"
)

// 2C2P's limits on invoiceNo: alphanumeric, at most 50 characters, and at
// most 20 when a QR channel is requested.
const (
	TwoC2PMaxInvoiceNo   = 50
	TwoC2PMaxInvoiceNoQR = 20
)

// twoc2pHashLen is how many base32 characters of the intent ID's SHA-256
// the hashed form of an invoiceNo keeps: 80 bits.
const twoc2pHashLen = 16

// TwoC2PInvoiceNo derives the 2C2P invoiceNo of a payment intent from the
// caller's persisted intent ID. It never invents one: the same ID always
// gives the same invoiceNo, so every attempt, every restart and every Payment
// Inquiry names the same invoice. qr says whether a QR channel is requested,
// which lowers the limit from 50 to 20 characters.
//
// The mapping, which is part of the wire contract and will not change:
//
//  1. An ID of ASCII letters and digits within the limit is used as it is.
//  2. A UUID in its canonical 8-4-4-4-12 form loses its hyphens (32
//     characters, letter case kept), if that fits the limit.
//  3. Anything else (other characters, too long, a UUID on a QR channel)
//     becomes its first ASCII letters and digits, up to the limit minus 16,
//     followed by the first 16 characters of the lower-case, unpadded
//     RFC 4648 base32 encoding of the SHA-256 of the ID's bytes.
//
// Collisions: rules 1 and 3 keep distinct IDs distinct except with
// probability about 2^-80 per pair (the hash suffix). Rule 2 maps a UUID and
// its hyphen-less spelling to the same invoiceNo on purpose: they name the
// same identifier. Letter case is kept throughout; if 2C2P compared invoice
// numbers without regard to case (its documentation does not say), IDs that
// differ only in case would collide, and the adapter's Payment Inquiry
// check of the echoed idempotencyID is what would catch it.
//
// An empty ID, invalid UTF-8 or control characters are refused with a
// *ValidationError (field IntentID).
func TwoC2PInvoiceNo(intentID string, qr bool) (string, error) {
	switch {
	case intentID == "":
		return "", invalid("IntentID", "is empty")
	case !utf8.ValidString(intentID) || hasControl(intentID):
		return "", invalid("IntentID", "has control characters or invalid UTF-8")
	}
	limit := twoc2pInvoiceLimit(qr)
	if len(intentID) <= limit && isASCIIAlnum(intentID) {
		return intentID, nil
	}
	if isCanonicalUUID(intentID) && 32 <= limit {
		return strings.ReplaceAll(intentID, "-", ""), nil
	}
	var prefix strings.Builder
	for i := 0; i < len(intentID) && prefix.Len() < limit-twoc2pHashLen; i++ {
		if isASCIIAlnumByte(intentID[i]) {
			prefix.WriteByte(intentID[i])
		}
	}
	sum := sha256.Sum256([]byte(intentID))
	suffix := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))
	return prefix.String() + suffix[:twoc2pHashLen], nil
}

// TwoC2PCheckInvoiceNo reports whether invoiceNo is one 2C2P accepts: 1 to
// 50 ASCII letters and digits, at most 20 when qr is set. The error is a
// *ValidationError (field InvoiceNo).
func TwoC2PCheckInvoiceNo(invoiceNo string, qr bool) error {
	limit := twoc2pInvoiceLimit(qr)
	switch {
	case invoiceNo == "":
		return invalid("InvoiceNo", "is empty")
	case !isASCIIAlnum(invoiceNo):
		return invalid("InvoiceNo", "%q must be ASCII letters and digits only (derive it with TwoC2PInvoiceNo)", invoiceNo)
	case len(invoiceNo) > limit:
		return invalid("InvoiceNo", "is %d characters, more than %d", len(invoiceNo), limit)
	}
	return nil
}

// TwoC2PHasQRChannel reports whether channels requests a QR payment, which
// limits invoiceNo to 20 characters. 2C2P names its QR channels with "QR"
// in the code ("QR", "PPQR", "THQR", ...), so any code containing QR, in
// any case, counts.
func TwoC2PHasQRChannel(channels []string) bool {
	for _, c := range channels {
		if strings.Contains(strings.ToUpper(c), "QR") {
			return true
		}
	}
	return false
}

func twoc2pInvoiceLimit(qr bool) int {
	if qr {
		return TwoC2PMaxInvoiceNoQR
	}
	return TwoC2PMaxInvoiceNo
}

func isASCIIAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isASCIIAlnumByte(s[i]) {
			return false
		}
	}
	return s != ""
}

func isASCIIAlnumByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// isCanonicalUUID reports whether s is 8-4-4-4-12 hexadecimal digits.
func isCanonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
