package guard_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
	"github.com/idempay/idempay/keystore/memstore"
)

// Rule: every refused option is a *ConfigError matching ErrInvalidConfig,
// and a guard without WithIdentity is refused: keys are scoped per caller
// by construction.
func TestNewRefusesBadOptions(t *testing.T) {
	id := guard.WithIdentity(guard.SingleTenant)
	cases := map[string][]guard.Option{
		"no identity":            nil,
		"nil identity":           {guard.WithIdentity(nil)},
		"nil option":             {id, nil},
		"scope":                  {id, guard.WithScope("Has Spaces")},
		"empty scope":            {id, guard.WithScope("")},
		"no methods":             {id, guard.WithMethods()},
		"safe method":            {id, guard.WithMethods(http.MethodGet)},
		"lower-case method":      {id, guard.WithMethods("post")},
		"short lease":            {id, guard.WithLease(time.Millisecond)},
		"body limit":             {id, guard.WithMaxBody(0)},
		"response limit":         {id, guard.WithMaxResponse(0)},
		"key length":             {id, guard.WithKeyLength(10, 5)},
		"key too long":           {id, guard.WithKeyLength(1, 256)},
		"replay a secret header": {id, guard.WithReplayHeaders("set-cookie")},
		"replay then secret":     {id, guard.WithReplayHeaders("X-Token"), guard.WithSecretHeaders("x-token")},
		"bad header name":        {id, guard.WithReplayHeaders("Bad Name")},
		"nil clock":              {id, guard.WithClock(nil)},
		"instance":               {id, guard.WithInstance("has space")},
		"nil logger":             {id, guard.WithLogger(nil)},
		"nil observer":           {id, guard.WithObserver(nil)},
	}
	for name, opts := range cases {
		_, err := guard.New(newMem(), opts...)
		var ce *guard.ConfigError
		if !errors.Is(err, guard.ErrInvalidConfig) || !errors.As(err, &ce) || ce.Option == "" {
			t.Errorf("%s: %v, want a *ConfigError", name, err)
		}
	}
	if _, err := guard.New(nil, id); !errors.Is(err, guard.ErrInvalidConfig) {
		t.Errorf("nil store: %v", err)
	}
	g, err := guard.New(newMem(), id, guard.WithScope("checkout"))
	if err != nil || g.Namespace() != "guard:checkout" {
		t.Fatalf("valid options: %v, namespace %q", err, g.Namespace())
	}
}

// Rule: New refuses a store that is nil inside its interface (a typed
// nil, such as a *memstore.Store never assigned), as idempay.New does,
// with a *ConfigError naming the store: otherwise every request would be
// answered 503 "retry with the same key" for ever.
func TestNewRefusesATypedNilStore(t *testing.T) {
	var store *memstore.Store
	var ks idempay.KeyStore = store
	_, err := guard.New(ks, guard.WithIdentity(guard.SingleTenant))
	var ce *guard.ConfigError
	if !errors.As(err, &ce) || !errors.Is(err, guard.ErrInvalidConfig) || ce.Option != "store" {
		t.Fatalf("typed-nil store: %v, want a *ConfigError on store", err)
	}
}
