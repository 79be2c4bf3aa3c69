package atomicfile

import (
	"errors"
	"io"
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
	if err := Write(filepath.Join(dir, "no", "f.txt"), nil); err == nil || !strings.Contains(err.Error(), "creating temporary file") {
		t.Errorf("missing folder: %v", err)
	}
}
