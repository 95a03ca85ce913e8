package idempay

import (
	"strconv"
	"strings"
)

// TwoC2PAmount formats an amount in minor units as the decimal major-unit
// number 2C2P expects, using the currency's ISO 4217 exponent: JPY 1500 is
// "1500", THB 123456 (satang) is "1234.56", BHD 1234 (fils) is "1.234".
//
// It works on integers only. The seed article formatted money from a float,
// which cannot hold most decimal fractions exactly and silently rounds large
// amounts; an integer division and a zero-padded remainder cannot.
//
// A currency that is not an ISO 4217 code, and a negative or too large
// amount (see MaxAmount), are refused with a *ValidationError.
func TwoC2PAmount(minor int64, currency string) (string, error) {
	exp, err := CurrencyExponent(currency)
	if err != nil {
		return "", err
	}
	if minor < 0 {
		return "", invalid("Amount", "must not be negative, got %d", minor)
	}
	if minor > MaxAmount {
		return "", invalid("Amount", "%d exceeds the largest exact amount %d", minor, int64(MaxAmount))
	}
	digits := strconv.FormatInt(minor, 10)
	if exp == 0 {
		return digits, nil
	}
	// Left-pad so there is at least one digit before the point: 5 satang
	// is "0.05", not ".05".
	if len(digits) <= exp {
		digits = strings.Repeat("0", exp-len(digits)+1) + digits
	}
	cut := len(digits) - exp
	return digits[:cut] + "." + digits[cut:], nil
}

// TwoC2PParseAmount reads a decimal major-unit amount as 2C2P sends it
// (Payment Inquiry answers "1234.56", sometimes as a JSON number) back into
// minor units of currency, without floating point.
//
// It accepts digits with an optional fraction. Fraction digits beyond the
// currency's exponent must be zeros ("1500.00" is JPY 1500; "12.345" is not
// a THB amount). Leading zeros, signs, exponents and spaces are refused:
// a leading zero is how older 2C2P APIs wrote a 12-digit amount with
// implied decimals ("000000150000"), and reading that as a decimal would be
// off by a factor of a hundred. Errors are *ValidationError.
func TwoC2PParseAmount(s, currency string) (int64, error) {
	exp, err := CurrencyExponent(currency)
	if err != nil {
		return 0, err
	}
	whole, frac, hasPoint := strings.Cut(s, ".")
	switch {
	case whole == "" || !allDigits(whole) || (hasPoint && (frac == "" || !allDigits(frac))):
		return 0, invalid("Amount", "%q is not a plain decimal number", s)
	case len(whole) > 1 && whole[0] == '0':
		return 0, invalid("Amount", "%q has a leading zero (an implied-decimal amount?)", s)
	}
	if len(frac) > exp {
		if strings.Trim(frac[exp:], "0") != "" {
			return 0, invalid("Amount", "%q has more decimals than %s has (%d)", s, strings.ToUpper(currency), exp)
		}
		frac = frac[:exp]
	}
	frac += strings.Repeat("0", exp-len(frac))
	// At most 16 digits keeps the parse inside int64 before the MaxAmount
	// check below.
	if len(whole)+len(frac) > 16 {
		return 0, invalid("Amount", "%q is too large", s)
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil || n > MaxAmount {
		return 0, invalid("Amount", "%q is too large", s)
	}
	return n, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
