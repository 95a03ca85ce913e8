package redis

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/testenv"
)

// newClient connects to IDEMPAY_REDIS_ADDR (or the local default), or
// skips (fails under CI) when the server does not answer.
func newClient(tb testing.TB, poolSize int) *goredis.Client {
	tb.Helper()
	return newClientAt(tb, testenv.RedisAddr(), poolSize)
}

func newClientAt(tb testing.TB, addr string, poolSize int) *goredis.Client {
	tb.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: poolSize})
	tb.Cleanup(func() { _ = c.Close() })
	testenv.Require(tb, "Redis at "+addr, func(ctx context.Context) error {
		return c.Ping(ctx).Err()
	})
	return c
}

// freshPrefix returns a key prefix no other test uses and deletes every key
// under it when the test ends. A prefix rather than a database number,
// because a Redis Cluster has only database 0 and the tests should run
// against one too.
func freshPrefix(tb testing.TB, c *goredis.Client) string {
	tb.Helper()
	prefix := testenv.UniqueName("idempaytest:") + ":"
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var batch []string
		for iter.Next(ctx) {
			batch = append(batch, iter.Val())
			if len(batch) == 1000 {
				c.Del(ctx, batch...)
				batch = batch[:0]
			}
		}
		if len(batch) > 0 {
			c.Del(ctx, batch...)
		}
		if err := iter.Err(); err != nil {
			tb.Errorf("clean up keys %s*: %v", prefix, err)
		}
	})
	return prefix
}

// openStoreOn returns a Store on c under a fresh prefix. It accepts a
// server that may lose acknowledged writes (WithLossyServer): the shared
// test server keeps nothing on disk; the tests that need durability start
// a private server (private_test.go).
func openStoreOn(tb testing.TB, c *goredis.Client, opts ...Option) *Store {
	tb.Helper()
	s, err := New(c, append([]Option{WithPrefix(freshPrefix(tb, c)), WithLogger(nil), WithLossyServer()}, opts...)...)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return s
}

// request is the first attempt of (ns, id) by owner, leased for a minute.
func request(ns, id, owner string) idempay.ReserveRequest {
	return idempay.ReserveRequest{Namespace: ns, ID: id, Attempt: 1, Key: "key-" + id + "-" + owner,
		Fingerprint: "fp-" + id, Owner: owner, Lease: time.Minute}
}

// mustReserve reserves r and stops the test on error.
func mustReserve(tb testing.TB, s *Store, r idempay.ReserveRequest) idempay.Reservation {
	tb.Helper()
	got, err := s.Reserve(tb.Context(), r)
	if err != nil {
		tb.Fatalf("Reserve(%q, %q) = %v", r.Namespace, r.ID, err)
	}
	return got
}

// settle reserves (ns, id) and resolves it to st.
func settle(tb testing.TB, s *Store, ns, id string, st idempay.State) idempay.Record {
	tb.Helper()
	got := mustReserve(tb, s, request(ns, id, "owner"))
	if err := s.Resolve(tb.Context(), idempay.Resolution{Namespace: ns, ID: id,
		Key: got.Record.Key, State: st}); err != nil {
		tb.Fatalf("Resolve(%q, %q, %s) = %v", ns, id, st, err)
	}
	rec, err := s.Load(tb.Context(), ns, id)
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

// serverNow reads the Redis server's clock.
func serverNow(tb testing.TB, c *goredis.Client) time.Time {
	tb.Helper()
	now, err := c.Time(tb.Context()).Result()
	if err != nil {
		tb.Fatal(err)
	}
	return now.UTC().Truncate(time.Microsecond)
}

var maxTime = time.Unix(0, math.MaxInt64)

// encodeTime returns t as a stored instant, as the old layout wrote them
// (from the clients' clocks, to the nanosecond), or "" for the zero time.
func encodeTime(t time.Time) (string, error) {
	if t.IsZero() {
		return "", nil
	}
	if t.Before(time.Unix(0, 0)) || t.After(maxTime) {
		return "", fmt.Errorf("time %v outside the storable range 1970 to 2262", t)
	}
	return fmt.Sprintf("%019d", t.UnixNano()), nil
}

// scriptCounter is a go-redis hook that counts logical script runs, by
// script: an EVALSHA the server answered NOSCRIPT did not run, and the EVAL
// that go-redis sends in its place is the same run. It also counts round
// trips: one per command, one per pipeline.
type scriptCounter struct {
	mu    sync.Mutex
	runs  map[string]int // by SHA1 of the script
	trips atomic.Int64
	names []string
}

func newScriptCounter() *scriptCounter { return &scriptCounter{runs: map[string]int{}} }

func (h *scriptCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *scriptCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.trips.Add(1)
		err := next(ctx, cmd)
		h.count(cmd, err)
		return err
	}
}

func (h *scriptCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		h.trips.Add(1)
		err := next(ctx, cmds)
		for _, c := range cmds {
			h.count(c, c.Err())
		}
		return err
	}
}

// count records cmd, which ended with err. (A single command's error is
// the one its hook returns: go-redis sets it on the command only later.)
func (h *scriptCounter) count(cmd goredis.Cmder, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	name := strings.ToUpper(cmd.Name())
	h.names = append(h.names, name)
	args := cmd.Args()
	switch {
	case name == "EVALSHA" && !isNoScript(err):
		h.runs[fmt.Sprint(args[1])]++
	case name == "EVAL":
		h.runs[goredis.NewScript(fmt.Sprint(args[1])).Hash()]++
	}
}

// runsOf is how many times sc ran.
func (h *scriptCounter) runsOf(sc *goredis.Script) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.runs[sc.Hash()]
}

func (h *scriptCounter) commands() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.names)
}

func (h *scriptCounter) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs, h.names = map[string]int{}, nil
	h.trips.Store(0)
}

// noScriptOnce is a go-redis hook that answers the first EVALSHA NOSCRIPT
// without sending it, as a server with an empty script cache (a fresh or
// restarted one) does. Hooks added after it see the refusal.
type noScriptOnce struct{ done atomic.Bool }

// serverErr is an error as the server would send it.
type serverErr string

func (e serverErr) Error() string { return string(e) }

// RedisError marks serverErr as the server's answer for go-redis.
func (serverErr) RedisError() {}

func (h *noScriptOnce) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *noScriptOnce) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmd.Name() == "evalsha" && h.done.CompareAndSwap(false, true) {
			cmd.SetErr(serverErr("NOSCRIPT No matching script. Please use EVAL."))
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}

func (h *noScriptOnce) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}
