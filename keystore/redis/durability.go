package redis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// ErrNotDurable matches the errors of writes that could not be made
// durable: a *DurabilityError (the server's settings cannot, with
// WithRequireDurability), or a WAITAOF that did not see the write reach
// the disk in time. The write may have been applied in memory.
var ErrNotDurable = errors.New("redis: write not durable")

// DurabilityError says why the server's settings cannot make a write
// survive a crash of the server. It matches ErrNotDurable.
type DurabilityError struct {
	Problems []string
}

func (e *DurabilityError) Error() string {
	return "redis: the server cannot make writes durable: " + strings.Join(e.Problems, "; ")
}

// Is makes a *DurabilityError match ErrNotDurable.
func (e *DurabilityError) Is(target error) bool { return target == ErrNotDurable }

// Durability is what the server offers the writes that must survive its
// crash: every Reserve, and each Resolve with Resolution.Durable. A Store
// reads it once, at its first write (see Store.Durability).
type Durability struct {
	// WaitAOF: the server has WAITAOF (Redis 7.2 on) and its AOF is on, so
	// each such write is sent with WAITAOF 1 0 and returns only once the
	// AOF holds it on disk, whatever appendfsync says.
	WaitAOF bool
	// The settings as CONFIG GET answered them on every master; empty when
	// CONFIG is refused (managed services often rename it).
	AppendOnly, AppendFsync, MaxmemoryPolicy string
	// Problems are the reasons a write the server acknowledged may still be
	// lost or evicted; none means durable on the server's own disk.
	// Replication is asynchronous either way: a failover to a replica that
	// had not received a write loses it.
	Problems []string
}

// Err returns a *DurabilityError listing d's problems, or nil.
func (d Durability) Err() error {
	if len(d.Problems) == 0 {
		return nil
	}
	return &DurabilityError{Problems: slices.Clone(d.Problems)}
}

// durabilityCache holds a Store's Durability once read.
type durabilityCache struct {
	mu   sync.Mutex
	done bool
	d    Durability
}

// Durability returns what the server offers durable writes, reading it
// from the server (COMMAND INFO WAITAOF and CONFIG GET, on every master of
// a Cluster) the first time, and logging its problems then. The error is a
// failure to ask, not a verdict; use Durability.Err for that.
func (s *Store) Durability(ctx context.Context) (Durability, error) {
	s.dur.mu.Lock()
	defer s.dur.mu.Unlock()
	if s.dur.done {
		return s.dur.d, nil
	}
	d, err := s.probe(ctx)
	if err != nil {
		return Durability{}, fmt.Errorf("redis: read durability settings: %w", err)
	}
	s.dur.d, s.dur.done = d, true
	if len(d.Problems) > 0 && s.cfg.lossy {
		s.cfg.logger.LogAttrs(ctx, slog.LevelWarn, "idempay redis store: writes may be lost in a crash of the server (WithLossyServer)",
			slog.String("problems", strings.Join(d.Problems, "; ")))
	}
	return d, nil
}

// forget drops the cached Durability, to read it again at the next write:
// the server refused WAITAOF, so its settings changed.
func (s *Store) forget() {
	s.dur.mu.Lock()
	s.dur.done = false
	s.dur.mu.Unlock()
}

// durableWait is how long the next durable write waits for the AOF (zero:
// the server offers no wait), or the *DurabilityError that refuses it
// unless WithLossyServer.
func (s *Store) durableWait(ctx context.Context) (time.Duration, error) {
	d, err := s.Durability(ctx)
	if err != nil {
		return 0, err
	}
	if !s.cfg.lossy && len(d.Problems) > 0 {
		return 0, d.Err()
	}
	if !d.WaitAOF {
		return 0, nil
	}
	return s.wait, nil
}

// checkAOF turns the reply of the WAITAOF sent after a write into an error
// when the write was not seen on disk. A server that refuses WAITAOF had
// its AOF turned off since it was probed: its settings are read again at
// the next write, and this write is reported as WithRequireDurability says.
func (s *Store) checkAOF(ctx context.Context, wait time.Duration, a answer) error {
	switch {
	case wait <= 0:
		return nil
	case a.aofErr != nil && isServerError(a.aofErr):
		s.forget()
		if !s.cfg.lossy {
			return fmt.Errorf("%w: WAITAOF refused: %w", ErrNotDurable, a.aofErr)
		}
		s.cfg.logger.LogAttrs(ctx, slog.LevelWarn, "idempay redis store: WAITAOF refused; the write may be lost in a crash",
			slog.String("error", a.aofErr.Error()))
		return nil
	case a.aofErr != nil:
		return fmt.Errorf("%w: WAITAOF: %w", ErrNotDurable, a.aofErr)
	case len(a.aof) < 1 || a.aof[0] < 1:
		return fmt.Errorf("%w: the AOF did not reach the disk within %s (WAITAOF answered %v)", ErrNotDurable, wait, a.aof)
	}
	return nil
}

