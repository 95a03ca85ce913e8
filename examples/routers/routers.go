// Package routers shows package guard under net/http's mux, chi, echo and
// gin, through each router's net/http bridge. It is a module of its own,
// so that idempay's users never get these routers in their module graph:
// run its examples with
//
//	cd examples/routers && go test ./...
//
// The guard is a func(http.Handler) http.Handler (Guard.Wrap), the
// middleware type of net/http. chi takes it as it is. gin and echo wrap
// net/http handlers (gin.WrapH, echo.WrapHandler); for echo-native
// handlers use EchoMiddleware, not echo.WrapMiddleware: see there why.
package routers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/idempay/idempay/guard"
)

// Tenant is the examples' identity function: the merchant named by the
// bearer token. A real service reads what its authentication established.
func Tenant(r *http.Request) (string, error) {
	if tok := r.Header.Get("Authorization"); len(tok) > len("Bearer ") {
		return tok[len("Bearer "):], nil
	}
	return "", fmt.Errorf("not authenticated")
}

// Checkout is a net/http handler that counts its runs and answers 201.
type Checkout struct{ Runs atomic.Int32 }

// ServeHTTP answers the charge, naming the key it would charge under.
func (c *Checkout) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := c.Runs.Add(1)
	key, _ := guard.KeyFrom(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"charge_id": fmt.Sprintf("ch_%d", n), "key": key})
}

// EchoMiddleware puts the guard in front of echo-native handlers. Unlike
// echo.WrapMiddleware, it hands a handler's error to echo's error handler
// inside the guard: echo writes error answers after the middleware chain
// has returned, where the guard would not see them and would record the
// empty answer written so far (an implicit 200) for replay. Here the 5xx
// is seen, and the key is released for a retry.
func EchoMiddleware(g *guard.Guard) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c.SetRequest(r)
				c.SetResponse(echo.NewResponse(w, c.Echo()))
				if err := next(c); err != nil {
					c.Error(err)
				}
			})).ServeHTTP(c.Response(), c.Request())
			return nil
		}
	}
}
