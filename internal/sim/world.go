package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idempay/idempay"
)

// world is one seed: a virtual clock, a fake provider, one store shared by
// a few client instances, the shop's orders, and what the oracle needs.
type world struct {
	seed    uint64
	opt     *options
	cfg     seedConfig
	d       dice
	rng     *rand.Rand // the step schedule: drawn by the step loop's goroutine only
	catchUp int        // steps left of catching up after a long jump
	clock   *simClock
	tr      *tracer
	prov    provider
	logs    *logSink
	or      *oracle
	orders  []*order
	byID    map[string]*order
	slots   []*slot
	ck      *checkouts // the checkout workload's state (checkout.go), in a checkout world

	ns       string // the charges' namespace, the same on every instance
	faultsOn atomic.Bool
	fam      *family      // the seed's goroutines, for the waits of pauses (goroutines.go)
	redis    redisArm     // the Redis store's lost reply, when armed
	crash    *crashStore  // the store, in a world of a crash model (crashstore.go)
	storeOff atomic.Int64 // the crash model's clock offset from true time, in ns
	host     *hostWorld   // a filehost world's host (hostclock.go)
	bg       sync.WaitGroup

	mu             sync.Mutex
	store          *storeHandle
	calls          []*call              // every call made
	inflight       map[string][]sending // requests on the wire, by intent
	processed      map[string]time.Time // key -> when the provider first processed it (again, once it forgot it)
	created        map[string]bool      // intent -> a Reserve created its record
	claims         map[string]*call     // intent -> the call that last took its lease
	owners         map[string]*call     // lease owner -> the last call that claimed with it
	errs           []callErr            // every error string a caller got
	released       map[string]*call     // intent -> the call that last released its lease
	expired        map[string]bool      // intent -> Expire deleted its record
	staleKeys      map[string]bool      // intent -> a key of it was resent after the provider forgot it
	listed         map[string]bool      // intent -> Unresolved named it in the quiet phase
	resumed        map[string]bool      // intent -> charged again in the quiet phase
	resumeMismatch map[string]bool      // intent -> its last resume was refused as other parameters
	kills          int
	storeCrashes   int
	lastCrash      time.Time                          // true time of the last store crash
	lostWrites     map[string][]string                // intent -> the acknowledged writes store crashes lost
	setBacks       []setBack                          // the store clock's steps back, oldest first
	toldFailed     []failedTell                       // every "failed" a caller was told, for the whole story
	sentBy         map[string]map[string]map[int]bool // intent -> key -> the attempts that sent it
	abandoned      []*call                            // calls whose callers left while their flights ran
	late           []lateWrite                        // writes on their way to the store, after their writers gave up
}

type callErr struct{ intent, text string }

// slot is one place in the fleet: a host with its clock skew, on which
// instances run one after the other (a restart is a new generation).
type slot struct {
	idx  int
	skew time.Duration
	gens int
	cur  *instance
}

// instance is one process's idempay.Client.
type instance struct {
	w      *world
	slot   *slot
	name   string
	cl     *client
	http   *http.Client
	dead   atomic.Bool // killed: it sends and stores nothing more
	closed atomic.Bool // shut down by the application
	keys   atomic.Int64
}

// storeHandle is the shared store as opened once; a file store is reopened
// (a new handle) after its process is killed.
type storeHandle struct {
	mu     sync.RWMutex
	s      idempay.KeyStore
	close  func() error
	closed bool
}

var errStoreClosed = errors.New("sim: store closed (its process was killed)")

func (h *storeHandle) enter() (idempay.KeyStore, func(), error) {
	h.mu.RLock()
	if h.closed {
		h.mu.RUnlock()
		return nil, nil, errStoreClosed
	}
	return h.s, h.mu.RUnlock, nil
}

