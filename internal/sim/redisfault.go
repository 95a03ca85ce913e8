package sim

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync/atomic"
)

// The Redis store's network (issue 8, item 11): a connection whose reply to
// one reservation script is lost after the server ran it. go-redis takes
// the EOF for a dead connection and sends the script again on a new one,
// where its second run finds the record its first run inserted.

// pRedisLostReply is the chance, per Reserve on the Redis store, that the
// script's reply is lost.
const pRedisLostReply = 0.05

// redisArm makes the next reservation script's reply go missing.
type redisArm struct{ armed atomic.Bool }

func (w *world) redisDial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &lossyConn{Conn: c, arm: &w.redis}, nil
}

// lossyConn drops the reply to the script it was armed for: the write goes
// out, the next read finds the connection gone.
type lossyConn struct {
	net.Conn
	arm  *redisArm
	drop bool
}

func (c *lossyConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err == nil && bytes.Contains(bytes.ToLower(b), []byte("evalsha")) && c.arm.armed.CompareAndSwap(true, false) {
		c.drop = true
	}
	return n, err
}

func (c *lossyConn) Read(b []byte) (int, error) {
	if c.drop {
		_ = c.Conn.Close()
		return 0, io.EOF
	}
	return c.Conn.Read(b)
}
