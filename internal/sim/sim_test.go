package sim

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	flagSeeds     = flag.Int("sim.seeds", 0, "how many seeds to run (0: the CI size, 2000, or 400 under -race)")
	flagSeed      = flag.Uint64("sim.seed", 1, "the first seed")
	flagProviders = flag.String("sim.providers", "ownapi,stripe,omise,2c2p", "the providers seeds draw from")
	flagStores    = flag.String("sim.stores", "memstore,filestore,pg-model,redis-model", "the stores seeds draw from: the crash models pg-model and redis-model are on by default (add postgres, redis: they need the servers; redis-volatile, filehost)")
	flagSkew      = flag.Duration("sim.skew", 3*time.Hour, "the widest clock skew of an instance")
	flagChecks    = flag.String("sim.checks", "all", "the checks to run: all, or a comma-separated list; -name removes one")
	flagStrict    = flag.Bool("sim.strict", true, "fail on any violation (false: report them and fail only when the simulator itself fails)")
	flagParallel  = flag.Int("sim.parallel", 8*runtime.GOMAXPROCS(0), "seeds run at once")
	flagDamage    = flag.Float64("sim.damage", 0.05, "chance that a killed file store's file is damaged before it is opened again")
	flagPG        = flag.String("sim.pg", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "PostgreSQL DSN, for -sim.stores=postgres")
	flagRedis     = flag.String("sim.redis", "127.0.0.1:6379", "Redis address, for -sim.stores=redis")
	flagOps       = flag.Bool("sim.ops", true, "refunds, captures and cancels in the stories")
	flagShow      = flag.Int("sim.show", 3, "violations shown in full (with their story) in a report")
	flagRedisLoss = flag.Bool("sim.redisloss", false, "with -sim.stores=redis: the server loses the seed's data set now and then (a restart without persistence)")
)

// Sizes of a run when the flags do not say (issue 20: the whole package
// under -race must fit well under 4 minutes on a busy 2-core machine).
// Bigger runs: -sim.seeds, -sim.checkouts.
const (
	ciSeeds         = 2000
	ciSeedsRace     = 400
	ciCheckouts     = 400
	ciCheckoutsRace = 100
)

// seedCount is -sim.seeds, or the CI size.
func seedCount() int {
	switch {
	case *flagSeeds > 0:
		return *flagSeeds
	case raceDetector:
		return ciSeedsRace
	}
	return ciSeeds
}

// checkoutCount is -sim.checkouts, or the CI size.
func checkoutCount() int {
	switch {
	case *flagCheckouts > 0:
		return *flagCheckouts
	case raceDetector:
		return ciCheckoutsRace
	}
	return ciCheckouts
}

func testOptions(t testing.TB) *options {
	opt := &options{
		providers: strings.Split(*flagProviders, ","), stores: strings.Split(*flagStores, ","),
		skew: *flagSkew, checks: parseChecks(t, *flagChecks), damage: *flagDamage,
		pgDSN: *flagPG, redisAddr: *flagRedis, dir: storeDir(t), storyLen: 90, ops: *flagOps, redisLoss: *flagRedisLoss,
	}
	if seedCount() == 1 {
		opt.storyLen = 100000 // one seed: the whole story
	}
	return opt
}

// openChecks are in allChecks but left out of "all" while today's code
// breaks them (name them to run them: -sim.checks=all,refund-refused-paid).
// Switch one on by deleting it here once its fix is merged. None today:
// checkout-handler-twice (CK-3) is on since the guard holds every answer
// it stands by until its close is durable.
var openChecks = map[string]bool{}

func parseChecks(t testing.TB, spec string) map[string]bool {
	on := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "all":
			for _, c := range allChecks {
				on[c] = !openChecks[c]
			}
		case strings.HasPrefix(part, "-"):
			delete(on, part[1:])
		case has(allChecks, part):
			on[part] = true
		default:
			t.Fatalf("-sim.checks: unknown check %q (known: %s)", part, strings.Join(allChecks, ", "))
		}
	}
	return on
}

