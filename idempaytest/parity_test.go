package idempaytest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sentinels is every exported error value of package idempay.
var sentinels = map[string]error{
	"ErrOutcomeUnknown": idempay.ErrOutcomeUnknown, "ErrPending": idempay.ErrPending,
	"ErrDeclined": idempay.ErrDeclined, "ErrInvalidRequest": idempay.ErrInvalidRequest,
	"ErrAttemptOpen": idempay.ErrAttemptOpen, "ErrStoppedWaiting": idempay.ErrStoppedWaiting,
	"ErrClosed": idempay.ErrClosed, "ErrKeyConflict": idempay.ErrKeyConflict,
	"ErrInProgress": idempay.ErrInProgress, "ErrKeyExpired": idempay.ErrKeyExpired,
	"ErrStoredFailure": idempay.ErrStoredFailure, "ErrUnreachable": idempay.ErrUnreachable,
	"ErrConfig": idempay.ErrConfig, "ErrNoLookup": idempay.ErrNoLookup, "ErrStore": idempay.ErrStore,
	"ErrInvalidConfig": idempay.ErrInvalidConfig, "ErrNotFound": idempay.ErrNotFound,
	"ErrKeyMismatch": idempay.ErrKeyMismatch, "ErrAlreadyResolved": idempay.ErrAlreadyResolved,
	"ErrLeaseLost": idempay.ErrLeaseLost, "ErrClaimFinished": idempay.ErrClaimFinished,
	"ErrTwoC2PNoSecret": idempay.ErrTwoC2PNoSecret, "ErrTwoC2PSignature": idempay.ErrTwoC2PSignature,
	"ErrNotSupported": idempay.ErrNotSupported, "ErrChargeNotSucceeded": idempay.ErrChargeNotSucceeded,
	"ErrNotRefundable": idempay.ErrNotRefundable, "ErrRefundExceeds": idempay.ErrRefundExceeds,
	"ErrCaptureExceeds": idempay.ErrCaptureExceeds, "ErrNotAuthorization": idempay.ErrNotAuthorization,
	"ErrAuthorizationClosed": idempay.ErrAuthorizationClosed, "ErrAuthorized": idempay.ErrAuthorized,
	"ErrCanceled": idempay.ErrCanceled, "ErrClaimAged": idempay.ErrClaimAged,
	"ErrOpOfOtherIntent":      idempay.ErrOpOfOtherIntent,
	"ErrRetryBudgetExhausted": idempay.ErrRetryBudgetExhausted, "ErrReconcileIncomplete": idempay.ErrReconcileIncomplete,
}

// payments is what a parity scenario calls. *idempay.Client and
// *idempaytest.FakeCharger both have these methods.
type payments interface {
	idempay.Charger
	Record(ctx context.Context, intentID string) (idempay.Record, error)
}

// side is one half of a parity case: what is charged, and for scenarios
// that hold a flight, a hook that returns once the flight is on the wire
// and one that lets it answer.
type side struct {
	c        payments
	inFlight func()
	release  func()
}

// result is one call's return.
type result struct {
	ch  *idempay.Charge
	err error
}

// parityCase is one scenario, set up once against a real Client charging a
// test server (or a mocked transport, for answers the Server does not give)
// and once against a FakeCharger, then run alike on both.
type parityCase struct {
	name string
	real func(t *testing.T) side
	fake func(f *idempaytest.FakeCharger) side
	run  func(t *testing.T, s side) []result
	// mask removes from both sides' observations what the scenario cannot
	// make alike; nil for nearly every case.
	mask func(*observed)
}

