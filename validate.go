package idempay

import (
	"errors"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on a ChargeRequest's text, checked before anything is stored or
// sent. Providers' own limits may be lower; their adapters check those.
const (
	maxIntentIDLength    = 255  // intent IDs become store keys and metadata
	maxDescriptionLength = 1000 // Stripe's limit, the lowest of the providers'
	maxCustomerLength    = 255
	maxReturnURLLength   = 2048
	maxMetaEntries       = 50
	maxMetaKeyLength     = 255
	maxMetaValueLength   = 4096
)

// ReservedMetadataPrefix starts the metadata keys adapters write to tag a
// charge with its intent; a caller's Metadata may not use it.
const ReservedMetadataPrefix = "idempay_"

// Validate checks r the way Client.Charge does before anything is stored
// or sent, and returns a *ValidationError for the first fault. Every field
// is checked: a request that passes is one every adapter can at least
// begin to encode.
func (r ChargeRequest) Validate() error {
	for _, check := range []func() error{
		r.validateIntentID, r.validateMoney, r.validateSource, r.validateText, r.validateKey,
		func() error { return validateMap("Metadata", r.Metadata, true) },
		func() error { return validateMap("Extra", r.Extra, false) },
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (r ChargeRequest) validateIntentID() error {
	if err := checkText("IntentID", r.IntentID, maxIntentIDLength); err != nil {
		return err
	}
	if strings.TrimSpace(r.IntentID) != r.IntentID {
		// "order-1" and "order-1 " would be two intents for one order.
		return invalid("IntentID", "has leading or trailing white space")
	}
	return nil
}

func (r ChargeRequest) validateMoney() error {
	switch {
	case r.Amount <= 0:
		return invalid("Amount", "must be positive, got %d", r.Amount)
	case r.Amount > MaxAmount:
		return invalid("Amount", "%d exceeds the largest exact amount %d", r.Amount, int64(MaxAmount))
	}
	_, err := CurrencyExponent(r.Currency)
	return err
}

func (r ChargeRequest) validateSource() error {
	if hasControl(string(r.Source)) || !utf8.ValidString(string(r.Source)) {
		return invalid("Source", "contains control characters or invalid UTF-8")
	}
	if len(r.Source) > maxCustomerLength {
		return invalid("Source", "is %d bytes, more than %d", len(r.Source), maxCustomerLength)
	}
	return nil
}

func (r ChargeRequest) validateText() error {
	if r.Customer != "" {
		if err := checkText("Customer", r.Customer, maxCustomerLength); err != nil {
			return err
		}
		if strings.ContainsFunc(r.Customer, unicode.IsSpace) {
			return invalid("Customer", "has white space; it is a provider's customer ID")
		}
	}
	if r.Description != "" {
		if err := checkText("Description", r.Description, maxDescriptionLength); err != nil {
			return err
		}
	}
	if r.ReturnURL != "" {
		return validateReturnURL(r.ReturnURL)
	}
	return nil
}

// scriptSchemes run in the page that follows them instead of leaving it:
// never a place to send a customer back to.
var scriptSchemes = map[string]bool{"javascript": true, "vbscript": true, "data": true, "file": true, "blob": true}

// validateReturnURL accepts an absolute http(s) URL with a host, or an
// application's own scheme ("myapp://paid", which Stripe takes to return
// to a mobile app), but no scheme that runs script or reads local files.
func validateReturnURL(raw string) error {
	if err := checkText("ReturnURL", raw, maxReturnURLLength); err != nil {
		return err
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return invalid("ReturnURL", "does not parse")
	case u.Scheme == "":
		return invalid("ReturnURL", "is not absolute: it needs a scheme")
	case scriptSchemes[strings.ToLower(u.Scheme)]:
		return invalid("ReturnURL", "has the scheme %q, which runs script or reads files", u.Scheme)
	case (u.Scheme == "https" || u.Scheme == "http") && u.Host == "":
		return invalid("ReturnURL", "has no host")
	case u.User != nil:
		return invalid("ReturnURL", "must not carry credentials")
	}
	return nil
}

func (r ChargeRequest) validateKey() error {
	switch {
	case r.Key != "" && r.BaseKey != "":
		return invalid("BaseKey", "is set with Key; give one of the two")
	case r.BaseKey != "":
		if err := ValidateKey(r.BaseKey); err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				ve.Field = "BaseKey"
			}
			return err
		}
		return nil
	case r.Key == "":
		return nil
	}
	return ValidateKey(r.Key)
}

// validateMap checks Metadata or Extra: bounded, printable, and, for
// Metadata, clear of the adapters' own tags.
func validateMap(name string, m map[string]string, reserved bool) error {
	if len(m) > maxMetaEntries {
		return invalid(name, "has %d entries, more than %d", len(m), maxMetaEntries)
	}
	for k, v := range m {
		switch {
		case k == "" || strings.TrimSpace(k) != k:
			return invalid(name, "key %q is empty or has leading or trailing white space", k)
		case hasControl(k) || hasControl(v) || !utf8.ValidString(k+v):
			return invalid(name, "entry %q has control characters or invalid UTF-8", k)
		case len(k) > maxMetaKeyLength || len(v) > maxMetaValueLength:
			return invalid(name, "entry %q is longer than %d bytes (key) or %d bytes (value)", k, maxMetaKeyLength, maxMetaValueLength)
		case reserved && strings.HasPrefix(strings.ToLower(k), ReservedMetadataPrefix):
			return invalid(name, "key %q uses the prefix %q, which idempay's adapters write", k, ReservedMetadataPrefix)
		}
	}
	return nil
}

// ValidateKey checks an idempotency key: 1 to 255 printable ASCII
// characters (the form every provider and the IETF draft accept).
func ValidateKey(key string) error {
	if key == "" {
		return invalid("Key", "is empty")
	}
	if len(key) > MaxKeyLength {
		return invalid("Key", "is %d characters, more than %d", len(key), MaxKeyLength)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return invalid("Key", "has a character outside printable ASCII at %d", i)
		}
	}
	return nil
}

// checkText refuses an empty, overlong, blank or unprintable text field.
func checkText(field, s string, max int) error {
	switch {
	case s == "" || strings.TrimSpace(s) == "":
		return invalid(field, "is empty or only white space")
	case len(s) > max:
		return invalid(field, "is %d bytes, more than %d", len(s), max)
	case !utf8.ValidString(s) || hasControl(s):
		return invalid(field, "has control characters or invalid UTF-8")
	}
	return nil
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}
