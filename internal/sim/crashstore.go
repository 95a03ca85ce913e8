package sim

import (
	"context"
	"sync"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
)

// Issue 16, Build 1: stores that lose acknowledged writes. A crashStore is
// a KeyStore on the virtual clock that behaves like one of the servers
// idempay supports, as far as a crash goes: it keeps every write it
// acknowledged in a log, with the point up to which the log is flushed,
// and a crash keeps the flushed part and loses the rest, exactly what
// that server may lose (the notes' durability.md):
//
//   - pg-model (PostgreSQL): a commit is flushed when it was durable
//     (every Reserve, a Resolve with Resolution.Durable, Expire's DELETE
//     at the session's synchronous_commit on), and a durable commit
//     flushes every earlier one (the WAL is one sequence). A commit made
//     with synchronous_commit off is flushed by the WAL writer within
//     3 x wal_writer_delay; a crash loses the ones younger than that.
//   - redis-model (Redis 7.2, appendfsync everysec, WAITAOF): the writes
//     the store follows with WAITAOF (Reserve, a durable Resolve) are
//     fsynced before the answer, and everything is within about a second;
//     a crash loses the rest.
//   - redis-volatile (Redis without persistence): a restart loses the
//     whole data set.
//
// Replaying the surviving log on a fresh memstore, each write at the
// store instant it was first made, rebuilds the store as the restarted
// server finds it. The store's own clock is the world's true time plus an
// offset the world steps (a server clock set by NTP, a failover to another
// host): clients never see it but through what the store stamps and
// Reservation.Now.

// Durability models of a crashStore.
const (
	modelPG       = "pg-model"
	modelRedis    = "redis-model"
	modelVolatile = "redis-volatile"
)

// crashModels are the stores a seed may draw that a crash can hurt.
var crashModels = []string{modelPG, modelRedis, modelVolatile}

// Flush windows: how long a write not made durable may stay unflushed.
const (
	walWindow   = 3 * 200 * time.Millisecond // 3 x wal_writer_delay, PostgreSQL's documented window
	fsyncWindow = 2 * time.Second            // appendfsync everysec: "about a second", up to two
)

// logged is one acknowledged write.
type logged struct {
	at      time.Time // the store's instant when it was made
	trueAt  time.Time // true time then (flush windows run on true time)
	reserve *idempay.ReserveRequest
	resolve *idempay.Resolution
	expire  time.Duration
	durable bool
}

// crashStore is the KeyStore of a crash model (see above).
type crashStore struct {
	model   string
	trueNow func() time.Time
	offset  func() time.Duration // the store clock's offset from true time
	mu      sync.Mutex
	stamp   time.Time // the instant the inner store stamps the current call with
	live    *memstore.Store
	log     []logged
	flushed int // log[:flushed] survives a crash
	crashes int
	marks   markers // the Redis models' markers (crashmarker.go)
}

var _ idempay.KeyStore = (*crashStore)(nil)

func newCrashStore(model string, trueNow func() time.Time, offset func() time.Duration) *crashStore {
	s := &crashStore{model: model, trueNow: trueNow, offset: offset}
	s.live = s.fresh()
	return s
}

// fresh is an empty inner store stamping with s.stamp.
func (s *crashStore) fresh() *memstore.Store {
	return memstore.New(memstore.WithClock(func() time.Time { return s.stamp }))
}

// now is the store's clock; called under s.mu.
func (s *crashStore) now() time.Time { return s.trueNow().Add(s.offset()) }

// window is how long an unflushed write may stay so.
func (s *crashStore) window() time.Duration {
	if s.model == modelPG {
		return walWindow
	}
	return fsyncWindow
}

// write runs f (one write of the inner store) at the store's instant and,
// when the store acknowledges it, logs it; d says whether the model
// flushes it before answering. Called under s.mu.
func (s *crashStore) write(e logged, f func() error) error {
	s.background()
	s.stamp = s.now()
	if err := f(); err != nil {
		return err
	}
	e.at, e.trueAt = s.stamp, s.trueNow()
	s.log = append(s.log, e)
	if e.durable && s.model != modelVolatile {
		s.flushed = len(s.log)
	}
	return nil
}

// background is the server's own flushing (the WAL writer, the AOF's
// fsync every second): every write older than the window is on disk.
func (s *crashStore) background() {
	if s.model == modelVolatile {
		return
	}
	cut := s.trueNow().Add(-s.window())
	for s.flushed < len(s.log) && !s.log[s.flushed].trueAt.After(cut) {
		s.flushed++
	}
}

func (s *crashStore) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var res idempay.Reservation
	err := s.write(logged{reserve: &r, durable: true}, func() error {
		var err error
		res, err = s.live.Reserve(ctx, r)
		if err == nil && s.marked() {
			res.Unproven = s.markReserve(r.Namespace, r.Owner, s.stamp)
		}
		return err
	})
	return res, err
}

func (s *crashStore) Resolve(ctx context.Context, res idempay.Resolution) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(logged{resolve: &res, durable: res.Durable}, func() error { return s.live.Resolve(ctx, res) })
}

func (s *crashStore) Expire(ctx context.Context, retention time.Duration) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int
	err := s.write(logged{expire: retention, durable: s.model == modelPG}, func() error {
		var err error
		n, err = s.live.Expire(ctx, retention)
		return err
	})
	return n, err
}

func (s *crashStore) Load(ctx context.Context, namespace, intentID string) (idempay.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live.Load(ctx, namespace, intentID)
}

func (s *crashStore) ListOpen(ctx context.Context, namespace string, after idempay.Cursor, limit int) ([]idempay.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live.ListOpen(ctx, namespace, after, limit)
}

// crash is the server dying and starting again: it keeps what its model
// keeps and returns the acknowledged writes it lost.
func (s *crashStore) crash() []lostWrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.background()
	s.crashes++
	keep := s.log[:s.flushed]
	if s.model == modelVolatile {
		keep = nil
		s.loseMarkers()
	}
	var lost []lostWrite
	for _, e := range s.log[len(keep):] {
		lost = append(lost, e.describe())
	}
	s.live = s.fresh()
	ctx := context.Background()
	for _, e := range keep {
		s.stamp = e.at
		switch {
		case e.reserve != nil:
			_, _ = s.live.Reserve(ctx, *e.reserve)
		case e.resolve != nil:
			_ = s.live.Resolve(ctx, *e.resolve)
		default:
			_, _ = s.live.Expire(ctx, e.expire)
		}
	}
	s.log = append([]logged(nil), keep...)
	s.flushed = len(s.log)
	return lost
}

// unflushed reports how many acknowledged writes a crash now would lose.
func (s *crashStore) unflushed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.background()
	if s.model == modelVolatile {
		return len(s.log)
	}
	return len(s.log) - s.flushed
}
