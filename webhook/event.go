package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
)

// MaxEventIDLength is the longest event ID the Deduper accepts. Provider
// IDs are far shorter; the bound keeps a hostile or broken ID function from
// writing arbitrary data into store keys and logs.
const MaxEventIDLength = 255

// Event is one verified delivery, as the Handler passes it to a
// HandlerFunc.
type Event struct {
	// ID is the provider's event ID ("evt_..." for Stripe, "evnt_..." for
	// Omise): the same on every delivery of the event.
	ID string
	// Body is the raw body, exactly as received and verified. Decode it
	// with the provider's types; treat what it says about a charge as a
	// hint and re-fetch the charge before acting on it.
	Body []byte
	// Header is the request's header.
	Header http.Header
}

// HandlerFunc does the work for one event. It runs at most once per event
// at a time across every instance sharing the KeyStore, and, once it has
// returned nil, never again for that event. Returning an error makes the
// Handler answer 500 so the provider delivers again, and that delivery
// runs it again: make partial work safe to repeat. Its context ends when
// the request's does or when the Deduper's lease runs out, whichever is
// first; return when it ends, because after the lease another delivery
// may start the same event.
type HandlerFunc func(ctx context.Context, ev Event) error

// EventID reads the event ID of a Stripe or Omise webhook: the top-level
// "id" string of the JSON object ({"id": "evt_..."} for Stripe,
// {"object": "event", "id": "evnt_..."} for Omise). It returns an error
// matching ErrNoEventID if body is not a JSON object, has no "id", or its
// "id" is not a string of 1 to MaxEventIDLength printable ASCII
// characters without spaces. It is the Handler's default; WithEventID
// replaces it.
func EventID(body []byte) (string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return "", fmt.Errorf("%w: body is not a JSON object", ErrNoEventID)
	}
	raw, ok := top["id"]
	if !ok {
		return "", fmt.Errorf("%w: no \"id\" field", ErrNoEventID)
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil {
		return "", fmt.Errorf("%w: \"id\" is not a string", ErrNoEventID)
	}
	if err := checkEventID(id); err != nil {
		return "", err
	}
	return id, nil
}

// checkEventID accepts 1 to MaxEventIDLength bytes of printable ASCII
// without spaces, which every provider ID is. The ID becomes a store key
// and appears in logs and errors, so nothing else gets that far.
func checkEventID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty", ErrNoEventID)
	}
	if len(id) > MaxEventIDLength {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrNoEventID, len(id), MaxEventIDLength)
	}
	if !printable(id) {
		return fmt.Errorf("%w: not printable ASCII", ErrNoEventID)
	}
	return nil
}

// EventFingerprint is the Deduper's default fingerprint: the hex SHA-256
// of the raw bytes of the event's "data" member, as received, or of the
// whole body when it has none. Providers re-render delivery bookkeeping
// outside "data" on every delivery of one event (Stripe's
// pending_webhooks, Omise's webhook_deliveries): hashing the whole body
// would refuse a genuine redelivery of an event whose handler failed, and
// it would never be handled.
func EventFingerprint(body []byte) string {
	var ev struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &ev) == nil && len(ev.Data) > 0 {
		return BodyFingerprint(ev.Data)
	}
	return BodyFingerprint(body)
}

// BodyFingerprint is the hex SHA-256 of raw bytes, exactly as received. The raw bytes are the one canonical
// form of a webhook: they are what the provider signed, whereas a hash of
// decoded and re-encoded JSON depends on the encoder (key order, spacing,
// escapes) and can differ for the same event, or agree for two.
func BodyFingerprint(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}
