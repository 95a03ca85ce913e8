// Package testenv tells tests where the shared services (PostgreSQL, Redis)
// are and decides what a test does when one does not answer: skip on a
// developer's machine, where a missing server is a fact of that machine, but
// fail under CI (CI=true), where a missing server means the run proves
// nothing and must not pass quietly.
//
// It imports no driver, so any package's tests can use it; the caller
// supplies the probe that talks to the service.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"
)

// Defaults used when the environment names no service address.
const (
	DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	DefaultRedisAddr   = "127.0.0.1:6379"
)

// ProbeTimeout bounds how long Require waits for a service to answer, so a
// firewalled port fails the test in seconds instead of hanging the package.
const ProbeTimeout = 5 * time.Second

// PostgresDSN returns IDEMPAY_POSTGRES_DSN, or DefaultPostgresDSN.
func PostgresDSN() string { return getenv("IDEMPAY_POSTGRES_DSN", DefaultPostgresDSN) }

// RedisAddr returns IDEMPAY_REDIS_ADDR, or DefaultRedisAddr.
func RedisAddr() string { return getenv("IDEMPAY_REDIS_ADDR", DefaultRedisAddr) }

// InCI reports whether the tests run under CI (CI=true), where every
// service is expected to be up.
func InCI() bool { return os.Getenv("CI") == "true" }

// Require calls probe with a context bounded by ProbeTimeout. If the probe
// fails, the test is skipped with a message naming the service and the
// error, or, under CI, fails with that message.
func Require(tb testing.TB, service string, probe func(ctx context.Context) error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ProbeTimeout)
	defer cancel()
	if err := probe(ctx); err != nil {
		Unavailable(tb, "%s does not answer: %v", service, err)
	}
}

// Unavailable stops the test because a service it needs is missing: Skipf
// locally, Fatalf under CI.
func Unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if InCI() {
		tb.Fatalf("CI=true and "+format, args...)
	}
	tb.Skipf(format+" (skipped; start the service or set its address, see .ci/run)", args...)
}

// UniqueName returns prefix followed by 12 random hex digits: a name for a
// schema, table or key prefix that no other test, package or concurrent run
// against the same server will pick.
func UniqueName(prefix string) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; a panic here is
		// a broken machine, not a test result.
		panic(err)
	}
	return prefix + hex.EncodeToString(b[:])
}

func getenv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
