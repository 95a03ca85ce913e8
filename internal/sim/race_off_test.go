//go:build !race

package sim

// raceDetector: the race detector makes a seed five to ten times dearer.
const raceDetector = false
