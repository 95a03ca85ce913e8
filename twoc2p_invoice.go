package idempay

import (
	"crypto/sha256"
	"encoding/base32"
	"strconv"
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
// gives the same invoiceNo, so every retry, every restart and every Payment
// Inquiry names the same invoice. qr says whether a QR channel is requested,
// which lowers the limit from 50 to 20 characters. It is the invoiceNo of
// the intent's first attempt; TwoC2PAttemptInvoiceNo gives those of the
// attempts that follow a definite failure, each an invoice of its own.
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
	if err := twoc2pCheckIntentID(intentID); err != nil {
		return "", err
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
	return twoc2pHashed(twoc2pHashedMark, intentID, limit), nil
}

func twoc2pCheckIntentID(intentID string) error {
	switch {
	case intentID == "":
		return invalid("IntentID", "is empty")
	case !utf8.ValidString(intentID) || hasControl(intentID):
		return invalid("IntentID", "has control characters or invalid UTF-8")
	}
	return nil
}

// twoc2pHashed is head, then as many of the intent ID's first ASCII letters
// and digits as leave room within limit for 16 characters of the base32 of
// its SHA-256, then those: form 4 of TwoC2PInvoiceNo with head "0y", and
// the hashed form of an attempt's invoiceNo with its own head.
func twoc2pHashed(head, intentID string, limit int) string {
	var b strings.Builder
	b.WriteString(head)
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

// TwoC2PAttemptInvoiceNo derives the invoiceNo of attempt n of a payment
// intent (1 for the first; n after n-1 definite failures, as
// idempay.AttemptOf and Record.Attempt count). 2C2P answers a repeated
// invoiceNo with 9015, not with a new payment, so each attempt needs an
// invoice of its own. Attempt 1 is TwoC2PInvoiceNo(intentID, qr), exactly,
// so that invoices opened before attempts existed keep their number.
//
// Attempt n > 1 is "0u", n in decimal (no leading zero), a letter naming
// the form, and the ID in the first form that fits the limit:
//
//   - "n" and the ID as it is: ASCII letters and digits (any, markers too);
//   - "u" and the 32 hexadecimal digits of a canonical UUID (case kept);
//   - "z" and the lower-case, unpadded base32 of the ID's bytes;
//   - "y", the ID's first ASCII letters and digits (as many as fit, up to
//     the limit less the head and 16 characters) and 16 characters of the
//     base32 of its SHA-256.
//
// These never meet an attempt-1 invoiceNo, whatever the intent, even
// compared without regard to case: attempt 1 uses "0u" (in any case) only
// for "0u" and 32 hexadecimal digits, and here the character after the
// decimal digits is a letter that is no hexadecimal digit. Between
// themselves they are told apart by the attempt, which the digits end
// before the letter, and then by the ID as attempt 1's forms are: the "n",
// "u" and "z" forms read back to (intentID, n) with
// TwoC2PAttemptOfInvoiceNo, so no other pair has them; the "y" form rests on
// 80 bits of hash, and the adapter settles it only from an answer echoing
// the attempt's own key, as it does form 4 of TwoC2PInvoiceNo.
//
// Within 50 characters every attempt fits (the hashed form is at most 38
// characters for any int). With a QR channel (20), the hashed form fits
// attempts 2 to 9 only, with no readable prefix left: attempt 10 and later
// of an ID that fits no readable form (longer than 15 letters and digits
// or 9 bytes, fewer for attempts past 99) is refused with a
// *ValidationError (field Attempt), as are an attempt below 1 and the IDs
// TwoC2PInvoiceNo refuses (field IntentID).
func TwoC2PAttemptInvoiceNo(intentID string, attempt int, qr bool) (string, error) {
	switch {
	case attempt < 1:
		return "", invalid("Attempt", "is %d; an intent's attempts count from 1", attempt)
	case attempt == 1:
		return TwoC2PInvoiceNo(intentID, qr)
	}
	if err := twoc2pCheckIntentID(intentID); err != nil {
		return "", err
	}
	limit := twoc2pInvoiceLimit(qr)
	head := twoc2pUUIDMark + strconv.Itoa(attempt)
	room := limit - len(head) - 1 // what the form's letter leaves for the ID
	switch {
	case len(intentID) <= room && isASCIIAlnum(intentID):
		return head + string(twoc2pAttemptAsIs) + intentID, nil
	case isCanonicalUUID(intentID) && 32 <= room:
		return head + string(twoc2pAttemptUUID) + strings.ReplaceAll(intentID, "-", ""), nil
	case twoc2pBase32.EncodedLen(len(intentID)) <= room:
		return head + string(twoc2pAttemptEncoded) + twoc2pBase32.EncodeToString([]byte(intentID)), nil
	case twoc2pHashLen <= room:
		return twoc2pHashed(head+string(twoc2pAttemptHashed), intentID, limit), nil
	}
	return "", invalid("Attempt", "attempt %d of this intent has no 2C2P invoiceNo within %d characters "+
		"(a QR channel); nothing was sent for it: charge the order under a new intent ID, or with an account without QR channels",
		attempt, limit)
}

// The letters naming the form of an attempt's invoiceNo, after "0u" and
// the attempt's number. None is a hexadecimal digit, in any case.
const (
	twoc2pAttemptAsIs    = 'n'
	twoc2pAttemptUUID    = 'u'
	twoc2pAttemptEncoded = 'z'
	twoc2pAttemptHashed  = 'y'
)

// twoc2pAttemptHead splits an attempt's invoiceNo (attempt 2 and later)
// into its attempt, the letter of its form and the rest. ok is false for
// anything else, every attempt-1 invoiceNo included.
func twoc2pAttemptHead(invoiceNo string) (attempt int, form byte, rest string, ok bool) {
	if !strings.HasPrefix(invoiceNo, twoc2pUUIDMark) {
		return 0, 0, "", false
	}
	s := invoiceNo[len(twoc2pUUIDMark):]
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 || s[0] == '0' || i == len(s) {
		return 0, 0, "", false
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil || n < 2 {
		return 0, 0, "", false
	}
	switch s[i] {
	case twoc2pAttemptAsIs, twoc2pAttemptUUID, twoc2pAttemptEncoded, twoc2pAttemptHashed:
		return n, s[i], s[i+1:], true
	}
	return 0, 0, "", false
}

// TwoC2PAttemptOfInvoiceNo reads an invoiceNo made by
// TwoC2PAttemptInvoiceNo (or TwoC2PInvoiceNo, attempt 1) back into the
// intent ID and the attempt it was made for, so that a 2C2P notification
// or return naming only the invoice can be tied to its intent and attempt.
// ok is false for the hashed forms, which cannot be read back, and for a
// string the mapping never makes.
func TwoC2PAttemptOfInvoiceNo(invoiceNo string) (intentID string, attempt int, ok bool) {
	if !isASCIIAlnum(invoiceNo) || len(invoiceNo) > TwoC2PMaxInvoiceNo {
		return "", 0, false
	}
	n, form, rest, isAttempt := twoc2pAttemptHead(invoiceNo)
	if !isAttempt {
		id, ok := twoc2pIntentOfFirst(invoiceNo)
		if !ok {
			return "", 0, false
		}
		return id, 1, true
	}
	var id string
	switch form {
	case twoc2pAttemptAsIs:
		id = rest
	case twoc2pAttemptUUID:
		if len(rest) != 32 {
			return "", 0, false
		}
		id = rest[:8] + "-" + rest[8:12] + "-" + rest[12:16] + "-" + rest[16:20] + "-" + rest[20:]
	case twoc2pAttemptEncoded:
		b, err := twoc2pBase32.DecodeString(rest)
		if err != nil {
			return "", 0, false
		}
		id = string(b)
	default: // hashed
		return "", 0, false
	}
	// Only the spelling the mapping itself writes, under either limit,
	// reads back: another would be a second invoiceNo for one attempt.
	for _, qr := range []bool{false, true} {
		if inv, err := TwoC2PAttemptInvoiceNo(id, n, qr); err == nil && inv == invoiceNo {
			return id, n, true
		}
	}
	return "", 0, false
}

// TwoC2PIntentOfInvoiceNo reads an invoiceNo made by TwoC2PInvoiceNo or
// TwoC2PAttemptInvoiceNo back into the intent ID it was made from, so that
// a 2C2P notification or return naming only the invoice can be tied to its
// intent (and settled with Client.Settle). ok is false for the hashed
// forms, which cannot be read back, and for a string the mapping never
// makes. TwoC2PAttemptOfInvoiceNo gives the attempt too.
func TwoC2PIntentOfInvoiceNo(invoiceNo string) (intentID string, ok bool) {
	intentID, _, ok = TwoC2PAttemptOfInvoiceNo(invoiceNo)
	return intentID, ok
}

// twoc2pIntentOfFirst reads back an invoiceNo of TwoC2PInvoiceNo's forms 1
// to 3: an attempt 1.
func twoc2pIntentOfFirst(invoiceNo string) (intentID string, ok bool) {
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

// TwoC2PInvoiceNoIsHashed reports whether invoiceNo is a hashed form, the
// ones that cannot be read back: form 4 of TwoC2PInvoiceNo, or the hashed
// form of TwoC2PAttemptInvoiceNo.
func TwoC2PInvoiceNoIsHashed(invoiceNo string) bool {
	if strings.HasPrefix(invoiceNo, twoc2pHashedMark) {
		return true
	}
	_, form, _, ok := twoc2pAttemptHead(invoiceNo)
	return ok && form == twoc2pAttemptHashed
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
