package idempay_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/memstore"
)

// BenchmarkCharge measures one charge against a loopback reference server:
// a raw net/http POST of the same body (what a user would write without
// idempay: no stored key, no retries), then idempay with the memory store
// and with the durable file store, in one run so benchstat can set them
// side by side.
//
//	go test -run '^$' -bench BenchmarkCharge -count 10 . | tee bench.txt
//	benchstat -col /client bench.txt
func BenchmarkCharge(b *testing.B) {
	_, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	var seq atomic.Int64
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprintf("client=raw-net-http/conc=%d", conc), func(b *testing.B) {
			hc := &http.Client{}
			runParallel(b, conc, func() error { return rawPost(hc, url, seq.Add(1)) })
		})
		b.Run(fmt.Sprintf("client=idempay-memstore/conc=%d", conc), func(b *testing.B) {
			c := benchClient(b, url, memstore.New())
			runParallel(b, conc, func() error { return benchCharge(c, seq.Add(1)) })
		})
		b.Run(fmt.Sprintf("client=idempay-filestore/conc=%d", conc), func(b *testing.B) {
			store, err := filestore.Open(filepath.Join(b.TempDir(), "keys.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			c := benchClient(b, url, store)
			runParallel(b, conc, func() error { return benchCharge(c, seq.Add(1)) })
		})
	}
}

// BenchmarkFsync is the floor of a durable write on this disk (a small
// write and fsync of a file), to read the file store's figures against in
// the same run:
//
//	go test -run '^$' -bench 'BenchmarkCharge$|BenchmarkFsync' -benchmem -count 6 .
func BenchmarkFsync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "sync"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 256)
	for b.Loop() {
		if _, err := f.WriteAt(buf, 0); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// runParallel runs op b.N times over conc goroutines.
func runParallel(b *testing.B, conc int, op func() error) {
	b.SetParallelism(max(1, conc/max(1, runtime.GOMAXPROCS(0))))
	b.ResetTimer()
	if conc == 1 {
		for range b.N {
			if err := op(); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchClient(b *testing.B, url string, store idempay.KeyStore) *idempay.Client {
	c, err := idempay.New(idempay.Config{BaseURL: url, Store: store, HTTPClient: &http.Client{}})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func benchCharge(c *idempay.Client, n int64) error {
	_, err := c.Charge(context.Background(), idempay.ChargeRequest{
		IntentID: fmt.Sprintf("bench-%d", n), Amount: 1500, Currency: "JPY", Source: "tokn_bench"})
	return err
}

// rawPost is the charge without idempay: the same body, a fresh key, one
// try, the answer read and checked.
func rawPost(hc *http.Client, url string, n int64) error {
	body := fmt.Sprintf(`{"order_id":"bench-%d","amount_jpy":1500,"omise_token":"tokn_bench"}`, n)
	req, err := http.NewRequest(http.MethodPost, url+refserver.DefaultPath, bytes.NewBufferString(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", uuid.NewString())
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}
