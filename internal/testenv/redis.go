package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Redis is a redis-server of a test's own, with its working directory (and
// so its AOF and RDB files) under the test's temporary directory, on a
// free loopback port. A test may kill it with SIGKILL (Kill) and start it
// again with other settings, which the shared server must never suffer. It
// is killed when the test ends.
type Redis struct {
	tb   testing.TB
	bin  string
	dir  string
	port int
	args []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd has exited and been waited for
}

// AOFEverySec are the usual production persistence settings: an AOF
// fsynced once a second, no RDB snapshots. A Kill loses up to about a
// second of acknowledged writes.
var AOFEverySec = []string{"--appendonly", "yes", "--appendfsync", "everysec", "--save", ""}

// NoPersistence is how the shared CI server runs: a restart loses the
// whole data set.
var NoPersistence = []string{"--appendonly", "no", "--save", ""}

// PrivateRedis starts a private redis-server (found in IDEMPAY_REDIS_SERVER
// or on PATH) with args added to its command line, such as AOFEverySec.
// Without the binary the test is skipped (failed under CI).
func PrivateRedis(tb testing.TB, args ...string) *Redis {
	tb.Helper()
	bin := getenv("IDEMPAY_REDIS_SERVER", "redis-server")
	path, err := exec.LookPath(bin)
	if err != nil {
		Unavailable(tb, "a private Redis server cannot be started: %v", err)
		return nil // only when tb does not stop the test (a recorder)
	}
	r := &Redis{tb: tb, bin: path, dir: tb.TempDir(), port: FreePort(tb), args: args}
	tb.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.kill()
	})
	r.Start()
	return r
}

// Addr is the server's host:port.
func (r *Redis) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// Start starts the stopped server with the arguments it was made with, or
// args if any are given (they replace them, for the next starts too), and
// waits until it answers PING with PONG (after loading its data set).
func (r *Redis) Start(args ...string) {
	r.tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		r.tb.Fatal("testenv: Redis.Start on a running server")
	}
	if len(args) > 0 {
		r.args = args
	}
	argv := append([]string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--daemonize", "no", "--protected-mode", "no", "--logfile", "redis.log"}, r.args...)
	cmd := exec.Command(r.bin, argv...)
	if err := cmd.Start(); err != nil {
		r.tb.Fatalf("redis-server: %v", err)
	}
	r.cmd, r.exited = cmd, make(chan struct{})
	go func(done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(r.exited)
	if err := r.waitReady(); err != nil {
		log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
		r.kill()
		r.tb.Fatalf("redis-server on port %d: %v\n%s", r.port, err, log)
	}
}

// Kill ends the server with SIGKILL: what it had not fsynced is lost, as
// in a crash of its host.
func (r *Redis) Kill() {
	r.tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kill()
}

// Restart kills the server and starts it again, with args if any (see
// Start).
func (r *Redis) Restart(args ...string) {
	r.tb.Helper()
	r.Kill()
	r.Start(args...)
}

func (r *Redis) kill() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.exited
	r.cmd = nil
}

// waitReady polls the server with PING until it answers PONG, for at most
// a minute (a liveness bound, not a verdict: a loaded machine is slow).
func (r *Redis) waitReady() error {
	deadline := time.Now().Add(time.Minute)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-r.exited:
			return errors.New("the server exited at start")
		default:
		}
		if last = r.ping(); last == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no PONG within a minute: %w", last)
}

// ping sends PING in RESP and expects +PONG (a server loading its data set
// answers -LOADING).
func (r *Redis) ping() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", r.Addr())
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}