// Each FakeCharger answer must look, to a caller, exactly like the answer
// a real Client gives in the same situation: for every call of a scenario
// the same errors.Is answer for every sentinel, the same OutcomeOf, the
// same types for errors.As and the same refusal details, the same charge
// fields, and the same pattern of keys and charge IDs (which call reuses
// which key). Each case is one rule of the Client's.
func TestFakeMatchesTheClient(t *testing.T) {
	t.Parallel()
	for _, tc := range parityCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			realSide := tc.real(t)
			real := tc.run(t, realSide)
			var f idempaytest.FakeCharger
			fakeSide := tc.fake(&f)
			fake := tc.run(t, fakeSide)
			require.Len(t, fake, len(real))
			realSeen, realRec := observeAll(t, real, realSide)
			fakeSeen, fakeRec := observeAll(t, fake, fakeSide)
			for i := range real {
				t.Logf("call %d\n  real: %v\n  fake: %v", i+1, real[i].err, fake[i].err)
				if tc.mask != nil {
					tc.mask(&realSeen[i])
					tc.mask(&fakeSeen[i])
				}
				assert.Equal(t, realSeen[i], fakeSeen[i], "call %d", i+1)
			}
			assert.Equal(t, realRec, fakeRec, "the record of the intent at the end")
		})
	}
}

