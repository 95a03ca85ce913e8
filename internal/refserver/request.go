package refserver

import (
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"

	"github.com/idempay/idempay/internal/faults"
)

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// chargeRequest is the body of POST /payments/charge: the article's
// amount_jpy, or amount in minor units with its currency (both, for JPY,
// must agree).
type chargeRequest struct {
	OrderID    string            `json:"order_id"`
	AmountJPY  int64             `json:"amount_jpy"` // yen: JPY has no minor unit
	Amount     int64             `json:"amount"`
	Currency   string            `json:"currency"`
	OmiseToken string            `json:"omise_token"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	// Capture false authorises the amount now and captures it later
	// (POST the capture path); absent or true charges at once.
	Capture *bool `json:"capture,omitempty"`
}

// money returns the amount and currency the request charges.
func (r chargeRequest) money() (int64, string) {
	if r.Currency == "" || r.Currency == "JPY" {
		return max(r.Amount, r.AmountJPY), "JPY"
	}
	return r.Amount, r.Currency
}

// parseKey returns the idempotency key from the header's values. It
// accepts the plain form (abc) and the IETF draft's structured-field
// String form ("abc"), which it unquotes.
func parseKey(values []string, maxLen int) (string, *apiError) {
	if len(values) == 0 || strings.TrimSpace(values[0]) == "" {
		return "", &apiError{Type: faults.TypeInvalid, Code: "parameter_missing",
			Message: "the Idempotency-Key header is required"}
	}
	if len(values) > 1 {
		return "", invalidKey("the Idempotency-Key header must be sent once")
	}
	key := strings.TrimSpace(values[0])
	if strings.HasPrefix(key, `"`) {
		unq, ok := unquoteSFString(key)
		if !ok {
			return "", invalidKey("the Idempotency-Key header is not a valid quoted string")
		}
		key = unq
	}
	switch {
	case key == "":
		return "", invalidKey("the Idempotency-Key header is empty")
	case len(key) > maxLen:
		return "", invalidKey("the Idempotency-Key header is too long")
	}
	return key, nil
}

func invalidKey(msg string) *apiError {
	return &apiError{Type: faults.TypeInvalid, Code: "parameter_invalid", Message: msg}
}

// unquoteSFString decodes an RFC 8941 String: printable ASCII between
// double quotes, where only \" and \\ are escapes.
func unquoteSFString(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		switch {
		case c < 0x20 || c > 0x7e || c == '"':
			return "", false
		case c == '\\':
			i++
			if i == len(s)-1 || (s[i] != '"' && s[i] != '\\') {
				return "", false
			}
			c = s[i]
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

// parseCharge decodes and validates a charge body.
func parseCharge(body []byte) (chargeRequest, *apiError) {
	var req chargeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return req, bodyError(err)
	}
	switch {
	case strings.TrimSpace(req.OrderID) == "":
		return req, invalidParam("order_id", "order_id is required")
	case req.Currency != "" && !currencyCode.MatchString(req.Currency):
		return req, invalidParam("currency", "currency must be an upper-case ISO 4217 code")
	case req.Currency != "" && req.Currency != "JPY" && (req.Amount <= 0 || req.AmountJPY != 0):
		return req, invalidParam("amount", "amount must be a positive number of minor units, without amount_jpy")
	case req.Amount == 0 && req.AmountJPY <= 0, req.Amount < 0:
		return req, invalidParam("amount_jpy", "amount_jpy must be a positive whole number of yen")
	case req.Amount != 0 && req.AmountJPY != 0 && req.Amount != req.AmountJPY:
		return req, invalidParam("amount", "amount and amount_jpy disagree")
	case strings.TrimSpace(req.OmiseToken) == "":
		return req, invalidParam("omise_token", "omise_token is required")
	}
	return req, nil
}

// bodyError names the offending field when the JSON had a wrong type.
func bodyError(err error) *apiError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		field, _, _ := strings.Cut(te.Field, ".")
		return invalidParam(field, field+" has the wrong type")
	}
	return &apiError{Type: faults.TypeInvalid, Code: "parameter_invalid",
		Message: "the body must be a JSON object"}
}

func invalidParam(param, msg string) *apiError {
	return &apiError{Type: faults.TypeInvalid, Code: "parameter_invalid", Param: param, Message: msg}
}

// orderIDOf extracts order_id from a body that may be invalid, for the
// counters and fault scripts that look at requests before validation.
func orderIDOf(body []byte) string {
	var probe struct {
		OrderID string `json:"order_id"`
	}
	if json.Unmarshal(body, &probe) != nil {
		return ""
	}
	return probe.OrderID
}

// readBody reads at most limit bytes of body; a larger body is an error.
func readBody(body io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = errors.New("body too large")
	}
	return b, err
}
