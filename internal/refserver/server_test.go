package refserver

import (
	"net/http"
	"strings"
	"testing"
)

// TestStart: a real loopback listener that stops cleanly, and twice.
func TestStart(t *testing.T) {
	s, url, stop := Start(Config{})
	defer stop()
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("url %q is not on loopback", url)
	}
	c := freshClient()
	mustStatus(t, post(t, c, url, "k1", body("ord_1", 1500, "tok_visa")), 201)
	s.InjectNext(Pre)
	mustDrop(t, post(t, c, url, "k2", body("ord_2", 1500, "tok_visa")))
	stop()
	stop()
	if r := post(t, c, url, "k3", body("ord_3", 1500, "tok_visa")); r.err == nil {
		t.Errorf("server still answering after stop: %d", r.status)
	}
	mustCharges(t, s, 1)
}

// TestStatsSnapshotIsACopy: a snapshot does not change under the caller.
func TestStatsSnapshotIsACopy(t *testing.T) {
	s, ts := newTest(t, Config{})
	mustStatus(t, post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa")), 201)
	st := s.Stats()
	st.ByKey["k1"] = 99
	st.KeysByOrder["ord_1"][0] = "changed"
	mustStatus(t, post(t, ts.Client(), ts.URL, "k1", body("ord_1", 1500, "tok_visa")), 201)
	now := s.Stats()
	if now.ByKey["k1"] != 2 || now.KeysByOrder["ord_1"][0] != "k1" || now.Requests != 2 ||
		now.Statuses[http.StatusCreated] != 2 {
		t.Errorf("stats: %+v", now)
	}
}
