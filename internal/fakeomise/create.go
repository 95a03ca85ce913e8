package fakeomise

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// createReq is a charge request that passed authentication and validation.
type createReq struct {
	account, key, intent, fp string
	params                   createParams
	fault                    fakes.Fault
}

// handleCreate runs POST /charges through its life: arrival (hook,
// counters, early faults), admission (auth, parameters), then execution,
// under the key when keys are honoured.
func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	in, bodyErr := faults.ReadForm(r, IntentMetadataKey)
	key, intent, form := in.Key, in.Intent, in.Form
	s.stats.arrive(key, intent)
	if s.cfg.OnRequest != nil {
		s.cfg.OnRequest(in)
	}
	a := &answer{s: s, w: w, intent: intent}
	fault := s.faults.Draw(key, intent)
	switch fault {
	case fakes.Pre:
		a.drop(fault)
		return
	case fakes.Unavailable:
		s.stats.fault(fault)
		w.Header().Set("Retry-After", strconv.Itoa(int(s.cfg.RetryAfter/time.Second)))
		a.fail("service_unavailable", "the service is temporarily unavailable")
		return
	}
	account, ok := s.account(r)
	if !ok {
		a.fail("authentication_failure", "authentication failed")
		return
	}
	if bodyErr != nil {
		a.fail("bad_request", "the request body could not be parsed")
		return
	}
	params, code, msg := parseCreate(form)
	if code != "" {
		a.fail(code, msg)
		return
	}
	c := createReq{account: account, key: key, intent: intent, params: params, fault: fault,
		fp: r.URL.Path + "?" + form.Encode()}
	if !s.cfg.HonourKeys || key == "" {
		s.process(a, c, func(resp faults.Stored, effect func()) bool { effect(); return true }, func() {})
		return
	}
	cl := s.keys.Claim(account, key, c.fp, s.now())
	switch cl.Kind {
	case faults.ClaimMismatch:
		a.fail("idempotency_key_reused", "the idempotency key was used with other parameters")
	case faults.ClaimInUse:
		a.fail("conflict", "a request with this idempotency key is in progress")
	case faults.ClaimReplay:
		a.reply(cl.Resp, fault) // no replay header: Omise documents none
	default:
		s.process(a, c,
			func(resp faults.Stored, effect func()) bool {
				return s.keys.Commit(account, key, cl.Token, resp, effect)
			},
			func() { s.keys.Release(account, key, cl.Token) })
	}
}

// process executes a charge. commit stores the answer and the charge
// together (or reports the claim lost); release gives up the claim of a
// request that ends without a charge.
func (s *Server) process(a *answer, c createReq, commit func(faults.Stored, func()) bool, release func()) {
	p := c.params
	what := strings.ToLower(p.card + p.source)
	switch {
	case c.fault == fakes.Mid: // the crash: nothing charged, the claim (if any) left to its lease
		a.drop(c.fault)
		return
	case c.fault == fakes.Internal:
		s.stats.fault(c.fault)
		release()
		a.fail("backend_error", "an internal error occurred")
		return
	case strings.Contains(what, "fraud"):
		release()
		a.fail("failed_fraud_check", "the card was marked as fraudulent")
		return
	case strings.Contains(what, "missing"):
		release()
		a.fail("not_found", "token "+p.card+p.source+" was not found")
		return
	}
	s.neighbour(c.account)
	single := strings.HasPrefix(p.card, "tokn_") || strings.HasPrefix(p.source, "src_")
	if single && !s.charges.consume(c.account, p.card+p.source) {
		release()
		if p.source != "" {
			a.fail("invalid_charge", "source was already used")
		} else {
			a.fail("used_token", "token was already used")
		}
		return
	}
	ch := newCharge(p, c.account, c.key, s.now())
	resp := faults.Stored{Status: http.StatusOK, Body: mustJSON(ch)}
	if !commit(resp, func() { s.charges.add(ch, s.ledger) }) {
		// Our claim was taken over: the other request charges, we must not.
		if single {
			s.charges.unconsume(c.account, p.card+p.source)
		}
		a.fail("conflict", "a request with this idempotency key is in progress")
		return
	}
	a.reply(resp, c.fault)
}

// neighbour makes another integration's charge on the account when
// Config.Neighbours says one is due.
func (s *Server) neighbour(account string) {
	if s.cfg.Neighbours <= 0 {
		return
	}
	if n := int(s.processed.Add(1)); n%s.cfg.Neighbours == 0 {
		s.charges.add(neighbourCharge(account, n, s.now()), s.ledger)
	}
}

// answer writes one charge answer and counts it.
type answer struct {
	s      *Server
	w      http.ResponseWriter
	intent string
}

func (a *answer) drop(f fakes.Fault) {
	a.s.stats.fault(f)
	faults.Drop(a.w, a.s.cfg.DropWithReset)
}

// reply sends an answer, unless a Post fault loses it.
func (a *answer) reply(resp faults.Stored, f fakes.Fault) {
	if f == fakes.Post {
		a.drop(f)
		return
	}
	a.s.stats.answered(a.intent, resp.Status, "")
	writeJSON(a.w, resp.Status, resp.Body)
}

func (a *answer) fail(code, message string) {
	status, body := errorBody(code, message)
	a.s.stats.answered(a.intent, status, code)
	writeJSON(a.w, status, body)
}
