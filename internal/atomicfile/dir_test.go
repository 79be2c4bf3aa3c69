//go:build linux

package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/dadil/dadil/internal/proctest"
)

func TestMain(m *testing.M) {
	proctest.Main(map[string]func([]string) int{"write": helperWrite, "prepare": helperPrepare})
	os.Exit(m.Run())
}

// The fixture: a command owns a.txt, b.txt and c_*.txt. Its previous run
// wrote all three with "old"; the new one writes a.txt and b.txt with
// "new" (c_1.txt is dropped). The folder also holds the user's notes.md
// (0600), a link to it, and its mode 0750.
var owned = []string{"a.txt", "b.txt", "c_*.txt"}

func writers(tag string, names ...string) map[string]func(string) error {
	files := map[string]func(string) error{}
	for _, n := range names {
		files[n] = func(p string) error { return os.WriteFile(p, []byte(tag), 0o644) }
	}
	return files
}

var (
	oldSet = map[string]string{"a.txt": "old", "b.txt": "old", "c_1.txt": "old"}
	newSet = map[string]string{"a.txt": "new", "b.txt": "new"}
)

// fixture makes parent/out as above and returns it.
func fixture(t *testing.T, parent string) string {
	t.Helper()
	dir := filepath.Join(parent, "out")
	if err := WriteDir(dir, owned, writers("old", "a.txt", "b.txt", "c_1.txt")); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "notes.md"), []byte("mine"), 0o600))
	must(t, os.Symlink("notes.md", filepath.Join(dir, "link")))
	must(t, os.Chmod(filepath.Join(dir, "a.txt"), 0o640))
	must(t, os.Chmod(dir, 0o750))
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ownedFiles returns the content of the owned files in dir.
func ownedFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{} // and the kind of what is not a regular file
	owns, _ := ownership(owned)
	for _, n := range entries(t, dir) {
		if !owns(n) {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, n)); err == nil && !fi.Mode().IsRegular() {
			got[n] = kindOf(fi)
		} else {
			b, err := os.ReadFile(filepath.Join(dir, n))
			must(t, err)
			got[n] = string(b)
		}
	}
	return got
}

// checkUserFiles checks that the user's entries of the fixture are intact.
func checkUserFiles(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, "notes.md"))
	b, _ := os.ReadFile(filepath.Join(dir, "notes.md"))
	if err != nil || string(b) != "mine" || fi.Mode().Perm() != 0o600 {
		t.Errorf("notes.md: %q, %v, %v", b, fi, err)
	}
	if to, err := os.Readlink(filepath.Join(dir, "link")); to != "notes.md" {
		t.Errorf("link: %q, %v", to, err)
	}
}

// hidden returns the hidden entries of dir (staging leftovers).
func hidden(t *testing.T, dir string) []string {
	var h []string
	for _, n := range entries(t, dir) {
		if strings.HasPrefix(n, ".") {
			h = append(h, n)
		}
	}
	return h
}

// TestWriteDirReplacesTheSet: the new run's files replace the old ones,
// owned files it did not write disappear, the user's entries stay (the
// same file, not a copy), permissions of replaced files and of the folder
// are kept, and nothing is left beside the folder.
func TestWriteDirReplacesTheSet(t *testing.T) {
	parent := t.TempDir()
	dir := fixture(t, parent)
	before, err := os.Stat(filepath.Join(dir, "notes.md"))
	must(t, err)
	if err := WriteDir(dir, owned, writers("new", "a.txt", "b.txt", "c_2.txt")); err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(newSet)
	want["c_2.txt"] = "new"
	if got := ownedFiles(t, dir); !maps.Equal(got, want) {
		t.Errorf("owned files %v, want %v", got, want)
	}
	checkUserFiles(t, dir)
	if after, err := os.Stat(filepath.Join(dir, "notes.md")); err != nil || !os.SameFile(before, after) {
		t.Errorf("notes.md is not the user's file any more")
	}
	// a.txt was 0640, b.txt 0644; c_2.txt is new.
	for name, want := range map[string]fs.FileMode{"a.txt": 0o640, "b.txt": 0o644, "c_2.txt": 0o644 &^ umask(t), ".": 0o750} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v (%v)", name, fi.Mode().Perm(), want, err)
		}
	}
	if h := hidden(t, parent); len(h) > 0 {
		t.Errorf("left beside the folder: %v", h)
	}
}

