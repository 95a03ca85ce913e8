package sim

import (
	"math/rand/v2"
	"slices"
	"time"
)

// options are the flags of a run: the same for every seed.
type options struct {
	providers []string      // which fakes seeds may draw
	stores    []string      // which stores seeds may draw
	skew      time.Duration // the widest clock skew of an instance
	checks    map[string]bool
	dir       string // where file stores live
	pgDSN     string
	redisAddr string
	damage    float64 // chance that a killed file store's file is damaged before the reopen
	storyLen  int     // events kept in a violation's story
	ops       bool    // refunds, captures and cancels in the story
	checkout  bool    // seeds play the checkout workload (checkout.go)
	redisLoss bool    // the real Redis store loses its data set now and then (storecrash.go)
}

// seedConfig is the shape of one seed's world, drawn from the seed.
type seedConfig struct {
	provider    string
	store       string
	instances   int
	orders      int
	steps       int
	maxAttempts int
	pageSize    int // what the recovery worker asks Unresolved for
	skews       []time.Duration
	theme       string // what the seed's story leans to (see drawConfig)
	hostClock   bool   // a file store on its own clock, on a host whose wall clock may be fast (hostclock.go)
}

// Durations of the simulated world.
const (
	providerRetention = 24 * time.Hour           // the fakes forget a key after this
	keyRetention      = 23 * time.Hour           // the client's default KeyRetention
	storeRetention    = 7 * 24 * time.Hour       // what the operator's Expire sweep keeps
	staleBound        = simLease + 5*time.Second // what a crash may cost in a fleet: one lease, and a little
	restartDelay      = 15 * time.Second         // how long a restart takes, before the quiet phase resumes
)

func drawConfig(seed uint64, opt *options, rng *rand.Rand) seedConfig {
	c := seedConfig{
		provider:    opt.providers[rng.IntN(len(opt.providers))],
		store:       opt.stores[rng.IntN(len(opt.stores))],
		instances:   2 + rng.IntN(2),
		orders:      3 + rng.IntN(5),
		maxAttempts: []int{2, 3, 3, 6}[rng.IntN(4)],
		pageSize:    2,
	}
	if c.store == storeFileHost {
		c.store, c.hostClock = "filestore", true
	}
	c.steps = 3*c.orders + 4 + rng.IntN(6)
	// A theme tilts the story: "long-haul" seeds live for weeks (jumps
	// past the keys' and the store's retention, sweeps, late duplicates);
	// "skewed" seeds run a fleet whose clocks are hours apart, across the
	// day-long key windows; "busy" seeds are minutes of concurrency.
	switch u := rng.Float64(); {
	case u < 0.20:
		c.theme = "long-haul"
	case u < 0.35:
		c.theme = "skewed"
	default:
		c.theme = "busy"
	}
	// Most fleets keep their clocks within a second; some hosts drift by
	// minutes, and a few are hours off (a wrong time zone, a dead NTP).
	bound := time.Second
	switch u := rng.Float64(); {
	case u < 0.15 || c.theme == "skewed":
		bound = opt.skew
	case u < 0.40:
		bound = min(2*time.Minute, opt.skew)
	}
	for range c.instances {
		c.skews = append(c.skews, time.Duration((rng.Float64()*2-1)*float64(bound)))
	}
	return c
}

func has(list []string, s string) bool { return slices.Contains(list, s) }
