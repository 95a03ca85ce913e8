package omise_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/provider/omise"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule (issue 9 item 7): Charge.Raw, kept in the store, never holds a
// secret. Omise's charge carries what was charged: a source charge its
// source object, whose ID is the request's Source; a saved card's charge
// that card, whose ID is the Source too; a token's charge a new card,
// never the token. It returns no client secret. So the Source and the
// secret key are all there is to take out, and the Client takes them out
// of every answer it keeps; the adapter needs no SecretFielder. Checked
// here on the record, the caller's charge and the store's replay, and on
// a charge settled by lookup.
func TestStoredChargeHoldsNoSource(t *testing.T) {
	for _, tc := range []struct {
		name, source, customer string
		provider               omise.Provider
		member                 string // the member of Raw that names what was charged
		pending                bool
	}{
		{"token", "tokn_test_visa", "", omise.Provider{}, "card", false},
		{"offsite source", "src_test_promptpay", "", omise.Provider{}, "source", true},
		{"saved card", "card_test_saved", "cust_test_1", omise.Provider{SavedCards: true}, "card", false},
		{"3-D Secure", "tokn_test_3ds", "", omise.Provider{}, "card", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t, nil, func(cfg *idempay.Config) { cfg.Provider = tc.provider })
			req := thb("o", tc.source)
			req.Customer = tc.customer
			req.ReturnURL = "https://shop.example/back"
			ch, err := f.client.Charge(context.Background(), req)
			if tc.pending {
				requirePending(t, ch, err)
			} else {
				require.NoError(t, err)
			}
			c, ok := f.srv.Charge(ch.ID)
			require.True(t, ok)
			switch tc.member {
			case "source":
				require.NotNil(t, c.Source)
				require.Equal(t, tc.source, c.Source.ID, "Omise echoes the source it charged")
			case "card":
				require.NotNil(t, c.Card)
			}

			rec, err := f.store.Load(context.Background(), ns, "o")
			require.NoError(t, err)
			var kept struct {
				Charge *idempay.Charge `json:"charge"`
			}
			require.NoError(t, json.Unmarshal(rec.Result, &kept))
			require.NotNil(t, kept.Charge)
			for _, raw := range [][]byte{rec.Result, ch.Raw} {
				assert.NotContains(t, string(raw), tc.source, "the Source")
				assert.NotContains(t, string(raw), secret, "the secret key")
			}
			var answer map[string]any
			require.NoError(t, json.Unmarshal(kept.Charge.Raw, &answer), "Raw keeps the answer")
			assert.Equal(t, ch.ID, answer["id"])
			charged, ok := answer[tc.member].(map[string]any)
			require.True(t, ok, "the %s object is kept, minus the Source", tc.member)
			if tc.member == "source" || tc.customer != "" {
				assert.Equal(t, "[redacted]", charged["id"])
			}

			// Answered from the store, the charge is as clean.
			again, err := f.client.Charge(context.Background(), req)
			if tc.pending {
				if tc.source == "tokn_test_3ds" {
					// The customer passes 3-D Secure: the charge is settled
					// by a lookup, and what the lookup keeps is as clean.
					require.True(t, f.srv.Complete(ch.ID, true))
					again, err = f.client.Settle(context.Background(), "o")
					require.NoError(t, err)
				} else {
					again = requirePending(t, again, err)
				}
			} else {
				require.NoError(t, err)
			}
			rec, err = f.store.Load(context.Background(), ns, "o")
			require.NoError(t, err)
			for _, raw := range [][]byte{rec.Result, again.Raw} {
				assert.NotContains(t, string(raw), tc.source, "the Source")
				assert.NotContains(t, string(raw), secret, "the secret key")
			}
		})
	}
}
