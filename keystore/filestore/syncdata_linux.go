//go:build linux

package filestore

import (
	"os"
	"syscall"
)

// syncData makes f's data durable with fdatasync: the log is written in
// place in a file already at its size (see preallocate), so no metadata
// needs syncing with it.
func syncData(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