// shutKilled is shut for a store whose process was killed: the file at
// path is kept as it was before Close wrote to it (see reopen).
func (h *storeHandle) shutKilled(path string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	// Every acknowledged write reaches the file first, the asynchronous
	// ones too (a ListOpen commits what is waiting): what a kill loses of
	// those rides on the store's commit timer, which real time decides, and
	// a seed must tell one story however busy the machine is. The crash
	// tests of keystore/filestore kill a real process for that loss.
	if lister, ok := h.s.(interface {
		ListOpen(context.Context, string, idempay.Cursor, int) ([]idempay.Record, error)
	}); ok {
		_, _ = lister.ListOpen(context.Background(), "sim/flush", idempay.Cursor{}, 1)
	}
	// The store is its file and its write-ahead log beside it: both are
	// taken as they stood, and put back after Close.
	files := []string{path, path + "-log"}
	kept := make([][]byte, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil && !(i > 0 && errors.Is(err, os.ErrNotExist)) {
			return errors.Join(err, h.close())
		}
		kept[i] = b
	}
	if err := h.close(); err != nil {
		return err
	}
	for i, f := range files {
		if kept[i] == nil {
			_ = os.Remove(f)
			continue
		}
		if err := os.WriteFile(f, kept[i], 0o600); err != nil {
			return err
		}
	}
	return nil
}

// shut waits for the calls inside the store to return, then closes it.
func (h *storeHandle) shut() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	return h.close()
}

func newWorld(seed uint64, opt *options) *world {
	w := &world{seed: seed, opt: opt, d: dice{seed}, rng: rand.New(rand.NewPCG(seed, 0x51a7)),
		byID: map[string]*order{}, inflight: map[string][]sending{},
		processed: map[string]time.Time{}, created: map[string]bool{}, claims: map[string]*call{},
		owners: map[string]*call{}, released: map[string]*call{}, expired: map[string]bool{},
		staleKeys: map[string]bool{}, listed: map[string]bool{}, resumed: map[string]bool{},
		resumeMismatch: map[string]bool{}, lostWrites: map[string][]string{}, sentBy: map[string]map[string]map[int]bool{}}
	w.cfg = drawConfig(seed, opt, w.rng)
	w.clock = newSimClock()
	if w.realTime() {
		w.clock = newRealClock()
	}
	w.tr = newTracer(w.clock)
	w.logs = &logSink{}
	w.or = newOracle(w, opt.checks)
	w.prov = newProvider(w.cfg.provider, w.d, w.clock)
	for i := range w.cfg.orders {
		o := newOrder(seed, i, w.d)
		if opt.ops && o.kind == "ok" && w.prov.authExtra() != nil && w.d.chance(0.25, "auth", i) {
			o.kind = "auth" // charged with manual capture: captured or cancelled later
		}
		w.orders = append(w.orders, o)
		w.byID[o.id] = o
	}
	if opt.checkout {
		w.ck = &checkouts{bffs: map[*instance]*bff{}, keys: map[string]*ckKey{}, fe: map[string]*feState{}, sent: map[string]bool{}}
	}
	w.faultsOn.Store(true)
	return w
}

func newProvider(name string, d dice, c *simClock) provider {
	switch name {
	case "stripe":
		return newStripe(d, c)
	case "omise":
		return newOmise(d, c)
	case "2c2p":
		return new2C2P(d, c)
	}
	return newOwnAPI(d, c)
}

// realTime reports a world whose store keeps real time (see newRealClock).
func (w *world) realTime() bool { return w.cfg.store == "postgres" || w.cfg.store == "redis" }

// lease is the lease the world's clients take (see simLease).
func (w *world) lease() time.Duration {
	if w.realTime() {
		return realLease
	}
	return simLease
}

// start opens the store and the first generation of every slot.
func (w *world) start(ctx context.Context) error {
	if err := w.openStore(ctx); err != nil {
		return err
	}
	for i, skew := range w.cfg.skews {
		w.slots = append(w.slots, &slot{idx: i, skew: skew})
	}
	for _, s := range w.slots {
		if err := w.restart(s); err != nil {
			return err
		}
	}
	w.ns = w.slots[0].cur.cl.namespace()
	w.tr.add("", "world", "seed %d: %s on %s, %d instances (skews %v), %d orders, %d steps, %d attempts, %s",
		w.seed, w.cfg.provider, w.cfg.store, w.cfg.instances, skewList(w.cfg.skews), w.cfg.orders,
		w.cfg.steps, w.cfg.maxAttempts, w.cfg.theme)
	return nil
}

