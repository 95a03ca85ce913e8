package sim

import (
	"net/http"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/provider/twoc2p"
)

// Seed 300126: 2C2P's maintenance inquiry (a lookup before a resend)
// shares the refund's URL; the simulator took it for a refund and judged
// it by the refund's lease, which the flight no longer held. What names
// an operation is the key it carries in the clear.
func TestTwoC2PInquiryIsALookup(t *testing.T) {
	p := &twoC2P{}
	refund, _ := http.NewRequest(http.MethodPost, "http://2c2p"+twoc2p.MaintenancePath, nil)
	refund.Header.Set(twoc2p.KeyHeader, "k-1")
	if rq := p.inspect(refund, nil); !rq.op || rq.opLookup {
		t.Errorf("a refund (key in %s): op=%t opLookup=%t, want an operation", twoc2p.KeyHeader, rq.op, rq.opLookup)
	}
	inquiry, _ := http.NewRequest(http.MethodPost, "http://2c2p"+twoc2p.MaintenancePath, nil)
	if rq := p.inspect(inquiry, nil); !rq.opLookup {
		t.Errorf("an inquiry (no key): opLookup=%t, want a lookup", rq.opLookup)
	}
}

// Seed 301227: an authorisation cancelled moved no money, so a charge
// told failed over it was told the truth; one whose cancel failed, or
// another intent's cancel, leaves it counted.
func TestLedgerKeysLeaveOutReleasedAuthorisations(t *testing.T) {
	var l fakes.Ledger
	l.Add(fakes.Charge{ID: "pi_1", Merchant: "m", Intent: "o1", Key: "k1", Amount: 100, Authorized: true})
	l.Add(fakes.Charge{ID: "pi_2", Merchant: "m", Intent: "o2", Key: "k2", Amount: 100, Authorized: true})
	l.Add(fakes.Charge{ID: "pi_3", Merchant: "m", Intent: "o3", Key: "k3", Amount: 100, Authorized: true})
	cancel := func(id, intent string, st fakes.OpStatus) {
		l.Decide("m", id, func(_ fakes.Balance, _ bool, record func(fakes.Op)) {
			record(fakes.Op{Type: fakes.OpCancel, ID: id, ChargeID: id, Merchant: "m", Intent: intent, Status: st})
		})
	}
	cancel("pi_1", "o1", fakes.OpSucceeded)
	cancel("pi_2", "o2", fakes.OpFailed)
	if n := ledgerKeys(&l, "o1")["k1"]; n != 0 {
		t.Errorf("a released authorisation counts %d charge(s), want 0", n)
	}
	if n := ledgerKeys(&l, "o2")["k2"]; n != 1 {
		t.Errorf("an authorisation whose cancel failed counts %d, want 1", n)
	}
	if n := ledgerKeys(&l, "o3")["k3"]; n != 1 {
		t.Errorf("an authorisation never cancelled counts %d, want 1", n)
	}
}

// Seeds 1694 and 1719: a step back of the store's clock lengthens the
// leases granted before it, even when the clock is ahead of true time on
// the whole; only the steps since a lease was granted count for it.
func TestSetBackSinceCountsStepsBackAfterAnInstant(t *testing.T) {
	w := &world{clock: newSimClock()}
	t0 := w.clock.Now()
	w.setBacks = []setBack{{at: t0.Add(time.Minute), by: 20 * time.Second}, {at: t0.Add(time.Hour), by: 2 * time.Minute}}
	for _, c := range []struct {
		since time.Time
		want  time.Duration
	}{{time.Time{}, 140 * time.Second}, {t0, 140 * time.Second}, {t0.Add(2 * time.Minute), 2 * time.Minute},
		{t0.Add(2 * time.Hour), 0}} {
		if got := w.setBackSince(c.since); got != c.want {
			t.Errorf("setBackSince(+%s) = %s, want %s", c.since.Sub(t0), got, c.want)
		}
	}
}
