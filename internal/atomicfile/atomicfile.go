// Package atomicfile writes files that appear complete or not at all: the
// bytes go to a temporary file in the destination's folder, which is
// synced and then renamed over the destination. Every command and package
// of dadil that writes a file the user asked for writes it this way, so a
// failure never leaves a half-written file behind.
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
// writes (through a buffer), with permissions perm. On any error, and if
// fill panics, the temporary file is removed and path is left as it was.
// Errors of fill are returned as they are; the others say which step
// failed.
func WriteFunc(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("creating temporary file: %w", err)
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
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return fmt.Errorf("renaming temporary file: %w", err)
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

// Write creates or replaces the file at path with data, readable by all
// (0644), as WriteFunc does.
func Write(path string, data []byte) error {
	return WriteFunc(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
