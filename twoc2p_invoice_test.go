package idempay_test

import (
	"errors"
	"fmt"
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
