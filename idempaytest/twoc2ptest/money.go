package twoc2ptest

import (
	"errors"
	"strconv"
	"strings"

	"github.com/idempay/idempay"
)

var errAmount = errors.New("twoc2ptest: not an amount of the currency")

// toMinor reads a decimal amount in major units ("1234.56") as minor units
// of currency, refusing more decimals than the currency has (trailing
// zeros apart: 2C2P's answers write "1500.0" for a whole JPY amount).
func toMinor(amount, currency string) (int64, error) {
	exp, err := idempay.CurrencyExponent(currency)
	if err != nil {
		return 0, err
	}
	whole, frac, _ := strings.Cut(strings.TrimSpace(amount), ".")
	frac = strings.TrimRight(frac, "0")
	if whole == "" || len(frac) > exp || strings.HasPrefix(whole, "-") || strings.HasPrefix(whole, "+") {
		return 0, errAmount
	}
	digits := whole + frac + strings.Repeat("0", exp-len(frac))
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, errAmount
	}
	return n, nil
}

// toMajor writes minor units of currency as 2C2P's decimal amount, with as
// many decimals as the currency has ("1234.56", "1500").
func toMajor(minor int64, currency string) string {
	exp, err := idempay.CurrencyExponent(currency)
	s := strconv.FormatInt(minor, 10)
	if err != nil || exp == 0 {
		return s
	}
	if len(s) <= exp {
		s = strings.Repeat("0", exp-len(s)+1) + s
	}
	return s[:len(s)-exp] + "." + s[len(s)-exp:]
}
