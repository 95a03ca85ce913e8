package redis

import (
	"strconv"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/testenv"
)

// Rule: a closing Resolve writes the record's changed fields with one
// HSET. Every command a script runs is a command of its own in the AOF,
// which a server with appendfsync always writes before it answers: four
// HSETs where one does made the store's close slower than the same close
// issued directly (bench: BenchmarkStoreDirect).
func TestClosingResolveIsOneHSET(t *testing.T) {
	srv := testenv.PrivateRedis(t, "--appendonly", "yes", "--appendfsync", "always", "--save", "")
	c := newClientAt(t, srv.Addr(), 0)
	s := privateStore(t, srv)
	ctx := t.Context()
	r, err := s.Reserve(ctx, request("ns", "order-1", "owner"))
	if err != nil {
		t.Fatal(err)
	}
	before := hsetCalls(t, c.Info(ctx, "commandstats").Val())
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "order-1", Key: r.Record.Key,
		State: idempay.StateSucceeded, ProviderRef: "ch_1", Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if got := hsetCalls(t, c.Info(ctx, "commandstats").Val()) - before; got != 1 {
		t.Errorf("a closing Resolve ran %d HSETs; want 1", got)
	}
	rec, err := s.Load(ctx, "ns", "order-1")
	if err != nil || rec.State != idempay.StateSucceeded || rec.ProviderRef != "ch_1" || string(rec.Result) != `{}` ||
		rec.LeaseOwner != "" || rec.ClosedAt.IsZero() {
		t.Errorf("after the close: %+v, %v", rec, err)
	}
}

// hsetCalls reads cmdstat_hset's calls from INFO commandstats.
func hsetCalls(t *testing.T, info string) int {
	t.Helper()
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_hset:calls="); ok {
			n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}
