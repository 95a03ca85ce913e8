package wire

import (
	"errors"
	"net/url"

	"github.com/idempay/idempay"
)

// The metadata keys under which the form-encoded adapters tag what they
// create. Together they name the KeyStore record the charge belongs to.
const (
	// IntentKey holds the intent ID.
	IntentKey = "idempay_intent"
	// NamespaceKey holds the Client's namespace (idempay.Target.Namespace):
	// provider and account. Tags written before it existed carry the
	// intent alone.
	NamespaceKey = "idempay_namespace"
	// KeyKey holds the idempotency key of the attempt that made the
	// charge. An intent may take several attempts (a declined card, then
	// another), each with its own key, and every charge of them carries
	// the intent's tags: only the key tells a lookup for the current
	// attempt which one is its. Tags written before attempts existed carry
	// no key; such a charge can only be an intent's first attempt's.
	KeyKey = "idempay_key"
)

// ErrLegacyTag is wrapped by the adapters' lookups when the only charge
// found for an intent carries the intent tag without a namespace, and
// nothing shows whose account it is: it settles nothing and proves
// nothing, so the intent stays unknown.
var ErrLegacyTag = errors.New("charge tagged with the intent alone (no namespace): it may be another account's")

// SetTags tags the form with the intent, the attempt's idempotency key
// and, if it is set, the namespace of t, and adds the caller's metadata.
func SetTags(f url.Values, t idempay.Target, intentID, key string, metadata map[string]string) {
	f.Set("metadata["+IntentKey+"]", intentID)
	SetIf(f, "metadata["+KeyKey+"]", key)
	SetIf(f, "metadata["+NamespaceKey+"]", t.Namespace)
	for k, v := range metadata {
		f.Set("metadata["+k+"]", v)
	}
}

// Tags are the idempay tags read from a charge's metadata. A value that is
// not a string in the provider's JSON is not a tag: the adapters read it
// as absent.
type Tags struct {
	Intent       string
	Namespace    string
	HasNamespace bool
	Key          string // the idempotency key of the attempt that made the charge
	HasKey       bool
}

// Owner says whose a charge is, by its tags.
type Owner int

const (
	// Foreign: tagged for another intent, namespace or attempt, or not
	// tagged.
	Foreign Owner = iota
	// Own: tagged with the record's namespace and intent.
	Own
	// Legacy: tagged with the record's intent alone, as idempay tagged
	// charges before it tagged namespaces. It may be this namespace's
	// charge or another's that uses the same provider key and intent ID.
	Legacy
)

// OwnerOf classifies tags against the record a lookup is for: its
// current attempt. A charge of another attempt of the intent (tagged with
// another key, or with none while the record is past its first attempt)
// is Foreign: it says nothing of the current attempt, and a decline of an
// earlier card taken for the current one would call failed a charge that
// may have moved money. A record without a namespace (an adapter called
// with a hand-made Target) has nothing to compare, so an intent tag alone
// is its own; one without a key (a hand-made record) cannot tell its
// attempts apart, so any key is.
func OwnerOf(tags Tags, rec idempay.Record) Owner {
	switch {
	case tags.Intent != rec.ID:
		return Foreign
	case tags.HasKey && rec.Key != "" && tags.Key != rec.Key:
		return Foreign
	case !tags.HasKey && rec.Attempt > 1:
		return Foreign
	case tags.HasNamespace && tags.Namespace == rec.Namespace:
		return Own
	case tags.HasNamespace:
		return Foreign
	case rec.Namespace == "":
		return Own
	}
	return Legacy
}

// LegacyIsOwn states the one rule by which an adapter accepts a Legacy
// charge as the record's: byReference is true when the charge is the one
// the record itself names (Record.ProviderRef, which only an answer to this
// namespace's own request can have put there), and claimant is the
// namespace the operator declared the only one to have used the provider
// key before namespaces were tagged (the adapters' LegacyNamespace). A
// Legacy charge found any other way (a search, a list) could be another
// account's: it is not accepted.
func LegacyIsOwn(rec idempay.Record, byReference bool, claimant string) bool {
	return byReference || (claimant != "" && claimant == rec.Namespace)
}
