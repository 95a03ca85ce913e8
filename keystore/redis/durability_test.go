package redis

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
)

// syncBuffer is a bytes.Buffer for a logger written from several
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestDurabilityFallback runs on the project's Redis 7.0 without
// persistence: no WAITAOF, appendonly no. Under WithLossyServer the Store
// must say so (once, in the log, and in Durability) and still serve
// durable writes without an error: the caller accepted the server.
func TestDurabilityFallback(t *testing.T) {
	c := newClient(t, 0)
	var log syncBuffer
	s := openStoreOn(t, c, WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	ctx := t.Context()
	d, err := s.Durability(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.AppendOnly != "yes" && (d.WaitAOF || d.Err() == nil || !errors.Is(d.Err(), ErrNotDurable)) {
		t.Errorf("Durability on a server with appendonly %q = %+v; want no WAITAOF and problems", d.AppendOnly, d)
	}
	var de *DurabilityError
	if d.Err() != nil && (!errors.As(d.Err(), &de) || !slices.Equal(de.Problems, d.Problems)) {
		t.Errorf("Durability.Err() = %v; want a *DurabilityError listing the problems", d.Err())
	}
	r := mustReserve(t, s, request("ns", "order-1", "owner"))
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "order-1", Key: r.Record.Key,
		State: idempay.StateSucceeded, Durable: true}); err != nil {
		t.Errorf("durable Resolve on a server without WAITAOF = %v; want the fallback: no error", err)
	}
	settle(t, s, "ns", "order-2", idempay.StateFailed)
	if n := strings.Count(log.String(), "writes may be lost"); len(d.Problems) > 0 && n != 1 {
		t.Errorf("the problems were logged %d times; want once:\n%s", n, log.String())
	}
}

// TestRequireDurabilityRefusesBeforeWriting checks WithRequireDurability
// on a server that cannot be durable: the write fails with a
// *DurabilityError and nothing is written.
func TestRequireDurabilityRefusesBeforeWriting(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c, WithRequireDurability())
	if d, err := s.Durability(t.Context()); err != nil || len(d.Problems) == 0 {
		t.Skipf("the server at hand is durable (%+v, %v); nothing to refuse", d, err)
	}
	_, err := s.Reserve(t.Context(), request("ns", "order-1", "owner"))
	var de *DurabilityError
	if !errors.Is(err, ErrNotDurable) || !errors.As(err, &de) {
		t.Errorf("Reserve under WithRequireDurability = %v; want a *DurabilityError", err)
	}
	if _, err := s.Load(t.Context(), "ns", "order-1"); !errors.Is(err, idempay.ErrNotFound) {
		t.Errorf("Load after the refused Reserve = %v; want ErrNotFound", err)
	}
}

// TestJudge checks how the settings of the masters are read.
func TestJudge(t *testing.T) {
	good := nodeSettings{waitAOF: true, appendOnly: "yes", fsync: "everysec", maxmemory: "noeviction"}
	old := nodeSettings{appendOnly: "yes", fsync: "always", maxmemory: "noeviction"}
	cases := []struct {
		name     string
		nodes    []nodeSettings
		canWait  bool
		waitAOF  bool
		problems []string // substrings, one per problem
	}{
		{"7.2, AOF everysec", []nodeSettings{good}, true, true, nil},
		{"7.0, AOF always", []nodeSettings{old}, true, false, nil},
		{"7.0, AOF everysec", []nodeSettings{{appendOnly: "yes", fsync: "everysec", maxmemory: "noeviction"}}, true, false, []string{"appendfsync is everysec"}},
		{"7.2 on a Ring", []nodeSettings{good}, false, false, []string{"appendfsync is everysec"}},
		{"no AOF, evicting", []nodeSettings{{waitAOF: true, appendOnly: "no", fsync: "everysec", maxmemory: "allkeys-lru"}}, true, false,
			[]string{"appendonly is no", "maxmemory-policy is allkeys-lru"}},
		{"CONFIG refused", []nodeSettings{{waitAOF: true}}, true, false, []string{"appendonly yes) is unknown", "noeviction is unknown"}},
		{"one weak master", []nodeSettings{good, {waitAOF: true, appendOnly: "no", fsync: "everysec", maxmemory: "noeviction"}}, true, false,
			[]string{"appendonly is no"}},
	}
	for _, tc := range cases {
		d := judge(tc.nodes, tc.canWait)
		ok := d.WaitAOF == tc.waitAOF && len(d.Problems) == len(tc.problems)
		for i := 0; ok && i < len(tc.problems); i++ {
			ok = strings.Contains(d.Problems[i], tc.problems[i])
		}
		if !ok {
			t.Errorf("%s: judge = %+v; want WaitAOF %v and problems %q", tc.name, d, tc.waitAOF, tc.problems)
		}
	}
}

