package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entries returns the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := Write(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "two" {
		t.Fatalf("read %q, %v", b, err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}

	// A failing or panicking writer leaves the old file and no temporary
	// file behind.
	boom := errors.New("boom")
	if err := WriteFunc(path, 0o644, func(w io.Writer) error {
		w.Write(make([]byte, 1<<17))
		return boom
	}); !errors.Is(err, boom) {
		t.Errorf("failing writer: %v", err)
	}
	func() {
		defer func() { recover() }()
		WriteFunc(path, 0o644, func(w io.Writer) error { panic("boom") })
	}()
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Errorf("file now holds %q", b)
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "f.txt" {
		t.Errorf("folder holds %v", names)
	}

	// A missing folder.
	missing := filepath.Join(dir, "no", "f.txt")
	if err := Write(missing, nil); err == nil || !strings.HasPrefix(err.Error(), missing+": creating a temporary file") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing folder: %v", err)
	}
}

// TestWriteKeepsWhatIsThere: a replaced file keeps its permissions, a
// symbolic link is followed and kept, and what is not a regular file is
// refused and left alone.
func TestWriteKeepsWhatIsThere(t *testing.T) {
	dir := t.TempDir()
	private := filepath.Join(dir, "private.csv")
	if err := os.WriteFile(private, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(private, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(private); fi.Mode().Perm() != 0o600 {
		t.Errorf("a 0600 file became %v", fi.Mode().Perm())
	}

	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink("private.csv", link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := Write(link, []byte("through the link")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(private); string(b) != "through the link" {
		t.Errorf("the link's file holds %q", b)
	}

	dangling := filepath.Join(dir, "dangling.csv")
	os.Symlink("nowhere/x.csv", dangling)
	folder := filepath.Join(dir, "folder")
	os.Mkdir(folder, 0o755)
	for _, tc := range []struct{ path, want string }{
		{dangling, "symbolic link that does not lead to a file"},
		{folder, "is a folder, not a regular file"},
	} {
		if err := Write(tc.path, []byte("x")); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.path, err, tc.want)
		}
	}
	// A device is refused before anything is written (destination only
	// looks: a broken check must not replace the machine's /dev/null).
	if fi, err := os.Lstat("/dev/null"); err == nil && fi.Mode()&fs.ModeDevice != 0 {
		if _, _, err := destination("/dev/null", 0o644); err == nil || !strings.Contains(err.Error(), "is a device, not a regular file") {
			t.Errorf("/dev/null: error %v", err)
		}
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the dangling link was replaced")
	}
	if names := entries(t, dir); len(names) != 4 {
		t.Errorf("folder holds %v", names)
	}
}
