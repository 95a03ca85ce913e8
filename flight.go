package idempay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// maxBody caps how much of an answer is read; charge answers are small.
const maxBody = 1 << 20

// flight is one trip of an operation through the wire: every attempt with
// its record's key, until an answer settles it or the budget runs out.
type flight struct {
	c        *Client
	op       operation
	rec      Record
	claim    *Claim    // the lease this flight sends under; nil for a lookup
	created  bool      // the key is new: no earlier call can have sent it
	stale    bool      // a resume of a key reserved long ago: ask before resending (staleResume)
	prog     *progress // requests sent, shared with callers who stop waiting
	probe    wireProbe
	attempts []attempt
	settled  *Verdict   // set when a lookup settled the operation
	secs     []Secret   // what no answer may show; see secrets
	first    [1]attempt // attempts' room for the first, which is often the last
	secRoom  [2]Secret  // secs' room: an operation has a secret or two
}

// attempt is what one request on the wire came back with.
type attempt struct {
	Verdict
	err error // the transport error, if there was no answer
}

// run sends until an answer settles the operation or the policy says stop,
// and returns the deciding verdict.
func (f *flight) run() (Verdict, error) {
	// Stop at the budget's end, or as soon as the lease is lost and
	// another flight may take the intent over, whichever comes first.
	ctx, cancel := context.WithTimeout(f.claim.Context(), f.c.retry.MaxElapsed)
	defer cancel()
	f.probe.held, f.probe.sent = f, &f.prog.sent
	f.attempts = f.first[:0]

	if !f.created && (f.lookupFirst() || f.stale) {
		// An earlier call may have sent this key, and the provider does
		// not de-duplicate, or may have forgotten it: ask before sending
		// again.
		if v, resend := f.lookupBeforeResend(ctx); !resend {
			f.settled = &v
			return v, nil
		}
	}
	f.probe.attempt = f.rec.Attempt
	httpReq, err := f.op.build(withProbe(ctx, &f.probe), f.c.target, f.rec.Key)
	if err != nil {
		return Verdict{Kind: KindInvalid}, err
	}
	rreq, err := retryablehttp.FromRequest(httpReq)
	if err != nil {
		return Verdict{Kind: KindInvalid}, err
	}
	var sched *backoffSchedule // made at the first wait: most charges never wait
	rc := &retryablehttp.Client{
		HTTPClient: f.c.hc,
		RetryMax:   f.c.retry.MaxAttempts - 1,
		CheckRetry: f.checkRetry,
		Backoff: func(_, _ time.Duration, _ int, resp *http.Response) time.Duration {
			if sched == nil {
				sched = newBackoffSchedule(f.c.retry, f.c.now)
			}
			return sched.next(resp)
		},
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
	resp, err := rc.Do(rreq)
	if resp != nil {
		resp.Body.Close()
	}
	return f.outcome(err)
}

// mayStillSend is asked before every request leaves: the lease must be held,
// and the client not closed past its flights (see Client.Close).
func (f *flight) mayStillSend() bool { return !f.c.halted.Load() && f.claim.Held() }

// outcome picks the deciding verdict once the loop has ended.
func (f *flight) outcome(doErr error) (Verdict, error) {
	if f.settled != nil {
		return *f.settled, nil
	}
	if len(f.attempts) == 0 {
		return Verdict{Kind: KindNotSent}, doErr
	}
	last := f.attempts[len(f.attempts)-1]
	return last.Verdict, last.err
}

// checkRetry is the retry policy handed to go-retryablehttp: it reads each
// answer through the provider, keeps it, and says whether to go again.
func (f *flight) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	a := f.read(resp, err)
	f.attempts = append(f.attempts, a)
	f.logAttempt(a)
	if ctx.Err() != nil || errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrRetryBudgetExhausted) {
		return false, nil
	}
	again := retryable(a.Verdict)
	if f.lookupFirst() && mayHaveMoved(a.Kind) && !settles(a.Kind) && !a.Replayed {
		v, resend := f.lookupBeforeResend(ctx)
		if !resend {
			f.settled = &v
			return false, nil
		}
	}
	if again && !f.claim.Renew() {
		// Someone closed the record or took the lease since the last
		// beat (a Settle that learnt the outcome): no resend. The flight
		// answers from the store (settledMeanwhile) or unknown.
		return false, nil
	}
	return again, nil
}

