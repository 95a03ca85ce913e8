package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/admin"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/internal/testenv"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/postgres"
	"github.com/idempay/idempay/keystore/redis"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loseAnswers forwards every request and loses its answer: the server
// charges, the client never hears of it, and the intent stays open, as
// after a crash with requests on the wire.
type loseAnswers struct{ base http.RoundTripper }

func (l loseAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost {
		resp.Body.Close()
		return nil, errors.New("answer lost")
	}
	return resp, err
}

// seedOpen charges n intents whose answers are lost, so each is charged
// at the server and open in the store; it returns the server's URL.
func seedOpen(t *testing.T, store idempay.KeyStore, n int) (*refserver.Server, string) {
	t.Helper()
	srv := refserver.New(refserver.Config{})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c, err := idempay.New(idempay.Config{BaseURL: ts.URL, Store: store, Journal: true,
		HTTPClient: &http.Client{Transport: loseAnswers{http.DefaultTransport}},
		Retry:      idempay.RetryPolicy{MaxAttempts: 1}})
	require.NoError(t, err)
	defer c.Close(context.Background())
	for i := range n {
		_, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: fmt.Sprintf("cli-%d", i), Amount: 500, Currency: "JPY", Source: "tokn_cli"})
		require.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	}
	return srv, ts.URL
}

// cli runs the command in-process.
func cli(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, func(k string) string { return env[k] }, &o, &e)
	return code, o.String(), e.String()
}

// checkLifecycle runs the operator's story against a store with n open
// intents charged at the server: open lists them (exit 3), show shows
// one, settle settles it (exit 0), reconcile settles the rest (exit 0),
// open is empty (exit 0), the journal lists what was sent.
func checkLifecycle(t *testing.T, env map[string]string, n int) {
	code, out, errOut := cli(t, env, "-json", "open")
	require.Equal(t, exitUnsettled, code, "open with records open: %s", errOut)
	var items []admin.Item
	require.NoError(t, json.Unmarshal([]byte(out), &items))
	assert.Len(t, items, n)

	code, out, _ = cli(t, env, "open")
	assert.Equal(t, exitUnsettled, code)
	assert.Contains(t, out, "KIND", "a table by default")
	assert.Contains(t, out, "cli-0")

	code, out, _ = cli(t, env, "show", "cli-0")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "open")

	code, _, _ = cli(t, env, "show", "no-such-intent")
	assert.Equal(t, exitNotFound, code)

	code, out, errOut = cli(t, env, "-json", "settle", "cli-0")
	require.Equal(t, exitOK, code, "settle: %s %s", out, errOut)
	var s admin.Settled
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	assert.Equal(t, idempay.OutcomeSucceeded, s.Outcome)
	assert.Equal(t, idempay.StateSucceeded, s.State)

	code, out, errOut = cli(t, env, "reconcile")
	require.Equal(t, exitOK, code, "reconcile: %s %s", out, errOut)
	assert.Contains(t, errOut, fmt.Sprintf("reconcile: %d settled, 0 left open", n-1), "the summary line")

	code, _, _ = cli(t, env, "open")
	assert.Equal(t, exitOK, code, "nothing open after reconciling")

	code, out, _ = cli(t, env, "journal", "-since", "1h")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, n, strings.Count(out, "\n"), "a JSON line per request sent")
	assert.NotContains(t, out, "tokn_cli")
	code, out, _ = cli(t, env, "journal", "-since", "1h", "-csv")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, n+1, strings.Count(out, "\n"), "a header and a row per request")

	code, out, _ = cli(t, env, "expire", "-dry-run")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "true")
}

// TestCLIAgainstAdminHandler: a service with a file store, which only it
// may open, mounts admin.Handler; the CLI talks to it while it runs.
func TestCLIAgainstAdminHandler(t *testing.T) {
	store, err := filestore.Open(filepath.Join(t.TempDir(), "idempay.db"))
	require.NoError(t, err)
	defer store.Close()
	_, url := seedOpen(t, store, 5)
	c, err := idempay.New(idempay.Config{BaseURL: url, Store: store, Journal: true,
		Provider: idempay.OwnAPI{LookupPath: refserver.DefaultPath}})
	require.NoError(t, err)
	defer c.Close(context.Background())
	srv := httptest.NewServer(http.StripPrefix("/admin", admin.Handler(&admin.Local{Client: c, Store: store}, "s3cret")))
	defer srv.Close()
	env := map[string]string{"IDEMPAY_STORE": srv.URL + "/admin", "IDEMPAY_ADMIN_TOKEN": "s3cret"}
	checkLifecycle(t, env, 5)

	code, _, errOut := cli(t, map[string]string{"IDEMPAY_STORE": srv.URL + "/admin", "IDEMPAY_ADMIN_TOKEN": "wrong"}, "open")
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, "token refused")
}

func TestCLIUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"frobnicate"}, {"show"}, {"-store", "file:///var/lib/x.db", "open"}, {"-store", "ftp://x", "open"}} {
		code, _, _ := cli(t, map[string]string{}, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
	}
}

func providerEnv(store, base string) map[string]string {
	return map[string]string{"IDEMPAY_STORE": store, "IDEMPAY_BASE_URL": base, "IDEMPAY_LOOKUP_PATH": refserver.DefaultPath}
}

// TestCLIPostgres runs the story against the shared PostgreSQL, in a
// schema of its own.
func TestCLIPostgres(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testenv.PostgresDSN())
	if err != nil {
		testenv.Unavailable(t, "PostgreSQL at %s: %v", testenv.PostgresDSN(), err)
	}
	defer pool.Close()
	testenv.Require(t, "PostgreSQL at "+testenv.PostgresDSN(), pool.Ping)
	schema := testenv.UniqueName("idempay_cli_")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`)
	})
	store, err := postgres.New(ctx, pool, postgres.WithSchema(schema))
	require.NoError(t, err)
	_, base := seedOpen(t, store, 4)
	u, err := url.Parse(testenv.PostgresDSN())
	require.NoError(t, err)
	q := u.Query()
	q.Set("idempay_schema", schema)
	u.RawQuery = q.Encode()
	checkLifecycle(t, providerEnv(u.String(), base), 4)
}

// TestCLIRedis runs the story against the shared Redis, under a key
// prefix of its own.
func TestCLIRedis(t *testing.T) {
	rc := goredis.NewClient(&goredis.Options{Addr: testenv.RedisAddr()})
	defer rc.Close()
	testenv.Require(t, "Redis at "+testenv.RedisAddr(), func(ctx context.Context) error { return rc.Ping(ctx).Err() })
	prefix := testenv.UniqueName("idempaycli:") + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		keys, _ := rc.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			rc.Del(ctx, keys...)
		}
	})
	store, err := redis.New(rc, redis.WithPrefix(prefix), redis.WithLossyServer())
	require.NoError(t, err)
	_, base := seedOpen(t, store, 4)
	storeURL := "redis://" + testenv.RedisAddr() + "/0?idempay_lossy=true&idempay_prefix=" + url.QueryEscape(prefix)
	checkLifecycle(t, providerEnv(storeURL, base), 4)
}
