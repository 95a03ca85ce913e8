package twoc2ptest

import (
	"encoding/json"

	"github.com/golang-jwt/jwt/v5"
)

// paymentResult is the signed claims Payment Inquiry answers for t, in the
// shape of the payment results 2C2P's servers sign (the answers recorded in
// the adapter's testdata): every field present, null or "" when it does not
// apply, userDefined1 to 5 always, the amount a JSON number with a decimal
// point, idempotencyID "" when none was sent (or when echo is false).
func paymentResult(t Transaction, echo bool) jwt.MapClaims {
	c := jwt.MapClaims{
		"cardNo": nil, "cardToken": "", "loyaltyPoints": nil, "monthlyPayment": nil,
		"merchantID":                    t.MerchantID,
		"invoiceNo":                     t.InvoiceNo,
		"amount":                        json.Number(withPoint(t.Amount)),
		"currencyCode":                  t.CurrencyCode,
		"recurringUniqueID":             "",
		"tranRef":                       t.TranRef,
		"referenceNo":                   t.TranRef,
		"approvalCode":                  nil,
		"eci":                           nil,
		"transactionDateTime":           t.Created.UTC().Format("20060102150405"),
		"agentCode":                     nil,
		"channelCode":                   t.PaymentChannel[0],
		"issuerCountry":                 nil,
		"issuerBank":                    nil,
		"cardType":                      nil,
		"paymentScheme":                 nil,
		"idempotencyID":                 "",
		"installmentMerchantAbsorbRate": nil,
		"respCode":                      t.RespCode,
		"respDesc":                      desc(t.RespCode),
	}
	if t.ApprovalCode != "" {
		c["approvalCode"] = t.ApprovalCode
	}
	if echo {
		c["idempotencyID"] = t.IdempotencyID
	}
	for i, v := range t.UserDefined {
		c["userDefined"+string(rune('1'+i))] = v
	}
	return c
}

// withPoint writes a whole amount as 2C2P's results do: "1500" as "1500.0".
func withPoint(amount string) string {
	for i := 0; i < len(amount); i++ {
		if amount[i] == '.' {
			return amount
		}
	}
	return amount + ".0"
}
