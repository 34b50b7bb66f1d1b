// Package atomicfile replaces a file whole or not at all: what is written goes to a temporary
// file beside it, is synced, optionally checked, and renamed over it, and the directory is
// synced, so a reader (or a node after a crash) sees either the old file or the whole new one.
// It imports only the standard library.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrCheck wraps what Options.Check refused: the file at path was left as it was.
var ErrCheck = errors.New("the new file did not pass its check")

// Options are Write's optional steps.
type Options struct {
	// Mode is the new file's permission bits (0: 0600, the temporary file's).
	Mode os.FileMode
	// Check, when set, inspects the written and synced temporary file (by its name) before it
	// replaces path; its error leaves path untouched and comes back wrapped in ErrCheck.
	Check func(tmp string) error
}

// Write replaces path with what fill writes. On any error path is left as it was and the
// temporary file is removed.
func Write(path string, fill func(io.Writer) error, opt Options) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = fill(f); err != nil {
		return err
	}
	if opt.Mode != 0 {
		if err = f.Chmod(opt.Mode); err != nil {
			return err
		}
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if opt.Check != nil {
		if cerr := opt.Check(tmp); cerr != nil {
			err = fmt.Errorf("%w: %w", ErrCheck, cerr)
			return err
		}
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// WriteBytes replaces path with data (Write).
func WriteBytes(path string, data []byte, opt Options) error {
	return Write(path, func(w io.Writer) error { _, err := w.Write(data); return err }, opt)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
