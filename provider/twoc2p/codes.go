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

// refusals are the codes of 2C2P's Payment Response Codes table that say
// the payment itself was refused, so no money moved:
//
//   - 0003 cancelled and 0004 soft-declined ("resubmit after 3-D Secure"):
//     Payment Inquiry's final answers for a transaction that did not pay;
//   - the 40xx issuer refusals (the ISO 8583 answer behind "40"): referrals,
//     pick-up, do not honour, invalid transaction, amount, card or issuer,
//     customer cancellation, re-enter, fee, format, expired, restricted,
//     lost or stolen card, PIN, no account, function not supported,
//     insufficient funds, not permitted, suspected fraud, limits, security
//     violation, card-acceptor referrals, promotion refused, card data
//     format, cancelled by closing the browser, authentication failed,
//     institution not found, transaction cannot be completed;
//   - 5006 to 5014, the alternative channels' refusals: invalid amount,
//     insufficient balance, invalid currency, payment expired, cancelled by
//     the payer, invalid payee or customer, no such account, authentication
//     failed.
//
// Left out, so that they stay "outcome unknown": every code that says an
// approval (4000, 4008, 4010, 4011, 4016), a request under way or answered
// late (4009, 4068), a partial or later step of a made payment
// (completed partially 4032, settlement 4045, 4046, 4070, cancel 4047,
// 4048, 41xx), a duplicate (4026, 4094), a system, network or file-update
// failure (4006, 4020 to 4029, 4050, 4086 to 4091, 4095 to 4099), a
// reserved code, a missing record (4049, 4071), and any code the table
// does not have.
var refusals = setOf(`
	0003 0004
	4001 4002 4003 4004 4005 4007 4012 4013 4014 4015 4017 4019 4023 4030 4031
	4033 4034 4035 4036 4037 4038 4039 4040 4041 4042 4043 4044
	4051 4052 4053 4054 4055 4056 4057 4058 4059 4060 4061 4062 4063 4064 4065 4066 4067
	4072 4073 4075 4076 4077 4078 4080 4081 4092 4093
	5006 5007 5008 5009 5010 5011 5012 5013 5014`)

func setOf(codes string) map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(codes) {
		m[c] = true
	}
	return m
}

// IsRefusal is the default Provider.IsDecline: whether a Payment Inquiry
// respCode is, in 2C2P's response code table, a refusal of the payment (see
// refusals for the list and for what is left out). A code it accepts ends
// the intent as failed; any other code leaves it unknown, never failed.
func IsRefusal(respCode string) bool { return refusals[respCode] }
