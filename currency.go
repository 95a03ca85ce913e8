package idempay

import "strings"

// ISO4217Amendment names the state of ISO 4217 list one that CurrencyExponent
// follows: the list as amended through amendment 180 (Bulgaria's lev withdrawn
// on 2026-01-01), which also includes amendments 176 (XCG replaces ANG) and 179
// (XAD). A later amendment changes this table and its test, never an adapter.
const ISO4217Amendment = 180

// minorUnits is ISO 4217 list one: each active alphabetic code with the
// number of its minor-unit digits. Codes the list gives no minor unit
// ("N.A.": precious metals, bond market units, SDR, XSU, XUA, XTS, XXX) are
// left out, since no amount in minor units can be sent in them. The table is
// checked against the published list in TestCurrencyExponentISO4217.
//
// It is the standard's own table, not CLDR's display digits: IDR, COP or
// PKR have two minor-unit digits here even where prices are shown without
// them. Providers that count some currencies otherwise (Stripe's
// zero-decimal list, for one) convert in their adapters.
var minorUnits = unitsOf(map[int]string{
	0: "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF",
	2: "AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BOV BRL BSD BTN BWP " +
		"BYN BZD CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB " +
		"EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES " +
		"KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR " +
		"MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD " +
		"RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP " +
		"TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XAD XCD XCG YER ZAR ZMW ZWG",
	3: "BHD IQD JOD KWD LYD OMR TND",
	4: "CLF UYW",
})

func unitsOf(byDigits map[int]string) map[string]int {
	m := map[string]int{}
	for digits, codes := range byDigits {
		for _, c := range strings.Fields(codes) {
			m[c] = digits
		}
	}
	return m
}

// CurrencyExponent returns the number of minor-unit digits ISO 4217 gives an
// active alphabetic code, in any case: 0 for JPY, 2 for USD and IDR, 3 for
// BHD and IQD, 4 for CLF. A code that is not on list one (a withdrawn code
// such as HRK or BGN, a made-up one) or that has no minor unit (XAU, XXX) is
// refused with a *ValidationError. See ISO4217Amendment for the list's date.
func CurrencyExponent(code string) (int, error) {
	if len(code) != 3 {
		return 0, invalid("Currency", "%q is not a three-letter ISO 4217 code", code)
	}
	digits, ok := minorUnits[strings.ToUpper(code)]
	if !ok {
		return 0, invalid("Currency", "%q is not an active ISO 4217 currency with minor units (list one, amendment %d)",
			code, ISO4217Amendment)
	}
	return digits, nil
}
