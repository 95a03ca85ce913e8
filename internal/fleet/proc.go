package fleet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// The environment of a child: its role, and its arguments as JSON.
const (
	envRole = "IDEMPAY_FLEET_ROLE"
	envArgs = "IDEMPAY_FLEET_ARGS"
)

// Roles a child process can play.
const (
	roleRacer  = "racer"
	roleHolder = "holder" // claims intents and is killed
	roleHeir   = "heir"   // takes the holder's intents over
)

// childRole is the role this process was started with, "" in the parent.
func childRole() string { return os.Getenv(envRole) }

// args is what the parent tells a child.
type args struct {
	URL     string        // the reference server
	Loc     string        // where the store is (Store.New's answer)
	Proc    int           // the child's number, which seeds its order
	Seed    uint64        // the run's seed
	Prefix  string        // intent ID prefix
	Intents int           // how many intents
	Workers int           // concurrent callers
	Lease   time.Duration // the client's lease
}

// linePrefix marks the lines of stdout that are events; the rest is the
// child's own test output, kept for failure messages.
const linePrefix = "fleet|"

// event is one line a child reports.
type event struct {
	Ev    string `json:"ev"`              // evResult or evPhase
	Proc  int    `json:"proc"`            // set by the parent
	Phase int    `json:"phase,omitempty"` // the pass the event belongs to

	Intent     string `json:"intent,omitempty"`
	Outcome    string `json:"outcome,omitempty"` // succeeded, unknown or failed
	InProgress bool   `json:"in_progress,omitempty"`
	Key        string `json:"key,omitempty"`
	ChargeID   string `json:"charge_id,omitempty"`
	From       string `json:"from,omitempty"` // Charge.ReplayedFrom
	Attempts   int    `json:"attempts,omitempty"`
	Err        string `json:"err,omitempty"`
	// What a takeover probe found in the store just before it charged:
	// the lease's owner and how far past the record's creation the lease
	// runs, both from the store (its clock); or why it could not load.
	Owner   string        `json:"owner,omitempty"`
	Renewed time.Duration `json:"renewed,omitempty"`
	LoadErr string        `json:"load_err,omitempty"`
	// N is the count an evVoided event reports.
	N int `json:"n,omitempty"`
}

const (
	evResult = "result"
	evPhase  = "phase"
	evVoided = "voided" // the leases a store voided when the heir opened it
)

// resultOf turns one Charge call into an event.
func resultOf(phase int, intent string, ch *idempay.Charge, err error) event {
	ev := event{Ev: evResult, Phase: phase, Intent: intent, Outcome: idempay.OutcomeOf(err).String()}
	if ch != nil { // succeeded, or pending (with an error)
		ev.Key, ev.ChargeID, ev.From, ev.Attempts = ch.Key, ch.ID, string(ch.ReplayedFrom), ch.Requests
	}
	if err == nil {
		return ev
	}
	ev.InProgress = errors.Is(err, idempay.ErrInProgress)
	ev.Err = err.Error()
	var ce *idempay.ChargeError
	if errors.As(err, &ce) {
		ev.Key, ev.Attempts = ce.Key, ce.Requests
	}
	return ev
}

// proc is a child process, seen from the parent.
type proc struct {
	num    int
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	phases chan int      // phase markers as they arrive; closed at EOF
	exited chan struct{} // closed once Wait has returned

	mu     sync.Mutex
	events []event
	output bytes.Buffer // the child's test output, stdout and stderr
	err    error        // Wait's
}

// spawn starts the test binary again, running only the calling test, in
// the given role. The child is killed, if still alive, when t ends.
func spawn(t testing.TB, role string, a args) *proc {
	t.Helper()
	enc, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run="+runPattern(t.Name()), "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), envRole+"="+role, envArgs+"="+string(enc), "GORACE="+goraceNoExitSleep())
	p := &proc{num: a.Proc, cmd: cmd, phases: make(chan int, 16), exited: make(chan struct{})}
	cmd.Stderr = lockedWriter{&p.mu, &p.output}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child %d (%s): %v", a.Proc, role, err)
	}
	go p.read(stdout)
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.exited
		}
	})
	return p
}

