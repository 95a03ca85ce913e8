package filestore

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// create makes a new, empty store file at path, which does not exist, in a
// way that leaves at path either nothing or a complete store file: it
// builds the file under a temporary name in the same directory, syncs it,
// links it to path (which fails if path has appeared meanwhile: another
// Open created it first, and that file is kept) and syncs the directory,
// so that the new name survives a crash too. That is what lets Open refuse
// an empty or short file at path: no Open leaves one.
func create(path string, cfg config) error {
	dir := filepath.Dir(path)
	tmp := filepath.Join(dir, "."+filepath.Base(path)+".new-"+rand.Text()[:8])
	defer os.Remove(tmp)
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("the directory %s of the store file: %w", dir, unpath(err))
	} else if !fi.IsDir() {
		return fmt.Errorf("the directory %s of the store file is not a directory", dir)
	}
	db, err := bolt.Open(tmp, cfg.fileMode, &bolt.Options{Timeout: cfg.openTimeout})
	if err != nil {
		return createError(path, err)
	}
	err = db.Update(newFile)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return createError(path, err)
	}
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return nil
	} else if err != nil {
		return createError(path, err)
	}
	return syncDir(dir)
}

// createError reports a failure to build a new store file at path on the
// caller's path and directory, not on the temporary name it was built
// under, keeping the cause matchable (fs.ErrPermission, ...).
func createError(path string, err error) error {
	return fmt.Errorf("cannot create the store file %s in directory %s (it must exist and be writable by this process): %w",
		path, filepath.Dir(path), unpath(err))
}

// unpath is err without the path of an *fs.PathError or *os.LinkError,
// which names a temporary file the caller never made.
func unpath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// syncDir makes the entries of dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}
