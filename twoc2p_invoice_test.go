package idempay_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTwoC2PInvoiceNoMapping is the mapping table. The expected values were
// computed independently (Python: re, base64.b32encode, hashlib.sha256).
func TestTwoC2PInvoiceNoMapping(t *testing.T) {
	const uuid = "3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17"
	for _, tc := range []struct {
		id   string
		qr   bool
		want string
		rule string
	}{
		{"ORDER123", false, "ORDER123", "as is"},
		{"ORDER123", true, "ORDER123", "as is"},
		{"a", false, "a", "as is"},
		{strings.Repeat("A", 50), false, strings.Repeat("A", 50), "as is"},
		{strings.Repeat("A", 20), true, strings.Repeat("A", 20), "as is"},
		{strings.Repeat("x", 31), false, strings.Repeat("x", 31), "as is"},
		{uuid, false, "0u3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17", "uuid"},
		{strings.ToUpper(uuid), false, "0u3F2C9A1E7B4D4E8A9C1F2A6B8D0E4F17", "uuid, case kept"},
		{"3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17", false, "3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17", "the UUID undashed is another ID: as is"},
		{uuid, true, "0y3fzojoojqun352t5uz", "hashed: a UUID does not fit QR's 20"},
		{"ORDER-123", false, "0zj5jeirksfuytemy", "encoded"},
		{"ORDER-123", true, "0zj5jeirksfuytemy", "encoded"},
		{"order-1", false, "0zn5zgizlsfuyq", "encoded"},
		{"order_2024/0001", false, "0zn5zgizlsl4zdamruf4ydambr", "encoded"},
		{"order_2024/0001", true, "0yorbl65wjjqvq4nmr47", "hashed: too long to encode in 20"},
		{"注文-1", false, "0z42z2rzuwq4wtc", "encoded, any UTF-8"},
		{strings.Repeat("A", 51), false, "0y" + strings.Repeat("A", 32) + "duywc3rqomr33adx", "hashed: too long"},
		{"shop-eu-2024-000123", true, "0ysh2ygxynp5xjldz44r", "hashed"},
		{"shop-eu-2024-000123", false, "0zonug64bnmv2s2mrqgi2c2mbqgaytemy", "encoded"},
		{"0zabc", false, "0zgb5gcytd", "an ID that starts with a marker is encoded"},
		{"0Y1", true, "0zgbmtc", "markers in any case"},
	} {
		got, err := idempay.TwoC2PInvoiceNo(tc.id, tc.qr)
		require.NoError(t, err, tc.id)
		assert.Equal(t, tc.want, got, "%q qr=%v (%s)", tc.id, tc.qr, tc.rule)
		assert.NoError(t, idempay.TwoC2PCheckInvoiceNo(got, tc.qr), "the mapping always gives a valid invoiceNo")
		back, ok := idempay.TwoC2PIntentOfInvoiceNo(got)
		if idempay.TwoC2PInvoiceNoIsHashed(got) {
			assert.False(t, ok, "the hashed form cannot be read back")
			continue
		}
		assert.True(t, ok, got)
		assert.Equal(t, tc.id, back, "read back")
	}
}

func TestTwoC2PInvoiceNoRefuses(t *testing.T) {
	for _, id := range []string{"", "a\nb", "tab\there", "\x00", "bad\xffutf8"} {
		for _, qr := range []bool{false, true} {
			got, err := idempay.TwoC2PInvoiceNo(id, qr)
			assert.Empty(t, got)
			var ve *idempay.ValidationError
			require.True(t, errors.As(err, &ve), "%q: %v", id, err)
			assert.Equal(t, "IntentID", ve.Field)
			assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
		}
	}
}

// TestTwoC2PInvoiceNoProperties checks, over many IDs, that the mapping is
// deterministic, always valid, and keeps distinct IDs apart.
func TestTwoC2PInvoiceNoProperties(t *testing.T) {
	for _, qr := range []bool{false, true} {
		seen := map[string]string{}
		for i := range 20000 {
			var id string
			switch i % 5 {
			case 0:
				id = fmt.Sprintf("order-%d", i)
			case 1:
				id = fmt.Sprintf("order_%d", i) // differs from case 0 only by the separator
			case 2:
				id = fmt.Sprintf("%08x-aaaa-4bbb-8ccc-%012x", i, i) // UUID-shaped
			case 3:
				id = strings.Repeat("x", 45) + fmt.Sprint(i) // alphanumeric, too long
			case 4:
				id, _ = idempay.TwoC2PInvoiceNo(fmt.Sprintf("order-%d", i-4), qr) // another ID's invoiceNo
			}
			a, err := idempay.TwoC2PInvoiceNo(id, qr)
			require.NoError(t, err)
			b, _ := idempay.TwoC2PInvoiceNo(id, qr)
			require.Equal(t, a, b, "deterministic")
			require.NoError(t, idempay.TwoC2PCheckInvoiceNo(a, qr))
			if other, dup := seen[a]; dup {
				t.Fatalf("%q and %q both map to %q (qr=%v)", id, other, a, qr)
			}
			seen[a] = id
		}
	}
}

