package idempay_test

import (
	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
)

// tc2pSecret is the merchant secret key of the 2C2P tests: a test value.
const tc2pSecret idempay.Secret = "fake-2c2p-merchant-secret"

// tc2pHS256 signs claims with the test secret, by hand.
func tc2pHS256(claims string) string { return twoc2ptest.SignHS256(claims, tc2pSecret.Reveal()) }
