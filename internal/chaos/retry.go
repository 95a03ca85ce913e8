package chaos

import (
	"time"

	"github.com/idempay/idempay"
)

// Elapsed is the wall-clock budget of one flight in a chaos run: a bound
// for liveness only, far above what a flight takes on any machine. The
// attempts (MaxAttempts) and the faults decide each outcome; a budget of a
// few seconds raced the machine's load instead: on a busy machine a second
// pass's lookup, paging through every charge of the run, outlasted ten
// seconds and left its intent unknown with nothing wrong (TestChaosOmise,
// 31 to 84 intents, under three CPU hogs).
const Elapsed = 5 * time.Minute

// FakeLease is the key lease a chaos run gives its fake: short, so that a
// key whose request was dropped is free again within a retry's waits. Pass
// it as Config.ServerLease too.
const FakeLease = 30 * time.Millisecond

// Retry is the retry policy of the chaos tests: attempts tries per flight,
// short waits, and Elapsed as the budget.
func Retry(attempts int) idempay.RetryPolicy {
	return idempay.RetryPolicy{MaxAttempts: attempts, InitialInterval: 2 * time.Millisecond,
		MaxInterval: 20 * time.Millisecond, MaxElapsed: Elapsed}
}