func parityCases() []parityCase {
	req := idempaytest.Request
	cases := []parityCase{
		{
			name: "success",
			real: serverSide(nil),
			fake: script(nil),
			run:  calls(req("o", 100)),
		},
		{
			name: "decline",
			real: serverSide(nil),
			fake: script(func(s *idempaytest.IntentScript) { s.Decline("generic_decline") }),
			run:  calls(declined("o")),
		},
		{
			name: "decline, then the same request is answered from the store",
			real: serverSide(nil),
			fake: script(func(s *idempaytest.IntentScript) { s.Decline("generic_decline") }),
			run:  calls(declined("o"), declined("o")),
		},
		{
			name: "decline, then another card is attempt 2; the paid intent answers every card",
			real: serverSide(nil),
			fake: script(func(s *idempaytest.IntentScript) { s.Decline("generic_decline") }),
			run:  calls(declined("o"), req("o", 100), declined("o"), req("o", 100)),
		},
		{
			name: "two cards declined, then the first again gets its own decline, no third attempt",
			real: serverSide(nil),
			fake: script(func(s *idempaytest.IntentScript) { s.Decline("generic_decline").Decline("generic_decline") }),
			run:  calls(declined("o"), withCard("o", idempaytest.DeclineToken+"_two"), declined("o")),
		},
		{
			name: "paid, then other parameters get the success",
			real: serverSide(nil),
			fake: script(nil),
			run:  calls(req("o", 100), req("o", 200), withKey(req("o", 100), "other-key")),
		},
		{
			name: "every answer lost, then the same request resumes with its key",
			real: serverSide(func(s *idempaytest.Server) { s.Fail("o", idempaytest.Post, idempaytest.Post) }),
			fake: script(func(s *idempaytest.IntentScript) {
				s.Unknown().SucceedWith(idempay.Charge{Replayed: true, ReplayedFrom: idempay.ReplayFromServer})
			}),
			run: calls(req("o", 100), req("o", 100)),
		},
		{
			name: "unknown, then other parameters are refused and the caller's key ignored",
			real: serverSide(func(s *idempaytest.Server) { s.Fail("o", idempaytest.Pre, idempaytest.Pre) }),
			fake: script(func(s *idempaytest.IntentScript) { s.Unknown() }),
			run:  calls(req("o", 100), req("o", 200), withKey(req("o", 200), "fk-1"), withKey(req("o", 100), "fk-2")),
		},
		{
			name: "in progress in another instance",
			real: inProgressSide,
			fake: script(func(s *idempaytest.IntentScript) { s.InProgress() }),
			run:  calls(req("o", 100)),
		},
		{
			name: "provider unreachable, then the same request is attempt 2 with a new key",
			real: serverSide(nil, refuseFirst(2)),
			fake: script(func(s *idempaytest.IntentScript) { s.Unreachable() }),
			run:  calls(req("o", 100), req("o", 100)),
		},
		{
			name: "provider unreachable, then its caller key is refused",
			real: serverSide(nil, refuseFirst(2)),
			fake: script(func(s *idempaytest.IntentScript) { s.Unreachable() }),
			run: calls(withKey(req("o", 100), "fk-1"), withKey(req("o", 100), "fk-1"),
				withKey(req("o", 100), "fk-2")),
		},
		{
			name: "unknown, then unreachable on the resume: still unknown, the attempt open",
			real: serverSide(func(s *idempaytest.Server) { s.Fail("o", idempaytest.Pre, idempaytest.Pre) }, refuseRequests(3, 4)),
			fake: script(func(s *idempaytest.IntentScript) { s.Unknown().Unreachable() }),
			run:  calls(req("o", 100), req("o", 100), req("o", 200), req("o", 100)),
		},
		{
			name: "unknown, then rejected on the resume: still unknown, the attempt open",
			real: serverSide(func(s *idempaytest.Server) { s.Fail("o", idempaytest.Pre, idempaytest.Pre) }, blankEncoding(2)),
			fake: script(func(s *idempaytest.IntentScript) { s.Unknown().Reject("omise_token") }),
			run:  calls(req("o", 100), req("o", 100), req("o", 200), req("o", 100)),
		},
		{
			name: "rejected by the provider, then the same request from the store, then another card",
			real: serverSide(nil, blankToken("tokn_bad")),
			fake: script(func(s *idempaytest.IntentScript) { s.Reject("omise_token") }),
			run:  calls(withCard("o", "tokn_bad"), withCard("o", "tokn_bad"), req("o", 100)),
		},
		{
			name: "the caller key of a failed attempt is refused",
			real: serverSide(nil),
			fake: script(func(s *idempaytest.IntentScript) { s.Decline("generic_decline") }),
			run: calls(withKey(declined("o"), "fk-1"), withKey(req("o", 100), "fk-1"),
				withKey(req("o", 100), "fk-2"), req("o", 100)),
		},
		{
			name: "nil and empty maps are the same payment",
			real: serverSide(nil),
			fake: script(nil),
			run:  calls(req("o", 100), emptyMaps(req("o", 100)), upperless(emptyMaps(req("o", 100)))),
		},
		{
			name: "empty maps resume an unknown attempt made with nil maps",
			real: serverSide(func(s *idempaytest.Server) { s.Fail("o", idempaytest.Pre, idempaytest.Pre) }),
			fake: script(func(s *idempaytest.IntentScript) { s.Unknown() }),
			run:  calls(req("o", 100), emptyMaps(req("o", 100))),
		},
		{
			name: "pending, answered from the store while nothing settles it; other parameters refused",
			real: mockSide(idempaytest.PendingResponder("ch_p"), httpmock.NewStringResponder(http.StatusNotFound, "")),
			fake: script(func(s *idempaytest.IntentScript) { s.Pending() }),
			run:  calls(req("o", 100), req("o", 100), req("o", 200)),
		},
		{
			name: "pending, then completed",
			real: mockSide(idempaytest.PendingResponder("ch_p"), found("o", "ch_p", "succeeded", 100)),
			fake: script(func(s *idempaytest.IntentScript) { s.Pending().CompletePending() }),
			run:  calls(req("o", 100), req("o", 100), req("o", 100), req("o", 200)),
		},
		{
			name: "pending, then declined, then another card is attempt 2",
			real: mockSide(byToken(map[string]httpmock.Responder{
				idempaytest.Token: idempaytest.PendingResponder("ch_p"),
				"tokn_good":       idempaytest.ChargeResponder("ch_2"),
			}), idempaytest.DeclineResponder("authentication_failed")),
			fake: script(func(s *idempaytest.IntentScript) {
				s.Pending().FailPending("authentication_failed").SucceedWith(idempay.Charge{ID: "ch_2"})
			}),
			run: calls(req("o", 100), req("o", 100), req("o", 100), withCard("o", "tokn_good")),
		},
		{
			name: "context canceled before the store",
			real: serverSide(nil),
			fake: script(nil),
			run: func(t *testing.T, s side) []result {
				canceled, cancel := context.WithCancel(ctx)
				cancel()
				ch, err := s.c.Charge(canceled, req("o", 100))
				return []result{{ch, err}}
			},
		},
		{
			name: "a nil context",
			real: serverSide(nil),
			fake: script(nil),
			run: func(t *testing.T, s side) []result {
				ch, err := s.c.Charge(nil, req("o", 100)) //nolint:staticcheck // a nil context is the bad input
				return []result{{ch, err}}
			},
		},
		{
			name: "invalid for the provider's adapter",
			real: serverSide(nil),
			fake: script(func(s *idempaytest.IntentScript) { s.Invalid("Customer") }),
			run:  calls(customer(req("o", 100), "cus_1"), req("o", 100)),
		},
		{
			name: "a caller who stops waiting; the flight goes on",
			real: stuckSide,
			fake: func(f *idempaytest.FakeCharger) side {
				release := make(chan struct{})
				f.OnIntent("o").WaitFor(release)
				return side{c: f, release: func() { close(release) }, inFlight: func() {
					for _, err := f.Record(ctx, "o"); err != nil; _, err = f.Record(ctx, "o") {
						time.Sleep(time.Millisecond)
					}
				}}
			},
			run: func(t *testing.T, s side) []result {
				impatient, cancel := context.WithCancel(ctx)
				first := make(chan result, 1)
				go func() { ch, err := s.c.Charge(impatient, req("o", 100)); first <- result{ch, err} }()
				s.inFlight()
				cancel()
				out := []result{<-first}
				s.release()
				// Other parameters wait for the flight to end, then get
				// what it recorded; then the same request does.
				for _, r := range []idempay.ChargeRequest{req("o", 200), req("o", 100)} {
					ch, err := s.c.Charge(ctx, r)
					out = append(out, result{ch, err})
				}
				return out
			},
		},
	}
	for name, bad := range map[string]func(*idempay.ChargeRequest){
		"intent ID of only spaces":        func(r *idempay.ChargeRequest) { r.IntentID = "   " },
		"intent ID with a trailing space": func(r *idempay.ChargeRequest) { r.IntentID = "o " },
		"negative amount":                 func(r *idempay.ChargeRequest) { r.Amount = -1 },
		"description of only spaces":      func(r *idempay.ChargeRequest) { r.Description = "  " },
		"customer with a space":           func(r *idempay.ChargeRequest) { r.Customer = "cus 1" },
		"relative return URL":             func(r *idempay.ChargeRequest) { r.ReturnURL = "/back" },
		"metadata with idempay's prefix":  func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"idempay_intent": "x"} },
		"extra with a control character":  func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"k": "a\x00"} },
		"key with a space":                func(r *idempay.ChargeRequest) { r.Key = "a b" },
	} {
		r := req("o", 100)
		bad(&r)
		cases = append(cases, parityCase{name: "bad input: " + name, real: serverSide(nil), fake: script(nil),
			run: calls(r, req("o", 100))})
	}
	return cases
}

