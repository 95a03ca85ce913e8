package twoc2p

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/idempay/idempay"
)

// 2C2P's older redirect payment API (a form the customer's browser posts to
// 2C2P, answered by a form posted back) signs each message with a
// hash_value field: the hex HMAC-SHA1, under the merchant secret key, of
// the values of the message's fields concatenated in an order fixed for
// each API version, without separators. A field left out or empty adds
// nothing. The orders below are those of 2C2P's official WooCommerce
// plugin, which speaks version 7.0; other versions order their fields
// otherwise and are refused (ErrRedirectVersion) rather than signed with a
// guess.
var (
	redirectRequestFields = map[string][]string{
		"7.0": {"version", "merchant_id", "payment_description", "order_id", "invoice_no", "currency", "amount",
			"customer_email", "pay_category_id", "promotion", "user_defined_1", "user_defined_2", "user_defined_3",
			"user_defined_4", "user_defined_5", "result_url_1", "result_url_2", "enable_store_card",
			"stored_card_unique_id", "request_3ds", "recurring", "order_prefix", "recurring_amount",
			"allow_accumulate", "max_accumulate_amount", "recurring_interval", "recurring_count",
			"charge_next_date", "charge_on_date", "payment_option", "ipp_interest_type", "payment_expiry",
			"default_lang", "statement_descriptor"},
	}
	redirectResponseFields = map[string][]string{
		"7.0": {"version", "request_timestamp", "merchant_id", "order_id", "invoice_no", "currency", "amount",
			"transaction_ref", "approval_code", "eci", "transaction_datetime", "payment_channel", "payment_status",
			"channel_response_code", "channel_response_desc", "masked_pan", "stored_card_unique_id",
			"backend_invoice", "paid_channel", "paid_agent", "recurring_unique_id", "user_defined_1",
			"user_defined_2", "user_defined_3", "user_defined_4", "user_defined_5", "browser_info", "ippPeriod",
			"ippInterestType", "ippInterestRate", "ippMerchantAbsorbRate"},
	}
)

// Errors of the redirect API's hash_value, for errors.Is. None quotes the
// secret or the expected hash.
var (
	// ErrRedirectVersion: the message's version is not one whose field
	// order this package knows.
	ErrRedirectVersion = errors.New("twoc2p: redirect API version whose hash_value field order is not known")
	// ErrRedirectField: a request field the version does not sign; sent,
	// it would travel unsigned.
	ErrRedirectField = errors.New("twoc2p: redirect API field not covered by hash_value")
	// ErrRedirectHash: a response's hash_value is missing or does not
	// match its fields.
	ErrRedirectHash = errors.New("twoc2p: redirect API hash_value does not match")
)

// RedirectRequestHash returns the hash_value of a redirect payment request
// whose form fields are fields (by their names on the wire: "version",
// "merchant_id", "order_id", "amount", ...), for fields["version"]'s order.
// A field that order does not sign is refused with ErrRedirectField, and a
// "hash_value" among the fields is refused too. The hash is lower-case hex.
func RedirectRequestHash(secret idempay.Secret, fields map[string]string) (string, error) {
	order, err := redirectOrder(redirectRequestFields, fields["version"])
	if err != nil {
		return "", err
	}
	for name := range fields {
		if !containsField(order, name) {
			return "", fmt.Errorf("%w: %q (version %s)", ErrRedirectField, name, fields["version"])
		}
	}
	return redirectMAC(secret, order, fields)
}

// VerifyRedirectResponse checks the hash_value of a redirect payment
// response (the form 2C2P posts back) against its other fields, in the
// order of version, the version the request was sent with. Fields the
// order does not name are not covered by the hash: read only those it
// does. The comparison ignores letter case and takes constant time.
func VerifyRedirectResponse(secret idempay.Secret, version string, fields map[string]string) error {
	order, err := redirectOrder(redirectResponseFields, version)
	if err != nil {
		return err
	}
	got, err := hex.DecodeString(fields["hash_value"])
	if err != nil || len(got) != sha1.Size {
		return fmt.Errorf("%w: hash_value missing or not hex", ErrRedirectHash)
	}
	want, err := redirectMAC(secret, order, fields)
	if err != nil {
		return err
	}
	wantBytes, _ := hex.DecodeString(want) // hex.EncodeToString's output
	if !hmac.Equal(got, wantBytes) {
		return ErrRedirectHash
	}
	return nil
}

// RedirectAmount writes an amount in minor units as the redirect API's
// amount field: twelve digits, zero-padded, the decimals implied
// (THB 1,500.00 is "000000150000"). An amount that is negative or needs
// more than twelve digits is refused with a *idempay.ValidationError.
func RedirectAmount(minor int64) (string, error) {
	if minor < 0 || minor > 999_999_999_999 {
		return "", &idempay.ValidationError{Field: "Amount", Reason: "must fit the redirect API's twelve digits"}
	}
	s := strconv.FormatInt(minor, 10)
	return strings.Repeat("0", 12-len(s)) + s, nil
}

func redirectOrder(orders map[string][]string, version string) ([]string, error) {
	order, ok := orders[version]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrRedirectVersion, version)
	}
	return order, nil
}

func containsField(order []string, name string) bool {
	for _, f := range order {
		if f == name {
			return true
		}
	}
	return false
}

func redirectMAC(secret idempay.Secret, order []string, fields map[string]string) (string, error) {
	if secret == "" {
		return "", idempay.ErrTwoC2PNoSecret
	}
	m := hmac.New(sha1.New, []byte(secret.Reveal()))
	for _, name := range order {
		m.Write([]byte(fields[name]))
	}
	return hex.EncodeToString(m.Sum(nil)), nil
}
