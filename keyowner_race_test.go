package idempay_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule (issue 17, 10): a key is reserved for its owner atomically: of
// many intents charged with one key at once, on two clients sharing the
// store, exactly one is charged with it; every other is refused, nothing
// sent.
func TestOneKeyOnManyIntentsAtOnceChargesOne(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	clients := []*idempay.Client{opsClient(t, s, store), opsClient(t, s, store)}
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := order(fmt.Sprintf("i-%d", i))
			req.Key = "shared-frontend-key"
			_, errs[i] = clients[i%2].Charge(context.Background(), req)
		}()
	}
	wg.Wait()
	charged := 0
	for i, err := range errs {
		if err == nil {
			charged++
			continue
		}
		var ve *idempay.ValidationError
		assert.ErrorAs(t, err, &ve, "intent %d", i)
		assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "intent %d", i)
	}
	assert.Equal(t, 1, charged)
	assert.Equal(t, 1, s.Ledger().Len(), "one charge reached the server")
	require.NoError(t, s.Ledger().Check())
}
