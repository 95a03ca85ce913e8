package redis

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// lossyProxy is a loopback TCP proxy in front of the Redis server that,
// once armed, loses one reply: it forwards the first command containing
// the marker to the server, reads the server's reply and, instead of
// passing it on, closes the client's connection. The command has run; the
// client saw EOF, which go-redis takes as a reason to send it again on a
// new connection. That is a reply lost on the network, for real.
type lossyProxy struct {
	ln      net.Listener
	target  string
	marker  atomic.Pointer[[]byte]
	dropped atomic.Int32
	wg      sync.WaitGroup
}

// newLossyProxy listens on a loopback port and forwards to target until
// the test ends.
func newLossyProxy(tb testing.TB, target string) *lossyProxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("proxy: %v", err)
	}
	p := &lossyProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(func() {
		_ = ln.Close()
		p.wg.Wait()
	})
	return p
}

// Addr is the address clients dial instead of the server's.
func (p *lossyProxy) Addr() string { return p.ln.Addr().String() }

// loseReplyTo arms the proxy: the reply to the next command whose bytes
// contain marker is lost.
func (p *lossyProxy) loseReplyTo(marker string) {
	m := []byte(marker)
	p.marker.Store(&m)
}

func (p *lossyProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		var drop atomic.Bool // set when this connection's next reply is to be lost
		p.wg.Add(2)
		go p.upstream(c, s, &drop)
		go p.downstream(c, s, &drop)
	}
}

// upstream copies the client's commands to the server, watching for the
// marker. A command's bytes may arrive in several reads, so the tail of the
// previous read is searched with the next.
func (p *lossyProxy) upstream(c, s net.Conn, drop *atomic.Bool) {
	defer p.wg.Done()
	defer s.Close()
	buf := make([]byte, 64<<10)
	var tail []byte
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if m := p.marker.Load(); m != nil && bytes.Contains(append(tail, buf[:n]...), *m) &&
				p.marker.CompareAndSwap(m, nil) {
				drop.Store(true)
			}
			tail = lastBytes(append(tail, buf[:n]...), 256)
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// downstream copies the server's replies to the client, except the one
// after the marked command: then it closes both connections.
func (p *lossyProxy) downstream(c, s net.Conn, drop *atomic.Bool) {
	defer p.wg.Done()
	defer c.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 && drop.Load() {
			p.dropped.Add(1)
			_ = s.Close()
			return
		}
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				_ = s.Close()
			}
			return
		}
	}
}

func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return append([]byte(nil), b...)
}
