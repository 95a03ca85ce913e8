package sim

import (
	"context"
	"testing"
	"time"

	"github.com/idempay/idempay"
	rstore "github.com/idempay/idempay/keystore/redis"
)

// TestVolatileModelMarker: after redis-volatile loses its data set, a
// process that saw the marker makes every reservation of the namespace
// Unproven for the loss window, as the real store does; one that never saw
// it (started after the loss) cannot tell, and neither can anyone once the
// window is over.
func TestVolatileModelMarker(t *testing.T) {
	r := newCrashRig(modelVolatile)
	reserve := func(owner, intent string) bool {
		t.Helper()
		res, err := r.s.Reserve(context.Background(), idempay.ReserveRequest{Namespace: "ns", ID: intent, Attempt: 1,
			Key: "k-" + intent, Fingerprint: "fp", Owner: owner, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return res.Unproven
	}
	// The old process saw the sequence at 2: the new one's Reserve after
	// the loss brings the marker back to 1 only (with the real script's
	// comparison, a marker caught up with what a process saw hides the loss
	// from it).
	if reserve("old/1", "a") || reserve("old/1", "a") {
		t.Fatal("a reservation before any loss is unproven")
	}
	r.s.crash()
	if reserve("new/1", "b") {
		t.Fatal("a process that never saw the marker noticed a loss it cannot know of")
	}
	if !reserve("old/2", "a") {
		t.Fatal("the process that saw the marker did not notice the lost data set: reservation not unproven")
	}
	if !reserve("new/2", "c") {
		t.Fatal("once noticed, the loss must make every reservation of the namespace unproven")
	}
	r.now = r.now.Add(rstore.DefaultLossWindow)
	if reserve("old/3", "d") {
		t.Fatal("a reservation after the loss window is still unproven")
	}
}
