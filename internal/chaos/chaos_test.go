package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/idempay/idempay"
)

// recorder is a testing.TB that keeps the run's errors instead of failing,
// to see what the harness reports.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// oneCharge is a provider view for which every intent was charged once,
// under one key.
type oneCharge struct{}

func (oneCharge) Charges(string) int               { return 1 }
func (oneCharge) Keys(id string) []string          { return []string{"key-" + id} }
func (oneCharge) LastReplayed(string) (bool, bool) { return false, true }
func (oneCharge) Faults(bool)                      {}
func intentName(i int) string                      { return fmt.Sprintf("i%d", i) }
func charge(id string, st idempay.State) *idempay.Charge {
	return &idempay.Charge{IntentID: id, State: st}
}

func pendingErr(id string) error {
	return &idempay.ChargeError{IntentID: id, Outcome: idempay.OutcomePending, Err: idempay.ErrPending}
}

// The harness sorts every result by its outcome, and pending is its own:
// never a success, allowed only where the run says the provider's charges
// wait for the customer, and only with ErrPending and the pending charge
// together.
func TestPendingIsItsOwnOutcome(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pending bool // Config.Pending
		answer  func(id string) (*idempay.Charge, error)
		want    string // a reported error containing this; empty: none
		counted func(Report) int
	}{
		{"succeeded", false, func(id string) (*idempay.Charge, error) { return charge(id, idempay.StateSucceeded), nil }, "",
			func(r Report) int { return r.Succeeded }},
		{"pending where allowed", true, func(id string) (*idempay.Charge, error) {
			return charge(id, idempay.StatePending), pendingErr(id)
		}, "", func(r Report) int { return r.Pending }},
		{"pending with a nil error", true, func(id string) (*idempay.Charge, error) { return charge(id, idempay.StatePending), nil },
			"pending reported as success", nil},
		{"pending where not allowed", false, func(id string) (*idempay.Charge, error) {
			return charge(id, idempay.StatePending), pendingErr(id)
		}, "only succeeded or unknown", nil},
		{"pending without its charge", true, func(id string) (*idempay.Charge, error) { return nil, pendingErr(id) },
			"without the pending charge", nil},
		{"pending with a succeeded charge", true, func(id string) (*idempay.Charge, error) {
			return charge(id, idempay.StateSucceeded), pendingErr(id)
		}, "outcome pending with a succeeded charge", nil},
		{"failed", true, func(id string) (*idempay.Charge, error) {
			return nil, &idempay.ChargeError{IntentID: id, Outcome: idempay.OutcomeFailed, Err: idempay.ErrDeclined}
		}, "only succeeded, pending or unknown", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			rep := Run(rec, Config{Intents: 3, Workers: 2, Server: oneCharge{}, Intent: intentName, Pending: tc.pending,
				Charge: func(_ context.Context, i int) (*idempay.Charge, error) { return tc.answer(intentName(i)) }})
			if tc.want == "" {
				if len(rec.errs) != 0 {
					t.Fatalf("errors %q", rec.errs)
				}
				if got := tc.counted(rep); got != 3 {
					t.Errorf("counted %d of 3 (%s)", got, rep)
				}
				if rep.Unknown != 0 {
					t.Errorf("unknown %d", rep.Unknown)
				}
				return
			}
			found := false
			for _, e := range rec.errs {
				found = found || strings.Contains(e, tc.want)
			}
			if !found {
				t.Errorf("no error %q among %q", tc.want, rec.errs)
			}
			if rep.Succeeded != 0 {
				t.Errorf("a wrong answer counted as succeeded: %s", rep)
			}
		})
	}
}
