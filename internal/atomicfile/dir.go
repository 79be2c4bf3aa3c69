package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteDir creates the files of a command's output folder dir: each
// writer of files fills its file (named by the map's key) in a fresh
// temporary folder beside dir; only when all succeeded, and every name in
// dir is free or a regular file, are the files renamed into dir (created
// with its missing parents if needed), so a failure of a writer or a name
// taken by a folder, link or device leaves dir as it was. A file that is
// replaced keeps its permissions.
func WriteDir(dir string, files map[string]func(path string) error) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for name, write := range files {
		if err := write(filepath.Join(tmp, name)); err != nil {
			return err
		}
	}
	// Renames over folders, links or devices would fail half-way or destroy
	// them: check every name first.
	for name := range files {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file: refusing to replace it (nothing was written)", filepath.Join(dir, name))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name := range files {
		dst := filepath.Join(dir, name)
		// A replaced file keeps its permissions, as WriteFunc's do.
		if fi, err := os.Lstat(dst); err == nil && fi.Mode().IsRegular() {
			if err := os.Chmod(filepath.Join(tmp, name), fi.Mode().Perm()); err != nil {
				return err
			}
		}
		if err := os.Rename(filepath.Join(tmp, name), dst); err != nil {
			return err
		}
	}
	return nil
}

// CheckDir reports, before a long computation, whether WriteDir could
// write the folder dir, which it creates with its missing parents: the
// nearest existing ancestor must be a folder that accepts new files.
func CheckDir(dir string) error {
	p := filepath.Clean(dir)
	for {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", p)
			}
			break
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	if err := CanCreateIn(p); err != nil {
		return fmt.Errorf("cannot write in %s: %w", p, err)
	}
	return nil
}
