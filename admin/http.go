package admin

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idempay/idempay"
)

// Handler serves ops over HTTP, for Remote, under any prefix the service
// mounts it at (http.StripPrefix). Every request must carry
// "Authorization: Bearer <token>"; an empty token refuses every request.
// Answers are JSON (the journal: JSON lines). Mount it where only operators
// reach it: it can settle records and expire them.
//
//	GET  /open                      []Item
//	GET  /intents/{id}              idempay.Record (404 when none)
//	POST /intents/{id}/settle       Settled
//	POST /reconcile                 idempay.ReconcileReport
//	GET  /journal?since=RFC3339     JSON lines of idempay.JournalEntry
//	POST /expire?retention=72h[&dry_run=true]  Expired
func Handler(ops Ops, token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /open", func(w http.ResponseWriter, r *http.Request) {
		items, err := ops.Open(r.Context())
		answer(w, items, err)
	})
	mux.HandleFunc("GET /intents/{id}", func(w http.ResponseWriter, r *http.Request) {
		rec, err := ops.Show(r.Context(), r.PathValue("id"))
		// The stored outcomes are the service's: the states are enough.
		rec.Result = nil
		for i := range rec.History {
			rec.History[i].Result = nil
		}
		answer(w, rec, err)
	})
	mux.HandleFunc("POST /intents/{id}/settle", func(w http.ResponseWriter, r *http.Request) {
		s, err := ops.Settle(r.Context(), r.PathValue("id"))
		answer(w, s, err)
	})
	mux.HandleFunc("POST /reconcile", func(w http.ResponseWriter, r *http.Request) {
		rep, err := ops.Reconcile(r.Context(), nil)
		answer(w, rep, err)
	})
	mux.HandleFunc("GET /journal", func(w http.ResponseWriter, r *http.Request) {
		since, err := parseSince(r.URL.Query().Get("since"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var buf bytes.Buffer // written whole, so an error is still a status
		if _, err := ops.Journal(r.Context(), since, &buf); err != nil {
			answer(w, nil, err)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = w.Write(buf.Bytes())
	})
	mux.HandleFunc("POST /expire", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		ret, err := time.ParseDuration(q.Get("retention"))
		if err != nil {
			http.Error(w, "retention: "+err.Error(), http.StatusBadRequest)
			return
		}
		dry, _ := strconv.ParseBool(q.Get("dry_run"))
		e, err := ops.Expire(r.Context(), ret, dry)
		answer(w, e, err)
	})
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func parseSince(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("since: want RFC 3339: %w", err)
	}
	return t, nil
}

// problem is an error answer's body.
type problem struct {
	Error    string `json:"error"`
	NotFound bool   `json:"not_found,omitempty"`
}

func answer(w http.ResponseWriter, v any, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, idempay.ErrNotFound) {
			status = http.StatusNotFound
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(problem{Error: err.Error(), NotFound: status == http.StatusNotFound})
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

// Remote calls a Handler at BaseURL (the prefix it is mounted at) with
// Token. HTTPClient defaults to http.DefaultClient.
type Remote struct {
	BaseURL    string
	Token      string
	HTTPClient *http.Client
}

var _ Ops = (*Remote)(nil)

// Open lists the open records through the handler.
func (c *Remote) Open(ctx context.Context) ([]Item, error) {
	var items []Item
	return items, c.call(ctx, http.MethodGet, "/open", nil, &items)
}

// Show returns one charge's record; a missing one matches idempay.ErrNotFound.
func (c *Remote) Show(ctx context.Context, intentID string) (idempay.Record, error) {
	var rec idempay.Record
	return rec, c.call(ctx, http.MethodGet, "/intents/"+url.PathEscape(intentID), nil, &rec)
}

// Settle settles one charge through the handler.
func (c *Remote) Settle(ctx context.Context, intentID string) (Settled, error) {
	var s Settled
	return s, c.call(ctx, http.MethodPost, "/intents/"+url.PathEscape(intentID)+"/settle", nil, &s)
}

// Reconcile runs one pass in the service; progress hears of it at the end.
func (c *Remote) Reconcile(ctx context.Context, progress func(idempay.ReconcileProgress)) (*idempay.ReconcileReport, error) {
	var rep idempay.ReconcileReport
	if err := c.call(ctx, http.MethodPost, "/reconcile", nil, &rep); err != nil {
		return nil, err
	}
	if progress != nil {
		n := len(rep.Settled) + len(rep.Unsettled)
		progress(idempay.ReconcileProgress{Done: n, Settled: len(rep.Settled), Unsettled: len(rep.Unsettled)})
	}
	return &rep, nil
}

// Journal copies the service's journal to w.
func (c *Remote) Journal(ctx context.Context, since time.Time, w io.Writer) (int, error) {
	q := url.Values{}
	if !since.IsZero() {
		q.Set("since", since.Format(time.RFC3339Nano))
	}
	var buf bytes.Buffer
	if err := c.call(ctx, http.MethodGet, "/journal?"+q.Encode(), nil, &buf); err != nil {
		return 0, err
	}
	n := bytes.Count(buf.Bytes(), []byte("\n"))
	_, err := w.Write(buf.Bytes())
	return n, err
}

// Expire runs Expire in the service.
func (c *Remote) Expire(ctx context.Context, retention time.Duration, dryRun bool) (Expired, error) {
	var e Expired
	q := url.Values{"retention": {retention.String()}, "dry_run": {strconv.FormatBool(dryRun)}}
	return e, c.call(ctx, http.MethodPost, "/expire?"+q.Encode(), nil, &e)
}

// call sends one request; out is decoded from JSON, or filled as is when
// it is a *bytes.Buffer.
func (c *Remote) call(ctx context.Context, method, path string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return ErrUnauthorized
	case resp.StatusCode != http.StatusOK:
		var p problem
		_ = json.Unmarshal(raw, &p)
		if p.NotFound {
			return fmt.Errorf("%w: %s", idempay.ErrNotFound, p.Error)
		}
		return fmt.Errorf("admin: %s %s: %d %s", method, path, resp.StatusCode, strings.TrimSpace(string(raw)))
	}
	if buf, ok := out.(*bytes.Buffer); ok {
		buf.Write(raw)
		return nil
	}
	return json.Unmarshal(raw, out)
}
