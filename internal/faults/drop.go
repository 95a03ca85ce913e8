package faults

import (
	"net"
	"net/http"
)

// Drop closes the client's connection without answering, as a crashed
// server or a cut network would; with reset the close is a TCP RST, so the
// client sees ECONNRESET instead of EOF. It must be called before anything
// is written to w.
func Drop(w http.ResponseWriter, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not HTTP/1: let net/http abort the response, which resets an
		// HTTP/2 stream or closes the connection.
		panic(http.ErrAbortHandler)
	}
	if reset {
		resetOnClose(conn)
	}
	_ = conn.Close()
}

// resetOnClose makes Close send a RST instead of a FIN.
func resetOnClose(conn net.Conn) {
	if tc, ok := conn.(interface{ NetConn() net.Conn }); ok { // TLS
		conn = tc.NetConn()
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
}
