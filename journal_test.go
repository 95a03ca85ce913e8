package idempay_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/chaos"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJournalMatchesServerLog: after a chaos run (faults on, then off),
// the client's attempt journal and the server's request log agree attempt
// for attempt: the same requests under each key, in the same order, with
// the same status wherever an answer reached the client. No secret is in
// the journal.
func TestJournalMatchesServerLog(t *testing.T) {
	const n = 300
	store := memstore.New()
	view := &refView{srv: refserver.New(refserver.Config{Lease: chaos.FakeLease, Seed: 5}), last: map[string]bool{}}
	log := newWireLog(view)
	ts := httptest.NewServer(log)
	defer ts.Close()
	c := newClient(t, ts.URL, store, func(cfg *idempay.Config) {
		cfg.Journal = true
		cfg.Credentials = "sk_journal_secret"
		cfg.Retry = idempay.RetryPolicy{MaxAttempts: 6, InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond, MaxElapsed: 10 * time.Second}
	})
	intent := func(i int) string { return fmt.Sprintf("journal-%04d", i) }
	start := time.Now().Add(-time.Hour) // the store's clock is this process's
	rep := chaos.Run(t, chaos.Config{ServerLease: chaos.FakeLease, Intents: n, Workers: 8, Server: view, Intent: intent,
		Charge: func(ctx context.Context, i int) (*idempay.Charge, error) {
			return c.Charge(ctx, idempay.ChargeRequest{IntentID: intent(i), Amount: int64(100 + i), Currency: "JPY", Source: "tokn_journal_secret"})
		}})
	t.Logf("chaos: %s", rep)

	server := map[string][]int{}
	log.mu.Lock()
	for _, r := range log.reqs {
		server[r.Key] = append(server[r.Key], r.Status)
	}
	total := len(log.reqs)
	log.mu.Unlock()

	journal := map[string][]idempay.JournalEntry{}
	sent := 0
	for e, err := range c.Journal(context.Background(), start) {
		require.NoError(t, err)
		assert.Equal(t, "charge", e.Operation)
		if e.Sent {
			journal[e.Key] = append(journal[e.Key], e)
			sent++
		}
	}
	assert.Equal(t, total, sent, "the journal holds every request the server received")
	assert.EqualValues(t, rep.Requests, sent, "and every request the client counted")
	for key, statuses := range server {
		got := journal[key]
		if !assert.Len(t, got, len(statuses), "requests under key %s", key) {
			continue
		}
		for i, e := range got {
			if e.Status != 0 {
				assert.Equal(t, statuses[i], e.Status, "key %s request %d: status", key, i+1)
			}
			if e.Outcome == "succeeded" {
				assert.NotEmpty(t, e.ObjectID, "a success names the provider's charge")
			}
		}
	}

	var jl, cv bytes.Buffer
	nj, err := idempay.WriteJournalJSON(&jl, c.Journal(context.Background(), start))
	require.NoError(t, err)
	nc, err := idempay.WriteJournalCSV(&cv, c.Journal(context.Background(), start))
	require.NoError(t, err)
	assert.Equal(t, nj, nc)
	assert.Equal(t, nj, strings.Count(jl.String(), "\n"), "one JSON line per entry")
	rows, err := csv.NewReader(&cv).ReadAll()
	require.NoError(t, err)
	assert.Len(t, rows, nj+1, "a header and a row per entry")
	for _, secret := range []string{"tokn_journal_secret", "sk_journal_secret"} {
		assert.NotContains(t, jl.String(), secret)
	}
}

// TestJournalOffByDefault: without Config.Journal nothing is written.
func TestJournalOffByDefault(t *testing.T) {
	store := memstore.New()
	_, url := startRefServer(t, store, refserver.Config{})
	c := newClient(t, url, store)
	_, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: "off", Amount: 100, Currency: "JPY", Source: "tokn"})
	require.NoError(t, err)
	for e, err := range c.Journal(context.Background(), time.Time{}) {
		require.NoError(t, err)
		t.Errorf("journal entry without Config.Journal: %+v", e)
	}
}

// TestExpireJournal: records older than the retention are closed, so the
// store's Expire deletes them; newer ones stay.
func TestExpireJournal(t *testing.T) {
	store := memstore.New()
	_, url := startRefServer(t, store, refserver.Config{})
	c := newClient(t, url, store, func(cfg *idempay.Config) { cfg.Journal = true })
	for i := range 3 {
		_, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: fmt.Sprint("x", i), Amount: 100, Currency: "JPY", Source: "tokn"})
		require.NoError(t, err)
	}
	n, err := c.ExpireJournal(context.Background(), time.Hour, time.Now())
	require.NoError(t, err)
	assert.Zero(t, n, "nothing is an hour old")
	n, err = c.ExpireJournal(context.Background(), time.Hour, time.Now().Add(2*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	for e := range c.Journal(context.Background(), time.Time{}) {
		t.Errorf("expired entry still listed: %+v", e)
	}
}
