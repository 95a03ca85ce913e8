package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
)

// ConfigCase is one configuration of an adapter given to idempay.New: the
// server's URL with Path appended as BaseURL, Credentials as given, and
// Provider (the adapter's working one when nil). Field names the
// *idempay.ConfigError field New must refuse it with; empty, New must
// accept it.
type ConfigCase struct {
	Name        string
	Path        string
	Credentials idempay.Secret
	Provider    idempay.Provider
	Field       string
}

// ConfigChecks are the construction-time checks every adapter keeps, for
// working provider p and credentials: no credentials, a base URL with a
// query or a fragment are refused; the bare host, a trailing slash and a
// proxy path prefix are accepted.
func ConfigChecks(creds idempay.Secret) []ConfigCase {
	return []ConfigCase{
		{Name: "no credentials", Field: "Credentials"},
		{Name: "blank credentials", Credentials: "  ", Field: "Credentials"},
		{Name: "base URL with a query", Path: "?x=1", Credentials: creds, Field: "BaseURL"},
		{Name: "base URL with a fragment", Path: "#x", Credentials: creds, Field: "BaseURL"},
		{Name: "the bare host", Credentials: creds},
		{Name: "a trailing slash", Path: "/", Credentials: creds},
		{Name: "a proxy's path prefix", Path: "/payments-proxy", Credentials: creds},
	}
}

// TestConfig runs CheckConfig and reports its failures on t.
func TestConfig(t *testing.T, p idempay.Provider, cases []ConfigCase) {
	t.Helper()
	if err := CheckConfig(p, cases); err != nil {
		t.Error(err)
	}
}

// CheckConfig gives idempay.New each case, p standing for a nil Provider,
// against a server that counts what reaches it: a refused case must fail
// with idempay.ErrConfig and a *idempay.ConfigError naming its
// field, with no credential in the message, and nothing may be sent. It
// returns every failure, joined.
func CheckConfig(p idempay.Provider, cases []ConfigCase) error {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	var errs []error
	for _, tc := range cases {
		if err := checkConfigCase(srv.URL, p, tc); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", tc.Name, err))
		}
	}
	if n := hits.Load(); n != 0 {
		errs = append(errs, fmt.Errorf("New sent %d requests: a configuration is checked before anything is sent", n))
	}
	return errors.Join(errs...)
}

func checkConfigCase(base string, p idempay.Provider, tc ConfigCase) error {
	if tc.Provider != nil {
		p = tc.Provider
	}
	c, err := idempay.New(idempay.Config{BaseURL: base + tc.Path, Credentials: tc.Credentials, Provider: p, Store: memstore.New()})
	var ce *idempay.ConfigError
	switch {
	case tc.Field == "" && err != nil:
		return fmt.Errorf("refused a working configuration: %w", err)
	case tc.Field == "":
		return c.Close(context.Background())
	case err == nil:
		_ = c.Close(context.Background())
		return fmt.Errorf("accepted; must be refused naming %s", tc.Field)
	case !errors.Is(err, idempay.ErrConfig) || !errors.As(err, &ce):
		return fmt.Errorf("refused with %T %v; want a *idempay.ConfigError matching ErrConfig", err, err)
	case ce.Field != tc.Field:
		return fmt.Errorf("refused naming %q; want %q (%v)", ce.Field, tc.Field, err)
	case strings.TrimSpace(tc.Credentials.Reveal()) != "" && strings.Contains(err.Error(), tc.Credentials.Reveal()):
		return errors.New("the error quotes the credentials")
	}
	return nil
}
