package stripetest

import (
	"maps"
	"net/http"
	"regexp"
	"sync"

	"github.com/idempay/idempay/internal/faults"
)

// connectHeader names the connected account a request acts on (Stripe
// Connect).
const connectHeader = "Stripe-Account"

var connectedID = regexp.MustCompile(`^acct_[A-Za-z0-9]{1,64}$`)

// connected refuses, as Stripe does, a Stripe-Account header that names no
// account: 403, nothing done. It reports whether the request may go on.
func connected(w http.ResponseWriter, r *http.Request) bool {
	acct := r.Header.Get(connectHeader)
	if acct == "" || connectedID.MatchString(acct) {
		return true
	}
	writeError(w, http.StatusForbidden, &apiError{Type: faults.TypeInvalid, Code: "account_invalid",
		Message: "The provided key does not have access to account '" + acct + "' (or that account does not exist)."})
	return false
}

// accountCounts counts requests by their Stripe-Account header.
type accountCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *accountCounts) add(account string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[account]++
}

func (c *accountCounts) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}
