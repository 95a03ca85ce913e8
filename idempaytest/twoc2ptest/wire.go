package twoc2ptest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/golang-jwt/jwt/v5"
	"github.com/idempay/idempay/internal/faults"
)

// respDescs are the descriptions the server answers with.
var respDescs = map[string]string{
	"0000": "Success",
	"0001": "Transaction is pending",
	"2001": "Transaction in progress",
	"2002": "Transaction not found",
	"9004": "The value is not valid",
	"9005": "Some mandatory fields are missing",
	"9006": "This field exceeded its authorized length",
	"9007": "Invalid merchant",
	"9009": "Invalid amount",
	"9010": "Invalid currency code",
	"9015": "Existing Invoice Number",
	"9042": "Hash value mismatch",
	"9999": "System error",
}

func desc(code string) string {
	if d, ok := respDescs[code]; ok {
		return d
	}
	return "Declined"
}

// readPayload reads {"payload": "<jwt>"} and verifies the JWT: HS256 with
// the secret, nothing else.
func (s *Server) readPayload(r *http.Request) (jwt.MapClaims, error) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	var body struct {
		Payload *string `json:"payload"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Payload == nil {
		return nil, errors.New("no payload")
	}
	claims := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(*body.Payload, claims, func(*jwt.Token) (any, error) {
		return []byte(s.cfg.secret), nil
	}, jwt.WithValidMethods([]string{"HS256"}), jwt.WithJSONNumber(), jwt.WithTimeFunc(s.cfg.Clock))
	if err != nil {
		return nil, err
	}
	return claims, nil
}

// answer writes a signed answer {"payload": "<jwt>"} with status 200,
// counted by g (nil: not counted) for id.
func (s *Server) answer(w http.ResponseWriter, g *faults.Gate, id string, claims jwt.MapClaims) {
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(s.cfg.secret))
	if err != nil { // HS256 with a []byte key cannot fail
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	code, _ := claims["respCode"].(string)
	s.send(w, g, id, http.StatusOK, code, map[string]string{"payload": tok})
}

// refuse answers a refusal: signed unless WithPlainErrors, or when plain
// is forced (the server cannot sign for a request it could not verify).
func (s *Server) refuse(w http.ResponseWriter, g *faults.Gate, id, code string, plain bool, extra jwt.MapClaims) {
	if plain || s.cfg.plainErrors {
		s.send(w, g, id, http.StatusOK, code, map[string]string{"respCode": code, "respDesc": desc(code)})
		return
	}
	c := jwt.MapClaims{"respCode": code, "respDesc": desc(code)}
	for k, v := range extra {
		c[k] = v
	}
	s.answer(w, g, id, c)
}

// send writes v as JSON, counted by g when it is not nil.
func (s *Server) send(w http.ResponseWriter, g *faults.Gate, id string, status int, code string, v any) {
	b, _ := json.Marshal(v) // maps of strings: cannot fail
	if g == nil {
		writeBody(w, status, b)
		return
	}
	g.Send(w, id, status, b, code, false)
}

// writeBody writes a JSON body.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// unavailable is the gateway's 503: an HTML page, not JSON.
func unavailable(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = io.WriteString(w, "<html><body>503 Service Unavailable</body></html>")
}

// internal answers an HTTP 500 with 2C2P's plain internal-failure code.
func (s *Server) internal(w http.ResponseWriter, g *faults.Gate, id string) {
	s.send(w, g, id, http.StatusInternalServerError, "9999", map[string]string{"respCode": "9999", "respDesc": desc("9999")})
}

// str returns claim k as a string, and whether it was one.
func str(c jwt.MapClaims, k string) (string, bool) {
	v, ok := c[k].(string)
	return v, ok
}
