//go:build unix

package testenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// FreezeWALWriter stops the server's WAL writer (SIGSTOP) until the next
// Crash, which kills it: from now on a commit made without a flush stays
// in the server's buffers, whatever the time, and the next Crash loses it.
// It models a power cut exactly, where LossySettings only make one likely:
// a test whose verdict rests on a loss freezes the writer first, so that
// how busy the machine is cannot decide it. Commits with a flush
// (synchronous_commit on) are unaffected: the committing backend flushes
// the WAL itself.
func (p *Postgres) FreezeWALWriter() {
	p.tb.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	pid, err := p.walWriter()
	if err != nil {
		Unavailable(p.tb, "cannot freeze the WAL writer: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		p.tb.Fatalf("SIGSTOP the WAL writer %d: %v", pid, err)
	}
	p.frozen = pid
}

// killFrozen kills the frozen WAL writer, which never ran again: what it
// had not written is lost with the server's shared memory.
func (p *Postgres) killFrozen() {
	if p.frozen == 0 {
		return
	}
	_ = syscall.Kill(p.frozen, syscall.SIGKILL)
	p.frozen = 0
}

// walWriter finds the WAL writer among the postmaster's children.
func (p *Postgres) walWriter() (int, error) {
	head, err := os.ReadFile(filepath.Join(p.dir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	postmaster := strings.TrimSpace(strings.SplitN(string(head), "\n", 2)[0])
	procs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(procs) == 0 {
		return 0, fmt.Errorf("no /proc to find it in (%v)", err)
	}
	for _, stat := range procs {
		b, err := os.ReadFile(stat)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after
		// the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 || f[1] != postmaster {
			continue
		}
		dir := filepath.Dir(stat)
		cmd, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if bytes.Contains(cmd, []byte("walwriter")) {
			return strconv.Atoi(filepath.Base(dir))
		}
	}
	return 0, fmt.Errorf("no walwriter child of postmaster %s", postmaster)
}
