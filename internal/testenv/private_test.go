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

// Without the binaries a private server is skipped locally and fails the
// test under CI, as a missing shared server is.
func TestPrivateServersWithoutBinaries(t *testing.T) {
	for _, tc := range []struct {
		env   string
		start func(tb testing.TB)
	}{
		{"IDEMPAY_PG_BIN", func(tb testing.TB) { PrivatePostgres(tb) }},
		{"IDEMPAY_REDIS_SERVER", func(tb testing.TB) { PrivateRedis(tb) }},
	} {
		t.Setenv(tc.env, "/nonexistent/idempay-testenv")
		t.Setenv("CI", "")
		r := &recorder{TB: t}
		tc.start(r)
		if r.skipped == "" || r.failed != "" {
			t.Errorf("%s missing, without CI: skipped %q failed %q; want a skip", tc.env, r.skipped, r.failed)
		}
		t.Setenv("CI", "true")
		r = &recorder{TB: t}
		tc.start(r)
		if r.failed == "" {
			t.Errorf("%s missing, with CI=true: failed %q; want a failure", tc.env, r.failed)
		}
	}
}
