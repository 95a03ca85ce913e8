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
// it with Client.Settle. A charge tagged for another namespace than t's is
// refused (ErrForeignCharge). hc nil means http.DefaultClient.
func (p Provider) IntentOfCharge(ctx context.Context, hc *http.Client, t idempay.Target, chargeID string) (string, error) {
	c, err := p.retrieve(ctx, hc, t, chargeID)
	if err != nil {
		return "", err
	}
	tags := c.tags()
	switch {
	case tags.Intent == "":
		return "", fmt.Errorf("%w: %s", ErrNotIdempay, chargeID)
	case tags.HasNamespace && t.Namespace != "" && tags.Namespace != t.Namespace:
		return "", fmt.Errorf("%w: %s is tagged for namespace %q, not %q", ErrForeignCharge, chargeID, tags.Namespace, t.Namespace)
	}
	return tags.Intent, nil
}
