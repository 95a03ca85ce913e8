//go:build !race

package idempay_test

// raceOn: the race detector is on, and allocation counts mean nothing.
const raceOn = false
