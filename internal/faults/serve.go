package faults

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Serve serves h on a new loopback port, as the fakes' Start functions do.
// It returns the base URL ("http://127.0.0.1:port") and a function that
// stops the server: it lets handlers in progress finish, so that a ledger
// is final when it returns, cuts what is left after five seconds, and
// waits for the server to end; calling it again does nothing. Serve
// panics if it cannot listen, as httptest.NewServer does.
func Serve(h http.Handler) (url string, stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("faults: listen on loopback: " + err.Error())
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = hs.Serve(ln) // returns ErrServerClosed on shutdown
	}()
	var once sync.Once
	return "http://" + ln.Addr().String(), func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = hs.Shutdown(ctx)
			_ = hs.Close()
			<-served
		})
	}
}