// observed is what a caller can see of one call, minus what differs by
// nature between a server and a script: messages, request IDs, the
// provider's name, how many retries were sent (only whether any was), and
// the keys and charge IDs themselves (only which calls share them).
type observed struct {
	Outcome idempay.Outcome
	Is      []string // the sentinels errors.Is finds
	Refusal refusal
	ErrKey  string // the ChargeError's key, as a class
	ErrSent bool   // the ChargeError's Requests > 0
	Charge  *seenCharge
}

type seenCharge struct {
	Key, ID                string // classes
	State                  idempay.State
	Status, Currency       string
	Amount                 int64
	AuthorizeURL           string
	Replayed, ParamsDiffer bool
	ReplayedFrom           idempay.ReplaySource
	Sent                   bool // Requests > 0
	Attempt                int
}

// refusal is what errors.As finds in an error.
type refusal struct {
	ChargeError, APIError, ValidationError, ConfigError, PanicError bool
	Outcome                                                         idempay.Outcome
	Status                                                          int
	Type, Code, DeclineCode, Param, Field                           string
	Replayed                                                        bool // the APIError's
}

func refusalOf(err error) refusal {
	var r refusal
	var ce *idempay.ChargeError
	if r.ChargeError = errors.As(err, &ce); r.ChargeError {
		r.Outcome = ce.Outcome
	}
	var ae *idempay.APIError
	if r.APIError = errors.As(err, &ae); r.APIError {
		r.Status, r.Type, r.Code, r.DeclineCode, r.Param = ae.Status, ae.Type, ae.Code, ae.DeclineCode, ae.Param
		r.Replayed = ae.Replayed
	}
	var ve *idempay.ValidationError
	if r.ValidationError = errors.As(err, &ve); r.ValidationError {
		r.Field = ve.Field
	}
	var cfg *idempay.ConfigError
	r.ConfigError = errors.As(err, &cfg)
	var pe *idempay.PanicError
	r.PanicError = errors.As(err, &pe)
	return r
}