// storeDir is where file stores live: tmpfs when there is one, since the
// simulator tests the store's logic, not the disk's fsync.
func storeDir(t testing.TB) string {
	base := ""
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "idempay-sim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// replay is the one command that runs a seed again, with the flags that
// shape its world.
func replay(seed uint64) string {
	cmd := fmt.Sprintf("go test ./internal/sim -run 'TestSim$' -sim.seed=%d -sim.seeds=1 -v", seed)
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "sim.providers", "sim.stores", "sim.skew", "sim.checks", "sim.damage", "sim.pg", "sim.redis", "sim.ops", "sim.redisloss":
			cmd += fmt.Sprintf(" -%s=%s", f.Name, f.Value)
		}
	})
	return cmd
}

// runSeeds runs n seeds from first, at most parallel at once. Only the
// seeds' findings are kept (a world and its trace weigh a lot, and a long
// run has a hundred thousand), unless keep is set.
func runSeeds(opt *options, first uint64, n, parallel int, keep bool) []seedResult {
	out := make([]seedResult, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = runSeed(first+uint64(i), opt)
				if !keep {
					out[i].w = nil
				}
				if i >= 100 && !keep { // the report shows the first ones; replay tells the rest
					for j := range out[i].violations {
						out[i].violations[j].story = nil
					}
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// TestSim runs -sim.seeds seeds and reports what the oracle found. With
// -sim.strict any violation fails the test; without it, violations are
// reported and only a failure of the simulator itself fails it.
func TestSim(t *testing.T) {
	opt := testOptions(t)
	start := time.Now()
	results := runSeeds(opt, *flagSeed, seedCount(), *flagParallel, false)
	took := time.Since(start)
	for _, r := range results {
		for _, f := range r.fatals {
			t.Errorf("seed %d: simulator failure: %s\n    replay: %s", r.seed, f, replay(r.seed))
		}
	}
	report := summarize(results)
	t.Logf("%d seeds from %d in %s\n%s", len(results), *flagSeed, took.Round(time.Millisecond), report)
	shown := 0
	for _, r := range results {
		for _, v := range r.violations {
			if seedCount() > 1 && shown >= *flagShow {
				break
			}
			shown++
			msg := describe(r, v)
			if *flagStrict {
				t.Error(msg)
			} else {
				t.Log(msg)
			}
		}
	}
	if *flagStrict && shown < countViolations(results) {
		t.Errorf("%d more violations not shown (-sim.show)", countViolations(results)-shown)
	}
}

func countViolations(rs []seedResult) int {
	n := 0
	for _, r := range rs {
		n += len(r.violations)
	}
	return n
}

// describe is one violation as a failing seed prints it: the seed, the
// intent, the check, the replay command and the intent's story.
func describe(r seedResult, v violation) string {
	if v.story == nil {
		return fmt.Sprintf("seed %d (%s, %s): VIOLATION %s, intent %s: %s\n    hint: %s\n    replay (for its story): %s",
			r.seed, r.cfg.provider, r.cfg.store, v.check, v.intent, v.msg, v.hint, replay(r.seed))
	}
	return describeWith(r, v, replay(r.seed))
}

// summarize counts, per check, the seeds that broke it and names the first.
func summarize(rs []seedResult) string {
	type row struct {
		seeds []uint64
		by    map[string]int
	}
	rows := map[string]*row{}
	for _, r := range rs {
		seen := map[string]bool{}
		for _, v := range r.violations {
			k := v.check
			if v.hint != "" {
				k += "  [" + v.hint + "]"
			}
			rw := rows[k]
			if rw == nil {
				rw = &row{by: map[string]int{}}
				rows[k] = rw
			}
			if !seen[k] {
				seen[k] = true
				rw.seeds = append(rw.seeds, r.seed)
				rw.by[r.cfg.provider+"/"+r.cfg.store]++
			}
		}
	}
	var names []string
	for n := range rows {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "  %-70s %6s  %-28s %s\n", "check  [hint]", "seeds", "first seeds", "by provider/store")
	for _, n := range names {
		rw := rows[n]
		first := rw.seeds[:min(5, len(rw.seeds))]
		fmt.Fprintf(&b, "  %-70s %6d  %-28s %v\n", n, len(rw.seeds), fmt.Sprint(first), rw.by)
	}
	if len(names) == 0 {
		b.WriteString("  no violations\n")
	}
	return b.String()
}

// TestChildOpen is the child process of the damaged-file check (damage.go):
// it runs only when the parent asks, and prints one line.
func TestChildOpen(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		t.Skip("run by the simulator's damaged-file check only")
	}
	b, _ := json.Marshal(childOpen(spec))
	fmt.Printf("SIMCHILD %s\n", b)
}
