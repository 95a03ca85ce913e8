package idempay_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTwoC2PLegacyVerify(t *testing.T) {
	s := idempay.TwoC2PSigner{Secret: tc2pVectorSecret}
	signed, sig, err := s.LegacySign(json.RawMessage(tc2pVectorClaims))
	require.NoError(t, err)

	// What still verifies: the same bytes laid out with whitespace, and the
	// signature in upper case or placed first.
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, signed, "", "  "))
	for name, msg := range map[string]string{
		"pretty":          pretty.String(),
		"upper-case hex":  strings.Replace(string(signed), sig, strings.ToUpper(sig), 1),
		"signature first": `{"signature":"` + sig + `",` + strings.TrimPrefix(tc2pVectorClaims, "{"),
	} {
		got, err := s.LegacyVerify([]byte(msg))
		require.NoError(t, err, name)
		assert.Equal(t, tc2pVectorClaims, string(got), name)
	}

	// What does not.
	other := idempay.TwoC2PSigner{Secret: "another-secret"}
	for name, tc := range map[string]struct {
		msg string
		s   idempay.TwoC2PSigner
		is  error
	}{
		"wrong key":              {string(signed), other, idempay.ErrTwoC2PSignature},
		"tampered amount":        {strings.Replace(string(signed), "1234.56", "1.56", 1), s, idempay.ErrTwoC2PSignature},
		"same number, respelled": {strings.Replace(string(signed), "1234.56", "1234.560", 1), s, idempay.ErrTwoC2PSignature},
		"members reordered":      {`{"invoiceNo":"3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17","merchantID":"JT01"` + strings.TrimPrefix(string(signed), `{"merchantID":"JT01","invoiceNo":"3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17"`), s, idempay.ErrTwoC2PSignature},
		"member added":           {strings.Replace(string(signed), `"amount"`, `"extra":1,"amount"`, 1), s, idempay.ErrTwoC2PSignature},
		"duplicate member":       {strings.Replace(string(signed), `"amount":1234.56,`, `"amount":1234.56,"amount":1.00,`, 1), s, idempay.ErrTwoC2PSignature},
		"two signatures":         {strings.Replace(string(signed), `}`, `,"signature":"00"}`, 1), s, idempay.ErrTwoC2PSignature},
		"no signature":           {tc2pVectorClaims, s, idempay.ErrTwoC2PSignature},
		"signature not hex":      {strings.Replace(string(signed), sig, "zz"+sig[2:], 1), s, idempay.ErrTwoC2PSignature},
		"signature short":        {strings.Replace(string(signed), sig, sig[:62], 1), s, idempay.ErrTwoC2PSignature},
		"signature number":       {strings.Replace(string(signed), `"`+sig+`"`, "1", 1), s, idempay.ErrTwoC2PSignature},
		"not an object":          {`["signature"]`, s, idempay.ErrTwoC2PMalformed},
		"trailing data":          {string(signed) + `{}`, s, idempay.ErrTwoC2PMalformed},
		"truncated":              {string(signed[:len(signed)-1]), s, idempay.ErrTwoC2PMalformed},
	} {
		got, err := tc.s.LegacyVerify([]byte(tc.msg))
		assert.Nil(t, got, name)
		assert.ErrorIs(t, err, tc.is, name)
	}
}

func TestTwoC2PLegacySign(t *testing.T) {
	s := idempay.TwoC2PSigner{Secret: tc2pSecret}
	signed, sig, err := s.LegacySign(map[string]string{})
	require.NoError(t, err)
	assert.Equal(t, `{"signature":"`+sig+`"}`, string(signed))
	_, err = s.LegacyVerify(signed)
	require.NoError(t, err)

	for _, p := range []any{map[string]string{"signature": "x"}, []int{1}, nil, "s", make(chan int)} {
		_, _, err := s.LegacySign(p)
		assert.ErrorIs(t, err, idempay.ErrInvalidRequest, "%T", p)
	}
}