// read turns one round trip into an attempt.
func (f *flight) read(resp *http.Response, err error) attempt {
	if err != nil {
		return attempt{Verdict: Verdict{Kind: classifyTransportError(err, f.probe.wrote.Load())}, err: err}
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	// Read whole: what go-retryablehttp drains before a retry, or closes
	// after the last answer, is left empty.
	resp.Body = http.NoBody
	if rerr != nil {
		// The headers came back but the body did not: the request was
		// processed, we do not know how.
		return attempt{Verdict: Verdict{Kind: KindLost}, err: rerr}
	}
	body = redactBytes(body, f.secrets()...)
	v := f.op.read(resp, body)
	f.complete(&v, resp, body)
	return attempt{Verdict: v}
}

// complete fills what every verdict carries, whatever the adapter filled.
func (f *flight) complete(v *Verdict, resp *http.Response, body []byte) {
	if (v.Kind == KindSucceeded || v.Kind == KindPending) && v.Charge == nil {
		// An adapter that says "charged" without the charge: nothing to
		// show the caller, and nothing proves it either way.
		v.Kind = KindUnknown
	}
	if v.Charge != nil {
		ch := *v.Charge
		ch.IntentID, ch.Key = f.rec.ID, f.rec.Key
		if ch.RequestID == "" {
			ch.RequestID = v.RequestID
		}
		if ch.Raw == nil && jsonish(body) {
			ch.Raw = append([]byte(nil), body...)
		}
		ch.Raw = redactFields(ch.Raw, f.c.secretFs)
		v.Charge = &ch
	}
	if v.Err != nil {
		e := *v.Err
		// Providers echo what they refuse ("No such token: tokn_..."): the
		// message goes into errors, logs and the store, so the secrets go.
		e.Message = redact(e.Message, f.secrets()...)
		e.Param = redact(e.Param, f.secrets()...)
		e.Provider = f.c.provider.Name()
		if e.Status == 0 && resp != nil {
			e.Status = resp.StatusCode
		}
		if e.RequestID == "" {
			e.RequestID = v.RequestID
		}
		e.Replayed = e.Replayed || v.Replayed
		v.Err = &e
	}
}

// secrets are what no answer, error or log of the flight may show. They
// are asked of the operation once: every answer of the flight uses them.
func (f *flight) secrets() []Secret {
	if f.secs == nil {
		f.secs = append(append(f.secRoom[:0], f.op.secrets()...), f.c.target.Credentials)
	}
	return f.secs
}

// lookupFirst reports whether the provider must be asked before a resend.
func (f *flight) lookupFirst() bool { return f.op.lookupFirst() }

// lookupBeforeResend asks the provider about the operation; resend is true
// only when the provider proved that it was never done.
func (f *flight) lookupBeforeResend(ctx context.Context) (v Verdict, resend bool) {
	v, err := f.c.find(ctx, f.op, f.rec)
	if err != nil && f.stale && !f.lookupFirst() && errors.Is(err, ErrNoLookup) {
		// Nothing to ask: the key is resent on the store's word that it is
		// younger than the provider's retention (Config.KeyRetention).
		return Verdict{}, true
	}
	if err != nil {
		f.c.log.LogAttrs(ctx, slog.LevelWarn, "idempay: lookup failed",
			slog.String("intent", f.rec.ID), slog.String("error", err.Error()))
		return Verdict{Kind: KindUnknown}, false
	}
	f.complete(&v, nil, nil)
	return v, v.Kind == KindNotFound
}

func (f *flight) logAttempt(a attempt) {
	if !f.c.log.Enabled(context.Background(), slog.LevelDebug) {
		return // no attributes built for a logger that drops them
	}
	attrs := []slog.Attr{
		slog.String("intent", f.rec.ID), slog.String("key", f.rec.Key),
		slog.Int("attempt", len(f.attempts)), slog.String("kind", a.Kind.String()),
		slog.Bool("replayed", a.Replayed),
	}
	if a.RequestID != "" {
		attrs = append(attrs, slog.String("request_id", a.RequestID))
	}
	if a.err != nil {
		attrs = append(attrs, slog.String("error", a.err.Error()))
	}
	f.c.log.LogAttrs(context.Background(), slog.LevelDebug, "idempay: attempt", attrs...)
}

// mayHaveCharged reports whether anything before this point could have
// moved money: an earlier call (the key was not new), another flight while
// this one's lease had lapsed, or an attempt of this one.
func (f *flight) mayHaveCharged(upTo int) bool {
	if !f.created || f.claim.Lapsed() {
		return true
	}
	for _, a := range f.attempts[:upTo] {
		if mayHaveMoved(a.Kind) {
			return true
		}
	}
	return false
}

func jsonish(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}
