package idempay

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// flightGroup runs at most one flight per record in this process (a
// charge's intent, a refund's ID), whatever the parameters: identical
// concurrent calls share it, a call with other parameters waits for it to
// end and then runs its own (and finds the first one's record). Flights run
// on their own goroutine under a context detached from the caller's, so a
// caller who stops waiting does not stop the operation.
type flightGroup struct {
	mu     sync.Mutex
	calls  map[string]*call // by opSlot.flightID
	closed bool
	wg     sync.WaitGroup // flights and settles still running
	// running counts them too, so Close can see "none" at once: a
	// WaitGroup can only be waited on, in a goroutine that may not have run.
	running atomic.Int64
}

// call is one flight and the callers waiting for it.
type call struct {
	fp, key string // the parameters and caller key it was started with
	done    chan struct{}
	prog    progress
	ch      *Charge
	err     error
}

// progress is what a caller who stops waiting is told: the record's key
// and the requests sent so far. It also holds the flight's claim, so that a
// panic can give the lease back.
type progress struct {
	key   atomic.Pointer[string]
	sent  atomic.Int32
	claim atomic.Pointer[Claim]
}

func (p *progress) setKey(k string) { p.key.Store(&k) }

// Key is the record's key, once reserved.
func (p *progress) Key() string {
	if k := p.key.Load(); k != nil {
		return *k
	}
	return ""
}

func (g *flightGroup) do(ctx context.Context, c *Client, op operation) (*Charge, error) {
	s := op.slot()
	for {
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			return nil, closedError(s.id)
		}
		id := s.flightID()
		cur := g.calls[id]
		if cur == nil {
			cur, run := g.start(ctx, c, op, id)
			g.mu.Unlock()
			if ctx.Done() == nil {
				// A caller who can never stop waiting loses nothing by
				// lending its goroutine: the flight is as detached from
				// it as on a goroutine of its own, without the switch.
				run()
			} else {
				go run()
			}
			return cur.wait(ctx, s.id)
		}
		g.mu.Unlock()
		if cur.fp == s.fp && cur.key == s.key {
			return cur.wait(ctx, s.id)
		}
		select { // another flight of the record, other parameters: ours comes after it
		case <-cur.done:
		case <-ctx.Done():
			return nil, stoppedWaiting(s.id, "", 0, ctx)
		}
	}
}

// start registers a flight (its flightID is id) and returns it with the work to run, on a
// goroutine of its own unless the caller cannot stop waiting; g.mu is held.
func (g *flightGroup) start(ctx context.Context, c *Client, op operation, id string) (*call, func()) {
	if g.calls == nil {
		g.calls = make(map[string]*call)
	}
	s := op.slot()
	cl := &call{fp: s.fp, key: s.key, done: make(chan struct{})}
	g.calls[id] = cl
	g.enter()
	fctx := ctx
	if ctx.Done() != nil {
		fctx = context.WithoutCancel(ctx)
	}
	return cl, func() {
		defer g.leave()
		defer g.finish(id, cl)
		cl.ch, cl.err = c.contained(op, &cl.prog, func() (*Charge, error) {
			return c.execute(fctx, op, &cl.prog)
		})
	}
}

func (g *flightGroup) finish(id string, cl *call) {
	g.mu.Lock()
	delete(g.calls, id)
	g.mu.Unlock()
	close(cl.done)
}

// settle runs Settle's work, counted for Close and with panics contained.
func (g *flightGroup) settle(ctx context.Context, c *Client, op operation) (*Charge, error) {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil, closedError(op.slot().id)
	}
	g.enter()
	g.mu.Unlock()
	defer g.leave()
	var prog progress
	ch, err := c.contained(op, &prog, func() (*Charge, error) {
		return c.settle(ctx, op, &prog)
	})
	return copyResult(ch, err)
}

func (g *flightGroup) enter() { g.running.Add(1); g.wg.Add(1) }
func (g *flightGroup) leave() { g.running.Add(-1); g.wg.Done() }

func (g *flightGroup) close(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	if g.running.Load() == 0 {
		return nil // nothing to wait for, whatever the caller's deadline
	}
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		if g.running.Load() == 0 {
			return nil // the last one ended as the deadline fell
		}
		return fmt.Errorf("idempay: close: flights still running: %w", ctx.Err())
	}
}

// wait waits for the flight or for the caller to give up, whichever comes
// first; a flight that ended too says more than giving up.
func (cl *call) wait(ctx context.Context, intent string) (*Charge, error) {
	select {
	case <-cl.done:
	case <-ctx.Done():
		select {
		case <-cl.done:
		default:
			return nil, stoppedWaiting(intent, cl.prog.Key(), int(cl.prog.sent.Load()), ctx)
		}
	}
	return copyResult(cl.ch, cl.err)
}

// copyResult gives each caller its own Charge and ChargeError, so that one
// caller changing its copy cannot change another's.
func copyResult(ch *Charge, err error) (*Charge, error) {
	if ch != nil {
		c := *ch
		ch = &c
	}
	if ce, ok := err.(*ChargeError); ok {
		e := *ce
		err = &e
	}
	return ch, err
}

func stoppedWaiting(id, key string, sent int, ctx context.Context) error {
	return &ChargeError{IntentID: id, Key: key, Outcome: OutcomeUnknown, Requests: sent,
		Err: fmt.Errorf("%w: %w", ErrStoppedWaiting, context.Cause(ctx))}
}

func closedError(id string) error {
	// Nothing looked up: an earlier call may have sent the operation.
	return &ChargeError{IntentID: id, Outcome: OutcomeUnknown, Err: ErrClosed}
}

// contained runs a flight's work and turns a panic anywhere in it (an
// adapter, the store, Encode, NewKey, the Clock) into an unknown outcome, so
// that the process lives: the panic value (secrets taken out) and stack go
// to the log and into a *PanicError, and the flight's lease is given back
// so that the next call may resume the record with its key.
func (c *Client) contained(op operation, prog *progress, run func() (*Charge, error)) (ch *Charge, err error) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		id := op.slot().id
		perr := &PanicError{Message: redact(fmt.Sprint(v), append(op.secrets(), c.target.Credentials)...), Stack: debug.Stack()}
		c.log.LogAttrs(context.Background(), slog.LevelError, "idempay: panic in a flight; outcome unknown",
			slog.String("intent", id), slog.String("panic", perr.Message), slog.String("stack", string(perr.Stack)))
		c.abandon(prog)
		ch, err = nil, &ChargeError{IntentID: id, Key: prog.Key(), Outcome: OutcomeUnknown,
			Requests: int(prog.sent.Load()), Err: perr}
	}()
	return run()
}

// abandon releases the claim of a flight that panicked, if it holds one;
// a panic there too is swallowed, and the lease then runs out.
func (c *Client) abandon(prog *progress) {
	cl := prog.claim.Load()
	if cl == nil {
		return
	}
	defer func() { _ = recover() }()
	_ = cl.abandon(context.Background())
}
