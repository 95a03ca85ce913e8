package bench_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/memstore"
)

// BenchmarkCharge measures one charge against the loopback reference
// server, started once for the whole benchmark:
//
//   - client=raw-net-http: the POST a user would write without idempay: the
//     same body, a fresh key, one try, the answer read and checked;
//   - client=go-retryablehttp: the same POST through go-retryablehttp's
//     client with its defaults (retries on 5xx, nothing stored);
//   - client=idempay-STORE: idempay with its default retry policy, the key
//     reserved in the store before the first byte and the outcome recorded
//     after, on the memory, file, PostgreSQL and Redis stores.
//
// The fsync the file store pays is measured in the same run by
// BenchmarkFsync.
func BenchmarkCharge(b *testing.B) {
	_, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	clients := []struct {
		name string
		make func(b *testing.B, hc *http.Client) benchCharge
	}{
		{"raw-net-http", func(b *testing.B, hc *http.Client) benchCharge { return rawCharge(url, hc) }},
		{"go-retryablehttp", func(b *testing.B, hc *http.Client) benchCharge { return retryableCharge(url, hc) }},
		{"idempay-memstore", func(b *testing.B, hc *http.Client) benchCharge {
			return idempayOwnCharge(b, url, hc, memstore.New())
		}},
		{"idempay-filestore", func(b *testing.B, hc *http.Client) benchCharge {
			return idempayOwnCharge(b, url, hc, openFileStore(b))
		}},
		{"idempay-postgres", func(b *testing.B, hc *http.Client) benchCharge {
			return idempayOwnCharge(b, url, hc, openPostgresStore(b))
		}},
		{"idempay-redis", func(b *testing.B, hc *http.Client) benchCharge {
			return idempayOwnCharge(b, url, hc, openRedisStore(b))
		}},
	}
	for _, conc := range concurrency {
		for _, c := range clients {
			b.Run(fmt.Sprintf("client=%s/conc=%d", c.name, conc), func(b *testing.B) {
				hc := benchHTTPClient(b, conc)
				benchOps(b, c.make(b, hc), conc)
			})
		}
	}
}

// chargeBody is the own API's charge body, as idempay's default encoder
// writes it.
func chargeBody(id string) []byte {
	return fmt.Appendf(nil, `{"order_id":%q,"amount_jpy":1500,"omise_token":"tokn_bench"}`, id)
}

func rawCharge(url string, hc *http.Client) benchCharge {
	return func(ctx context.Context, id string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+refserver.DefaultPath, bytes.NewReader(chargeBody(id)))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", uuid.NewString())
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		return readCreated(resp)
	}
}

func retryableCharge(url string, hc *http.Client) benchCharge {
	rc := retryablehttp.NewClient()
	rc.HTTPClient = hc
	rc.Logger = nil
	return func(ctx context.Context, id string) error {
		req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, url+refserver.DefaultPath, chargeBody(id))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", uuid.NewString())
		resp, err := rc.Do(req)
		if err != nil {
			return err
		}
		return readCreated(resp)
	}
}

func readCreated(resp *http.Response) error {
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func idempayOwnCharge(b *testing.B, url string, hc *http.Client, store idempay.KeyStore) benchCharge {
	c, err := idempay.New(idempay.Config{BaseURL: url, Store: store, HTTPClient: hc})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close(context.Background()) })
	return func(ctx context.Context, id string) error {
		ch, err := c.Charge(ctx, idempay.ChargeRequest{IntentID: id, Amount: 1500, Currency: "JPY", Source: "tokn_bench"})
		if err != nil {
			return err
		}
		if ch.State != idempay.StateSucceeded || ch.Replayed {
			return fmt.Errorf("charge %s: state %v, replayed %v", ch.ID, ch.State, ch.Replayed)
		}
		return nil
	}
}

func openFileStore(b *testing.B) idempay.KeyStore {
	s, err := filestore.Open(filepath.Join(b.TempDir(), "keys.db"))
	if err != nil {
		b.Fatalf("filestore.Open: %v", err)
	}
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Errorf("filestore Close: %v", err)
		}
	})
	return s
}
