package filestore_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/filestore"
)

// leaseChildEnv is the store file of TestVoidLeasesChild.
const leaseChildEnv = "IDEMPAY_FILESTORE_LEASE_PATH"

// heldLease is the lease the child takes: far longer than the test, so
// that only voiding it lets another owner in.
const heldLease = time.Hour

// TestVoidLeasesChild is the child half of TestOpenVoidsLeasesOfAKilledHolder:
// it reserves an open and a pending intent, holding both leases, says so
// and waits to be killed.
func TestVoidLeasesChild(t *testing.T) {
	path := os.Getenv(leaseChildEnv)
	if path == "" {
		t.Skip("runs only as the child of TestOpenVoidsLeasesOfAKilledHolder")
	}
	s, err := filestore.Open(path, filestore.WithSweepInterval(0))
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	open := req("ns", "open", "key-open", "dead/1")
	open.Lease = heldLease
	pending := req("ns", "pending", "key-pending", "dead/2")
	pending.Lease = heldLease
	mustReserve(t, s, open)
	r := mustReserve(t, s, pending).Record
	res := closeWith(r, idempay.StatePending)
	res.LeaseOwner = "dead/2"
	mustResolve(t, s, res)
	if got := mustReserve(t, s, pending); !got.Claimed {
		fmt.Println("could not claim the pending intent again")
		os.Exit(2)
	}
	fmt.Println("holding")
	time.Sleep(time.Minute)
	os.Exit(3)
}

// TestOpenVoidsLeasesOfAKilledHolder: after the process holding the file
// is killed, the next Open voids its leases, and another owner claims its
// open and pending intents at once, with their keys.
func TestOpenVoidsLeasesOfAKilledHolder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	path := filepath.Join(t.TempDir(), "keys.db")
	killHolder(t, path)
	start := time.Now()
	s, err := filestore.Open(path, filestore.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := s.VoidedLeases(); n != 2 {
		t.Errorf("VoidedLeases = %d; want 2", n)
	}
	for _, id := range []string{"open", "pending"} {
		res := mustReserve(t, s, req("ns", id, "key-heir", "heir"))
		if !res.Claimed || res.Created || res.Record.Key != "key-"+id || res.Record.LeaseOwner != "heir" {
			t.Errorf("Reserve(%s) by another owner after the kill = %+v; want claimed at once with the dead holder's key", id, res)
		}
	}
	t.Logf("claimed %v after the kill", time.Since(start))
}

// killHolder runs TestVoidLeasesChild on path and kills it with SIGKILL
// once it holds its leases.
func killHolder(t *testing.T, path string) { startHolder(t, path)() }

// startHolder runs TestVoidLeasesChild on path and returns once it holds
// its leases, with the function that kills it with SIGKILL.
func startHolder(t *testing.T, path string) (kill func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestVoidLeasesChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), leaseChildEnv+"="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "holding" {
		t.Logf("child: %s", sc.Text())
	}
	return func() {
		t.Helper()
		defer timer.Stop()
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("the child ended with %v before it was killed", cmd.ProcessState)
		}
	}
}

// TestCloseKeepsLeases: after Close the process may live on with flights
// still sending, so the next Open keeps the leases, which then run out on
// their own.
func TestCloseKeepsLeases(t *testing.T) {
	c := newClock()
	path := filepath.Join(t.TempDir(), "keys.db")
	s := reopen(t, path, c)
	mustReserve(t, s, req("ns", "a", "k", "first"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, path, c)
	defer s.Close()
	if n := s.VoidedLeases(); n != 0 {
		t.Errorf("VoidedLeases after Close = %d; want 0", n)
	}
	if res := mustReserve(t, s, req("ns", "a", "k2", "second")); res.Claimed {
		t.Errorf("Reserve by another owner after a Close = %+v; want the lease kept", res)
	}
	c.Advance(time.Minute)
	if res := mustReserve(t, s, req("ns", "a", "k2", "second")); !res.Claimed {
		t.Errorf("Reserve by another owner once the lease ran out = %+v; want claimed", res)
	}
}
