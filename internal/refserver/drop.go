package refserver

import (
	"net"
	"net/http"
)

// drop closes the client's connection without answering, as a crashed
// server or a cut network would. It must be called before anything is
// written to w.
func (s *Server) drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not HTTP/1 (or already hijacked): let net/http abort the
		// response, which resets an HTTP/2 stream or closes the
		// connection.
		panic(http.ErrAbortHandler)
	}
	if s.cfg.DropWithReset {
		resetOnClose(conn)
	}
	_ = conn.Close()
}

// resetOnClose makes Close send a TCP RST instead of a FIN, so the client
// sees ECONNRESET rather than EOF.
func resetOnClose(conn net.Conn) {
	if tc, ok := conn.(interface{ NetConn() net.Conn }); ok { // TLS
		conn = tc.NetConn()
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
}