// probe reads the settings of every master.
func (s *Store) probe(ctx context.Context) (Durability, error) {
	var (
		mu    sync.Mutex
		nodes []nodeSettings
	)
	visit := func(ctx context.Context, c goredis.Cmdable) error {
		n, err := probeNode(ctx, c)
		mu.Lock()
		nodes = append(nodes, n)
		mu.Unlock()
		return err
	}
	var err error
	switch c := s.client.(type) {
	case *goredis.ClusterClient:
		err = c.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error { return visit(ctx, m) })
	default:
		err = visit(ctx, c)
	}
	if err != nil {
		return Durability{}, err
	}
	_, ring := s.client.(*goredis.Ring)
	return judge(nodes, !ring), nil
}

// nodeSettings is what one master answered; a setting is "" when CONFIG
// GET was refused.
type nodeSettings struct {
	waitAOF                      bool
	appendOnly, fsync, maxmemory string
}

// probeNode asks one server, in one round trip, whether it knows WAITAOF
// and how its persistence is set. A refusal by the server (CONFIG renamed,
// an ACL) leaves a setting unknown; only a failure to reach it is an error.
func probeNode(ctx context.Context, c goredis.Cmdable) (nodeSettings, error) {
	var (
		info *goredis.Cmd
		cfg  [3]*goredis.MapStringStringCmd
	)
	names := [3]string{"appendonly", "appendfsync", "maxmemory-policy"}
	_, _ = c.Pipelined(ctx, func(p goredis.Pipeliner) error {
		info = p.Do(ctx, "COMMAND", "INFO", "WAITAOF")
		for i, n := range names {
			cfg[i] = p.ConfigGet(ctx, n)
		}
		return nil
	})
	var n nodeSettings
	v, err := info.Slice()
	if err != nil && !isServerError(err) {
		return n, err
	}
	n.waitAOF = err == nil && len(v) == 1 && v[0] != nil
	vals := [3]*string{&n.appendOnly, &n.fsync, &n.maxmemory}
	for i, cmd := range cfg {
		m, err := cmd.Result()
		if err != nil && !isServerError(err) {
			return n, err
		}
		*vals[i] = m[names[i]]
	}
	return n, nil
}

// isServerError reports whether err is the server's answer rather than a
// failure to get one.
func isServerError(err error) bool {
	var re goredis.Error
	return errors.As(err, &re)
}

// judge combines the masters' settings into a Durability. canWait says
// whether the client can send WAITAOF on a script's connection (a Ring
// cannot).
func judge(nodes []nodeSettings, canWait bool) Durability {
	d := Durability{WaitAOF: canWait && len(nodes) > 0}
	add := func(p string) {
		if !slices.Contains(d.Problems, p) {
			d.Problems = append(d.Problems, p)
		}
	}
	for i, n := range nodes {
		if i == 0 {
			d.AppendOnly, d.AppendFsync, d.MaxmemoryPolicy = n.appendOnly, n.fsync, n.maxmemory
		}
		d.AppendOnly = weaker(d.AppendOnly, n.appendOnly, "yes")
		d.AppendFsync = weaker(d.AppendFsync, n.fsync, "always")
		d.MaxmemoryPolicy = weaker(d.MaxmemoryPolicy, n.maxmemory, "noeviction")
		d.WaitAOF = d.WaitAOF && n.waitAOF && n.appendOnly == "yes"
	}
	switch {
	case d.AppendOnly == "":
		add("CONFIG GET was refused, so whether the server keeps an AOF (appendonly yes) is unknown")
	case d.AppendOnly != "yes":
		add("appendonly is " + d.AppendOnly + ": a restart of the server loses every record")
	case !d.WaitAOF && d.AppendFsync != "always":
		add("appendfsync is " + d.AppendFsync + " and the store cannot wait for the AOF (WAITAOF needs Redis 7.2 and a Client or ClusterClient): a crash can lose the last second of writes")
	}
	switch d.MaxmemoryPolicy {
	case "noeviction":
	case "":
		add("CONFIG GET was refused, so whether maxmemory-policy is noeviction is unknown")
	default:
		add("maxmemory-policy is " + d.MaxmemoryPolicy + ": the server may evict records")
	}
	return d
}

// weaker returns whichever of a and b is further from good: good, then
// any other value, then unknown (""). One weak master weakens the store.
func weaker(a, b, good string) string {
	rank := func(v string) int {
		switch v {
		case good:
			return 0
		case "":
			return 2
		}
		return 1
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
