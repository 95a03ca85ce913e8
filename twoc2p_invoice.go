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

// The forms of an invoiceNo that is not the intent ID itself start with one
// of these markers. No intent ID is used as it is if it starts with one (in
// any case), so the forms cannot meet.
const (
	twoc2pUUIDMark    = "0u" // a canonical UUID without its hyphens
	twoc2pEncodedMark = "0z" // the intent ID's bytes in base32
	twoc2pHashedMark  = "0y" // a readable prefix and the intent ID's SHA-256
)

// twoc2pHashLen is how many base32 characters of the intent ID's SHA-256 the
// hashed form keeps: 80 bits.
const twoc2pHashLen = 16

// twoc2pBase32 is RFC 4648 base32 in lower case, without padding: letters
// and digits only, as invoiceNo must be.
var twoc2pBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// TwoC2PInvoiceNo derives the 2C2P invoiceNo of a payment intent from the
// caller's persisted intent ID. It never invents one: the same ID always
// gives the same invoiceNo, so every attempt, every restart and every Payment
// Inquiry names the same invoice. qr says whether a QR channel is requested,
// which lowers the limit from 50 to 20 characters.
//
// The mapping, the first form that fits the limit:
//
//  1. As it is: an ID of ASCII letters and digits within the limit that does
//     not start with a marker ("0u", "0y" or "0z", in any case).
//  2. "0u" and the 32 hexadecimal digits of an ID that is a UUID in its
//     canonical 8-4-4-4-12 form (letter case kept): 34 characters.
//  3. "0z" and the lower-case, unpadded RFC 4648 base32 of the ID's bytes:
//     IDs of up to 30 bytes (11 with a QR channel).
//  4. "0y", the ID's first ASCII letters and digits (as many as fit, up to
//     the limit less 18 characters) and 16 characters of the base32 of the
//     ID's SHA-256.
//
// Forms 1 to 3 can be read back (TwoC2PIntentOfInvoiceNo gives the ID), so
// two different intent IDs never share an invoiceNo by them, and the
// markers keep every form apart from the others. Form 4, for IDs too long
// for the others, rests on 80 bits of hash; the adapter (provider/twoc2p)
// therefore settles such an invoice only when 2C2P's answer echoes the
// intent's own key (idempotencyID), so a collision is caught, never
// taken for the intent's payment. Letter case is kept: if 2C2P compared
// invoice numbers without regard to case (its documentation does not say),
// IDs that differ only in case would meet at 2C2P.
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
	switch {
	case len(intentID) <= limit && isASCIIAlnum(intentID) && !twoc2pMarked(intentID):
		return intentID, nil
	case isCanonicalUUID(intentID) && len(twoc2pUUIDMark)+32 <= limit:
		return twoc2pUUIDMark + strings.ReplaceAll(intentID, "-", ""), nil
	case len(twoc2pEncodedMark)+twoc2pBase32.EncodedLen(len(intentID)) <= limit:
		return twoc2pEncodedMark + twoc2pBase32.EncodeToString([]byte(intentID)), nil
	}
	return twoc2pHashed(intentID, limit), nil
}

// twoc2pHashed is form 4 of TwoC2PInvoiceNo.
func twoc2pHashed(intentID string, limit int) string {
	var b strings.Builder
	b.WriteString(twoc2pHashedMark)
	for i := 0; i < len(intentID) && b.Len() < limit-twoc2pHashLen; i++ {
		if isASCIIAlnumByte(intentID[i]) {
			b.WriteByte(intentID[i])
		}
	}
	sum := sha256.Sum256([]byte(intentID))
	b.WriteString(twoc2pBase32.EncodeToString(sum[:])[:twoc2pHashLen])
	return b.String()
}

// twoc2pMarked reports whether s starts with a marker, in any case.
func twoc2pMarked(s string) bool {
	if len(s) < 2 {
		return false
	}
	p := strings.ToLower(s[:2])
	return p == twoc2pUUIDMark || p == twoc2pEncodedMark || p == twoc2pHashedMark
}

// TwoC2PIntentOfInvoiceNo reads an invoiceNo made by TwoC2PInvoiceNo back
// into the intent ID it was made from, so that a 2C2P notification or
// return naming only the invoice can be tied to its intent (and settled
// with Client.Settle). ok is false for the hashed form, which cannot be
// read back, and for a string TwoC2PInvoiceNo never makes.
func TwoC2PIntentOfInvoiceNo(invoiceNo string) (intentID string, ok bool) {
	if !isASCIIAlnum(invoiceNo) || len(invoiceNo) > TwoC2PMaxInvoiceNo {
		return "", false
	}
	if !twoc2pMarked(invoiceNo) {
		return invoiceNo, true
	}
	switch mark, rest := invoiceNo[:2], invoiceNo[2:]; mark {
	case twoc2pUUIDMark:
		if len(rest) != 32 {
			return "", false
		}
		id := rest[:8] + "-" + rest[8:12] + "-" + rest[12:16] + "-" + rest[16:20] + "-" + rest[20:]
		return id, isCanonicalUUID(id)
	case twoc2pEncodedMark:
		b, err := twoc2pBase32.DecodeString(rest)
		if err != nil || twoc2pBase32.EncodeToString(b) != rest {
			return "", false // not the one spelling the mapping writes
		}
		id := string(b)
		return id, id != "" && utf8.ValidString(id) && !hasControl(id)
	}
	return "", false
}

// TwoC2PInvoiceNoIsHashed reports whether invoiceNo is the hashed form of
// TwoC2PInvoiceNo (form 4), the one that cannot be read back.
func TwoC2PInvoiceNoIsHashed(invoiceNo string) bool {
	return strings.HasPrefix(invoiceNo, twoc2pHashedMark)
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
