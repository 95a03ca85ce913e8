package guard_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
	"github.com/idempay/idempay/keystore/memstore"
)

// killCase is a store that outlives a process: the child serves a request
// through it and dies mid-handler; the parent opens it after.
type killCase struct {
	name    string
	pending string // if set, the case is skipped with this message
	// prepare runs in the parent before the child starts; it returns the
	// child's environment and a function that opens the parent's view of
	// the store once the child is dead.
	prepare func(t *testing.T) (env []string, open func(t *testing.T) idempay.KeyStore)
	// child opens the store in the child, from its environment.
	child func() (idempay.KeyStore, error)
}

func killCases() []killCase {
	return append([]killCase{remoteMemstore()}, extraKillCases()...)
}

// remoteMemstore: a memstore in the parent, served to the child over RPC,
// as a database server is to a fleet.
func remoteMemstore() killCase {
	return killCase{
		name: "memstore-over-rpc",
		prepare: func(t *testing.T) ([]string, func(*testing.T) idempay.KeyStore) {
			s := memstore.New()
			return []string{"GUARD_KILL_ADDR=" + serveStore(t, s)}, func(*testing.T) idempay.KeyStore { return s }
		},
		child: func() (idempay.KeyStore, error) { return dialStore(os.Getenv("GUARD_KILL_ADDR")) },
	}
}

const killLease = 600 * time.Millisecond

// Rule: a handler killed mid-request (SIGKILL: no defer, no release)
// leaves its key leased; retries get 409 until the lease runs out, and
// then a retry runs the handler again and its answer is stored. The
// article's lock without a lease stayed for 24 hours.
func TestKilledHandlerIsReclaimedAfterItsLease(t *testing.T) {
	if name := os.Getenv("GUARD_KILL_CHILD"); name != "" {
		runKillChild(t, name)
		return
	}
	for _, kc := range killCases() {
		t.Run("store="+kc.name, func(t *testing.T) {
			if kc.pending != "" {
				t.Skip(kc.pending)
			}
			env, open := kc.prepare(t)
			killed := startAndKill(t, kc.name, env)
			store := open(t)
			c := &counter{}
			h := newGuard(t, store, guard.WithLease(killLease)).Wrap(c)
			if time.Since(killed) < killLease/2 {
				if w := serve(h, post("x")); w.Code != http.StatusConflict {
					t.Fatalf("retry right after the kill: %d %s, want 409 (the dead child's lease)", w.Code, w.Body)
				}
			}
			time.Sleep(killLease - time.Since(killed) + 50*time.Millisecond)
			w := serve(h, post("x"))
			if w.Code != http.StatusCreated || c.runs.Load() != 1 || w.Header().Get(guard.HeaderReplayed) != "" {
				t.Fatalf("retry after the lease: %d %s, runs %d; want the handler run again", w.Code, w.Body, c.runs.Load())
			}
			if w := serve(h, post("x")); w.Header().Get(guard.HeaderReplayed) != "true" || c.runs.Load() != 1 {
				t.Fatalf("replay after the takeover: %d, runs %d", w.Code, c.runs.Load())
			}
		})
	}
}

// startAndKill re-executes the test binary as a child serving one guarded
// request, waits until its handler runs, SIGKILLs it, and returns when.
func startAndKill(t *testing.T, name string, env []string) time.Time {
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledHandlerIsReclaimedAfterItsLease$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), "GUARD_KILL_CHILD="+name), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the child ended before its handler ran")
			}
			if l != "handler running" {
				continue
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			at := time.Now()
			if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("child: %v, want killed", err)
			}
			return at
		case <-timeout:
			cmd.Process.Kill()
			t.Fatal("the child's handler did not start in 30 s")
		}
	}
}

// runKillChild is the child: one guarded request whose handler announces
// itself and blocks until the process is killed.
func runKillChild(t *testing.T, name string) {
	for _, kc := range killCases() {
		if kc.name != name {
			continue
		}
		store, err := kc.child()
		if err != nil {
			t.Fatalf("child: open store: %v", err)
		}
		g := newGuard(t, store, guard.WithLease(killLease), guard.WithInstance("doomed-child"))
		g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Println("handler running")
			select {} // until SIGKILL
		})).ServeHTTP(httptest.NewRecorder(), post("x"))
	}
	t.Fatalf("child: no kill case %q", name)
}
