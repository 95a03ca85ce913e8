package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// regressionSeeds are seeds that found the bugs of issue 8 §2 and issue 9
// on the code they were first run against (see FINDINGS.md for each one's
// story). Each runs with the world it was found in, whatever the flags
// say: today's providers and stores, the default skew bound, every check.
//
// Run them by name, e.g.
//
//	go test ./internal/sim -run 'TestRegression/issue8_1' -v
//
// Without -sim.strict each must still find its violation (the simulator
// has not lost the fault); with -sim.strict, once the bug is fixed, it
// must not.
var regressionSeeds = []struct {
	name   string
	seed   uint64
	stores string  // empty: memstore,filestore
	damage float64 // the chance of a damaged file at a reopen; 0: the default 0.05
	check  string
	hint   string
}{
	{"issue8_1_expiry_by_created_at", 921, "", 0, checkDoubleCharge, hintExpiry},
	{"issue8_2_key_age_across_skew", 2248, "", 0, checkDoubleCharge, hintSkewKey},
	{"issue8_2_stale_key_resent", 385, "", 0, checkStaleKey, hintSkewKey},
	{"issue8_2_lease_across_skew", 5, "", 0, checkLeaseAtSend, hintSkewLease},
	{"issue8_2_omise_lookup_window", 168, "", 0, checkUnsettled, hintSkewLookup},
	{"issue8_3_429_after_takeover", 1792, "", 0, checkFalseFailed, hintLeaseRanOut},
	{"issue8_3_slow_reserve", 120, "", 0, checkFalseFailed, hintLeaseRanOut},
	{"issue8_4_two_flights_contradict", 2141, "", 0, checkFalseFailed, hintTwoFlights},
	{"issue8_4_two_flights_on_the_wire", 153, "", 0, checkConcurrentSend, hintTwoFlights},
	{"issue8_5_settle_frees_lease", 76, "", 0, checkConcurrentSend, hintSettleFree},
	{"issue8_5_settle_then_failed", 1860, "", 0, checkFalseFailed, hintSettleFree},
	{"issue8_6_mismatch_keeps_lease", 24, "", 0, checkStaleLease, hintMismatch},
	{"issue8_7_crash_stalls", 16, "", 0, checkStaleLease, hintCrashStall},
	{"issue8_7_crash_stalls_filestore", 34, "", 0, checkStaleLease, hintCrashStall},
	{"issue8_8_starved_behind_pendings", 230, "", 0, checkUnsettled, hintStarved},
	{"issue8_9_write_after_close", 9, "", 0, checkWriteAfterClose, hintClose},
	{"issue8_10_empty_file_forgets", 15, "filestore", 1, checkStoreDamage, hintDamage},
	{"issue8_10_truncated_sigbus", 1, "filestore", 1, checkStoreDamage, hintDamage},
	{"issue8_10_zeroed_page_panics", 27, "filestore", 1, checkStoreDamage, hintDamage},
	{"issue8_11_redis_reply_lost", 4, "redis", 0, checkLostCreate, hintRedisRetry},
	{"issue9_1_pending_as_succeeded", 1, "", 0, checkPendingSuccess, hintPending},
	{"issue9_7_secrets_in_store", 3, "", 0, checkSecret, hintSecret},
	{"issue9_7_secret_cut_before_redaction", 39, "", 0, checkSecret, hintSecret},
	{"issue9_8_impatient_caller", 9, "", 0, checkImpatient, hintImpatient},
}

func TestRegression(t *testing.T) {
	for _, rs := range regressionSeeds {
		t.Run(rs.name, func(t *testing.T) {
			opt := regressionOptions(t, rs.stores, rs.damage)
			if rs.stores == "redis" && !redisUp(opt.redisAddr) {
				t.Skipf("Redis at %s does not answer", opt.redisAddr)
			}
			r := runSeed(rs.seed, opt)
			for _, f := range r.fatals {
				t.Errorf("simulator failure: %s", f)
			}
			cmd := regressionReplay(rs.seed, rs.stores, rs.damage)
			found := findViolation(r, rs.check, rs.hint)
			switch {
			case *flagStrict && found != nil:
				t.Errorf("%s\n    (strict: the bug this seed found is still there)", describeWith(r, *found, cmd))
			case !*flagStrict && found == nil:
				t.Errorf("seed %d no longer finds %s [%s]: fixed (then run with -sim.strict), or the simulator lost the fault\n    replay: %s\n    found instead: %s",
					rs.seed, rs.check, rs.hint, cmd, checksOf(r))
			case found != nil:
				t.Logf("finds %s [%s] as expected\n    replay: %s", rs.check, rs.hint, cmd)
			}
		})
	}
}

// regressionOptions are the world a regression seed was found in.
func regressionOptions(t *testing.T, stores string, damage float64) *options {
	opt := &options{providers: []string{"ownapi", "stripe", "omise", "2c2p"},
		stores: []string{"memstore", "filestore"}, skew: 3 * time.Hour, checks: parseChecks(t, "all"),
		damage: 0.05, pgDSN: *flagPG, redisAddr: *flagRedis, dir: storeDir(t), storyLen: 200}
	if stores != "" {
		opt.stores = strings.Split(stores, ",")
	}
	if damage > 0 {
		opt.damage = damage
	}
	return opt
}

func regressionReplay(seed uint64, stores string, damage float64) string {
	cmd := fmt.Sprintf("go test ./internal/sim -run 'TestSim$' -sim.seed=%d -sim.seeds=1 -v", seed)
	if stores != "" {
		cmd += " -sim.stores=" + stores
	}
	if damage > 0 {
		cmd += fmt.Sprintf(" -sim.damage=%g", damage)
	}
	return cmd
}

func findViolation(r seedResult, check, hint string) *violation {
	for i, v := range r.violations {
		if v.check == check && strings.HasPrefix(v.hint, hint) {
			return &r.violations[i]
		}
	}
	return nil
}

func checksOf(r seedResult) string {
	var out []string
	for _, v := range r.violations {
		out = append(out, v.check+" ["+v.hint+"]")
	}
	return strings.Join(out, ", ")
}

func describeWith(r seedResult, v violation, cmd string) string {
	return fmt.Sprintf("seed %d (%s, %s): VIOLATION %s, intent %s: %s\n    hint: %s\n    replay: %s\n    story of %s:%s",
		r.seed, r.cfg.provider, r.cfg.store, v.check, v.intent, v.msg, v.hint, cmd, v.intent, render(v.story))
}