// TestWriteDirNewFolder: a new folder, with its missing parents, gets the
// usual mode; a symbolic link that is the output folder is followed and
// kept.
func TestWriteDirNewFolder(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "a", "b", "out")
	if err := WriteDir(dir, owned, writers("new", "a.txt", "b.txt")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	want := 0o755 &^ umask(t)
	if err != nil || fi.Mode().Perm() != want {
		t.Errorf("new folder: %v, %v; want mode %v", fi, err, want)
	}
	real := fixture(t, t.TempDir())
	link := filepath.Join(parent, "link")
	must(t, os.Symlink(real, link))
	if err := WriteDir(link, owned, writers("new", "a.txt", "b.txt")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if got := ownedFiles(t, real); !maps.Equal(got, newSet) {
		t.Errorf("through the link: %v", got)
	}
	checkUserFiles(t, real)
	if h := append(hidden(t, parent), hidden(t, filepath.Dir(real))...); len(h) > 0 {
		t.Errorf("left behind: %v", h)
	}
}

func umask(t *testing.T) fs.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}

// TestWriteDirFailures: a failing or panicking writer, or an output name
// taken during the work by something that is not a regular file, leave
// the folder as it was and nothing beside it.
func TestWriteDirFailures(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name  string
		files map[string]func(string) error
		hook  func(dir string)
		want  string
	}{
		{"failing writer", map[string]func(string) error{
			"a.txt": func(p string) error { return os.WriteFile(p, make([]byte, 1<<17), 0o644) },
			"b.txt": func(string) error { return boom }}, nil, "boom"},
		{"panicking writer", map[string]func(string) error{"a.txt": func(string) error { panic("boom") }}, nil, "panic"},
		{"writer leaves no file", map[string]func(string) error{"a.txt": func(string) error { return nil }}, nil, "the writer of a.txt left no file"},
		{"name not owned", writers("new", "d.txt"), nil, `output name "d.txt" is not one of`},
		{"pipe made during the work", writers("new", "a.txt", "b.txt"), func(dir string) {
			os.Remove(filepath.Join(dir, "b.txt"))
			syscall.Mkfifo(filepath.Join(dir, "b.txt"), 0o644)
		}, "b.txt is a named pipe, not a regular file"},
		{"folder made during the work", writers("new", "a.txt"), func(dir string) {
			os.Mkdir(filepath.Join(dir, "sub"), 0o755)
		}, "sub is a folder: dadil replaces its output folder as a whole"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := fixture(t, parent)
			if tc.hook != nil {
				StepHook = func(step string) {
					if step == StepStaged {
						tc.hook(dir)
					}
				}
				defer func() { StepHook = nil }()
			}
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				err = WriteDir(dir, owned, tc.files)
			}()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			got := ownedFiles(t, dir)
			want := map[string]string{"a.txt": "old", "b.txt": "old", "c_1.txt": "old"}
			if tc.hook != nil && strings.Contains(tc.name, "pipe") {
				want["b.txt"] = "a named pipe"
			}
			if !maps.Equal(got, want) {
				t.Errorf("owned files %v, want %v", got, want)
			}
			checkUserFiles(t, dir)
			if h := hidden(t, parent); len(h) > 0 {
				t.Errorf("left beside the folder: %v", h)
			}
		})
	}
}

// TestWriteDirChangesDuringTheRun: a file the user adds to the folder, or
// replaces, while the run links the user's files and publishes, is there
// afterwards in its latest version.
func TestWriteDirChangesDuringTheRun(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		parent := t.TempDir()
		dir := fixture(t, parent)
		forceFallback = fallback
		StepHook = func(step string) {
			if step == StepLinked {
				os.WriteFile(filepath.Join(dir, "late.txt"), []byte("late"), 0o644)
				os.WriteFile(filepath.Join(dir, "notes.tmp"), []byte("edited"), 0o600)
				os.Rename(filepath.Join(dir, "notes.tmp"), filepath.Join(dir, "notes.md"))
			}
		}
		err := WriteDir(dir, owned, writers("new", "a.txt", "b.txt"))
		StepHook, forceFallback = nil, false
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"late.txt": "late", "notes.md": "edited"} {
			if b, err := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
				t.Errorf("fallback %v: %s holds %q (%v), want %q", fallback, name, b, err, want)
			}
		}
		if h := hidden(t, parent); len(h) > 0 {
			t.Errorf("fallback %v: left beside the folder: %v", fallback, h)
		}
	}
}

