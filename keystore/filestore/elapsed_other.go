//go:build !linux

package filestore

import "time"

// hostElapsed is Go's monotonic clock where CLOCK_BOOTTIME does not exist
// (see monotonicElapsed).
func hostElapsed() func() time.Duration { return monotonicElapsed() }
