package filestore

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
)

// TestLoneChargeCostsOneCommit: a lone caller's charge must cost one
// synced commit, its reservation's, and no more: the ledger's charge facts
// and the record's close ride, unsynced, on the next charge's commit (the
// store keeps its writes in order, so they can only be lost together with
// the close, which reopens the record for a resume). The batch delay is
// set far beyond the test so that no timer commits behind its back.
func TestLoneChargeCostsOneCommit(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "keys.db"), WithSweepInterval(0), WithMaxBatchDelay(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	c, err := idempay.New(idempay.Config{BaseURL: url, Store: s, HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	const charges = 20
	before := s.w.commits.Load()
	for i := range charges {
		_, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: fmt.Sprintf("lone-%d", i),
			Amount: 1500, Currency: "JPY", Source: "tokn_lone"})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.w.commits.Load() - before; n > charges {
		t.Errorf("%d lone charges made %d synced commits; want at most one each", charges, n)
	}
	for i := range charges {
		led, err := c.Ledger(context.Background(), fmt.Sprintf("lone-%d", i))
		if err != nil || led.Amount != 1500 {
			t.Fatalf("ledger of lone-%d: %+v, %v; want the charge's facts", i, led, err)
		}
	}
}
