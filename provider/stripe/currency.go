package stripe

import (
	"strings"

	"github.com/idempay/idempay"
)

// Stripe's currency lists (docs.stripe.com/currencies).
var (
	// zeroDecimal currencies are counted in whole units: ¥1,500 is 1500.
	zeroDecimal = setOf("BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF")
	// threeDecimal currencies are counted in thousandths, and Stripe
	// requires the last digit to be 0 for its payment partners.
	threeDecimal = setOf("BHD JOD KWD OMR TND")
	// rescaled are the documented special cases where Stripe's exponent
	// differs from ISO 4217's: ISK has no minor unit in ISO, while Stripe
	// keeps it two-decimal for backward compatibility (amounts in
	// multiples of 100).
	rescaled = map[string]int64{"ISK": 100}
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

// toStripe converts an amount in ISO minor units to Stripe's amount
// field, or refuses a currency it cannot convert exactly.
func toStripe(code string, amount int64) (int64, error) {
	code = strings.ToUpper(code)
	iso, err := idempay.CurrencyExponent(code)
	if err != nil {
		return 0, err
	}
	if f, ok := rescaled[code]; ok {
		return amount * f, nil
	}
	if st := Exponent(code); st != iso {
		return 0, &idempay.ValidationError{Field: "Currency", Reason: code + " has " + digits(iso) +
			" in ISO 4217 but " + digits(st) + " at Stripe; refused rather than charged at a guessed scale"}
	}
	if threeDecimal[code] && amount%10 != 0 {
		return 0, &idempay.ValidationError{Field: "Amount", Reason: "Stripe requires three-decimal " + code +
			" amounts to end in 0"}
	}
	return amount, nil
}

// fromStripe converts Stripe's amount field back to ISO minor units.
func fromStripe(code string, amount int64) int64 {
	if f, ok := rescaled[strings.ToUpper(code)]; ok {
		return amount / f
	}
	return amount
}

func digits(n int) string {
	if n == 1 {
		return "1 decimal digit"
	}
	return string(rune('0'+n)) + " decimal digits"
}
