package guard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"

	"github.com/idempay/idempay"
)

// Guard is net/http middleware that runs a handler once per Idempotency-Key
// and caller, over any idempay.KeyStore, and answers every retry with the
// first response. It is safe for concurrent use; the zero value is not
// usable: build one with New.
type Guard struct {
	store  idempay.KeyStore
	ns     string
	cfg    config
	claims idempay.ClaimConfig
}

// New returns a Guard keeping its records in store, in the namespace
// NamespacePrefix + scope (WithScope). WithIdentity is required. It
// returns a *ConfigError, matching ErrInvalidConfig, for a nil store or an
// option it refuses. A store that is nil inside the interface (a typed
// nil pointer) is nil too.
func New(store idempay.KeyStore, opts ...Option) (*Guard, error) {
	if isNilStore(store) {
		return nil, configErr("store", "is nil")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	// A response the client may already have seen must be replayed
	// whatever happens to the store's server next: closing is durable.
	claims := idempay.ClaimConfig{Store: store, Lease: cfg.lease, Durable: true,
		Instance: cfg.instance, Clock: cfg.clock, Logger: cfg.logger}
	return &Guard{store: store, ns: NamespacePrefix + cfg.scope, cfg: cfg, claims: claims}, nil
}

// Namespace returns the KeyStore namespace of the guard's records.
func (g *Guard) Namespace() string { return g.ns }

// Wrap returns next behind the guard. g.Wrap is a
// func(http.Handler) http.Handler, the middleware type of net/http
// routers (chi's Use, and echo's and gin's net/http adapters).
func (g *Guard) Wrap(next http.Handler) http.Handler {
	if next == nil {
		panic("guard: Wrap(nil)")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.guards(r.Method) {
			next.ServeHTTP(w, r)
			return
		}
		ev := Event{Method: r.Method, Path: r.URL.Path}
		if g.cfg.observer != nil {
			defer func() { g.cfg.observer(ev) }() // a panicking handler too
		}
		g.serve(w, r, next, &ev)
	})
}

func (g *Guard) guards(method string) bool {
	for _, m := range g.cfg.methods {
		if m == method {
			return true
		}
	}
	return false
}

// serve checks the request, reserves its key, and replays, refuses or runs
// the handler.
func (g *Guard) serve(w http.ResponseWriter, r *http.Request, next http.Handler, ev *Event) {
	key, err := parseKey(r.Header.Values(HeaderKey), g.cfg.minKey, g.cfg.maxKey)
	if err != nil {
		g.answer(w, ev, Refused, keyProblem(err))
		return
	}
	ev.Key = key
	id, err := g.cfg.identity(r)
	if err != nil || id == "" {
		g.answer(w, ev, Refused, plainProblem(http.StatusUnauthorized, CodeNoIdentity,
			"The caller of this request is not known; idempotency keys are kept per caller."))
		return
	}
	ev.Identity = id
	body, err := readBody(r, g.cfg.maxBody)
	if err != nil {
		g.answer(w, ev, Refused, bodyProblem(err, g.cfg.maxBody))
		return
	}
	req := &request{key: key, identity: id}
	fp := fingerprint(r, id, body)
	claim, res, err := g.reserve(r.Context(), recordID(id, key), key, fp)
	if err != nil {
		g.warn(r.Context(), "guard: reserve failed; answered 503", recordID(id, key), err)
		p := plainProblem(http.StatusServiceUnavailable, CodeStoreDown, "The request was not processed; retry with the same key.")
		p.retryAfter = 1
		g.answer(w, ev, StoreFailed, p)
		return
	}
	if claim == nil {
		g.unclaimed(w, ev, res, fp)
		return
	}
	g.claimed(w, withBody(context.WithValue(r.Context(), ctxKey{}, req), r, body), next, claim, ev)
}

// reserve reserves the request's record: its first attempt, or, over a
// record released by an earlier request with the same parameters, the
// next attempt (a retry that runs the handler again).
func (g *Guard) reserve(ctx context.Context, recID, key, fp string) (*idempay.Claim, idempay.Reservation, error) {
	req := idempay.ReserveRequest{Namespace: g.ns, ID: recID, Attempt: 1, Key: key, Fingerprint: fp}
	for range 3 { // another retry beginning the next attempt meanwhile is answered 409
		claim, res, err := g.claims.Reserve(ctx, req)
		if err != nil || claim != nil || !released(res.Record) || res.Record.Fingerprint != fp {
			return claim, res, err
		}
		req.Attempt = res.Record.Attempt + 1
	}
	return nil, idempay.Reservation{}, errors.New("guard: the record's attempts moved on while this request reserved")
}

