package stripe

import (
	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// The metadata keys the adapter sets on every PaymentIntent it creates.
// Callers may not set them.
const (
	// IntentMetadataKey and NamespaceMetadataKey tag the PaymentIntent
	// with the KeyStore record it was made for: the intent ID and the
	// Client's namespace (provider and account), so that search finds it
	// and no other account's intent can claim it.
	IntentMetadataKey    = wire.IntentKey
	NamespaceMetadataKey = wire.NamespaceKey
	// KeyMetadataKey tags the PaymentIntent with the idempotency key of
	// the attempt that created it. An intent may take several attempts (a
	// declined card, then another), each a PaymentIntent of its own with
	// the intent's tags: a lookup settles the current attempt only with
	// its own PaymentIntent, never with an earlier attempt's decline.
	KeyMetadataKey = wire.KeyKey
	// ConfirmMetadataKey is "true" on a PaymentIntent the adapter's own
	// request confirmed (a ChargeRequest with a Source): its
	// requires_payment_method with a last_payment_error is that confirm's
	// decline, however the intent is read later.
	ConfirmMetadataKey = "idempay_confirm"
	// OpMetadataKey tags a refund, and the PaymentIntent a capture
	// captured, with the caller's operation ID (RefundRequest.RefundID,
	// CaptureRequest.CaptureID): by it a lookup tells the operation's
	// object from any other of the same PaymentIntent. A cancel carries no
	// metadata at Stripe.
	OpMetadataKey = "idempay_op"
)

// ErrLegacyTag: the only PaymentIntent found for an intent is tagged with
// the intent ID alone, as idempay tagged them before it tagged the
// namespace, and may belong to another account on the same key. It settles
// nothing; see Provider.LegacyNamespace.
var ErrLegacyTag = wire.ErrLegacyTag

// Provider speaks Stripe's PaymentIntents API. Its zero value is ready: it
// sends no Stripe-Version header, so Stripe uses the account's default
// API version.
type Provider struct {
	// APIVersion, if set, is sent as the Stripe-Version header of every
	// request, pinning the shape of Stripe's answers. Search needs
	// 2020-08-27 or later.
	APIVersion string

	// LegacyNamespace, if set, is the one namespace (Client.Namespace)
	// that may claim PaymentIntents tagged with an intent ID alone, as
	// idempay tagged them before it tagged namespaces. Set it only if this
	// secret key never served another idempay namespace. Without it such an
	// intent is accepted only when the record names it (ProviderRef); found
	// by search, it leaves the intent unknown (ErrLegacyTag).
	LegacyNamespace string

	// Account, if set, is the connected account (acct_...) this Client
	// acts on through Stripe Connect: every request, lookups included,
	// carries it in the Stripe-Account header. New requires Config.Account
	// to be the same ID, so that the Client's namespace (and the tags on
	// what it creates) names the account and no other account's records
	// or the platform's are ever its own.
	Account string

	// ConnectByIntent, if set, lets each charge name its connected account
	// in its intent ID: an intent ID made by ConnectedIntentID
	// ("acct_.../order-1") is charged on that account, and so are its
	// refunds, captures, cancels and lookups; two accounts' orders of the
	// same number are two intents. An intent ID without an account charges
	// the platform's own. Not with Account.
	ConnectByIntent bool
}

var (
	_ idempay.Provider      = Provider{}
	_ idempay.Finder        = Provider{}
	_ idempay.SecretFielder = Provider{}
	_ idempay.Operator      = Provider{}
)

// Name is "stripe": the provider part of every KeyStore namespace.
func (Provider) Name() string { return "stripe" }

// secretFields are the members of a PaymentIntent that are secrets:
//
//   - client_secret confirms and reads the PaymentIntent from a frontend
//     with the publishable key; Stripe asks that it be neither stored nor
//     logged. A caller that creates an unconfirmed PaymentIntent (no
//     Source) for its frontend to confirm retrieves it by Charge.ID with
//     its secret key: Charge.Raw no longer carries it.
//   - payment_method and source name what was charged: the request's
//     Source, or the PaymentMethod Stripe made of it (a test card alias
//     and a token come back as a new pm_ ID, which redacting the Source
//     does not catch). A saved one can be charged again with the secret
//     key.
var secretFields = []string{"client_secret", "payment_method", "source"}

// SecretFields lists the members of Stripe's answers that the Client
// replaces by "[redacted]", wherever they appear, before it keeps an
// answer in Charge.Raw (and so in the KeyStore): client_secret,
// payment_method and source.
func (Provider) SecretFields() []string { return append([]string(nil), secretFields...) }
