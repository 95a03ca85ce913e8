package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Postgres is a PostgreSQL server of a test's own, in a data directory
// under the test's temporary directory, listening on a free loopback port.
// A test may crash it (Crash: an immediate stop, which loses what was
// committed without a WAL flush) and start it again, which the shared
// server must never suffer. It is stopped when the test ends.
type Postgres struct {
	tb   testing.TB
	bin  string // directory of initdb, pg_ctl, postgres
	dir  string // data directory
	port int

	mu      sync.Mutex
	running bool
	frozen  int // the pid of the WAL writer FreezeWALWriter stopped, if any
}

// LossySettings are PostgreSQL settings that make the window of loss of an
// asynchronous commit deterministic for a test: the WAL writer flushes
// only every 10 s and never for volume, and nothing else writes WAL behind
// the test's back. A commit made with synchronous_commit off is lost by a
// Crash within 10 s of it, unless a synchronous commit flushed it since.
var LossySettings = []string{
	"wal_writer_delay = 10s",
	"wal_writer_flush_after = 1GB",
	"autovacuum = off",
}

// PrivatePostgres initialises and starts a private PostgreSQL server with
// settings (lines of postgresql.conf, such as "wal_writer_delay = 10s")
// added to its defaults. The server's binaries are found in
// IDEMPAY_PG_BIN, on PATH, or in /usr/lib/postgresql/<version>/bin; when
// there are none the test is skipped (failed under CI). Run as root, the
// server runs as the postgres user (PostgreSQL refuses root), through
// runuser.
func PrivatePostgres(tb testing.TB, settings ...string) *Postgres {
	tb.Helper()
	bin, err := postgresBin()
	if err != nil {
		Unavailable(tb, "a private PostgreSQL server cannot be started: %v", err)
		return nil // only when tb does not stop the test (a recorder)
	}
	root := tb.TempDir()
	dir := filepath.Join(root, "pgdata")
	if err := os.Mkdir(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := shareWithServerUser(root, dir); err != nil {
		Unavailable(tb, "a private PostgreSQL server cannot be started: %v", err)
		return nil
	}
	p := &Postgres{tb: tb, bin: bin, dir: dir, port: FreePort(tb)}
	if out, err := p.run("initdb", "-D", dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"); err != nil {
		Unavailable(tb, "initdb failed: %v\n%s", err, out)
		return nil
	}
	conf := append([]string{
		"listen_addresses = '127.0.0.1'",
		"port = " + strconv.Itoa(p.port),
		"unix_socket_directories = ''",
		"max_connections = 30",
		"shared_buffers = 16MB",
		"fsync = on",
	}, settings...)
	f, err := os.OpenFile(filepath.Join(dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	_, err = f.WriteString("\n# testenv.PrivatePostgres\n" + strings.Join(conf, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.killFrozen()
		if p.running {
			_, _ = p.run("pg_ctl", "-D", p.dir, "-m", "immediate", "-w", "stop")
		}
	})
	p.Start()
	return p
}

// DSN is the server's connection string, database postgres, trust auth.
func (p *Postgres) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
}

// Addr is the server's host:port.
func (p *Postgres) Addr() string { return "127.0.0.1:" + strconv.Itoa(p.port) }

// Start starts the stopped server and waits until it accepts connections
// (after crash recovery, if it was crashed).
func (p *Postgres) Start() {
	p.tb.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if out, err := p.run("pg_ctl", "-D", p.dir, "-l", filepath.Join(p.dir, "server.log"), "-w", "-t", "120", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "server.log"))
		p.tb.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	p.running = true
}

// Crash stops the server at once (pg_ctl stop -m immediate): no shutdown
// checkpoint, and the WAL still in the server's buffers, the asynchronous
// commits the WAL writer had not written yet, is lost as in a power cut.
// A WAL writer frozen by FreezeWALWriter is killed first, never having run
// again.
func (p *Postgres) Crash() { p.stop("immediate") }

// Stop shuts the server down cleanly (-m fast): nothing is lost.
func (p *Postgres) Stop() { p.stop("fast") }

// Restart crashes the server and starts it again.
func (p *Postgres) Restart() {
	p.tb.Helper()
	p.Crash()
	p.Start()
}

func (p *Postgres) stop(mode string) {
	p.tb.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.killFrozen() // the postmaster then ends its children and reinitialises: nothing more is written
	if out, err := p.run("pg_ctl", "-D", p.dir, "-m", mode, "-w", "-t", "120", "stop"); err != nil {
		p.tb.Fatalf("pg_ctl stop -m %s: %v\n%s", mode, err, out)
	}
	p.running = false
}

// run runs one of the server's binaries, as the postgres user when this
// process is root.
func (p *Postgres) run(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	path := filepath.Join(p.bin, name)
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd.CombinedOutput()
}

// postgresBin finds the directory holding initdb and pg_ctl.
func postgresBin() (string, error) {
	if d := os.Getenv("IDEMPAY_PG_BIN"); d != "" {
		return d, checkBin(d)
	}
	if path, err := exec.LookPath("pg_ctl"); err == nil {
		if d := filepath.Dir(path); checkBin(d) == nil {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs))) // the newest version first (as far as names sort)
	for _, d := range dirs {
		if checkBin(d) == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no initdb and pg_ctl found (set IDEMPAY_PG_BIN, or install postgresql on %s)", runtime.GOOS)
}

func checkBin(dir string) error {
	for _, n := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	return nil
}

// shareWithServerUser lets the postgres user reach dir when this process is
// root: the directories above it (the test's own temporary directories)
// become traversable, and dir becomes the postgres user's.
func shareWithServerUser(root, dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root, and there is no postgres user to run the server as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for d := root; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()) && d != filepath.Clean(os.TempDir()); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o711); err != nil {
			return err
		}
	}
	return os.Chown(dir, uid, gid)
}

// FreePort returns a loopback TCP port that was free a moment ago, for a
// private server to listen on.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