// released reports whether rec was given back for a retry.
func released(rec idempay.Record) bool {
	if rec.State != idempay.StateFailed {
		return false
	}
	s, err := decodeStored(rec.Result)
	return err == nil && s.Kind == kindReleased
}

// unclaimed answers a request whose key another request holds or has
// closed: 422 for other parameters, a replay, or 409.
func (g *Guard) unclaimed(w http.ResponseWriter, ev *Event, res idempay.Reservation, fp string) {
	rec := res.Record
	if rec.Fingerprint != fp {
		g.answer(w, ev, Reused, reusedProblem())
		return
	}
	if !rec.State.Closed() {
		g.answer(w, ev, InUse, inUseProblem(rec.LeaseUntil.Sub(res.Now)))
		return
	}
	s, err := decodeStored(rec.Result)
	switch {
	case err == nil && s.Kind == kindResponse:
		ev.Outcome, ev.Status = Replayed, s.Status
		replay(w, s)
	case err == nil && s.Kind == kindNotStored:
		p := plainProblem(http.StatusInternalServerError, CodeNotStored,
			"This request was processed, but its response was too large to keep for replay. Look up its result; do not send it again with a new key.")
		p.replayed = true
		g.answer(w, ev, Replayed, p)
	default:
		g.answer(w, ev, Corrupt, corruptProblem())
	}
}

// claimed runs the handler under a claim it holds, unless the record says
// the request is unsettled.
func (g *Guard) claimed(w http.ResponseWriter, r *http.Request, next http.Handler, claim *idempay.Claim, ev *Event) {
	s, err := decodeStored(claim.Record().Result)
	if err != nil || s.Kind == kindUnsettled {
		// Keep the record as it is (Release keeps the Result) and refuse.
		if rerr := claim.Release(r.Context()); rerr != nil && !errors.Is(rerr, idempay.ErrLeaseLost) {
			g.warn(r.Context(), "guard: release of a locked key failed; it frees itself when the lease runs out", claim.Record().ID, rerr)
		}
		if err != nil {
			g.answer(w, ev, Corrupt, corruptProblem())
			return
		}
		g.answer(w, ev, Locked, unsettledProblem(g.cfg.lease))
		return
	}
	if !claim.Held() {
		// The store answered after the lease had run out: a retry may
		// hold the key by now. Start no work on it.
		g.release(r.Context(), claim)
		p := plainProblem(http.StatusServiceUnavailable, CodeStoreDown, "The request was not processed; retry with the same key.")
		p.retryAfter = 1
		g.answer(w, ev, StoreFailed, p)
		return
	}
	g.run(w, r, next, claim, ev)
}

func (g *Guard) answer(w http.ResponseWriter, ev *Event, o Outcome, p problem) {
	ev.Outcome, ev.Status = o, p.Status
	p.write(w)
}

func (g *Guard) warn(ctx context.Context, msg, recID string, err error) {
	g.cfg.logger.LogAttrs(ctx, slog.LevelWarn, msg, slog.String("namespace", g.ns),
		slog.String("record", recID), slog.String("error", err.Error()))
}

func bodyProblem(err error, limit int64) problem {
	if errors.Is(err, errBodyTooLarge) {
		return plainProblem(http.StatusRequestEntityTooLarge, CodeBodyTooLarge,
			"The request body is larger than the "+strconv.FormatInt(limit, 10)+" bytes this endpoint accepts; it was not processed.")
	}
	return plainProblem(http.StatusBadRequest, CodeBodyUnread, "The request body could not be read; it was not processed.")
}

func corruptProblem() problem {
	return plainProblem(http.StatusInternalServerError, CodeResultCorrupt,
		"The stored result of this request cannot be read; it was not processed again.")
}

// isNilStore reports whether store is nil, or a nil pointer, map, func or
// the like in the interface: every call on it would fail or panic.
func isNilStore(store idempay.KeyStore) bool {
	if store == nil {
		return true
	}
	switch v := reflect.ValueOf(store); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}
