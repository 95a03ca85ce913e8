package redis

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
)

// commandCounter is a go-redis hook that counts the commands sent, by name.
type commandCounter struct {
	mu    sync.Mutex
	names []string
	n     atomic.Int64 // round trips: one per command, one per pipeline
}

func (h *commandCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *commandCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.n.Add(1)
		h.mu.Lock()
		h.names = append(h.names, strings.ToUpper(cmd.Name()))
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (h *commandCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		h.n.Add(1)
		h.mu.Lock()
		h.names = append(h.names, fmt.Sprintf("PIPELINE(%d)", len(cmds)))
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (h *commandCounter) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.names = nil
	h.n.Store(0)
}

func (h *commandCounter) commands() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.names...)
}

// TestExpireDeletesInBatches settles 2,500 old records in three namespaces
// beside some open and pending ones, and checks that Expire deletes exactly
// the settled ones with script calls of at most the batch size.
func TestExpireDeletesInBatches(t *testing.T) {
	const (
		closed = 2500
		open   = 7
		batch  = 1000
	)
	c := newClient(t, 16)
	s := openStoreOn(t, c, WithExpireBatch(batch))
	ctx := t.Context()

	// Settle the records from 16 goroutines: 5,000 sequential round trips
	// would dominate the test's time.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < closed; i += 16 {
				r := record(fmt.Sprintf("ns%d", i%3), fmt.Sprintf("closed-%04d", i))
				r.CreatedAt = at.Add(-time.Duration(i) * time.Second)
				if _, err := s.Reserve(ctx, r); err != nil {
					errs <- err
					return
				}
				state := idempay.StateSucceeded
				if i%2 == 1 {
					state = idempay.StateFailed
				}
				if err := s.Resolve(ctx, idempay.Resolution{Namespace: r.Namespace, IntentID: r.IntentID,
					Key: r.Key, State: state, At: at.Add(time.Hour)}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range open {
		r := record("ns0", fmt.Sprintf("open-%d", i))
		r.CreatedAt = at.AddDate(-1, 0, 0)
		if _, err := s.Reserve(ctx, r); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if err := s.Resolve(ctx, idempay.Resolution{Namespace: r.Namespace, IntentID: r.IntentID,
				Key: r.Key, State: idempay.StatePending, At: at}); err != nil {
				t.Fatal(err)
			}
		}
	}

	h := new(commandCounter)
	c.AddHook(h)
	n, err := s.Expire(ctx, at.Add(time.Nanosecond))
	if err != nil || n != closed {
		t.Fatalf("Expire = %d, %v; want %d and no error", n, err, closed)
	}
	var scripts int
	for _, name := range h.commands() {
		if name == "EVALSHA" || name == "EVAL" {
			scripts++
		}
	}
	// Namespaces ns0, ns1 and ns2 hold 834, 833 and 833 settled records,
	// each fewer than the batch, so one script call per namespace. The
	// batch bound itself is checked by TestExpireBatchBound.
	if scripts != 3 {
		t.Errorf("Expire ran %d scripts (%v); want 3, one per namespace", scripts, h.commands())
	}

	for ns := range 3 {
		name := fmt.Sprintf("ns%d", ns)
		if left := c.ZCard(ctx, s.keysOf(name, "").closed).Val(); left != 0 {
			t.Errorf("closed index of %s after Expire holds %d entries; want 0", name, left)
		}
	}
	got, err := s.ListOpen(ctx, "ns0", 0)
	if err != nil || len(got) != open {
		t.Errorf("ListOpen after Expire = %d records, %v; want the %d open and pending ones", len(got), err, open)
	}
	keys := c.Keys(ctx, s.cfg.prefix+"*:r:*").Val()
	if len(keys) != open {
		t.Errorf("%d record keys left after Expire; want %d", len(keys), open)
	}
}