// TestPrepareDirRefuses: every entry dadil could not replace or keep, and
// every folder it could not replace, is refused before the work, naming
// it, by PrepareDir and again by WriteDir, which then changes nothing.
func TestPrepareDirRefuses(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the --out to give
		want  string
	}{
		{"owned name is a folder", func(t *testing.T, dir string) string {
			must(t, os.Remove(filepath.Join(dir, "b.txt")))
			must(t, os.Mkdir(filepath.Join(dir, "b.txt"), 0o755))
			return dir
		}, "out/b.txt is a folder, not a regular file: dadil writes this file itself"},
		{"owned name is a named pipe", func(t *testing.T, dir string) string {
			must(t, os.Remove(filepath.Join(dir, "b.txt")))
			must(t, syscall.Mkfifo(filepath.Join(dir, "b.txt"), 0o644))
			return dir
		}, "out/b.txt is a named pipe, not a regular file"},
		{"owned name is a link", func(t *testing.T, dir string) string {
			must(t, os.Remove(filepath.Join(dir, "b.txt")))
			must(t, os.Symlink("../elsewhere.txt", filepath.Join(dir, "b.txt")))
			return dir
		}, "out/b.txt is a symbolic link: dadil writes this file itself"},
		{"a folder of the user's", func(t *testing.T, dir string) string {
			must(t, os.Mkdir(filepath.Join(dir, "plots"), 0o755))
			return dir
		}, "out/plots is a folder: dadil replaces its output folder as a whole and keeps only the files and symbolic links"},
		{"a pipe of the user's", func(t *testing.T, dir string) string {
			must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
			return dir
		}, "out/fifo is a named pipe: dadil replaces"},
		{"a file", func(t *testing.T, dir string) string {
			p := filepath.Join(filepath.Dir(dir), "file")
			must(t, os.WriteFile(p, nil, 0o644))
			return p
		}, "file is not a directory"},
		{"under a file", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "a.txt", "x")
		}, "a.txt is not a directory"},
		{"dangling link", func(t *testing.T, dir string) string {
			p := filepath.Join(filepath.Dir(dir), "dangling")
			must(t, os.Symlink("nowhere", p))
			return p
		}, "dangling is a symbolic link that does not lead to a folder"},
		{"name too long", func(t *testing.T, dir string) string {
			return filepath.Join(filepath.Dir(dir), strings.Repeat("n", 240))
		}, "the name is too long to stage the folder beside it (at most 234 bytes)"},
		{"current folder", func(t *testing.T, dir string) string {
			t.Chdir(dir)
			return "."
		}, ". is the current folder"},
		{"root", func(t *testing.T, dir string) string { return "/" }, "/ is the root folder"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := fixture(t, parent)
			out := tc.setup(t, dir)
			before := listing(t, parent)
			if err := PrepareDir(out, owned); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("PrepareDir: %v, want %q", err, tc.want)
			}
			if tc.name == "root" {
				return // WriteDir below would fail the same way, but not on /
			}
			if err := WriteDir(out, owned, writers("new", "a.txt", "b.txt")); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("WriteDir: %v, want %q", err, tc.want)
			}
			if after := listing(t, parent); !slices.Equal(before, after) {
				t.Errorf("changed: %v, then %v", before, after)
			}
		})
	}
}

// listing returns every path under dir with its kind and content.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var l []string
	filepath.Walk(dir, func(p string, fi fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		s := p + " " + fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			s += " " + string(b)
		}
		l = append(l, s)
		return nil
	})
	return l
}

// TestPrepareDirPermissions: as an unprivileged user (the test runs a
// helper as nobody when it runs as root), a folder whose parent is
// read-only, a read-only folder, and a new folder in a read-only parent
// are refused.
func TestPrepareDirPermissions(t *testing.T) {
	base := proctest.OpenDir(t)
	cases := []struct {
		name                string
		parentMode, dirMode fs.FileMode // 0: no folder
		want                string
	}{
		{"read-only parent", 0o555, 0o755, "out: cannot create the new folder beside it, in " + base + "/read-only parent: permission denied"},
		{"read-only folder", 0o755, 0o555, "out is not writable: permission denied"},
		{"new folder in a read-only parent", 0o555, 0, "cannot write in " + base + "/new folder in a read-only parent: permission denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parent := filepath.Join(base, tc.name)
			must(t, os.Mkdir(parent, 0o755))
			dir := filepath.Join(parent, "out")
			if tc.dirMode != 0 {
				must(t, WriteDir(dir, owned, writers("old", "a.txt")))
				must(t, os.Chmod(dir, tc.dirMode))
				giveToNobody(t, dir)
			}
			giveToNobody(t, parent)
			must(t, os.Chmod(parent, tc.parentMode))
			cmd := proctest.Command(t, "prepare", dir)
			proctest.Unprivileged(t, cmd)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("%v: %s, want %q", err, out, tc.want)
			}
		})
	}
}

