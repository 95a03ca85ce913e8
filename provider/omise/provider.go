package omise

import (
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// DefaultVersion is the Omise-Version sent when Provider.Version is empty:
// the API version whose charge object the adapter reads.
const DefaultVersion = "2019-05-29"

// The metadata keys that tag every charge with the KeyStore record it was
// made for, so that it can be found by listing: the intent ID, the
// Client's namespace (provider and account) and the idempotency key of the
// attempt that made it (an intent may take several attempts, a declined
// card then another, and a lookup settles the current attempt only with
// its own charge). Callers may not set them.
const (
	IntentMetadataKey    = wire.IntentKey
	NamespaceMetadataKey = wire.NamespaceKey
	KeyMetadataKey       = wire.KeyKey
)

// ErrLegacyTag: the only charge a lookup found for an intent is tagged with
// the intent ID alone, as idempay tagged charges before it tagged the
// namespace, and may belong to another account using the same key and
// intent ID. It settles nothing and proves nothing; see
// Provider.LegacyNamespace.
var ErrLegacyTag = wire.ErrLegacyTag

// Defaults of the lookup settings.
const (
	DefaultClockSkew    = 2 * time.Minute
	DefaultMaxListPages = 50
)

// Provider speaks Omise's Charges API. Its zero value is ready.
type Provider struct {
	// Version is sent as Omise-Version. Default DefaultVersion.
	Version string

	// SavedCards allows charges Omise can repeat: a card ID (card_) with
	// its Customer, or a Customer alone (its default card). For such a
	// charge a lookup that finds nothing cannot prove that no charge is
	// still being made, so with SavedCards set FindCharge never answers
	// KindNotFound: an intent whose attempt was lost stays unknown until
	// its charge shows up (Client.Settle) or someone reconciles it, and is
	// never resent blindly.
	SavedCards bool

	// ClockSkew widens the list window before the moment the intent's key
	// was reserved, for clock differences between the KeyStore, whose
	// clock stamps the reservation (Record.CreatedAt: PostgreSQL's now(),
	// Redis's TIME, the file store's host), and Omise (whose charges are
	// created after the reservation, in true time). The Client has already
	// moved CreatedAt back by the most any of its fleet saw the store's
	// clock read ahead of its own host's, so ClockSkew covers what no
	// Client saw: the hosts' own error against true time.
	// A charge missed because the skew was larger is not resent into a
	// second charge (its token was used), but it keeps the intent unknown
	// until found. Default DefaultClockSkew.
	ClockSkew time.Duration

	// MaxListPages bounds the oldest-first pass of a lookup by listing
	// (100 charges a page): proving that an intent has no charge reads
	// every charge the account made since the intent began, and a pass
	// cut short proves nothing (ErrScanIncomplete). Size it for the
	// charges the account makes between a reservation and its lookup.
	// Default DefaultMaxListPages.
	MaxListPages int

	// LegacyNamespace, if set, is the one namespace (Client.Namespace)
	// that may claim charges tagged with an intent ID alone, as idempay
	// tagged them before it tagged namespaces. Set it only if this secret
	// key never served another idempay namespace. Without it such a charge
	// is accepted only when the intent's record names it (a pending
	// charge's ID); found by listing, it leaves the intent unknown
	// (ErrLegacyTag), since it may be another account's.
	LegacyNamespace string

	// RefundRecheck is how long FindOp of a refund waits before reading a charge's
	// refunds a second time when the first pass found no refund of the
	// refund ID; only two passes without one are taken as proof that the
	// refund was never made (KindNotFound), which lets the Client resend
	// it. Unlike a charge, whose single-use token stops a second charge, a
	// refund can be made again: a first request Omise was still carrying
	// out when its answer was lost, and the list was read, would be made
	// twice by the resend. The wait gives such a request time to show up;
	// it is a margin, not a proof (Omise documents neither how long a
	// refund may take nor de-duplication by key). Default
	// DefaultRefundRecheck; negative reads once (for fakes that finish
	// every refund before they answer).
	RefundRecheck time.Duration
}

var (
	_ idempay.Provider             = Provider{}
	_ idempay.Finder               = Provider{}
	_ idempay.LookupBeforeResender = Provider{}
)

// Name is "omise": the provider part of every KeyStore namespace.
func (Provider) Name() string { return "omise" }

// LookupBeforeResend is true: Omise documents no de-duplication by key,
// so a key that may have reached it is never resent without a lookup.
func (Provider) LookupBeforeResend() bool { return true }

func (p Provider) version() string {
	if p.Version == "" {
		return DefaultVersion
	}
	return p.Version
}
