package omisetest

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// createParams is a validated POST /charges body.
type createParams struct {
	amount      int64
	currency    string
	card        string
	source      string
	customer    string
	capture     bool
	returnURI   string
	description string
	metadata    map[string]string
	preAuth     bool // authorization_type pre_auth (default final_auth)
}

// passThrough are parameters the fake accepts without acting on them.
var passThrough = regexp.MustCompile(`^(ip|platform_type|expires_at|zero_interest_installments|webhook_endpoints\[\d*\])$`)

var currencyCode = regexp.MustCompile(`^[A-Za-z]{3}$`)

// parseCreate validates a body as Omise would; the fake is stricter in one
// way: it refuses parameters it does not know, so that the adapter cannot
// send a misspelt one unnoticed.
func parseCreate(form url.Values) (createParams, string, string) {
	p := createParams{capture: true, metadata: map[string]string{}}
	for name, vals := range form {
		v := vals[len(vals)-1]
		if k, ok := strings.CutPrefix(name, "metadata["); ok && strings.HasSuffix(k, "]") {
			p.metadata[strings.TrimSuffix(k, "]")] = v
			continue
		}
		switch name {
		case "amount":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return p, "invalid_charge", "amount must be a positive integer"
			}
			p.amount = n
		case "currency":
			p.currency = v
		case "card":
			p.card = v
		case "source":
			p.source = v
		case "customer":
			p.customer = v
		case "capture":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return p, "bad_request", "capture must be true or false"
			}
			p.capture = b
		case "return_uri":
			p.returnURI = v
		case "description":
			p.description = v
		case "authorization_type":
			if v != "final_auth" && v != "pre_auth" {
				return p, "bad_request", "authorization_type must be final_auth or pre_auth"
			}
			p.preAuth = v == "pre_auth"
		default:
			if !passThrough.MatchString(name) {
				return p, "bad_request", "unknown parameter " + name
			}
		}
	}
	switch {
	case p.amount == 0:
		return p, "invalid_charge", "amount is required"
	case !currencyCode.MatchString(p.currency):
		return p, "invalid_charge", "currency is currently not supported"
	case p.card == "" && p.source == "" && p.customer == "":
		return p, "invalid_charge", "card, source or customer is required"
	case p.card != "" && p.source != "":
		return p, "bad_request", "card and source cannot both be given"
	case strings.HasPrefix(p.card, "tokn_") && p.customer != "":
		return p, "bad_request", "a token cannot be charged with a customer"
	case strings.HasPrefix(p.card, "card_") && p.customer == "":
		return p, "invalid_card", "a card ID needs its customer"
	case p.card != "" && !strings.HasPrefix(p.card, "tokn_") && !strings.HasPrefix(p.card, "card_"):
		return p, "invalid_card", "card must be a token or a card ID"
	}
	return p, "", ""
}