// FuzzTwoC2PInvoiceNoInjective: whatever the intent ID, its invoiceNo is
// either read back to that very ID (so no other ID has it) or is the hashed
// form, which no readable form can be.
func FuzzTwoC2PInvoiceNoInjective(f *testing.F) {
	for _, s := range []string{"order-1", "order1box6eikw2juyyfb3", "0zabc", "0u" + strings.Repeat("a", 32),
		"3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17", "注文", strings.Repeat("A", 60), "a"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, id string, qr bool) {
		inv, err := idempay.TwoC2PInvoiceNo(id, qr)
		if err != nil {
			return // refused: nothing is sent under it
		}
		if err := idempay.TwoC2PCheckInvoiceNo(inv, qr); err != nil {
			t.Fatalf("%q gives an invalid invoiceNo %q: %v", id, inv, err)
		}
		back, ok := idempay.TwoC2PIntentOfInvoiceNo(inv)
		switch {
		case idempay.TwoC2PInvoiceNoIsHashed(inv):
			if ok {
				t.Fatalf("hashed %q read back as %q", inv, back)
			}
			if !strings.HasPrefix(inv, "0y") || len(id) <= 11 {
				t.Fatalf("%q hashed to %q although a readable form fits", id, inv)
			}
		case !ok || back != id:
			t.Fatalf("%q maps to %q, which reads back as %q, %v", id, inv, back, ok)
		}
	})
}

func TestTwoC2PCheckInvoiceNo(t *testing.T) {
	for _, tc := range []struct {
		inv string
		qr  bool
		ok  bool
	}{
		{"ABC123", false, true},
		{strings.Repeat("9", 50), false, true},
		{strings.Repeat("9", 51), false, false},
		{strings.Repeat("9", 20), true, true},
		{strings.Repeat("9", 21), true, false},
		{"", false, false},
		{"ORDER-1", false, false}, // the article's "ORDER-" prefix is not alphanumeric
		{"ORDER 1", false, false},
		{"ＡＢＣ", false, false}, // full-width letters are not ASCII
	} {
		err := idempay.TwoC2PCheckInvoiceNo(tc.inv, tc.qr)
		if tc.ok {
			assert.NoError(t, err, tc.inv)
			continue
		}
		var ve *idempay.ValidationError
		assert.True(t, errors.As(err, &ve) && ve.Field == "InvoiceNo", "%q: %v", tc.inv, err)
	}
}

func TestTwoC2PHasQRChannel(t *testing.T) {
	assert.False(t, idempay.TwoC2PHasQRChannel(nil))
	assert.False(t, idempay.TwoC2PHasQRChannel([]string{"CC", "IPP"}))
	assert.True(t, idempay.TwoC2PHasQRChannel([]string{"CC", "QR"}))
	assert.True(t, idempay.TwoC2PHasQRChannel([]string{"ppqr"}))
	assert.True(t, idempay.TwoC2PHasQRChannel([]string{"THQR"}))
}

// TestTwoC2PInvoiceNoNoCollisionByConstruction: an invoice number derived
// from one intent ID is never the invoice number of another, including the
// intent ID that is spelt like it ("order-1" against
// "order1box6eikw2juyyfb3", the old mapping's collision).
func TestTwoC2PInvoiceNoNoCollisionByConstruction(t *testing.T) {
	for _, qr := range []bool{false, true} {
		for _, id := range []string{"order-1", "ORDER-123", "3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17", "注文-1",
			strings.Repeat("A", 51), "shop-eu-2024-000123", "a", "ORDER20240001", "0zabc", "0Y1"} {
			inv, err := idempay.TwoC2PInvoiceNo(id, qr)
			require.NoError(t, err)
			// The invoice number, taken as an intent ID of its own.
			again, err := idempay.TwoC2PInvoiceNo(inv, qr)
			require.NoError(t, err)
			if inv != id {
				assert.NotEqual(t, inv, again, "%q and %q map to one invoiceNo %q (qr=%v)", id, inv, inv, qr)
			}
		}
	}
}

