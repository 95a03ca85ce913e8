package filestore_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/filestore"
)

// TestSecondOpenInProcessIsErrLocked: a second Open of a file that a Store
// of this process holds fails at once with ErrLocked, telling the caller to
// share one *Store, rather than waiting out the open timeout; the file
// opens again once the first Store is closed. The same file under another
// name counts as the same file.
func TestSecondOpenInProcessIsErrLocked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.db")
	first, err := filestore.Open(path, filestore.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, filepath.Join(dir, ".", "keys.db")} {
		start := time.Now()
		s, err := filestore.Open(p, filestore.WithOpenTimeout(time.Minute))
		if err == nil {
			s.Close()
			t.Fatalf("second Open(%s) in one process succeeded", p)
		}
		if !errors.Is(err, filestore.ErrLocked) || !strings.Contains(err.Error(), "share one *Store") {
			t.Errorf("second Open(%s) = %v; want ErrLocked saying to share one *Store", p, err)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("second Open took %v with a one-minute timeout; want it refused without waiting", d)
		}
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := filestore.Open(path, filestore.WithSweepInterval(0))
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	again.Close()
}

// TestOpenErrorsNameTheUsersPath: a missing directory is reported with the
// path the caller gave, and matches fs.ErrNotExist, never naming the
// temporary file the store builds a new file under.
func TestOpenErrorsNameTheUsersPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "keys.db")
	_, err := filestore.Open(path)
	if err == nil {
		t.Fatal("Open in a missing directory succeeded")
	}
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), ".new-") {
		t.Errorf("Open in a missing directory = %v; want fs.ErrNotExist naming %s and no temporary file", err, path)
	}
	if !strings.Contains(err.Error(), filepath.Dir(path)) || !strings.Contains(err.Error(), "directory") {
		t.Errorf("Open in a missing directory = %v; want it to name the directory", err)
	}
}

// TestOpenReadOnlyDirectory: a directory the process cannot write is
// reported with the user's path and fs.ErrPermission.
func TestOpenReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only directories; TestCreateErrorNamesUsersPath covers the message")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	path := filepath.Join(dir, "keys.db")
	_, err := filestore.Open(path)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), ".new-") {
		t.Errorf("Open in a read-only directory = %v; want fs.ErrPermission naming %s and no temporary file", err, path)
	}
}

// TestOpenEmptyPath: an empty path is a configuration error, typed, and
// nothing is created.
func TestOpenEmptyPath(t *testing.T) {
	_, err := filestore.Open("")
	var ce *idempay.ConfigError
	if !errors.As(err, &ce) || !errors.Is(err, idempay.ErrConfig) || strings.Contains(err.Error(), "link") {
		t.Errorf("Open(\"\") = %v; want a *idempay.ConfigError matching ErrConfig", err)
	}
}
