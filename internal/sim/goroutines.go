package sim

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Waiting for a scenario's calls without a clock (issue 20). A pause runs
// other calls while one call waits; they either finish or block on the
// paused call (a single flight joined, a Close waiting for flights). The
// simulator used to tell the two apart by real time ("no activity for
// 300 ms"), so a call that was merely slow on a loaded machine was taken
// for one that waits, the paused call resumed under it, and the seed told
// another story. Now it asks the runtime: the world is quiet when every
// goroutine of the seed (the one that runs it and every goroutine started
// from it, transitively) other than the waiter is blocked on a channel, a
// select or a lock, and none of them is in a timed wait that will end by
// itself (a retry's backoff, a ledger poll, a sleep). Only the schedule
// the seed draws decides what happens next, however busy the machine is.

// goid returns the calling goroutine's ID.
func goid() int64 {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	id, _ := parseHeader(b[:n])
	return id
}

// parseHeader reads "goroutine 21 [chan receive, 2 minutes]:" into its
// ID and state.
func parseHeader(b []byte) (int64, string) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	s := strings.TrimPrefix(string(line), "goroutine ")
	idText, rest, _ := strings.Cut(s, " ")
	id, _ := strconv.ParseInt(idText, 10, 64)
	state := strings.TrimSuffix(strings.TrimPrefix(rest, "["), "]:")
	if i := strings.IndexByte(state, ','); i >= 0 {
		state = state[:i]
	}
	return id, state
}

// blockedStates are the states of a goroutine that waits for another one.
var blockedStates = map[string]bool{
	"chan receive": true, "chan send": true, "select": true, "select (no cases)": true,
	"chan receive (nil chan)": true, "chan send (nil chan)": true,
	"sync.WaitGroup.Wait": true,
	// Not "semacquire": a goroutine can show it for an instant while it
	// starts (seen under -race: a scenario's goroutine, before its first
	// line, taken for one that waits).
	//
	// Not a lock or a sync.Cond either: nothing waits on one for a paused
	// call, and the holder may be a goroutine outside the seed (a timer's
	// function, another seed's logger), running, on a busy machine, while
	// two dumps in a row show the waiter blocked. The file store's commit
	// waits on a Cond for its committer or its batch timer; taken for
	// quiet, a paused call resumed while a takeover was between its
	// Reserve and its send (seeds 13 and 96 told two stories).
}

// timedWaits are the functions whose waits end on a timer, by themselves:
// go-retryablehttp's backoff between retries, the ledger's poll.
var timedWaits = []string{"go-retryablehttp.(*Client).Do(", "idempay.sleepCtx("}

// gstack is one goroutine of a dump.
type gstack struct {
	id, parent int64
	state      string
	top        string // the first frame outside the runtime and package sync: the one that waits
}

func parseDump(dump []byte) []gstack {
	var out []gstack
	for _, block := range bytes.Split(dump, []byte("\n\n")) {
		if !bytes.HasPrefix(block, []byte("goroutine ")) {
			continue
		}
		g := gstack{}
		g.id, g.state = parseHeader(block)
		lines := strings.Split(string(block), "\n")
		g.top = waitingFrame(lines[1:])
		for _, l := range lines {
			if _, after, ok := strings.Cut(l, " in goroutine "); ok && strings.HasPrefix(l, "created by ") {
				g.parent, _ = strconv.ParseInt(strings.TrimSpace(after), 10, 64)
			}
		}
		out = append(out, g)
	}
	return out
}

// waitingFrame returns the first function of a goroutine's frames (a
// function line, then its file line) that is not the runtime's or package
// sync's: the code whose wait it is (a Cond.Wait's caller, not
// sync.runtime_notifyListWait).
func waitingFrame(frames []string) string {
	for i := 0; i < len(frames); i += 2 {
		f := frames[i]
		if !strings.HasPrefix(f, "runtime.") && !strings.HasPrefix(f, "sync.") && !strings.HasPrefix(f, "internal/sync.") {
			return f
		}
	}
	if len(frames) > 0 {
		return frames[0]
	}
	return ""
}

// family is the set of goroutines of one seed: its root and, once seen,
// every goroutine started from a member (IDs are never reused).
type family struct {
	mu      sync.Mutex
	members map[int64]bool
	waiters map[int64]int // goroutines in waitQuiet: they poll, and wait for the others
	seed    uint64
	buf     []byte
}

func newFamily(root int64) *family {
	return &family{members: map[int64]bool{root: true}, waiters: map[int64]int{}}
}

// waiting counts id in (d = 1) or out (d = -1) of the waiters. A waiter
// is a member, so that what it starts is too. (Nothing the simulator
// starts takes f.mu: a goroutine waiting for it while quiet holds it
// would look blocked, and the world would look quiet while it starts.)
func (f *family) waiting(id int64, d int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.members[id] = true
	if f.waiters[id] += d; f.waiters[id] <= 0 {
		delete(f.waiters, id)
	}
}

// blocked reports whether every member but the waiters is blocked now,
// with a summary of their states.
func (f *family) blocked() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.buf == nil {
		f.buf = make([]byte, 1<<20)
	}
	n := runtime.Stack(f.buf, true)
	for n == len(f.buf) {
		f.buf = make([]byte, 2*len(f.buf))
		n = runtime.Stack(f.buf, true)
	}
	gs := parseDump(f.buf[:n])
	for grew := true; grew; { // parents may come after their children in a dump
		grew = false
		for _, g := range gs {
			if !f.members[g.id] && f.members[g.parent] {
				f.members[g.id], grew = true, true
			}
		}
	}
	var seen []string
	for _, g := range gs {
		if !f.members[g.id] || f.waiters[g.id] > 0 {
			continue
		}
		if !blockedStates[g.state] {
			return "", false
		}
		for _, t := range timedWaits {
			if strings.Contains(g.top, t) {
				return "", false
			}
		}
		seen = append(seen, strconv.FormatInt(g.id, 10)+":"+g.state+":"+g.top)
	}
	sum := strings.Join(seen, " | ")
	if debugQuiet {
		println("QUIET", f.seed, sum)
	}
	return sum, true
}

var debugQuiet = os.Getenv("SIM_DEBUG_QUIET") != ""

// quietCap bounds a wait for liveness only: a scenario's calls that have
// neither finished nor blocked after this long are a simulator failure
// (reported, never taken for quiet in silence).
const quietCap = 2 * time.Minute

// waitQuiet waits until done is closed or the seed's other goroutines are
// all blocked (see family.blocked).
func (w *world) waitQuiet(done <-chan struct{}) {
	self := goid()
	w.fam.waiting(self, 1)
	defer w.fam.waiting(self, -1)
	start := time.Now()
	delay := 20 * time.Microsecond
	last := "\x00"
	for {
		select {
		case <-done:
			return
		default:
		}
		// Quiet: every member blocked, in two dumps in a row that show
		// the same goroutines in the same states (an instant's state,
		// between two dumps, is not a wait).
		switch sum, ok := w.fam.blocked(); {
		case ok && sum == last:
			return
		case ok:
			last = sum
		default:
			last = "\x00" // (no summary is this)
		}
		if time.Since(start) > quietCap {
			w.or.fatal("a pause's calls neither finished nor blocked within %s", quietCap)
			return
		}
		time.Sleep(delay)
		delay = min(2*delay, 2*time.Millisecond)
	}
}