// TestTwoC2PAttemptInvoiceNoMapping is the table of attempts' invoice
// numbers. The expected values were computed independently (Python:
// base64.b32encode, hashlib.sha256).
func TestTwoC2PAttemptInvoiceNoMapping(t *testing.T) {
	const uuid = "3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17"
	for _, tc := range []struct {
		id      string
		attempt int
		qr      bool
		want    string
		rule    string
	}{
		{"ORDER1", 2, false, "0u2nORDER1", "as is"},
		{"ORDER1", 2, true, "0u2nORDER1", "as is"},
		{"ORDER1", 12, false, "0u12nORDER1", "as is, two digits"},
		{"0zabc", 2, false, "0u2n0zabc", "as is, markers included"},
		{"0u2nORDER1", 3, false, "0u3n0u2nORDER1", "another attempt's invoiceNo, as an ID"},
		{strings.Repeat("A", 16), 2, true, "0u2n" + strings.Repeat("A", 16), "as is, exactly 20"},
		{strings.Repeat("A", 15), 10, true, "0u10n" + strings.Repeat("A", 15), "as is, exactly 20"},
		{uuid, 2, false, "0u2u3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17", "uuid"},
		{strings.ToUpper(uuid), 2, false, "0u2u3F2C9A1E7B4D4E8A9C1F2A6B8D0E4F17", "uuid, case kept"},
		{uuid, 2, true, "0u2yzojoojqun352t5uz", "hashed: a UUID does not fit QR's 20"},
		{"ORDER-123", 2, false, "0u2zj5jeirksfuytemy", "encoded"},
		{"order-1", 3, false, "0u3zn5zgizlsfuyq", "encoded"},
		{"注文-1", 2, false, "0u2z42z2rzuwq4wtc", "encoded, any UTF-8"},
		{"order-123", 10, true, "0u10zn5zgizlsfuytemy", "encoded, exactly 20"},
		{"shop-eu-2024-000123", 2, false, "0u2zonug64bnmv2s2mrqgi2c2mbqgaytemy", "encoded"},
		{"shop-eu-2024-000123", 2, true, "0u2y2ygxynp5xjldz44r", "hashed, no room for a prefix"},
		{strings.Repeat("A", 50), 2, false, "0u2y" + strings.Repeat("A", 30) + "kco5xbp57exrs7js", "hashed: too long"},
		{strings.Repeat("A", 20), 2, true, "0u2y5x6kvrlzajhvosw3", "hashed"},
		{strings.Repeat("x-", 30), 7, false, "0u7y" + strings.Repeat("x", 30) + "u3r6apgykqgtpac5", "hashed, prefix of letters and digits"},
	} {
		got, err := idempay.TwoC2PAttemptInvoiceNo(tc.id, tc.attempt, tc.qr)
		require.NoError(t, err, tc.id)
		assert.Equal(t, tc.want, got, "%q attempt %d qr=%v (%s)", tc.id, tc.attempt, tc.qr, tc.rule)
		assert.NoError(t, idempay.TwoC2PCheckInvoiceNo(got, tc.qr), "the mapping always gives a valid invoiceNo")
		id, attempt, ok := idempay.TwoC2PAttemptOfInvoiceNo(got)
		if idempay.TwoC2PInvoiceNoIsHashed(got) {
			assert.False(t, ok, "the hashed form cannot be read back")
			continue
		}
		require.True(t, ok, got)
		assert.Equal(t, tc.id, id, "read back")
		assert.Equal(t, tc.attempt, attempt, "read back")
		back, ok := idempay.TwoC2PIntentOfInvoiceNo(got)
		assert.True(t, ok)
		assert.Equal(t, tc.id, back, "TwoC2PIntentOfInvoiceNo reads the intent of any attempt")
	}
}

// Attempt 1 is today's invoiceNo, exactly: invoices opened before attempts
// existed keep their number and still settle.
func TestTwoC2PAttemptOneIsTheIntentsInvoiceNo(t *testing.T) {
	for _, qr := range []bool{false, true} {
		for _, id := range []string{"ORDER123", "3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17", "ORDER-123", "注文-1",
			strings.Repeat("A", 51), "0zabc", "0Y1", "0u2nORDER1", "shop-eu-2024-000123"} {
			want, err := idempay.TwoC2PInvoiceNo(id, qr)
			require.NoError(t, err)
			got, err := idempay.TwoC2PAttemptInvoiceNo(id, 1, qr)
			require.NoError(t, err)
			assert.Equal(t, want, got, "%q qr=%v", id, qr)
			if back, attempt, ok := idempay.TwoC2PAttemptOfInvoiceNo(got); ok {
				assert.Equal(t, id, back)
				assert.Equal(t, 1, attempt)
			}
		}
	}
}

