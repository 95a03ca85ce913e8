package stripe

import (
	"strconv"
	"strings"

	"github.com/idempay/idempay"
)

// Stripe's currency lists (docs.stripe.com/currencies). They are Stripe's
// own: ISO 4217's minor units come from idempay.CurrencyExponent, and the
// adapter converts where the two differ in a way Stripe documents.
var (
	// zeroDecimal currencies are counted in whole units: ¥1,500 is 1500.
	// ISO gives one of them, MGA, two minor-unit digits.
	zeroDecimal = setOf("BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF")
	// threeDecimal currencies are counted in thousandths, and Stripe
	// requires the last digit to be 0 for its payment partners.
	threeDecimal = setOf("BHD JOD KWD OMR TND")
	// wholeInHundredths are Stripe's special cases counted in hundredths
	// although ISO 4217 gives them no minor unit: ISK stays two-decimal in
	// Stripe's API for backward compatibility, in multiples of 100.
	wholeInHundredths = setOf("ISK")
)

func setOf(codes string) map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(codes) {
		m[c] = true
	}
	return m
}

// Exponent returns the number of minor-unit digits Stripe's amount field
// carries for an ISO 4217 code (any case): 0 for its zero-decimal
// currencies, 3 for its three-decimal ones, 2 for every other.
func Exponent(code string) int {
	code = strings.ToUpper(code)
	switch {
	case zeroDecimal[code]:
		return 0
	case threeDecimal[code]:
		return 3
	}
	return 2
}

// scale is how Stripe's amount field relates to ISO minor units for one
// currency: stripe = iso * mul / div.
type scale struct{ mul, div int64 }

// scaleOf returns the conversion of code, or refuses a currency whose ISO
// and Stripe exponents differ in a way Stripe does not document.
func scaleOf(code string) (scale, error) {
	code = strings.ToUpper(code)
	iso, err := idempay.CurrencyExponent(code)
	if err != nil {
		return scale{}, err
	}
	st := Exponent(code)
	switch {
	case st == iso:
		return scale{1, 1}, nil
	case wholeInHundredths[code] && iso == 0:
		return scale{100, 1}, nil
	case zeroDecimal[code] && iso > 0:
		return scale{1, pow10(iso)}, nil
	}
	return scale{}, &idempay.ValidationError{Field: "Currency", Reason: code + " has " + digits(iso) +
		" in ISO 4217 but " + digits(st) + " at Stripe; refused rather than charged at a guessed scale"}
}

// toStripe converts an amount in ISO minor units to Stripe's amount
// field, or refuses one it cannot convert exactly.
func toStripe(code string, amount int64) (int64, error) {
	code = strings.ToUpper(code)
	s, err := scaleOf(code)
	if err != nil {
		return 0, err
	}
	if amount%s.div != 0 {
		return 0, &idempay.ValidationError{Field: "Amount", Reason: "Stripe counts " + code +
			" in whole units: the amount must be a multiple of " + strconv.FormatInt(s.div, 10)}
	}
	if threeDecimal[code] && amount%10 != 0 {
		return 0, &idempay.ValidationError{Field: "Amount", Reason: "Stripe requires three-decimal " + code +
			" amounts to end in 0"}
	}
	return amount / s.div * s.mul, nil
}

// fromStripe converts Stripe's amount field back to ISO minor units. A
// currency the adapter would not send is reported as Stripe wrote it.
func fromStripe(code string, amount int64) int64 {
	s, err := scaleOf(code)
	if err != nil {
		return amount
	}
	return amount / s.mul * s.div
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

func digits(n int) string {
	if n == 1 {
		return "1 decimal digit"
	}
	return strconv.Itoa(n) + " decimal digits"
}