// observeAll observes a scenario's calls, and then the record of intent
// "o" through the side's Record, naming keys, charge IDs and fingerprints
// by order of first appearance in the scenario.
func observeAll(t *testing.T, rs []result, s side) ([]observed, seenRecord) {
	keys, ids, fps := classes("key"), classes("charge"), classes("params")
	out := make([]observed, len(rs))
	for i, r := range rs {
		o := observed{Outcome: idempay.OutcomeOf(r.err), Refusal: refusalOf(r.err)}
		for name, s := range sentinels {
			if errors.Is(r.err, s) {
				o.Is = append(o.Is, name)
			}
		}
		slices.Sort(o.Is)
		var ce *idempay.ChargeError
		if errors.As(r.err, &ce) {
			o.ErrKey, o.ErrSent = keys(ce.Key), ce.Requests > 0
		}
		if ch := r.ch; ch != nil {
			o.Charge = &seenCharge{Key: keys(ch.Key), ID: ids(ch.ID), State: ch.State, Status: ch.Status,
				Currency: ch.Currency, Amount: ch.Amount, AuthorizeURL: ch.AuthorizeURL, Replayed: ch.Replayed,
				ParamsDiffer: ch.ParamsDiffer, ReplayedFrom: ch.ReplayedFrom, Sent: ch.Requests > 0, Attempt: ch.Attempt}
		}
		out[i] = o
	}
	rec, err := s.c.Record(ctx, "o")
	if errors.Is(err, idempay.ErrNotFound) {
		return out, seenRecord{NotFound: true}
	}
	require.NoError(t, err)
	seen := seenRecord{Attempt: rec.Attempt, Key: keys(rec.Key), Params: fps(rec.Fingerprint), State: rec.State,
		Ref: ids(rec.ProviderRef), Closed: !rec.ClosedAt.IsZero()}
	for _, p := range rec.History {
		seen.History = append(seen.History, seenRecord{Attempt: p.Attempt, Key: keys(p.Key), Params: fps(p.Fingerprint),
			State: p.State, Ref: ids(p.ProviderRef), Closed: !p.ClosedAt.IsZero()})
	}
	return out, seen
}

// seenRecord is what Record shows of an intent (or of one of its earlier
// attempts), keys, charge IDs and fingerprints named as classes.
type seenRecord struct {
	NotFound         bool
	Attempt          int
	Key, Params, Ref string
	State            idempay.State
	Closed           bool // ClosedAt is set
	History          []seenRecord
}

// classes names each distinct non-empty value by the order it first
// appears in: "key 1", "key 2", ...
func classes(kind string) func(string) string {
	seen := map[string]string{}
	return func(v string) string {
		if v == "" {
			return ""
		}
		if _, ok := seen[v]; !ok {
			seen[v] = kind + " " + string(rune('1'+len(seen)))
		}
		return seen[v]
	}
}

// calls runs the requests one after the other.
func calls(reqs ...idempay.ChargeRequest) func(*testing.T, side) []result {
	return func(t *testing.T, s side) []result {
		var out []result
		for _, r := range reqs {
			ch, err := s.c.Charge(ctx, r)
			out = append(out, result{ch, err})
		}
		return out
	}
}

