package idempay_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	crashIntents = flag.Int("crash.intents", 60, "intents charged by the crash test")
	crashKills   = flag.Int("crash.kills", 3, "how many times the crash test kills its child")
)

const crashChildEnv = "IDEMPAY_CRASH_CHILD"

// TestCrashAndResume runs a child process that charges intents with the
// file store and kills it with SIGKILL mid-flight, several times, then lets
// a last child finish: no intent may be charged twice, none lost.
func TestCrashAndResume(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("parent only")
	}
	api, url, stop := refserver.Start(refserver.Config{
		Faults:  refserver.FaultRates{Pre: 0.05, Mid: 0.05, Post: 0.1},
		Seed:    11,
		Lease:   50 * time.Millisecond,
		Latency: 2 * time.Millisecond, // widen the window a kill can fall into
	})
	defer stop()
	db := filepath.Join(t.TempDir(), "keys.db")

	var stall time.Duration
	for kill := range *crashKills {
		done, waited := runCrashChild(t, url, db, 5+kill*7)
		stall = max(stall, waited)
		t.Logf("kill %d: child reported %d intents settled before SIGKILL", kill+1, done)
	}
	done, waited := runCrashChild(t, url, db, -1)
	stall = max(stall, waited)
	require.Equal(t, *crashIntents, done, "the last child settles every intent")
	// With the default lease, a restart does not wait for the dead
	// process's leases: the file store voids them on open, and elsewhere
	// they are short and renewed, so a crash costs seconds at most.
	t.Logf("longest stall of a restarted child on the dead process's leases: %s (default lease %s)", stall, idempay.DefaultLease)
	assert.Less(t, stall, idempay.DefaultLease, "a restart resumes the dead process's intents within one lease")

	require.NoError(t, api.Ledger().Check(), "no intent charged twice")
	assert.Equal(t, *crashIntents, api.Ledger().Len(), "every intent charged exactly once")
	keys := api.Stats().KeysByOrder
	for i := range *crashIntents {
		id := crashIntent(i)
		assert.Len(t, keys[id], 1, "intent %s sent with one key across every process", id)
	}
	store, err := filestore.Open(db)
	require.NoError(t, err)
	defer store.Close()
	open, err := store.ListOpen(context.Background(), "ownapi:default", idempay.Cursor{}, 1000)
	require.NoError(t, err)
	assert.Empty(t, open, "nothing left unresolved")
}

// runCrashChild starts the child and, if killAfter >= 0, kills it once it
// has settled killAfter intents. It returns how many the child reported,
// and how long the child waited on leases held by a dead process.
func runCrashChild(t *testing.T, url, db string, killAfter int) (int, time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-crash.intents="+strconv.Itoa(*crashIntents))
	cmd.Env = append(os.Environ(), crashChildEnv+"=1", "IDEMPAY_CRASH_URL="+url, "IDEMPAY_CRASH_DB="+db)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	done, stall := 0, time.Duration(0)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if _, ok := parseSettled(sc.Text()); ok {
			done++
		}
		var ms int64
		if _, err := fmt.Sscanf(sc.Text(), "stalled %d", &ms); err == nil {
			stall += time.Duration(ms) * time.Millisecond
		}
		if killAfter >= 0 && done >= killAfter {
			// Let the child get somewhere into its next charge: reserving,
			// sending, or settling.
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			break
		}
	}
	_ = cmd.Wait() // killed, or finished: the ledger is what we check
	return done, stall
}

func parseSettled(line string) (string, bool) {
	var id string
	_, err := fmt.Sscanf(line, "settled %s", &id)
	return id, err == nil
}

func crashIntent(i int) string { return fmt.Sprintf("crash-%04d", i) }

// TestCrashChild is the child of TestCrashAndResume: it charges every intent
// until each is settled, printing each one as it settles.
func TestCrashChild(t *testing.T) {
	if os.Getenv(crashChildEnv) == "" {
		t.Skip("run by TestCrashAndResume")
	}
	store, err := filestore.Open(os.Getenv("IDEMPAY_CRASH_DB"))
	require.NoError(t, err)
	// A child that finishes closes its store, as a program that ends
	// cleanly does: the file store commits a success without waiting for
	// its sync, and only Close (or the next durable write) lands the last
	// ones. A kill loses them, which the next child's resume answers.
	defer store.Close()
	c, err := idempay.New(idempay.Config{ // the default lease
		BaseURL: os.Getenv("IDEMPAY_CRASH_URL"), Store: store,
		Retry: idempay.RetryPolicy{MaxAttempts: 6, InitialInterval: 2 * time.Millisecond, MaxInterval: 20 * time.Millisecond},
	})
	require.NoError(t, err)
	for i := range *crashIntents {
		req := idempay.ChargeRequest{IntentID: crashIntent(i), Amount: int64(1000 + i), Currency: "JPY", Source: "tokn_crash"}
		for try := 0; ; try++ {
			start := time.Now()
			_, err := c.Charge(context.Background(), req)
			if err == nil {
				fmt.Printf("settled %s\n", req.IntentID)
				break
			}
			require.Less(t, try, 200, "intent %s never settled: %v", req.IntentID, err)
			require.True(t, errors.Is(err, idempay.ErrOutcomeUnknown), "only unknown outcomes are retried: %v", err)
			if errors.Is(err, idempay.ErrInProgress) {
				time.Sleep(50 * time.Millisecond) // a killed process's lease would run out
				fmt.Printf("stalled %d\n", time.Since(start).Milliseconds())
			}
		}
	}
}
