package idempaytest_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sentinels is every exported error value of package idempay.
var sentinels = map[string]error{
	"ErrOutcomeUnknown": idempay.ErrOutcomeUnknown, "ErrDeclined": idempay.ErrDeclined,
	"ErrInvalidRequest": idempay.ErrInvalidRequest, "ErrIntentMismatch": idempay.ErrIntentMismatch,
	"ErrKeyConflict": idempay.ErrKeyConflict, "ErrInProgress": idempay.ErrInProgress,
	"ErrKeyExpired": idempay.ErrKeyExpired, "ErrStoredFailure": idempay.ErrStoredFailure,
	"ErrUnreachable": idempay.ErrUnreachable, "ErrConfig": idempay.ErrConfig, "ErrStore": idempay.ErrStore,
	"ErrNoLookup":      idempay.ErrNoLookup,
	"ErrInvalidConfig": idempay.ErrInvalidConfig, "ErrNotFound": idempay.ErrNotFound,
	"ErrKeyMismatch": idempay.ErrKeyMismatch, "ErrAlreadyResolved": idempay.ErrAlreadyResolved,
	"ErrLeaseLost": idempay.ErrLeaseLost, "ErrTwoC2PNoSecret": idempay.ErrTwoC2PNoSecret,
	"ErrTwoC2PSignature": idempay.ErrTwoC2PSignature,
}

// Each FakeCharger answer must look, to a caller's error handling, exactly
// like the error a real Client gives in the same situation: the same
// errors.Is answer for every sentinel, the same OutcomeOf, the same types
// for errors.As, and the same refusal details. The real errors come from a
// Client charging the Server.
func TestFakeErrorsMatchRealErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		real func(t *testing.T) error
		fake func(f *idempaytest.FakeCharger) error
	}{
		{
			name: "success",
			real: func(t *testing.T) error { return realCharge(t, nil, idempaytest.Request("o", 100)) },
			fake: func(f *idempaytest.FakeCharger) error { return fakeCharge(f, idempaytest.Request("o", 100)) },
		},
		{
			name: "decline",
			real: func(t *testing.T) error { return realCharge(t, nil, declined("o")) },
			fake: func(f *idempaytest.FakeCharger) error {
				f.OnIntent("o").Decline("generic_decline")
				return fakeCharge(f, declined("o"))
			},
		},
		{
			name: "decline replayed from the store",
			real: func(t *testing.T) error {
				srv, c := realClient(t)
				_, _ = c.Charge(ctx, declined("o"))
				_, err := c.Charge(ctx, declined("o"))
				assert.Equal(t, 1, srv.Requests("o"))
				return err
			},
			fake: func(f *idempaytest.FakeCharger) error {
				f.OnIntent("o").Decline("generic_decline")
				_ = fakeCharge(f, declined("o"))
				return fakeCharge(f, declined("o"))
			},
		},
		{
			name: "every answer lost",
			real: func(t *testing.T) error {
				return realCharge(t, func(s *idempaytest.Server) { s.Fail("o", idempaytest.Post, idempaytest.Post) },
					idempaytest.Request("o", 100))
			},
			fake: func(f *idempaytest.FakeCharger) error {
				f.OnIntent("o").Unknown()
				return fakeCharge(f, idempaytest.Request("o", 100))
			},
		},
		{
			name: "in progress in another instance",
			real: func(t *testing.T) error {
				// Instance A holds the intent's lease while its request
				// is stuck on the wire; instance B shares A's store.
				srv := idempaytest.NewServer()
				t.Cleanup(srv.Close)
				store := memstore.New()
				stuck := &stuckTransport{base: srv.Client().Transport, entered: make(chan struct{}), release: make(chan struct{})}
				a := idempaytest.NewClient(t, srv, func(c *idempay.Config) {
					c.Store = store
					c.HTTPClient = &http.Client{Transport: stuck}
				})
				b := idempaytest.NewClient(t, srv, func(c *idempay.Config) { c.Store = store })
				done := make(chan error)
				go func() {
					_, err := a.Charge(ctx, idempaytest.Request("o", 100))
					done <- err
				}()
				<-stuck.entered
				_, err := b.Charge(ctx, idempaytest.Request("o", 100))
				close(stuck.release)
				assert.NoError(t, <-done)
				return err
			},
			fake: func(f *idempaytest.FakeCharger) error {
				f.OnIntent("o").InProgress()
				return fakeCharge(f, idempaytest.Request("o", 100))
			},
		},
		{
			name: "provider unreachable",
			real: func(t *testing.T) error {
				srv := idempaytest.NewServer()
				srv.Close()
				_, err := idempaytest.NewClient(t, srv, twoAttempts).Charge(ctx, idempaytest.Request("o", 100))
				return err
			},
			fake: func(f *idempaytest.FakeCharger) error {
				f.OnIntent("o").Unreachable()
				return fakeCharge(f, idempaytest.Request("o", 100))
			},
		},
		{
			name: "invalid, scripted",
			real: func(t *testing.T) error { return realCharge(t, nil, idempaytest.Request("o", -1)) },
			fake: func(f *idempaytest.FakeCharger) error {
				f.OnIntent("o").Invalid("Amount")
				return fakeCharge(f, idempaytest.Request("o", 100))
			},
		},
		{
			name: "invalid, checked by the fake",
			real: func(t *testing.T) error { return realCharge(t, nil, idempaytest.Request("o", -1)) },
			fake: func(f *idempaytest.FakeCharger) error { return fakeCharge(f, idempaytest.Request("o", -1)) },
		},
		{
			name: "intent reused with other parameters",
			real: func(t *testing.T) error {
				_, c := realClient(t)
				_, _ = c.Charge(ctx, idempaytest.Request("o", 100))
				_, err := c.Charge(ctx, idempaytest.Request("o", 200))
				return err
			},
			fake: func(f *idempaytest.FakeCharger) error {
				_ = fakeCharge(f, idempaytest.Request("o", 100))
				return fakeCharge(f, idempaytest.Request("o", 200))
			},
		},
		{
			name: "context canceled before the store",
			real: func(t *testing.T) error {
				_, c := realClient(t)
				canceled, cancel := context.WithCancel(ctx)
				cancel()
				_, err := c.Charge(canceled, idempaytest.Request("o", 100))
				return err
			},
			fake: func(f *idempaytest.FakeCharger) error {
				canceled, cancel := context.WithCancel(ctx)
				cancel()
				_, err := f.Charge(canceled, idempaytest.Request("o", 100))
				return err
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			realErr := tc.real(t)
			fakeErr := tc.fake(&idempaytest.FakeCharger{})
			t.Logf("real: %v\nfake: %v", realErr, fakeErr)
			for name, sentinel := range sentinels {
				assert.Equal(t, errors.Is(realErr, sentinel), errors.Is(fakeErr, sentinel), "errors.Is %s", name)
			}
			assert.Equal(t, idempay.OutcomeOf(realErr), idempay.OutcomeOf(fakeErr), "OutcomeOf")
			assert.Equal(t, refusalOf(realErr), refusalOf(fakeErr), "errors.As targets")
		})
	}
}

