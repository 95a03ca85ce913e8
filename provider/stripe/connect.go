package stripe

import (
	"regexp"
	"strings"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// AccountHeader carries the connected account a request acts on (Stripe
// Connect): Provider.Account, or the account an intent ID names with
// Provider.ConnectByIntent.
const AccountHeader = "Stripe-Account"

// accountID is what a Stripe account ID looks like.
var accountID = regexp.MustCompile(`^acct_[A-Za-z0-9]{1,64}$`)

// ConnectedIntentID is the intent ID of order id charged on the connected
// account (acct_...), for a Provider with ConnectByIntent: "account/id".
// The account is part of the intent, so it is in the KeyStore's record key
// and in the PaymentIntent's idempay_intent tag: orders of two accounts
// never share a record, and a refund, capture, cancel or lookup of the
// intent goes to the account that was charged.
func ConnectedIntentID(account, id string) string { return account + "/" + id }

// accountOf is the connected account intentID's requests act on, or ""
// for the platform's own.
func (p Provider) accountOf(intentID string) string {
	if p.Account != "" {
		return p.Account
	}
	if !p.ConnectByIntent {
		return ""
	}
	if acct, _, ok := strings.Cut(intentID, "/"); ok && accountID.MatchString(acct) {
		return acct
	}
	return ""
}

// validateIntentAccount refuses, with ConnectByIntent, an intent ID that
// starts like a connected one ("acct_") but names no account: sent, it
// would charge the platform instead.
func (p Provider) validateIntentAccount(field, intentID string) error {
	if p.ConnectByIntent && strings.HasPrefix(intentID, "acct_") && p.accountOf(intentID) == "" {
		return wire.Invalid(field, "%q starts with acct_ but names no account; use ConnectedIntentID", intentID)
	}
	return nil
}

// checkConnect refuses a Connect configuration that could mix accounts'
// records: Provider.Account that is no account ID, or that the Client's
// namespace does not name (Config.Account must be the same ID), or set
// with ConnectByIntent.
func (p Provider) checkConnect(t idempay.Target) error {
	switch {
	case p.Account == "":
		return nil
	case !accountID.MatchString(p.Account):
		return wire.BadConfig("Provider.Account", "%q is not a Stripe account ID (acct_...)", p.Account)
	case p.ConnectByIntent:
		return wire.BadConfig("Provider.ConnectByIntent", "cannot be set with Provider.Account: one connected account per Client, or one per intent")
	case t.Namespace != "" && t.Namespace != p.Name()+":"+p.Account:
		return wire.BadConfig("Account", "must be the connected account %s (Provider.Account), so that its records are its own; the namespace is %q",
			p.Account, t.Namespace)
	}
	return nil
}
