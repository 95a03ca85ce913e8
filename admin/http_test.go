package admin_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/admin"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newLocal(t *testing.T) *admin.Local {
	store := memstore.New()
	c, err := idempay.New(idempay.Config{BaseURL: "http://127.0.0.1:1", Store: store})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return &admin.Local{Client: c, Store: store}
}

// TestHandlerAuth: no token, a wrong one, or a handler built without one
// are all refused; the right one is let through.
func TestHandlerAuth(t *testing.T) {
	ops := newLocal(t)
	for _, c := range []struct {
		name, handlerToken, sent string
		want                     int
	}{
		{"no token sent", "s3cret", "", http.StatusUnauthorized},
		{"wrong token", "s3cret", "Bearer nope", http.StatusUnauthorized},
		{"handler without a token refuses all", "", "Bearer ", http.StatusUnauthorized},
		{"right token", "s3cret", "Bearer s3cret", http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			rr := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/open", nil)
			if c.sent != "" {
				req.Header.Set("Authorization", c.sent)
			}
			admin.Handler(ops, c.handlerToken).ServeHTTP(rr, req)
			assert.Equal(t, c.want, rr.Code)
		})
	}
}

// TestRemoteNotFound: a missing intent through the handler matches
// idempay.ErrNotFound, as it does locally.
func TestRemoteNotFound(t *testing.T) {
	srv := httptest.NewServer(admin.Handler(newLocal(t), "t"))
	defer srv.Close()
	r := &admin.Remote{BaseURL: srv.URL, Token: "t"}
	_, err := r.Show(context.Background(), "missing")
	assert.ErrorIs(t, err, idempay.ErrNotFound)
	_, err = (&admin.Remote{BaseURL: srv.URL, Token: "x"}).Open(context.Background())
	assert.ErrorIs(t, err, admin.ErrUnauthorized)
}