// refusal is what errors.As finds in an error, minus what differs by
// nature between a server and a script (messages, request IDs, the
// provider's name).
type refusal struct {
	ChargeError, APIError, ValidationError, ConfigError bool
	Outcome                                             idempay.Outcome
	Status                                              int
	Type, Code, DeclineCode, Field                      string
}

func refusalOf(err error) refusal {
	var r refusal
	var ce *idempay.ChargeError
	if r.ChargeError = errors.As(err, &ce); r.ChargeError {
		r.Outcome = ce.Outcome
	}
	var ae *idempay.APIError
	if r.APIError = errors.As(err, &ae); r.APIError {
		r.Status, r.Type, r.Code, r.DeclineCode = ae.Status, ae.Type, ae.Code, ae.DeclineCode
	}
	var ve *idempay.ValidationError
	if r.ValidationError = errors.As(err, &ve); r.ValidationError {
		r.Field = ve.Field
	}
	var cfg *idempay.ConfigError
	r.ConfigError = errors.As(err, &cfg)
	return r
}

// stuckTransport holds every request until release is closed, after
// saying that one has entered.
type stuckTransport struct {
	base    http.RoundTripper
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *stuckTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return s.base.RoundTrip(r)
}

func twoAttempts(c *idempay.Config) { c.Retry.MaxAttempts = 2 }

func realClient(t *testing.T) (*idempaytest.Server, *idempay.Client) {
	srv := idempaytest.NewServer()
	t.Cleanup(srv.Close)
	return srv, idempaytest.NewClient(t, srv, twoAttempts)
}

func realCharge(t *testing.T, script func(*idempaytest.Server), req idempay.ChargeRequest) error {
	srv, c := realClient(t)
	if script != nil {
		script(srv)
	}
	_, err := c.Charge(ctx, req)
	return err
}

func fakeCharge(f *idempaytest.FakeCharger, req idempay.ChargeRequest) error {
	_, err := f.Charge(ctx, req)
	return err
}

func declined(intentID string) idempay.ChargeRequest {
	req := idempaytest.Request(intentID, 100)
	req.Source = idempaytest.DeclineToken
	return req
}

// The parity test must compare every sentinel idempay has, including
// ones added later: read the package's source for its exported Err
// variables.
func TestSentinelListIsComplete(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files, err := filepath.Glob("../*.go")
	require.NoError(t, err)
	var found []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if id.IsExported() && strings.HasPrefix(id.Name, "Err") {
						found = append(found, id.Name)
					}
				}
			}
		}
	}
	require.NotEmpty(t, found)
	for _, name := range found {
		assert.Contains(t, sentinels, name, "add idempay.%s to the sentinels table", name)
	}
}
