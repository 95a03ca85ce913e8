package refserver

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/idempay/idempay/internal/faults"
)

// MerchantHeader names the header that selects a merchant (a sub-account
// of the authenticated caller) and with it a separate key space.
const MerchantHeader = "Merchant-Id"

// merchant authenticates r and returns the tenant whose key space it uses
// (see Charge.Merchant). ok is false when authentication is configured
// and r does not pass it.
func (s *Server) merchant(r *http.Request) (tenant string, ok bool) {
	secret, _ := bearer(r.Header.Get("Authorization"))
	base := secret
	if len(s.cfg.Auth) > 0 {
		if base, ok = s.lookupSecret(secret); !ok {
			return "", false
		}
	}
	id := r.Header.Get(MerchantHeader)
	switch {
	case id == "":
		return base, true
	case base == "":
		return id, true
	default:
		return base + "/" + id, true
	}
}

// lookupSecret compares secret with every configured one in constant time,
// so that response timing tells nothing about how much of it matched.
func (s *Server) lookupSecret(secret string) (string, bool) {
	merchant, found := "", false
	for known, m := range s.cfg.Auth {
		if subtle.ConstantTimeCompare([]byte(known), []byte(secret)) == 1 {
			merchant, found = m, true
		}
	}
	return merchant, found && secret != ""
}

// bearer returns the credentials of an "Authorization: Bearer x" value.
func bearer(h string) (string, bool) {
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	cred = strings.TrimSpace(cred)
	return cred, cred != ""
}

// unauthorized answers 401, counted by g when it is not nil.
func (s *Server) unauthorized(w http.ResponseWriter, g *faults.Gate, id string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="refserver"`)
	e := &apiError{Type: faults.TypeAuth, Code: "unauthorized", Message: "a valid bearer secret is required"}
	if g != nil {
		s.fail(w, g, id, http.StatusUnauthorized, e)
		return
	}
	writeJSON(w, http.StatusUnauthorized, e.Body())
}