// fakeWaitAOF is a go-redis hook that plays a Redis 7.2 with its AOF on:
// it answers each pipelined WAITAOF with reply (or err) instead of sending
// it, and records the commands of each pipeline.
type fakeWaitAOF struct {
	mu    sync.Mutex
	reply []any
	err   error
	pipes [][]string
}

func (h *fakeWaitAOF) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (h *fakeWaitAOF) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }

func (h *fakeWaitAOF) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		// Not locked around next: a new connection's handshake is a
		// pipeline through this hook too.
		h.mu.Lock()
		var names []string
		rest := cmds[:0:0]
		for _, c := range cmds {
			names = append(names, strings.ToUpper(c.Name()))
			if strings.EqualFold(c.Name(), "waitaof") {
				if h.err != nil {
					c.SetErr(h.err)
				} else {
					c.(*goredis.Cmd).SetVal(h.reply)
				}
				continue
			}
			rest = append(rest, c)
		}
		if slices.Contains(names, "EVALSHA") || slices.Contains(names, "EVAL") { // not a handshake
			h.pipes = append(h.pipes, names)
		}
		h.mu.Unlock()
		return next(ctx, rest)
	}
}

// storeWithWaitAOF returns a Store that believes its server has WAITAOF
// and an AOF, with the hook answering for the server.
func storeWithWaitAOF(t *testing.T, h *fakeWaitAOF, opts ...Option) *Store {
	t.Helper()
	c := newClient(t, 0)
	s := openStoreOn(t, c, opts...)
	s.dur.done, s.dur.d = true, Durability{WaitAOF: true, AppendOnly: "yes", AppendFsync: "everysec", MaxmemoryPolicy: "noeviction"}
	c.AddHook(h)
	return s
}

// TestDurableWritesWaitForTheAOF checks, on a server played as Redis 7.2,
// that every Reserve and each durable Resolve carry WAITAOF 1 0 in their
// own round trip, and that a Resolve not asked to be durable does not.
func TestDurableWritesWaitForTheAOF(t *testing.T) {
	h := &fakeWaitAOF{reply: []any{int64(1), int64(0)}}
	s := storeWithWaitAOF(t, h)
	ctx := t.Context()
	r := mustReserve(t, s, request("ns", "order-1", "owner"))
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "order-1", Key: r.Record.Key,
		State: idempay.StateOpen, LeaseOwner: "owner"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "order-1", Key: r.Record.Key,
		State: idempay.StateSucceeded, Durable: true}); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"EVALSHA", "WAITAOF"}, {"SADD", "EVALSHA", "WAITAOF"}}
	if !slices.EqualFunc(h.pipes, want, slices.Equal[[]string]) {
		t.Errorf("pipelines = %v; want %v (the release is one EVALSHA, not pipelined)", h.pipes, want)
	}
}

// TestWaitAOFTimeoutFails checks that a write the AOF did not take within
// the wait fails with ErrNotDurable (a Reserve whose key may be lost in a
// crash must not be sent), and that a WAITAOF refused because the AOF was
// turned off since makes the Store read the settings again.
func TestWaitAOFTimeoutFails(t *testing.T) {
	h := &fakeWaitAOF{reply: []any{int64(0), int64(0)}}
	s := storeWithWaitAOF(t, h)
	if _, err := s.Reserve(t.Context(), request("ns", "order-1", "owner")); !errors.Is(err, ErrNotDurable) {
		t.Errorf("Reserve whose WAITAOF timed out = %v; want ErrNotDurable", err)
	}
	h.err = serverErr("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.")
	if _, err := s.Reserve(t.Context(), request("ns", "order-2", "owner")); err != nil {
		t.Errorf("Reserve whose WAITAOF was refused = %v; want the fallback, no error", err)
	}
	if d, err := s.Durability(t.Context()); err != nil || d.WaitAOF {
		t.Errorf("Durability after WAITAOF was refused = %+v, %v; want read again from the server (no WAITAOF here)", d, err)
	}
}
