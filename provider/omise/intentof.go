package omise

import (
	"context"
	"fmt"
	"net/http"

	"github.com/idempay/idempay"
)

// IntentOfCharge returns the idempay intent ID a charge was made for, read
// from its metadata with GET /charges/{id}: what ties a 3-D Secure return
// callback, or a webhook naming the charge, back to its intent, to settle
// it with Client.Settle. hc nil means http.DefaultClient.
func (p Provider) IntentOfCharge(ctx context.Context, hc *http.Client, t idempay.Target, chargeID string) (string, error) {
	c, err := p.retrieve(ctx, hc, t, chargeID)
	if err != nil {
		return "", err
	}
	intent := c.Metadata[IntentMetadataKey]
	if intent == "" {
		return "", fmt.Errorf("%w: %s", ErrNotIdempay, chargeID)
	}
	return intent, nil
}
