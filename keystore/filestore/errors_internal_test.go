package filestore

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// TestCreateErrorNamesUsersPath: whatever fails while building a new file
// under its temporary name is reported on the user's path and directory,
// keeping the cause matchable.
func TestCreateErrorNamesUsersPath(t *testing.T) {
	path := "/srv/pay/keys.db"
	cause := &fs.PathError{Op: "open", Path: "/srv/pay/.keys.db.new-ABCDEFGH", Err: syscall.EACCES}
	err := createError(path, cause)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "/srv/pay") || strings.Contains(err.Error(), ".new-") {
		t.Errorf("createError = %v; want fs.ErrPermission naming the directory, not the temporary file", err)
	}
}
