// Package atomicfile writes files, and folders of files, that appear
// complete or not at all. A single file (WriteFunc) goes to a temporary
// file in the destination's folder, which is synced and then renamed over
// the destination. A command's output folder (WriteDir) is staged beside
// it and published with one rename, so that a reader finds either the
// previous complete set of files or the new one (see dir.go). Every
// command and package of dadil that writes a file the user asked for
// writes it this way, so a failure or a kill never leaves a half-written
// file or a mixed folder behind.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFunc creates or replaces the file at path with the bytes fill
// writes (through a buffer). A new file gets permissions perm; a file that
// is replaced keeps its own. A symbolic link is followed: the file it
// points to is replaced and the link kept. Anything but a regular file at
// path (or at the link's end) — a folder, device, pipe or socket — is an
// error, and so is a dangling link: renaming over them would destroy them.
// On any error, and if fill panics, the temporary file is removed and path
// is left as it was. Errors of fill are returned as they are; the others
// name path and say which step failed.
func WriteFunc(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	path, perm, err := destination(path, perm)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("%s: creating a temporary file beside it: %w", path, unwrapPath(err))
	}
	tmp := f.Name()
	closed, done := false, false
	// This also runs if fill panics.
	defer func() {
		if !done {
			if !closed {
				f.Close()
			}
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := fill(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing: %w", err)
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	closed = true
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%s: renaming the temporary file over it: %w", path, unwrapPath(err))
	}
	done = true
	// Make the rename durable. Not every platform can sync a folder, and
	// the file is already in place, so a failure is not reported.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Check reports, before a long computation, whether WriteFunc could write
// path: whether what is there (if anything) may be replaced and a
// temporary file can be created beside it.
func Check(path string) error {
	path, _, err := destination(path, 0)
	if err != nil {
		return err
	}
	if err := CanCreateIn(filepath.Dir(path)); err != nil {
		return fmt.Errorf("%s: cannot create a file beside it: %w", path, err)
	}
	return nil
}

// CanCreateIn reports whether a file can be created in the folder dir, by
// creating and removing one. Its error carries no path.
func CanCreateIn(dir string) error {
	f, err := os.CreateTemp(dir, ".check*")
	if err != nil {
		return unwrapPath(err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// destination resolves symbolic links at path and returns the file to
// replace and its permissions (perm for a new file), or an error if it is
// not a regular file.
func destination(path string, perm fs.FileMode) (string, fs.FileMode, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, perm, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", 0, fmt.Errorf("%s is a symbolic link that does not lead to a file: %w", path, unwrapPath(err))
		}
		if fi, err = os.Stat(target); err != nil {
			return "", 0, fmt.Errorf("%s: %w", path, unwrapPath(err))
		}
		path = target
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("%s is %s, not a regular file: refusing to replace it", path, kindOf(fi))
	}
	return path, fi.Mode().Perm(), nil
}

// unwrapPath drops the operation and paths of an *fs.PathError or an
// *os.LinkError, which would name a temporary file or repeat the path.
func unwrapPath(err error) error {
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

// Write creates or replaces the file at path with data, readable by all
// (0644) when new, as WriteFunc does.
func Write(path string, data []byte) error {
	return WriteFunc(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
