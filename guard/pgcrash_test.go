package guard_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
	"github.com/idempay/idempay/internal/testenv"
	"github.com/idempay/idempay/keystore/postgres"
)

// pgBin is where the PostgreSQL server binaries are looked for.
const pgBin = "/usr/lib/postgresql/15/bin"

// privatePG is a PostgreSQL server of the test's own, under a temporary
// directory, whose WAL writer flushes as rarely as it can: a commit made
// without a flush is lost by an immediate stop for 10 s after it.
type privatePG struct {
	t    *testing.T
	dir  string
	port int
}

// startPrivatePG initialises and starts a private server, or skips (fails
// under CI=true) when the binaries or runuser are missing.
func startPrivatePG(t *testing.T) *privatePG {
	t.Helper()
	for _, bin := range []string{filepath.Join(pgBin, "initdb"), filepath.Join(pgBin, "pg_ctl")} {
		if _, err := os.Stat(bin); err != nil {
			testenv.Unavailable(t, "PostgreSQL binaries: %v", err)
		}
	}
	if _, err := exec.LookPath("runuser"); err != nil {
		testenv.Unavailable(t, "runuser (PostgreSQL refuses to run as root): %v", err)
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if out, err := exec.Command("chown", "postgres:postgres", d).CombinedOutput(); err != nil {
			testenv.Unavailable(t, "chown to postgres: %v %s", err, out)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pg := &privatePG{t: t, dir: dir, port: l.Addr().(*net.TCPAddr).Port}
	l.Close()
	pg.run("initdb", "-D", pg.data(), "-U", "postgres", "--auth=trust", "--no-sync")
	pg.start()
	t.Cleanup(func() { _ = pg.ctl("stop", "-m", "immediate") })
	return pg
}

func (pg *privatePG) data() string { return filepath.Join(pg.dir, "data") }

func (pg *privatePG) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.port)
}

func (pg *privatePG) run(bin string, args ...string) {
	pg.t.Helper()
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(pgBin, bin)}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		pg.t.Fatalf("%s: %v\n%s", bin, err, out)
	}
}

func (pg *privatePG) ctl(args ...string) error {
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(pgBin, "pg_ctl"), "-D", pg.data()}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %v: %w\n%s", args, err, out)
	}
	return nil
}

// start starts the server and waits until it accepts connections.
func (pg *privatePG) start() {
	pg.t.Helper()
	opts := "-p " + strconv.Itoa(pg.port) + " -k " + pg.dir + " -c listen_addresses=127.0.0.1" +
		" -c wal_writer_delay=10000 -c wal_writer_flush_after=1GB -c fsync=on"
	if err := pg.ctl("start", "-w", "-t", "60", "-l", filepath.Join(pg.dir, "log"), "-o", opts); err != nil {
		pg.t.Fatal(err)
	}
}

// crash stops the server at once, as a power cut would: the WAL not
// flushed yet is lost.
func (pg *privatePG) crash() {
	pg.t.Helper()
	if err := pg.ctl("stop", "-m", "immediate", "-w"); err != nil {
		pg.t.Fatal(err)
	}
}

// Rule: the lock of an unsettled request survives a crash of the store's
// server right after the 502 went out: the retry is refused, and the
// handler does not run a second time.
func TestUnsettledLockSurvivesAPostgresCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	pg := startPrivatePG(t)
	ctx := context.Background()
	open := func() *postgres.Store {
		s, err := postgres.Open(ctx, pg.dsn())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	store := open()
	h := &scripted{statuses: []int{http.StatusBadGateway}, unsettled: map[int]bool{1: true}}
	g := newGuard(t, store, guard.WithLease(idempay.MinLease))
	if w := serve(g.Wrap(h), post("x")); w.Code != http.StatusBadGateway {
		t.Fatalf("first: %d %s", w.Code, w.Body)
	}
	pg.crash()
	store.Close()
	pg.start()
	store = open()
	defer store.Close()
	g = newGuard(t, store, guard.WithLease(idempay.MinLease))
	// Wait out the first request's lease (on the server's clock), then
	// the retry's answer is the verdict.
	deadline := time.Now().Add(30 * time.Second)
	for {
		w := serve(g.Wrap(h), post("x"))
		if w.Code == http.StatusConflict && problemCode(t, w) == guard.CodeKeyInUse && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if h.runs.Load() != 1 || w.Code != http.StatusConflict || problemCode(t, w) != guard.CodeKeyUnsettled {
			t.Fatalf("retry after the crash: %d %s after %d runs; want 409 %s and one run", w.Code, w.Body, h.runs.Load(), guard.CodeKeyUnsettled)
		}
		return
	}
}
