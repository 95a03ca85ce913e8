//go:build linux

package filestore

import (
	"syscall"
	"time"
	"unsafe"
)

// clockBoottime is CLOCK_BOOTTIME: like CLOCK_MONOTONIC (which Go's
// monotonic readings use), but it keeps counting while the host is
// suspended.
const clockBoottime = 7

// hostElapsed reads CLOCK_BOOTTIME, falling back to Go's monotonic clock
// if the kernel refuses it (it has had it since Linux 2.6.39).
func hostElapsed() func() time.Duration {
	if _, ok := boottime(); !ok {
		return monotonicElapsed()
	}
	return func() time.Duration {
		d, _ := boottime()
		return d
	}
}

func boottime() (time.Duration, bool) {
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockBoottime, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