// What does not fit, or is no attempt, is refused with a *ValidationError
// naming the field, never squeezed into an invoiceNo another pair could
// have.
func TestTwoC2PAttemptInvoiceNoRefuses(t *testing.T) {
	for _, tc := range []struct {
		id      string
		attempt int
		qr      bool
		field   string
	}{
		{"ORDER1", 0, false, "Attempt"},
		{"ORDER1", -1, true, "Attempt"},
		{"", 2, false, "IntentID"},
		{"a\nb", 2, false, "IntentID"},
		{"bad\xffutf8", 3, true, "IntentID"},
		{strings.Repeat("A", 16), 10, true, "Attempt"},  // no readable form in 15, no room for the hash
		{"order-1234", 10, true, "Attempt"},             // 10 bytes: 16 characters of base32
		{strings.Repeat("A", 15), 100, true, "Attempt"}, // 14 would fit: 0u100n and 14 is 20
		{"3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17", 10, true, "Attempt"},
	} {
		got, err := idempay.TwoC2PAttemptInvoiceNo(tc.id, tc.attempt, tc.qr)
		assert.Empty(t, got)
		var ve *idempay.ValidationError
		require.True(t, errors.As(err, &ve), "%q attempt %d: %v", tc.id, tc.attempt, err)
		assert.Equal(t, tc.field, ve.Field, "%q attempt %d", tc.id, tc.attempt)
		assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
	}
	// Within 50 characters every attempt fits, the largest int included.
	for _, id := range []string{strings.Repeat("x-", 40), "3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17", strings.Repeat("A", 50)} {
		for _, n := range []int{2, 99, 1 << 40, math.MaxInt} {
			inv, err := idempay.TwoC2PAttemptInvoiceNo(id, n, false)
			require.NoError(t, err, "%q attempt %d", id, n)
			require.NoError(t, idempay.TwoC2PCheckInvoiceNo(inv, false))
		}
	}
}

// Strings the mapping never writes do not read back: a second spelling
// would be a second invoiceNo for one attempt.
func TestTwoC2PAttemptOfInvoiceNoOnlyTheMappingsSpelling(t *testing.T) {
	for _, inv := range []string{
		"0u1nORDER1",  // attempt 1 is never in this form
		"0u02nORDER1", // a leading zero
		"0u0nORDER1",
		"0u2n",                 // no ID
		"0u2zn5zgizlsfuyr",     // not the canonical base32 of anything
		"0u2zorsxg5a",          // "test" encoded, which the as-is form spells 0u2ntest
		"0u2u3f2c9a1e7b4d4e8a", // too short for a UUID
		"0u2xORDER1",           // no such form
		"0U2nORDER1",           // the mapping writes its marks in lower case
		"0u2NORDER1",
		"0u99999999999999999999nA", // past int
	} {
		_, _, ok := idempay.TwoC2PAttemptOfInvoiceNo(inv)
		assert.False(t, ok, inv)
		_, ok = idempay.TwoC2PIntentOfInvoiceNo(inv)
		assert.False(t, ok, inv)
	}
}

// TestTwoC2PAttemptInvoiceNoProperties checks, over many (intent, attempt)
// pairs, that the mapping is deterministic, always valid, and keeps
// distinct pairs apart, including IDs spelt like another pair's invoiceNo.
func TestTwoC2PAttemptInvoiceNoProperties(t *testing.T) {
	type pair struct {
		id      string
		attempt int
	}
	for _, qr := range []bool{false, true} {
		seen := map[string]pair{}
		for i := range 3000 {
			var ids []string
			switch i % 6 {
			case 0:
				ids = []string{fmt.Sprintf("order-%d", i), fmt.Sprintf("order_%d", i)}
			case 1:
				ids = []string{fmt.Sprintf("ORDER%d", i), fmt.Sprintf("%08x-aaaa-4bbb-8ccc-%012x", i, i)}
			case 2:
				ids = []string{strings.Repeat("x", 45) + fmt.Sprint(i), fmt.Sprintf("0u%dnORDER%d", i%9+2, i)}
			default:
				// Other pairs' invoice numbers, taken as intent IDs.
				for _, n := range []int{1, 2, 3} {
					inv, err := idempay.TwoC2PAttemptInvoiceNo(fmt.Sprintf("ORDER%d", i-2), n, qr)
					require.NoError(t, err)
					ids = append(ids, inv)
				}
			}
			for _, id := range ids {
				for attempt := 1; attempt <= 12; attempt++ {
					a, err := idempay.TwoC2PAttemptInvoiceNo(id, attempt, qr)
					if err != nil {
						var ve *idempay.ValidationError
						require.True(t, errors.As(err, &ve) && ve.Field == "Attempt" && qr && attempt >= 10, "%q attempt %d: %v", id, attempt, err)
						continue
					}
					b, _ := idempay.TwoC2PAttemptInvoiceNo(id, attempt, qr)
					require.Equal(t, a, b, "deterministic")
					require.NoError(t, idempay.TwoC2PCheckInvoiceNo(a, qr))
					p := pair{id, attempt}
					if other, dup := seen[a]; dup && other != p {
						t.Fatalf("%v and %v both map to %q (qr=%v)", p, other, a, qr)
					}
					seen[a] = p
				}
			}
		}
	}
}

