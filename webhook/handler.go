package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// DefaultMaxBody is the largest body the Handler reads when WithMaxBody is
// not given. Provider events are far smaller; the cap keeps an
// unauthenticated sender from making the server buffer gigabytes before
// the signature can even be checked.
const DefaultMaxBody int64 = 1 << 20

// Handler is an http.Handler for one provider endpoint. For each request
// it reads the body (up to a cap), verifies the signature, reads the event
// ID, and runs the HandlerFunc through the Deduper, in that order: nothing
// unauthenticated is parsed or written to the store. It answers with
// HTTPStatus of the outcome.
//
// The zero value is not usable; use NewHandler. A Handler is safe for
// concurrent use.
type Handler struct {
	verifier Verifier
	dedup    *Deduper
	fn       HandlerFunc
	cfg      handlerConfig
}

var _ http.Handler = (*Handler)(nil)

// HandlerOption configures NewHandler. Options check their input; the
// constructor returns the first error.
type HandlerOption func(*handlerConfig) error

type handlerConfig struct {
	maxBody int64
	eventID func([]byte) (string, error)
	onError func(r *http.Request, status int, err error)
}

// WithMaxBody sets the largest body read (default DefaultMaxBody); a
// larger one is answered 413 without being verified. It is refused unless
// n is positive.
func WithMaxBody(n int64) HandlerOption {
	return func(c *handlerConfig) error {
		if n <= 0 {
			return fmt.Errorf("webhook: max body %d is not positive", n)
		}
		c.maxBody = n
		return nil
	}
}

// WithEventID replaces EventID, for providers whose event ID is elsewhere
// than a top-level "id". fn sees only verified bodies. An error from fn,
// or an ID that is empty, too long or not printable ASCII, is answered 400
// and matches ErrNoEventID. It is refused if fn is nil.
func WithEventID(fn func(body []byte) (string, error)) HandlerOption {
	return func(c *handlerConfig) error {
		if fn == nil {
			return errors.New("webhook: WithEventID(nil)")
		}
		c.eventID = fn
		return nil
	}
}

// WithErrorHook calls fn for every request answered with an error, and for
// ErrNotRecorded (answered 200), with the status sent. The answer's body
// is a fixed phrase, never the error, so this hook is where a handler's
// error reaches your logs and metrics. fn runs before the answer is
// written; keep it short. It is refused if fn is nil.
func WithErrorHook(fn func(r *http.Request, status int, err error)) HandlerOption {
	return func(c *handlerConfig) error {
		if fn == nil {
			return errors.New("webhook: WithErrorHook(nil)")
		}
		c.onError = fn
		return nil
	}
}

// NewHandler returns a Handler verifying with v, de-duplicating with d and
// doing the work in fn. It is refused if any of them is nil. Options:
// WithMaxBody, WithEventID, WithErrorHook.
func NewHandler(v Verifier, d *Deduper, fn HandlerFunc, opts ...HandlerOption) (*Handler, error) {
	if v == nil || d == nil || fn == nil {
		return nil, errors.New("webhook: NewHandler needs a Verifier, a Deduper and a HandlerFunc")
	}
	cfg := handlerConfig{maxBody: DefaultMaxBody, eventID: EventID}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("webhook: nil HandlerOption")
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	return &Handler{verifier: v, dedup: d, fn: fn, cfg: cfg}, nil
}

// Receive does what ServeHTTP does with a body already read: verify, read
// the event ID, and run the HandlerFunc through the Deduper. It is for
// frameworks that do not hand out an http.Request, or that read the body
// themselves; pass the raw bytes, not re-encoded JSON. Its results are
// Deduper.Do's, plus the errors of Verify and of the event ID; HTTPStatus
// turns them into the answer.
func (h *Handler) Receive(ctx context.Context, header http.Header, body []byte) (Delivery, error) {
	if err := h.verifier.Verify(header, body); err != nil {
		return 0, err
	}
	id, err := h.cfg.eventID(body)
	if err == nil {
		err = checkEventID(id)
	}
	if err != nil {
		if !errors.Is(err, ErrNoEventID) {
			err = fmt.Errorf("%w: %w", ErrNoEventID, err)
		}
		return 0, err
	}
	return h.dedup.Do(ctx, id, body, func(ctx context.Context) error {
		return h.fn(ctx, Event{ID: id, Body: body, Header: header})
	})
}

// ServeHTTP answers a webhook delivery: 405 for other methods than POST,
// 413 for a body over the cap, and otherwise HTTPStatus of Receive's
// error, with a short fixed phrase as the body.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.answer(w, r, http.StatusMethodNotAllowed, fmt.Errorf("webhook: method %s, want POST", r.Method), "POST only")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.maxBody))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			h.answer(w, r, http.StatusRequestEntityTooLarge, fmt.Errorf("%w: over %d bytes", ErrTooLarge, mbe.Limit), "")
			return
		}
		h.answer(w, r, http.StatusBadRequest, fmt.Errorf("webhook: read body: %w", err), "unreadable body")
		return
	}
	d, err := h.Receive(r.Context(), r.Header, body)
	phrase := d.String()
	if err != nil {
		phrase = ""
	}
	h.answer(w, r, HTTPStatus(err), err, phrase)
}

// answer calls the error hook if err is set, then writes status with
// phrase (or the phrase for err) as a plain-text body.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, status int, err error, phrase string) {
	if err != nil && h.cfg.onError != nil {
		h.cfg.onError(r, status, err)
	}
	if phrase == "" {
		phrase = publicPhrase(err)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, phrase+"\n")
}
