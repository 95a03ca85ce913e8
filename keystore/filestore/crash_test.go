package filestore_test

import (
	"bufio"
	"bytes"
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/filestore"
	bolt "go.etcd.io/bbolt"
)

// Environment of the crash child: the store file, and the round number that
// keeps intent IDs of successive children apart.
const (
	crashPathEnv  = "IDEMPAY_FILESTORE_CRASH_PATH"
	crashRoundEnv = "IDEMPAY_FILESTORE_CRASH_ROUND"
	// crashCloseEnv makes the child close each intent it reserves, as
	// failed or succeeded in turn (see TestCrashKeepsFailedCloses).
	crashCloseEnv = "IDEMPAY_FILESTORE_CRASH_CLOSE"
)

// crashWriters is how many goroutines of the child reserve at once, so that
// the kill often lands in the middle of a shared commit.
const crashWriters = 8

// TestCrashChild is the child half of TestCrashDurability: it reserves
// intents from several goroutines until it is killed, and prints each key
// only after Reserve has returned it. It never ends on its own (but for a
// safety exit, in case the parent died).
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashPathEnv)
	if path == "" {
		t.Skip("runs only as the child of TestCrashDurability")
	}
	s, err := filestore.Open(path, filestore.WithSweepInterval(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: open:", err)
		os.Exit(2)
	}
	round := os.Getenv(crashRoundEnv)
	for w := range crashWriters {
		go func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("r%s-w%d-%06d", round, w, i)
				key := crand.Text()
				got, err := s.Reserve(t.Context(), idempay.ReserveRequest{
					Namespace: "crash", ID: id, Attempt: 1, Key: key, Fingerprint: "fp-" + key,
					Owner: "child", Lease: time.Minute,
				})
				if err != nil || !got.Created {
					fmt.Fprintf(os.Stderr, "child: Reserve(%s) = created %v, %v\n", id, got.Created, err)
					os.Exit(2)
				}
				// One write call per line: a pipe write this small is
				// atomic, so the parent never reads half a line.
				os.Stdout.WriteString("reserved " + id + " " + key + "\n")
				if os.Getenv(crashCloseEnv) == "" {
					continue
				}
				st := idempay.StateFailed
				if i%2 == 0 {
					st = idempay.StateSucceeded
				}
				err = s.Resolve(t.Context(), idempay.Resolution{Namespace: "crash", ID: id, Key: key, State: st})
				if err != nil {
					fmt.Fprintf(os.Stderr, "child: Resolve(%s): %v\n", id, err)
					os.Exit(2)
				}
				os.Stdout.WriteString(string(st) + " " + id + " " + key + "\n")
			}
		}()
	}
	time.Sleep(30 * time.Second)
	os.Exit(3)
}

// TestCrashDurability kills a child process with SIGKILL while it reserves
// intents, reopens the file and checks that every key the child was told
// was reserved is there, unchanged, and that the file is consistent. It
// repeats on the same file, so later rounds also open a file left by a kill.
//
// SIGKILL tests the process dying at any instruction; the data it wrote is
// still in the page cache. Surviving a power cut depends on fsync, which
// bbolt calls on every commit and which this test cannot observe.
func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	path := filepath.Join(t.TempDir(), "keys.db")
	printed := map[string]string{} // intent ID -> key the child printed
	const rounds = 5
	for round := range rounds {
		n := crashRound(t, path, round, printed, nil)
		t.Logf("round %d: child killed after %d printed reservations", round, n)
		checkCrashFile(t, path, printed)
		if t.Failed() {
			return
		}
	}
}

// crashRound runs one child and kills it after a random number of printed
// reservations; it adds what the child printed to printed and returns how
// many lines that round printed.
func crashRound(t *testing.T, path string, round int, printed map[string]string, closed map[string]idempay.State) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashPathEnv+"="+path, fmt.Sprintf("%s=%d", crashRoundEnv, round))
	if closed != nil {
		cmd.Env = append(cmd.Env, crashCloseEnv+"=1")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := func() { cmd.Process.Signal(syscall.SIGKILL) }
	// A child that prints too slowly is killed anyway, which bounds the
	// test at about rounds × 1.5 s on a loaded machine.
	timer := time.AfterFunc(1500*time.Millisecond, kill)
	defer timer.Stop()

	killAt := 100 + rand.IntN(1000)
	n := 0
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && closed != nil && f[0] != "reserved" {
			closed[f[1]] = idempay.State(f[0])
			continue
		}
		if len(f) != 3 || f[0] != "reserved" {
			continue
		}
		printed[f[1]] = f[2]
		if n++; n == killAt {
			kill()
		}
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("round %d: child ended with %v before it was killed; stderr:\n%s", round, err, stderr.String())
	}
	if n == 0 {
		t.Fatalf("round %d: the child printed nothing before it was killed; stderr:\n%s", round, stderr.String())
	}
	return n
}

// checkCrashFile checks the file left by a killed child: bbolt's own
// consistency check, then every printed key through a reopened Store.
func checkCrashFile(t *testing.T, path string, printed map[string]string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("bbolt cannot open the file left by the killed child: %v", err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatalf("the file left by the killed child fails bbolt's check: %v", err)
	}

	s, err := filestore.Open(path, filestore.WithSweepInterval(0))
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer s.Close()
	lost := 0
	for id, key := range printed {
		r, err := s.Load(t.Context(), "crash", id)
		switch {
		case err != nil:
			lost++
			if lost <= 5 {
				t.Errorf("intent %s, printed as reserved with key %s, is lost: %v", id, key, err)
			}
		case r.Key != key || r.Fingerprint != "fp-"+key || r.State != idempay.StateOpen:
			t.Errorf("intent %s: stored key %q fingerprint %q state %s; want key %q, fingerprint %q, open", id, r.Key, r.Fingerprint, r.State, key, "fp-"+key)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d printed reservations lost", lost, len(printed))
	}
	// Reservations committed but not yet printed when the child died
	// may be there as well, so the index holds at least the printed ones,
	// and every record it names must decode.
	if open := listAll(t, s, "crash", 500); len(open) < len(printed) {
		t.Errorf("ListOpen after the kill = %d records; want at least the %d printed", len(open), len(printed))
	}
}

// TestCrashKeepsFailedCloses kills a child that reserves intents and closes
// each, failed and succeeded in turn: a failure it was told was recorded
// must be there after the kill (its loss would reopen a key never sent, and
// a resume would send it to a customer told "failed"); a success may be
// lost, but then the intent is open with its key, to be settled by replay.
func TestCrashKeepsFailedCloses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	path := filepath.Join(t.TempDir(), "keys.db")
	printed := map[string]string{}
	closed := map[string]idempay.State{}
	for round := range 3 {
		crashRound(t, path, round, printed, closed)
	}
	s, err := filestore.Open(path, filestore.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lostSuccess := 0
	for id, st := range closed {
		r, err := s.Load(t.Context(), "crash", id)
		switch {
		case err != nil:
			t.Errorf("intent %s, closed %s, is gone: %v", id, st, err)
		case r.Key != printed[id]:
			t.Errorf("intent %s: key %q; want %q", id, r.Key, printed[id])
		case st == idempay.StateFailed && r.State != idempay.StateFailed:
			t.Errorf("intent %s was told failed, and is %s after the kill", id, r.State)
		case st == idempay.StateSucceeded && r.State == idempay.StateOpen:
			lostSuccess++
		case r.State != st:
			t.Errorf("intent %s was told %s, and is %s after the kill", id, st, r.State)
		}
	}
	t.Logf("%d closes printed; %d successes lost by the kills and reopened", len(closed), lostSuccess)
}
