package routers_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/go-chi/chi/v5"
	"github.com/labstack/echo/v4"

	"github.com/idempay/idempay/examples/routers"
	"github.com/idempay/idempay/guard"
	"github.com/idempay/idempay/keystore/memstore"
)

func newGuard() *guard.Guard {
	g, err := guard.New(memstore.New(), guard.WithIdentity(routers.Tenant))
	if err != nil {
		panic(err)
	}
	return g
}

// twice sends the same checkout twice to h and prints what came back.
func twice(h http.Handler) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/checkout", strings.NewReader(`{"amount_jpy":1500}`))
		req.Header.Set("Authorization", "Bearer acme")
		req.Header.Set("Idempotency-Key", `"8e03978e-40d5-43e8-bc93-6894a57f9324"`)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, "replayed:", resp.Header.Get(guard.HeaderReplayed) == "true")
	}
}

// net/http's mux: wrap the route's handler.
func Example_netHTTP() {
	g, checkout := newGuard(), &routers.Checkout{}
	mux := http.NewServeMux()
	mux.Handle("POST /checkout", g.Wrap(checkout))
	twice(mux)
	fmt.Println("runs:", checkout.Runs.Load())
	// Output:
	// 201 replayed: false
	// 201 replayed: true
	// runs: 1
}

// chi: Guard.Wrap is chi middleware as it is.
func Example_chi() {
	g, checkout := newGuard(), &routers.Checkout{}
	r := chi.NewRouter()
	r.With(g.Wrap).Post("/checkout", checkout.ServeHTTP)
	twice(r)
	fmt.Println("runs:", checkout.Runs.Load())
	// Output:
	// 201 replayed: false
	// 201 replayed: true
	// runs: 1
}

// echo: a net/http handler through echo.WrapHandler, or echo-native
// handlers under routers.EchoMiddleware, whose errors are recorded too.
func Example_echo() {
	g, checkout := newGuard(), &routers.Checkout{}
	e := echo.New()
	e.POST("/checkout", echo.WrapHandler(g.Wrap(checkout)))
	twice(e)
	fmt.Println("runs:", checkout.Runs.Load())

	native := echo.New()
	runs := 0
	native.POST("/checkout", func(c echo.Context) error {
		key, _ := guard.KeyFrom(c.Request().Context())
		if runs++; runs == 1 {
			return errors.New("provider unreachable") // echo answers 500: the key is released
		}
		return c.JSON(http.StatusCreated, map[string]string{"key": key})
	}, routers.EchoMiddleware(newGuard()))
	twice(native)
	fmt.Println("native runs:", runs)
	// Output:
	// 201 replayed: false
	// 201 replayed: true
	// runs: 1
	// 500 replayed: false
	// 201 replayed: false
	// native runs: 2
}

// gin: a net/http handler through gin.WrapH. The handler reads the key
// from its request's context, as under any router.
func Example_gin() {
	gin.SetMode(gin.ReleaseMode)
	g, checkout := newGuard(), &routers.Checkout{}
	r := gin.New()
	r.POST("/checkout", gin.WrapH(g.Wrap(checkout)))
	twice(r)
	fmt.Println("runs:", checkout.Runs.Load())
	// Output:
	// 201 replayed: false
	// 201 replayed: true
	// runs: 1
}