func skewList(s []time.Duration) []string {
	out := make([]string, len(s))
	for i, d := range s {
		out[i] = d.Round(time.Millisecond).String()
	}
	return out
}

func (w *world) openStore(ctx context.Context) error {
	if has(crashModels, w.cfg.store) {
		w.crash = newCrashStore(w.cfg.store, w.clock.Now, func() time.Duration { return time.Duration(w.storeOff.Load()) })
		w.mu.Lock()
		w.store = &storeHandle{s: w.crash, close: func() error { return nil }}
		w.mu.Unlock()
		return nil
	}
	sc, err := w.storeConfig()
	if err != nil {
		return err
	}
	if w.cfg.hostClock {
		sc.host = w.hostSpec()
	}
	s, closer, err := openStore(ctx, sc)
	if err != nil {
		return fmt.Errorf("sim: open %s: %w", w.cfg.store, err)
	}
	w.mu.Lock()
	w.store = &storeHandle{s: s, close: closer}
	w.mu.Unlock()
	w.hostOpened(ctx)
	return nil
}

func (w *world) storeConfig() (storeConfig, error) {
	sc := storeConfig{kind: w.cfg.store, clock: w.clock.Now}
	switch w.cfg.store {
	case "filestore":
		sc.path = filepath.Join(w.opt.dir, fmt.Sprintf("seed-%d.db", w.seed))
	case "postgres":
		return sharedPostgres(w, sc)
	case "redis":
		return sharedRedis(w, sc)
	}
	return sc, nil
}

func (w *world) handle() *storeHandle {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.store
}

// restart starts a new generation on slot s: a new process, a new client,
// the same store and the same host clock.
func (w *world) restart(s *slot) error {
	inst := &instance{w: w, slot: s, name: fmt.Sprintf("i%dg%d", s.idx, s.gens)}
	s.gens++
	h := w.handle()
	inst.http = &http.Client{Transport: &transport{w: w, inst: inst}}
	cl, err := newClient(clientSpec{
		baseURL: "http://" + w.prov.name() + ".sim", creds: w.prov.credentials(),
		account: fmt.Sprintf("acct%d", w.seed), provider: w.prov.adapter(w.clock.skewed(s.skew)),
		store: &hookedStore{enter: h.enter, hooks: &storeSide{w: w, inst: inst}}, http: inst.http,
		clock: w.clock.skewed(s.skew), logger: w.logs.logger(inst.name), maxAttempts: w.cfg.maxAttempts,
		lease: w.lease(), instance: inst.name,
		newKey: func() string { return fmt.Sprintf("k-%s-%d", inst.name, inst.keys.Add(1)) },
	})
	if err != nil {
		return err
	}
	inst.cl = cl
	s.cur = inst
	return nil
}

// live returns the current instance of every slot.
func (w *world) live() []*instance {
	out := make([]*instance, len(w.slots))
	for i, s := range w.slots {
		out[i] = s.cur
	}
	return out
}

// other returns the current instance of a slot other than inst's, if any.
func (w *world) other(inst *instance, pick int) *instance {
	if len(w.slots) < 2 {
		return w.slots[0].cur
	}
	i := (inst.slot.idx + 1 + pick%(len(w.slots)-1)) % len(w.slots)
	return w.slots[i].cur
}

// namespace is the store namespace every instance of this world uses.
func (w *world) namespace() string { return w.ns }

// load reads an intent's record straight from the store, for the oracle.
func (w *world) load(ctx context.Context, intent string) (recView, bool, error) {
	s, leave, err := w.handle().enter()
	if err != nil {
		return recView{}, false, err
	}
	defer leave()
	return loadRec(ctx, s, w.namespace(), intent)
}
