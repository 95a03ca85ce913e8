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

// TestTwoC2PInvoiceNoMapping is the mapping table. The hashed values were
// computed independently (Python: hashlib.sha256, base64.b32encode).
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
		{uuid, false, "3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17", "uuid"},
		{strings.ToUpper(uuid), false, "3F2C9A1E7B4D4E8A9C1F2A6B8D0E4F17", "uuid, case kept"},
		{"3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17", false, "3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17", "the same UUID undashed: same invoice"},
		{uuid, true, "3f2czojoojqun352t5uz", "hashed: a UUID does not fit QR's 20"},
		{"ORDER-123", false, "ORDER123td7g2mtmcwqxn43c", "hashed"},
		{"ORDER-123", true, "ORDEtd7g2mtmcwqxn43c", "hashed"},
		{"order_2024/0001", false, "order20240001bl65wjjqvq4nmr47", "hashed"},
		{"注文-1", false, "1dryyiaiztf6ksot7", "hashed, ASCII kept"},
		{strings.Repeat("A", 51), false, strings.Repeat("A", 34) + "duywc3rqomr33adx", "hashed: too long"},
		{"shop-eu-2024-000123", true, "shop2ygxynp5xjldz44r", "hashed"},
	} {
		got, err := idempay.TwoC2PInvoiceNo(tc.id, tc.qr)
		require.NoError(t, err, tc.id)
		assert.Equal(t, tc.want, got, "%q qr=%v (%s)", tc.id, tc.qr, tc.rule)
		assert.NoError(t, idempay.TwoC2PCheckInvoiceNo(got, tc.qr), "the mapping always gives a valid invoiceNo")
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
			switch i % 4 {
			case 0:
				id = fmt.Sprintf("order-%d", i)
			case 1:
				id = fmt.Sprintf("order_%d", i) // differs from case 0 only by the separator
			case 2:
				id = fmt.Sprintf("%08x-aaaa-4bbb-8ccc-%012x", i, i) // UUID-shaped
			case 3:
				id = strings.Repeat("x", 45) + fmt.Sprint(i) // alphanumeric, too long
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
