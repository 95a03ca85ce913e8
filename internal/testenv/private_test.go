package testenv

import (
	"context"
	"net"
	"testing"
	"time"
)

// The private servers start, answer, and start again after a crash; they
// are the ground the crash tests of the stores stand on.
func TestPrivatePostgresRestarts(t *testing.T) {
	p := PrivatePostgres(t, LossySettings...)
	dial(t, p.Addr())
	p.Crash()
	p.Start()
	p.Stop()
}

func TestPrivateRedisRestarts(t *testing.T) {
	r := PrivateRedis(t, AOFEverySec...)
	if err := r.ping(); err != nil {
		t.Fatal(err)
	}
	r.Restart(NoPersistence...)
	if err := r.ping(); err != nil {
		t.Fatal(err)
	}
}

func dial(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}