// script scripts intent "o" of the fake; nil leaves it unscripted.
func script(fn func(*idempaytest.IntentScript)) func(*idempaytest.FakeCharger) side {
	return func(f *idempaytest.FakeCharger) side {
		if fn != nil {
			fn(f.OnIntent("o"))
		}
		return side{c: f}
	}
}

func twoAttempts(c *idempay.Config) { c.Retry.MaxAttempts = 2 }

// serverSide is a Client (two attempts per call) charging a fresh Server,
// scripted with faults.
func serverSide(faults func(*idempaytest.Server), opts ...idempaytest.ClientOption) func(*testing.T) side {
	return func(t *testing.T) side {
		srv := idempaytest.NewServer()
		t.Cleanup(srv.Close)
		if faults != nil {
			faults(srv)
		}
		return side{c: idempaytest.NewClient(t, srv, append([]idempaytest.ClientOption{twoAttempts}, opts...)...)}
	}
}

// mockSide is a Client whose charges are answered by post and whose
// lookups (OwnAPI.LookupPath) by lookup, on a MockTransport: for answers
// the Server does not give (pending).
func mockSide(post, lookup httpmock.Responder) func(*testing.T) side {
	return func(t *testing.T) side {
		mock := httpmock.NewMockTransport()
		mock.RegisterResponder(http.MethodPost, mockBase+idempaytest.ChargePath, post)
		mock.RegisterResponder(http.MethodGet, mockBase+idempaytest.ChargePath, lookup)
		retry := idempaytest.FastRetry()
		retry.MaxAttempts = 2
		c, err := idempay.New(idempay.Config{BaseURL: mockBase, Store: memstore.New(),
			HTTPClient: &http.Client{Transport: mock}, Retry: retry,
			Provider: idempay.OwnAPI{LookupPath: idempaytest.ChargePath}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close(ctx) })
		return side{c: c}
	}
}

// found answers a lookup with the charge of intentID.
func found(intentID, chargeID, status string, amountJPY int64) httpmock.Responder {
	body, _ := json.Marshal(map[string]any{"order_id": intentID, "charge_id": chargeID, "status": status,
		"amount_jpy": amountJPY})
	return httpmock.NewBytesResponder(http.StatusOK, body)
}

// byToken answers each charge with the responder of the token it carries.
func byToken(answers map[string]httpmock.Responder) httpmock.Responder {
	return func(r *http.Request) (*http.Response, error) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		var b struct {
			Token string `json:"omise_token"`
		}
		_ = json.Unmarshal(body, &b)
		r.Body = io.NopCloser(bytes.NewReader(body))
		return answers[b.Token](r)
	}
}

// inProgressSide is instance B of two sharing a store, while instance A
// holds the intent's lease with its request stuck on the wire.
func inProgressSide(t *testing.T) side {
	srv := idempaytest.NewServer()
	t.Cleanup(srv.Close)
	store := memstore.New()
	stuck := newStuck(srv.Client().Transport)
	a := idempaytest.NewClient(t, srv, func(c *idempay.Config) {
		c.Store = store
		c.HTTPClient = &http.Client{Transport: stuck}
	})
	b := idempaytest.NewClient(t, srv, func(c *idempay.Config) { c.Store = store })
	done := make(chan error, 1)
	go func() {
		_, err := a.Charge(ctx, idempaytest.Request("o", 100))
		done <- err
	}()
	<-stuck.entered
	t.Cleanup(func() {
		close(stuck.release)
		assert.NoError(t, <-done, "instance A charged")
	})
	return side{c: b}
}

// stuckSide is a Client whose first request is held on the wire until
// release.
func stuckSide(t *testing.T) side {
	srv := idempaytest.NewServer()
	t.Cleanup(srv.Close)
	stuck := newStuck(srv.Client().Transport)
	c := idempaytest.NewClient(t, srv, func(c *idempay.Config) { c.HTTPClient = &http.Client{Transport: stuck} })
	return side{c: c, inFlight: func() { <-stuck.entered }, release: func() { close(stuck.release) }}
}

