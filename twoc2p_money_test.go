package idempay_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTwoC2PAmount(t *testing.T) {
	for _, tc := range []struct {
		minor    int64
		currency string
		want     string
	}{
		{1500, "JPY", "1500"},          // zero-decimal: yen are the major unit
		{150000, "JPY", "150000"},      // the article's amount is ¥150,000, not ¥1,500
		{123456, "THB", "1234.56"},     // satang
		{123456, "thb", "1234.56"},     // any case
		{100000, "THB", "1000.00"},     // 2C2P's documented example
		{5, "THB", "0.05"},             // a leading zero, never ".05"
		{50, "THB", "0.50"},            // trailing zero kept
		{0, "THB", "0.00"},             // formatting allows zero; charges refuse it
		{115, "THB", "1.15"},           // 1.15 is 1.149999... as a float64
		{1234, "BHD", "1.234"},         // three decimals (fils)
		{1, "BHD", "0.001"},            // smallest BHD
		{1000, "KWD", "1.000"},         // three decimals
		{12345, "CLF", "1.2345"},       // four decimals
		{7, "KRW", "7"},                // zero-decimal
		{1_000_000, "IDR", "10000.00"}, // ISO 4217: two digits, whatever CLDR displays
		{1_000_000, "MMK", "10000.00"},
		{1500, "IQD", "1.500"}, // three digits in ISO 4217
		{idempay.MaxAmount, "JPY", "9007199254740991"},
		{idempay.MaxAmount, "USD", "90071992547409.91"},
		{idempay.MaxAmount, "BHD", "9007199254740.991"},
	} {
		got, err := idempay.TwoC2PAmount(tc.minor, tc.currency)
		require.NoError(t, err, "%d %s", tc.minor, tc.currency)
		assert.Equal(t, tc.want, got, "%d %s", tc.minor, tc.currency)
	}
}

func TestTwoC2PAmountRefuses(t *testing.T) {
	for _, tc := range []struct {
		minor    int64
		currency string
		field    string
	}{
		{-1, "THB", "Amount"},
		{idempay.MaxAmount + 1, "THB", "Amount"},
		{100, "XXX", "Currency"}, // "no currency"
		{100, "ABC", "Currency"},
		{100, "764", "Currency"}, // numeric codes, as the article sent, are refused
		{100, "", "Currency"},
		{100, "TH", "Currency"},
	} {
		_, err := idempay.TwoC2PAmount(tc.minor, tc.currency)
		var ve *idempay.ValidationError
		require.True(t, errors.As(err, &ve), "%d %s: %v", tc.minor, tc.currency, err)
		assert.Equal(t, tc.field, ve.Field)
		assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
	}
}

func TestTwoC2PParseAmount(t *testing.T) {
	for _, tc := range []struct {
		s, currency string
		want        int64
	}{
		{"1234.56", "THB", 123456},
		{"1000.00", "THB", 100000},
		{"1.2", "THB", 120},
		{"0.05", "THB", 5},
		{"0", "THB", 0},
		{"1500", "JPY", 1500},
		{"1500.00", "JPY", 1500}, // trailing zero decimals are harmless
		{"1.234", "BHD", 1234},
		{"1.2340", "BHD", 1234},
		{"90071992547409.91", "USD", idempay.MaxAmount},
	} {
		got, err := idempay.TwoC2PParseAmount(tc.s, tc.currency)
		require.NoError(t, err, "%s %s", tc.s, tc.currency)
		assert.Equal(t, tc.want, got, "%s %s", tc.s, tc.currency)
	}
	for _, tc := range []struct{ s, currency string }{
		{"1500.5", "JPY"},       // half a yen
		{"12.345", "THB"},       // a third decimal
		{"000000150000", "THB"}, // the legacy 12-digit implied-decimal form
		{"01.00", "THB"},
		{"-1", "THB"}, {"+1", "THB"}, {"1e3", "THB"}, {"", "THB"}, {".", "THB"},
		{"1.", "THB"}, {".5", "THB"}, {" 1", "THB"}, {"1 ", "THB"}, {"1,000.00", "THB"},
		{"NaN", "THB"}, {"0x10", "THB"},
		{"90071992547409.92", "USD"}, // MaxAmount + 1
		{"99999999999999999999", "JPY"},
		{"1.00", "XXX"},
	} {
		_, err := idempay.TwoC2PParseAmount(tc.s, tc.currency)
		assert.ErrorIs(t, err, idempay.ErrInvalidRequest, "%q %s", tc.s, tc.currency)
	}
}

// TestTwoC2PAmountRoundTrip checks that parsing what was formatted gives
// the amount back, over random amounts of currencies of every exponent.
func TestTwoC2PAmountRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, cur := range []string{"JPY", "THB", "BHD", "CLF", "USD"} {
		for range 2000 {
			minor := rng.Int64N(idempay.MaxAmount + 1)
			if rng.IntN(2) == 0 {
				minor = rng.Int64N(100000)
			}
			s, err := idempay.TwoC2PAmount(minor, cur)
			require.NoError(t, err)
			back, err := idempay.TwoC2PParseAmount(s, cur)
			require.NoError(t, err, s)
			require.Equal(t, minor, back, "%s %s", s, cur)
		}
	}
}
