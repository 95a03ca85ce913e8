package twoc2p

import "strings"

// 2C2P respCodes the adapter reads (PGW v4.3).
const (
	codeSuccess       = "0000" // token issued; on inquiry: paid
	codePending       = "0001" // payment pending
	codeInProgress    = "2001" // transaction in progress
	codeNotFound      = "2002" // inquiry: no such transaction
	codeTokenised     = "4200" // card tokenised, no payment
	codeInvalidValue  = "9004"
	codeMissingField  = "9005"
	codeTooLong       = "9006"
	codeBadMerchant   = "9007"
	codeBadAmount     = "9009"
	codeBadCurrency   = "9010"
	codeExisting      = "9015" // a token already exists for the invoiceNo
	codeTokenInvalid  = "9040"
	codeTokenUsed     = "9041"
	codeHashMismatch  = "9042"
	codeInternalFirst = "9990" // 9990-9999: 2C2P internal failures
	codeInternalLast  = "9999"
)

// internalFailure reports whether code is one of 2C2P's internal failures.
func internalFailure(code string) bool {
	return len(code) == 4 && code >= codeInternalFirst && code <= codeInternalLast
}

// IsRefusal is the default Provider.IsDecline: the 40xx respCodes, which
// PGW uses for the card issuer's answer (the ISO 8583 response code behind
// "40": 4005 do not honour, 4051 insufficient funds, ...).
//
// It leaves out, so that they stay "outcome unknown" rather than "failed",
// the ISO codes that mean an approval or an unfinished request: 00, 08
// (honour with identification), 09 (in progress), 10 (partial approval), 11
// (VIP approval), 16 (approved, update track 3), 68 (answer too late) and
// 85 (no reason to decline). 4200 (tokenised) is not a 40xx code.
func IsRefusal(respCode string) bool {
	if len(respCode) != 4 || !strings.HasPrefix(respCode, "40") || !allDigits(respCode) {
		return false
	}
	switch respCode[2:] {
	case "00", "08", "09", "10", "11", "16", "68", "85":
		return false
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