// giveToNobody gives p to the user nobody, when the test runs as root; the
// folder's mode then applies to the unprivileged helper.
func giveToNobody(t *testing.T, p string) {
	if os.Geteuid() == 0 {
		must(t, os.Lchown(p, 65534, 65534))
	}
}

// helperPrepare runs PrepareDir on its argument and prints the error.
func helperPrepare(args []string) int {
	if err := PrepareDir(args[0], owned); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// helperWrite writes the new set into args[0], publishing with the
// fallback if args[1] is "fallback", and kills itself with SIGKILL at the
// step args[2] ("writing": half-way through b.txt). At StepLinked it adds
// late.txt to the folder, as a user could during the run.
func helperWrite(args []string) int {
	dir, step := args[0], args[2]
	forceFallback = args[1] == "fallback"
	StepHook = func(s string) {
		if s == StepLinked {
			os.WriteFile(filepath.Join(dir, "late.txt"), []byte("late"), 0o644)
		}
		if s == step {
			proctest.KillSelf()
		}
	}
	files := writers("new", "a.txt")
	files["b.txt"] = func(p string) error {
		os.WriteFile(p, []byte("ne"), 0o644)
		if step == "writing" {
			proctest.KillSelf()
		}
		return os.WriteFile(p, []byte("new"), 0o644)
	}
	if err := WriteDir(dir, owned, files); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// TestWriteDirKilled kills a writer (SIGKILL, in a helper process) after
// each step, with and without RENAME_EXCHANGE: the folder holds the old
// complete set or the new one (or, with the fallback killed between its
// two renames, no folder), never a mix; the next PrepareDir into it
// removes every leftover, puts back the old folder if it was aside, and
// keeps the user's files, including one added during the run.
func TestWriteDirKilled(t *testing.T) {
	steps := []string{StepLocked, "writing", StepStaged, StepLinked, StepMovedAside, StepPublished, StepTidied}
	for _, mode := range []string{"exchange", "fallback"} {
		for i, step := range steps {
			if step == StepMovedAside && mode == "exchange" {
				continue
			}
			t.Run(mode+"/"+step, func(t *testing.T) {
				parent := t.TempDir()
				dir := fixture(t, parent)
				err := proctest.Command(t, "write", dir, mode, step).Run()
				if !proctest.Killed(err) {
					t.Fatalf("the helper was not killed: %v", err)
				}
				published := i >= slices.Index(steps, StepPublished)
				want := oldSet
				if published {
					want = newSet
				}
				if _, err := os.Stat(dir); err == nil || step != StepMovedAside {
					if got := ownedFiles(t, dir); !maps.Equal(got, want) {
						t.Errorf("after the kill: %v, want %v", got, want)
					}
				}
				if len(hidden(t, parent)) == 0 {
					t.Errorf("the killed run left nothing to clean")
				}
				must(t, PrepareDir(dir, owned))
				if got := ownedFiles(t, dir); !maps.Equal(got, want) {
					t.Errorf("after cleaning: %v, want %v", got, want)
				}
				checkUserFiles(t, dir)
				if _, err := os.Stat(filepath.Join(dir, "late.txt")); (err == nil) != (i >= slices.Index(steps, StepLinked)) {
					t.Errorf("late.txt: %v", err)
				}
				if h := hidden(t, parent); len(h) > 0 {
					t.Errorf("left after cleaning: %v", h)
				}
			})
		}
	}
}

// TestWriteDirKilledThroughALink: a run through a link that is the output
// folder, killed by SIGKILL while the fallback has the folder aside,
// leaves a dangling link; the next PrepareDir through the link puts the
// folder back.
func TestWriteDirKilledThroughALink(t *testing.T) {
	parent := t.TempDir()
	real := fixture(t, parent)
	link := filepath.Join(t.TempDir(), "link")
	must(t, os.Symlink(real, link))
	err := proctest.Command(t, "write", link, "fallback", StepMovedAside).Run()
	if !proctest.Killed(err) {
		t.Fatalf("the helper was not killed: %v", err)
	}
	if _, err := os.Stat(real); err == nil {
		t.Fatalf("%s is there: the run was not killed between its renames", real)
	}
	must(t, PrepareDir(link, owned))
	if got := ownedFiles(t, real); !maps.Equal(got, oldSet) {
		t.Errorf("after cleaning: %v, want %v", got, oldSet)
	}
	checkUserFiles(t, real)
	if h := hidden(t, parent); len(h) > 0 {
		t.Errorf("left after cleaning: %v", h)
	}
}

// TestWriteDirFallbackTaken: when the fallback has moved the folder aside
// and its name is taken before the new one is renamed there, the error
// says where the previous folder is, which stays whole until its name is
// free again: then the next run puts it back.
func TestWriteDirFallbackTaken(t *testing.T) {
	parent := t.TempDir()
	dir := fixture(t, parent)
	forceFallback = true
	StepHook = func(step string) {
		if step == StepMovedAside {
			os.Mkdir(dir, 0o755)
		}
	}
	err := WriteDir(dir, owned, writers("new", "a.txt", "b.txt"))
	StepHook, forceFallback = nil, false
	if err == nil || !strings.Contains(err.Error(), "the previous folder is "+parent+"/.out.dadil-") {
		t.Fatalf("error %v", err)
	}
	must(t, PrepareDir(dir, owned))
	if h := hidden(t, parent); len(h) != 3 {
		t.Errorf("beside the folder: %v, want the lock file, the staging folder and the previous folder", h)
	}
	must(t, os.Remove(dir))
	must(t, PrepareDir(dir, owned))
	if got := ownedFiles(t, dir); !maps.Equal(got, oldSet) {
		t.Errorf("put back: %v, want %v", got, oldSet)
	}
	checkUserFiles(t, dir)
	if h := hidden(t, parent); len(h) > 0 {
		t.Errorf("left beside the folder: %v", h)
	}
}

// TestPrepareDirKeepsLiveRuns: the folders of a run in progress, whose
// lock is held, are not cleaned by another run into the same folder.
func TestPrepareDirKeepsLiveRuns(t *testing.T) {
	parent := t.TempDir()
	dir := fixture(t, parent)
	var during []string
	StepHook = func(step string) {
		if step == StepStaged {
			if err := PrepareDir(dir, owned); err != nil {
				t.Error(err)
			}
			during = hidden(t, parent)
		}
	}
	defer func() { StepHook = nil }()
	must(t, WriteDir(dir, owned, writers("new", "a.txt", "b.txt")))
	if len(during) != 2 || !strings.HasSuffix(during[0], ".lock") || !strings.HasSuffix(during[1], ".new") {
		t.Errorf("during the run, beside the folder: %v; want its lock file and staging folder", during)
	}
	if got := ownedFiles(t, dir); !maps.Equal(got, newSet) {
		t.Errorf("owned files %v", got)
	}
}

// TestCleanKeepsUnknownEntries: a previous folder left by a killed run is
// emptied only of what is known to be elsewhere or replaced: an entry
// whose name the folder holds otherwise stays, with the lock file, so
// that no file of the user's is ever lost.
func TestCleanKeepsUnknownEntries(t *testing.T) {
	parent := t.TempDir()
	dir := fixture(t, parent)
	err := proctest.Command(t, "write", dir, "exchange", StepPublished).Run()
	if !proctest.Killed(err) {
		t.Fatalf("the helper was not killed: %v", err)
	}
	var old string
	for _, h := range hidden(t, parent) {
		if strings.HasSuffix(h, ".new") {
			old = filepath.Join(parent, h)
		}
	}
	// The user's notes.md in the previous folder is now another file than
	// the one in the published folder.
	must(t, os.Remove(filepath.Join(old, "notes.md")))
	must(t, os.WriteFile(filepath.Join(old, "notes.md"), []byte("other"), 0o600))
	must(t, PrepareDir(dir, owned))
	if got := entries(t, old); !slices.Equal(got, []string{"notes.md"}) {
		t.Errorf("the previous folder holds %v, want notes.md alone", got)
	}
	if b, _ := os.ReadFile(filepath.Join(old, "notes.md")); string(b) != "other" {
		t.Errorf("notes.md holds %q", b)
	}
	if h := hidden(t, parent); len(h) != 2 {
		t.Errorf("beside the folder: %v, want the lock file and the folder", h)
	}
}