// stuckTransport holds every request until release is closed, after
// saying that one has entered.
type stuckTransport struct {
	base    http.RoundTripper
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func newStuck(base http.RoundTripper) *stuckTransport {
	return &stuckTransport{base: base, entered: make(chan struct{}), release: make(chan struct{})}
}

func (s *stuckTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return s.base.RoundTrip(r)
}

// refuseFirst makes the client's first n connections fail as refused,
// before anything is written: the provider was not reached.
func refuseFirst(n int) idempaytest.ClientOption {
	var which []int
	for i := range n {
		which = append(which, i+1)
	}
	return refuseRequests(which...)
}

// refuseRequests makes the client's requests numbered which (from 1) fail
// as refused connections, before anything is written.
func refuseRequests(which ...int) idempaytest.ClientOption {
	return func(c *idempay.Config) {
		c.HTTPClient = &http.Client{Transport: &refusing{base: c.HTTPClient.Transport, which: which}}
	}
}

type refusing struct {
	base  http.RoundTripper
	which []int
	n     atomic.Int32
}

func (r *refusing) RoundTrip(req *http.Request) (*http.Response, error) {
	if slices.Contains(r.which, int(r.n.Add(1))) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	return r.base.RoundTrip(req)
}

// blankEncoding makes the client's flight number nth (from 1) send an
// empty omise_token, which the Server refuses as invalid.
func blankEncoding(nth int32) idempaytest.ClientOption {
	var n atomic.Int32
	return encoding(func(r idempay.ChargeRequest) bool { return n.Add(1) == nth })
}

// blankToken makes the client send an empty omise_token for the card
// token, which the Server refuses as invalid (400, param omise_token).
func blankToken(token idempay.Secret) idempaytest.ClientOption {
	return encoding(func(r idempay.ChargeRequest) bool { return r.Source == token })
}

// encoding encodes the own-API body, with an empty omise_token when blank
// says so.
func encoding(blank func(idempay.ChargeRequest) bool) idempaytest.ClientOption {
	return func(c *idempay.Config) {
		c.Provider = idempay.OwnAPI{LookupPath: idempaytest.ChargePath, Encode: func(r idempay.ChargeRequest) ([]byte, string, error) {
			if blank(r) {
				r.Source = ""
			}
			b, err := json.Marshal(map[string]any{"order_id": r.IntentID, "amount_jpy": r.Amount, "omise_token": r.Source.Reveal()})
			return b, "application/json", err
		}}
	}
}

func declined(intentID string) idempay.ChargeRequest {
	return withCard(intentID, idempaytest.DeclineToken)
}

func withKey(r idempay.ChargeRequest, key string) idempay.ChargeRequest {
	r.Key = key
	return r
}

func emptyMaps(r idempay.ChargeRequest) idempay.ChargeRequest {
	r.Metadata, r.Extra = map[string]string{}, map[string]string{}
	return r
}

func upperless(r idempay.ChargeRequest) idempay.ChargeRequest {
	r.Currency = strings.ToLower(r.Currency)
	return r
}

// customer sets a field the own API's default body has no place for, which
// its adapter refuses.
func customer(r idempay.ChargeRequest, id string) idempay.ChargeRequest {
	r.Customer = id
	return r
}

// The parity test must compare every sentinel idempay has, including
// ones added later: read the package's source for its exported Err
// variables.
func TestSentinelListIsComplete(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files, err := filepath.Glob("../*.go")
	require.NoError(t, err)
	var found []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if id.IsExported() && strings.HasPrefix(id.Name, "Err") {
						found = append(found, id.Name)
					}
				}
			}
		}
	}
	require.NotEmpty(t, found)
	for _, name := range found {
		assert.Contains(t, sentinels, name, "add idempay.%s to the sentinels table", name)
	}
}
