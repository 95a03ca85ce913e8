package sim

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// providerIDs matches what the fakes draw from crypto/rand (charge and
// request IDs), which the seed does not fix and the oracle never judges by.
var providerIDs = regexp.MustCompile(`\b(pi_|ch_|chrg_test_|req_|re_|rfnd_test_|fk)[A-Za-z0-9]+…?|_secret_[a-z0-9]+|\("[a-z0-9]{10}"\)`)

// transcript is a seed's whole trace with the provider's random IDs
// blanked, call by call: each call's events in their order, the calls in
// name order. (Two calls that run at once after a pause may trace in
// either order; what each one did must not change.)
func transcript(w *world) string {
	byWho := map[string][]string{}
	var names []string
	for _, e := range w.tr.all() {
		if _, ok := byWho[e.who]; !ok {
			names = append(names, e.who)
		}
		byWho[e.who] = append(byWho[e.who], e.who+" "+providerIDs.ReplaceAllString(e.what, "ID"))
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		for _, line := range byWho[n] {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// TestDeterminism runs seeds twice: the same seed must tell the same story
// (faults, pauses, interleavings, answers), or a failing seed could not be
// replayed.
func TestDeterminism(t *testing.T) {
	opt := testOptions(t)
	n := min(seedCount(), 100)
	if raceDetector && *flagSeeds == 0 {
		n = 40
	}
	sameStories(t, "seed", runSeeds(opt, *flagSeed, n, *flagParallel, true), runSeeds(opt, *flagSeed, n, *flagParallel, true))
}

// sameStories fails t for every seed whose two runs a and b told two
// stories, showing the first difference.
func sameStories(t *testing.T, what string, a, b []seedResult) {
	t.Helper()
	for i := range a {
		ta, tb := transcript(a[i].w), transcript(b[i].w)
		if ta == tb {
			continue
		}
		if dir := os.Getenv("SIM_DUMP"); dir != "" { // both stories, for a diff
			_ = os.WriteFile(fmt.Sprintf("%s/%d.1", dir, a[i].seed), []byte(ta), 0o644)
			_ = os.WriteFile(fmt.Sprintf("%s/%d.2", dir, a[i].seed), []byte(tb), 0o644)
		}
		la, lb := strings.Split(ta, "\n"), strings.Split(tb, "\n")
		for j := range min(len(la), len(lb)) {
			if la[j] != lb[j] {
				lo := max(j-6, 0)
				t.Errorf("%s %d told two stories; first difference at event %d:\n  before:\n    %s\n  run 1: %s\n  run 2: %s",
					what, a[i].seed, j, strings.Join(la[lo:j], "\n    "), la[j], lb[j])
				break
			}
		}
	}
}
