package faults

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// The gate ends Pre and Unavailable at arrival, counts every request and
// answer, and loses a Post answer; the hook runs before the fault.
func TestGate(t *testing.T) {
	g := Settings{Settings: fakes.Settings{RetryAfter: 2 * time.Second}}.Gate(nil)
	g.Mark = func(h http.Header, _ int, replayed bool) {
		if replayed {
			h.Set("Replayed", "true")
		}
	}
	g.Faults.Fail("o1", fakes.Pre, fakes.Unavailable, fakes.Post)
	hooked := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := g.Arrive(w, r.Header.Get("Key"), "o1", func() { hooked++ })
		if !ok {
			return
		}
		g.Reply(w, "o1", Stored{Status: 201, Body: []byte(`{}`)}, r.Header.Get("Again") != "", f)
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	do := func(again bool) (*http.Response, error) {
		r, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("x"))
		r.Header.Set("Key", "k1")
		if again {
			r.Header.Set("Again", "1")
		}
		return client.Do(r)
	}
	if _, err := do(false); err == nil {
		t.Fatal("Pre answered")
	}
	resp, err := do(false)
	if err != nil || resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("Unavailable: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := do(false); err == nil {
		t.Fatal("Post answered")
	}
	resp, err = do(true)
	if err != nil || resp.StatusCode != 201 || resp.Header.Get("Replayed") != "true" {
		t.Fatalf("replay: %v %v", resp, err)
	}
	resp.Body.Close()
	tr := g.Traffic.Snapshot()
	if hooked != 4 || tr.Requests != 4 || tr.ByKey["k1"] != 4 || len(tr.Keys["o1"]) != 1 || tr.Replays != 1 ||
		tr.Faults[fakes.Pre] != 1 || tr.Faults[fakes.Unavailable] != 1 || tr.Faults[fakes.Post] != 1 ||
		tr.Statuses[503] != 1 || tr.Statuses[201] != 1 || !tr.LastReplayed["o1"] {
		t.Fatalf("hooked %d, traffic %+v", hooked, tr)
	}
	tr.Keys["o1"][0] = "changed"
	if g.Traffic.Snapshot().Keys["o1"][0] != "k1" {
		t.Error("Snapshot shares its maps")
	}
}

// Execute calls the outcome a claim finds: the run, in use, the replay,
// another request; an empty key runs unprotected.
func TestExecute(t *testing.T) {
	kt := NewKeyTable(time.Second, time.Hour)
	now := time.Now()
	var got []string
	o := func(commit bool) Outcomes {
		return Outcomes{
			Mismatch: func() { got = append(got, "mismatch") },
			InUse:    func() { got = append(got, "in use") },
			Replay:   func(r Stored) { got = append(got, "replay "+string(r.Body)) },
			Run: func(c Claimed) {
				got = append(got, "run")
				if commit && !c.Commit(Stored{Status: 200, Body: []byte("a")}, func() { got = append(got, "effect") }) {
					t.Error("commit refused")
				}
			},
		}
	}
	kt.Execute("m", "k", "fp", now, o(false)) // runs, and holds the key
	kt.Execute("m", "k", "fp", now, o(true))  // in use
	kt.Execute("m", "k", "fp", now.Add(2*time.Second), o(true))
	kt.Execute("m", "k", "fp", now.Add(3*time.Second), o(true))
	kt.Execute("m", "k", "other", now.Add(3*time.Second), o(true))
	kt.Execute("m", "", "fp", now, o(true))
	want := "run|in use|run|effect|replay a|mismatch|run|effect"
	if s := strings.Join(got, "|"); s != want {
		t.Fatalf("got %s\nwant %s", s, want)
	}
}

func TestSettings(t *testing.T) {
	var c Settings
	if c.SetSettings(fakes.Settings{Lease: -1}) == nil || c.SetFaults(fakes.Rates{Post: 2}, 1) == nil {
		t.Error("bad settings accepted")
	}
	if err := c.SetSettings(fakes.Settings{Lease: time.Second, Lenient: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetSettings(fakes.Settings{Retention: time.Hour}); err != nil || c.Lease != time.Second || !c.Lenient {
		t.Errorf("settings merged: %+v, %v", c, err)
	}
	d := Settings{}.WithDefaults()
	if d.Lease != DefaultLease || d.Retention != DefaultRetention || d.Clock == nil {
		t.Errorf("defaults %+v", d)
	}
}