// read collects the child's events until its stdout closes, then reaps it.
// Wait comes after the last read, as os/exec requires.
func (p *proc) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, linePrefix)
		var ev event
		if ok && json.Unmarshal([]byte(rest), &ev) == nil {
			ev.Proc = p.num
			p.mu.Lock()
			p.events = append(p.events, ev)
			p.mu.Unlock()
			if ev.Ev == evPhase {
				p.phases <- ev.Phase
			}
			continue
		}
		p.mu.Lock()
		p.output.WriteString(line + "\n")
		p.mu.Unlock()
	}
	close(p.phases)
	err := p.cmd.Wait()
	p.mu.Lock()
	p.err = err
	p.mu.Unlock()
	close(p.exited)
}

// await blocks until the child reports the end of phase, failing t if it
// exits first or takes longer than d.
func (p *proc) await(t testing.TB, phase int, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case n, ok := <-p.phases:
			if !ok {
				<-p.exited
				t.Fatalf("child %d ended before phase %d: %v\n%s", p.num, phase, p.exitErr(), p.diag())
			}
			if n == phase {
				return
			}
		case <-timer.C:
			t.Fatalf("child %d did not finish phase %d within %v\n%s", p.num, phase, d, p.diag())
		}
	}
}

// proceed lets a child waiting in waitForParent go on.
func (p *proc) proceed(t testing.TB) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, "go\n"); err != nil {
		t.Fatalf("child %d: %v\n%s", p.num, err, p.diag())
	}
}

// wait blocks until the child exits and fails t unless it exited cleanly.
func (p *proc) wait(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(d):
		t.Fatalf("child %d still running after %v\n%s", p.num, d, p.diag())
	}
	if err := p.exitErr(); err != nil {
		t.Fatalf("child %d: %v\n%s", p.num, err, p.diag())
	}
}

// kill ends the child with SIGKILL, as a crash or an OOM kill would, and
// waits until it is gone, so that its sockets and file locks are released.
func (p *proc) kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill child %d: %v", p.num, err)
	}
	<-p.exited
}

func (p *proc) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// results returns the child's result events, in the order reported.
func (p *proc) results() []event { return p.eventsOf(evResult) }

// eventsOf returns the child's events of one kind, in the order reported.
func (p *proc) eventsOf(kind string) []event {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []event
	for _, ev := range p.events {
		if ev.Ev == kind {
			out = append(out, ev)
		}
	}
	return out
}

// diag is the child's own output, for a failure message.
func (p *proc) diag() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	const limit = 8 << 10
	out := p.output.String()
	if len(out) > limit {
		out = "...\n" + out[len(out)-limit:]
	}
	return "--- output of child " + fmt.Sprint(p.num) + ":\n" + out
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// goraceNoExitSleep is GORACE without the race detector's default one
// second of sleep at exit (a binary built without -race ignores it): every
// child exits, and the parent waits for each.
func goraceNoExitSleep() string {
	v := os.Getenv("GORACE")
	if strings.Contains(v, "atexit_sleep_ms") {
		return v
	}
	return strings.TrimSpace(v + " atexit_sleep_ms=0")
}

// runPattern is a -test.run pattern matching exactly the test named name
// (subtests included).
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// The child's side.

// childArgs reads the arguments the parent passed.
func childArgs(t testing.TB) args {
	t.Helper()
	var a args
	if err := json.Unmarshal([]byte(os.Getenv(envArgs)), &a); err != nil {
		t.Fatalf("child: %s: %v", envArgs, err)
	}
	return a
}

var emitMu sync.Mutex

// emit reports ev to the parent as one line, written with one call so that
// lines of concurrent callers never interleave.
func emit(ev event) {
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err) // strings, ints and bools only
	}
	emitMu.Lock()
	defer emitMu.Unlock()
	_, _ = os.Stdout.Write(append(append([]byte(linePrefix), b...), '\n'))
}

func emitPhase(n int) { emit(event{Ev: evPhase, Phase: n}) }

var stdin = bufio.NewReader(os.Stdin)

// waitForParent blocks until the parent calls proceed. A parent that died
// closes the pipe, and the child stops.
func waitForParent(t testing.TB) {
	t.Helper()
	if _, err := stdin.ReadString('\n'); err != nil {
		t.Fatalf("child: waiting for the parent: %v", err)
	}
}