// FuzzTwoC2PAttemptInvoiceNoInjective: over any two (intent, attempt)
// pairs, the invoice numbers are equal only when the pairs are; each reads
// back to its very pair or is a hashed form, which nothing reads back; and
// an attempt past the first never has the shape of any attempt-1 invoiceNo
// (the as-is form excludes "0u" in any case, and attempt 1 spells "0u" only
// with 32 hexadecimal digits), so no intent's attempt 1 can be it.
func FuzzTwoC2PAttemptInvoiceNoInjective(f *testing.F) {
	seeds := []string{"order-1", "ORDER1", "0u2nORDER1", "0zabc", "0u" + strings.Repeat("a", 32),
		"3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17", "注文", strings.Repeat("A", 60), "a", "0u3zn5zgizlsfuyq"}
	for i, s := range seeds {
		next := seeds[(i+1)%len(seeds)]
		f.Add(s, 1, s, 2, false)
		f.Add(s, 2, s, 3, true)
		f.Add(s, 2, next, 2, false)
		f.Add(s, 10, next, 1, true)
	}
	f.Add("ORDER1", 2, "0u2nORDER1", 1, false) // attempt 2 of ORDER1 against attempt 1 of its spelling
	f.Fuzz(func(t *testing.T, id1 string, n1 int, id2 string, n2 int, qr bool) {
		inv1, ok1 := fuzzAttemptInvoice(t, id1, n1, qr)
		inv2, ok2 := fuzzAttemptInvoice(t, id2, n2, qr)
		if ok1 && ok2 && inv1 == inv2 && (id1 != id2 || n1 != n2) {
			// For two hashed forms this would be an 80-bit collision of
			// SHA-256, which the adapter catches by the echoed key.
			t.Fatalf("(%q, %d) and (%q, %d) share invoiceNo %q", id1, n1, id2, n2, inv1)
		}
	})
}

// fuzzAttemptInvoice checks one pair's invoiceNo; ok is false when the pair
// is refused (nothing is sent under it).
func fuzzAttemptInvoice(t *testing.T, id string, n int, qr bool) (string, bool) {
	t.Helper()
	inv, err := idempay.TwoC2PAttemptInvoiceNo(id, n, qr)
	if err != nil {
		return "", false
	}
	if err := idempay.TwoC2PCheckInvoiceNo(inv, qr); err != nil {
		t.Fatalf("(%q, %d) gives an invalid invoiceNo %q: %v", id, n, inv, err)
	}
	if n == 1 {
		first, _ := idempay.TwoC2PInvoiceNo(id, qr)
		if inv != first {
			t.Fatalf("attempt 1 of %q is %q, not its invoiceNo %q", id, inv, first)
		}
	} else {
		lower := strings.ToLower(inv)
		if !strings.HasPrefix(lower, "0u") || len(inv) == 34 && isHex(inv[2:]) {
			t.Fatalf("attempt %d of %q is %q, the shape of an attempt-1 invoiceNo", n, id, inv)
		}
		if first, err := idempay.TwoC2PInvoiceNo(inv, qr); err == nil && first == inv {
			t.Fatalf("attempt %d of %q is %q, the intent ID %q's own invoiceNo", n, id, inv, inv)
		}
	}
	back, attempt, ok := idempay.TwoC2PAttemptOfInvoiceNo(inv)
	switch {
	case idempay.TwoC2PInvoiceNoIsHashed(inv):
		if ok {
			t.Fatalf("hashed %q read back as (%q, %d)", inv, back, attempt)
		}
	case !ok || back != id || attempt != n:
		t.Fatalf("(%q, %d) maps to %q, which reads back as (%q, %d), %v", id, n, inv, back, attempt, ok)
	}
	return inv, true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