// TestExpireBatchBound checks that one script call handles at most the
// batch size, and that entries kept at the cutoff's microsecond do not stop
// the walk.
func TestExpireBatchBound(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c, WithExpireBatch(10))
	ctx := t.Context()
	cutoff := at.Add(500 * time.Nanosecond) // same microsecond as `at`
	// 25 records created in the cutoff's microsecond: 15 before it (at),
	// 10 at or after it; all in one score, so they interleave by ID.
	for i := range 25 {
		r := record("ns", fmt.Sprintf("r%02d", i))
		if i%5 >= 3 {
			r.CreatedAt = cutoff
		}
		if _, err := s.Reserve(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", IntentID: r.IntentID, Key: r.Key,
			State: idempay.StateSucceeded, At: at.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	h := new(commandCounter)
	c.AddHook(h)
	n, err := s.Expire(ctx, cutoff)
	if err != nil || n != 15 {
		t.Fatalf("Expire = %d, %v; want 15 (created strictly before the cutoff)", n, err)
	}
	var scripts int
	for _, name := range h.commands() {
		if name == "EVALSHA" || name == "EVAL" {
			scripts++
		}
	}
	if scripts != 3 {
		t.Errorf("Expire of 25 index entries with batch 10 ran %d scripts; want 3", scripts)
	}
	if left := c.ZCard(ctx, s.keysOf("ns", "").closed).Val(); left != 10 {
		t.Errorf("closed index holds %d entries after Expire; want the 10 created at the cutoff", left)
	}
}

// TestExpireSkipsVanishedAndReopened covers index entries that no longer
// describe a settled record: the record expired by TTL (simulated by
// deleting its key) or its intent started afresh and is open again. Expire
// must drop those entries, count nothing for them and never delete the
// open record.
func TestExpireSkipsVanishedAndReopened(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	ctx := t.Context()
	for _, id := range []string{"vanished", "reopened", "plain"} {
		r := record("ns", id)
		if _, err := s.Reserve(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", IntentID: id, Key: r.Key,
			State: idempay.StateFailed, At: at}); err != nil {
			t.Fatal(err)
		}
		if id != "plain" {
			c.Del(ctx, s.keysOf("ns", id).record) // as Redis does when the TTL ends
		}
	}
	again := record("ns", "reopened")
	again.Key = "key-new"
	if got, err := s.Reserve(ctx, again); err != nil || !got.Created {
		t.Fatalf("Reserve after the record vanished = %+v, %v; want Created", got, err)
	}

	n, err := s.Expire(ctx, at.Add(time.Hour))
	if err != nil || n != 1 {
		t.Errorf("Expire = %d, %v; want 1 (only the record that was there and settled)", n, err)
	}
	if r, err := s.Load(ctx, "ns", "reopened"); err != nil || r.Key != "key-new" || r.State != idempay.StateOpen {
		t.Errorf("reopened intent after Expire = %+v, %v; want its new open record kept", r, err)
	}
	if left := c.ZCard(ctx, s.keysOf("ns", "").closed).Val(); left != 0 {
		t.Errorf("closed index holds %d entries; want 0", left)
	}
}

// TestHappyPathRoundTrips checks that a charge on the happy path costs one
// command for Reserve and one for Resolve, once the Store knows the
// namespace.
func TestHappyPathRoundTrips(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	ctx := t.Context()
	h := new(commandCounter)
	c.AddHook(h)
	charge := func(id string) {
		t.Helper()
		r := record("ns", id)
		if got, err := s.Reserve(ctx, r); err != nil || !got.Created {
			t.Fatalf("Reserve(%q) = %+v, %v", id, got, err)
		}
		if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", IntentID: id, Key: r.Key,
			State: idempay.StateSucceeded, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	charge("first") // registers the namespace and loads the scripts
	h.reset()
	charge("second")
	if got := h.commands(); len(got) != 2 || got[0] != "EVALSHA" || got[1] != "EVALSHA" {
		t.Errorf("commands for one charge = %v; want [EVALSHA EVALSHA]", got)
	}
}
