package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Output folders
//
// A command's output folder DIR is replaced as a whole, so that a reader
// of DIR finds either the previous complete set of the command's files or
// the new complete set, never a mix, whenever the process is killed:
//
//  1. Beside DIR, in its parent, the writer creates the lock file
//     .NAME.dadil-ID.lock (NAME is DIR's name, ID random), holds an flock
//     on it until it is done, and writes into it which names the command
//     owns; then it creates the staging folder .NAME.dadil-ID.new (mode
//     0700 while it is filled) and records its identity in the lock file.
//  2. The command's writers fill their files in the staging folder.
//  3. The entries of DIR the command does not own are kept: regular files
//     are hard-linked into the staging folder (the same file, not a copy)
//     and symbolic links are copied. Files the command owns that it did
//     not write this time are not carried over: DIR holds the files of one
//     run. A replaced file keeps its permissions, and the new folder those
//     of DIR (its owner and group where the process may set them). The
//     staged files and the folder are synced.
//  4. One rename publishes the folder: if DIR does not exist, the staging
//     folder is renamed to DIR; if it does, the two are swapped in one
//     step (Linux's renameat2 with RENAME_EXCHANGE), and the previous
//     folder lies at the staging folder's name.
//  5. The previous folder is emptied (see tidy) and removed, then the
//     lock file.
//
// Where the folders cannot be swapped (systems other than Linux, file
// systems without RENAME_EXCHANGE), step 4 takes two renames: DIR to
// .NAME.dadil-ID.old, then the staging folder to DIR. Between them a
// reader finds no DIR; a run killed there leaves the previous folder at
// .NAME.dadil-ID.old, and the next run puts it back.
//
// A run killed at any point leaves a lock file that nobody holds. Before
// it writes, every run into DIR (PrepareDir and WriteDir) cleans the
// leftovers whose lock it can take; a live run holds its lock, so its
// folders are never touched. A staging folder that has not been
// published holds only the writers' files and links to files of DIR, and
// is removed, once a previous folder it moved aside is back at DIR (if
// DIR is taken, both stay). A previous folder replaced by a published one
// is only emptied of what is known to be elsewhere or replaced (tidy):
// nothing else is ever deleted, so a killed run never costs the user a
// file.
//
// Hard-linking keeps the user's files in DIR without copying them, but
// limits what DIR may hold to regular files and symbolic links, and DIR
// may not be a mount point, the current folder, or read-only. These are
// checked before the work starts (PrepareDir) and again just before the
// folder is published.

// Steps of WriteDir, passed to StepHook.
const (
	StepLocked     = "locked"      // lock file and empty staging folder made
	StepStaged     = "staged"      // every writer has filled its file
	StepLinked     = "linked"      // the user's files are in the staging folder, all synced
	StepMovedAside = "moved-aside" // fallback only: DIR renamed to .NAME.dadil-ID.old
	StepPublished  = "published"   // the new folder is DIR
	StepTidied     = "tidied"      // the previous folder is gone; the lock file is next
)

// StepHook, when not nil, is called by WriteDir after each of its steps:
// tests stop or kill the writer there.
var StepHook func(step string)

// forceFallback makes the folders be published without RENAME_EXCHANGE
// (for tests).
var forceFallback bool

var errNoExchange = errors.New("cannot swap two folders in one step here")

// PrepareDir is run before a command's work: it removes the leftovers of
// killed runs into the output folder dir (see above), then reports
// whether WriteDir could write dir with files whose names match the
// patterns owned (as path.Match): dir, once links are followed, must be a
// folder or not exist (its nearest existing ancestor then accepts new
// entries); an existing dir must accept new entries, as must its parent,
// and may hold only regular files and symbolic links, none of them a link
// or anything but a regular file at an owned name. Errors name the entry
// and the problem.
func PrepareDir(dir string, owned []string) error {
	owns, err := ownership(owned)
	if err != nil {
		return err
	}
	cleanFor(dir)
	_, err = inspect(dir, owns)
	return err
}

// WriteDir writes the output folder dir of a command whose files match
// the patterns owned (as path.Match): each writer of files fills its file,
// named by the map's key, which must match owned, and the folder is then
// published as a whole (see above). On failure of a writer, of a check
// or of the publishing, and if a writer panics, dir is left as it was and
// the staging folder is removed (should the fallback fail to put the
// previous folder back, the error says where it is, and the next run puts
// it back). dir is created with its missing parents; a symbolic link at
// dir is followed and kept. After publishing, an entry of the user's that
// changed during the run and cannot be put back is an error naming it and
// the hidden folder that keeps it.
func WriteDir(dir string, owned []string, files map[string]func(path string) error) error {
	owns, err := ownership(owned)
	if err != nil {
		return err
	}
	for name := range files {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || !owns(name) {
			return fmt.Errorf("%s: output name %q is not one of %v", dir, name, owned)
		}
	}
	cleanFor(dir)
	t, err := inspect(dir, owns)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(t.parent, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", t.parent, unwrapPath(err))
	}
	r, err := newRun(t, owned, owns)
	if err != nil {
		return err
	}
	return r.write(dir, files)
}

// cleanFor cleans the leftovers of killed runs into the folder dir, or
// into the folder a symbolic link at dir leads to when it is missing (a
// killed run may have moved it aside).
func cleanFor(dir string) {
	if t, err := resolve(dir); err == nil {
		cleanStale(t.parent, t.base)
		return
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	if to, err := os.Readlink(abs); err == nil {
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(abs), to)
		}
		cleanStale(filepath.Dir(to), filepath.Base(to))
	}
}

// ownership returns whether a name matches one of the patterns owned.
func ownership(owned []string) (func(string) bool, error) {
	if len(owned) == 0 {
		return nil, errors.New("atomicfile: an output folder needs the names it owns")
	}
	for _, p := range owned {
		if _, err := path.Match(p, ""); err != nil || strings.ContainsAny(p, `/\`) {
			return nil, fmt.Errorf("atomicfile: bad pattern %q of owned names", p)
		}
	}
	return func(name string) bool {
		return slices.ContainsFunc(owned, func(p string) bool {
			ok, _ := path.Match(p, name)
			return ok
		})
	}, nil
}

// target is an output folder.
type target struct {
	path         string      // absolute, links followed
	parent, base string      // filepath.Dir and filepath.Base of path
	fi           fs.FileInfo // nil if there is no folder yet
}

// resolve follows a symbolic link at dir and describes the folder.
func resolve(dir string) (*target, error) {
	if dir == "" {
		return nil, errors.New("no output folder given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	t := &target{path: abs}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		// checkAncestor says which ancestor is not a folder.
	case err != nil:
		return nil, fmt.Errorf("%s: %w", dir, unwrapPath(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("%s is a symbolic link that does not lead to a folder: %w", dir, unwrapPath(err))
		}
		if fi, err = os.Stat(real); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, unwrapPath(err))
		}
		t.path, t.fi = real, fi
	default:
		t.fi = fi
	}
	t.parent, t.base = filepath.Dir(t.path), filepath.Base(t.path)
	return t, nil
}

// maxName is the longest file name most file systems take.
const maxName = 255

// inspect resolves dir and checks that WriteDir could write it (see
// PrepareDir).
func inspect(dir string, owns func(string) bool) (*target, error) {
	t, err := resolve(dir)
	if err != nil {
		return nil, err
	}
	if len(lockName(t.base, strings.Repeat("x", idLen))) > maxName {
		return nil, fmt.Errorf("%s: the name is too long to stage the folder beside it (at most %d bytes)", dir, maxName-len(lockName("", strings.Repeat("x", idLen))))
	}
	if t.fi == nil {
		return t, checkAncestor(t.path)
	}
	if !t.fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	if err := checkFolder(dir, t); err != nil {
		return nil, err
	}
	return t, checkEntries(t, owns)
}

// checkAncestor checks the nearest existing ancestor of the path of a
// folder to create: a folder that accepts new entries.
func checkAncestor(p string) error {
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

// checkFolder checks that the existing folder t may be replaced by a new
// one.
func checkFolder(dir string, t *target) error {
	if t.parent == t.path {
		return fmt.Errorf("%s is the root folder: give a folder of its own for the outputs", dir)
	}
	if wd, err := os.Getwd(); err == nil {
		if wfi, err := os.Stat(wd); err == nil && os.SameFile(wfi, t.fi) {
			return fmt.Errorf("%s is the current folder: dadil publishes its outputs as a new folder in its place, which would leave this shell in the deleted old one; run dadil from another folder", dir)
		}
	}
	pfi, err := os.Stat(t.parent)
	if err != nil {
		return fmt.Errorf("%s: %w", t.parent, unwrapPath(err))
	}
	if !sameDevice(pfi, t.fi) {
		return fmt.Errorf("%s is a mount point: dadil publishes its outputs as a new folder in its place and cannot replace a mount point; give a folder inside it", dir)
	}
	if err := writable(t.path); err != nil {
		return fmt.Errorf("%s is not writable: %w", dir, err)
	}
	if err := CanCreateIn(t.parent); err != nil {
		return fmt.Errorf("%s: cannot create the new folder beside it, in %s: %w", dir, t.parent, err)
	}
	if !canRenameIn(pfi, t.fi) {
		return fmt.Errorf("%s belongs to another user in the sticky folder %s, where only its owner may replace it", dir, t.parent)
	}
	return nil
}

// checkEntries checks that every entry of the existing folder t can be
// replaced (an owned name: a regular file) or kept (the others: regular
// files this process may link, and symbolic links).
func checkEntries(t *target, owns func(string) bool) error {
	es, err := os.ReadDir(t.path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", t.path, unwrapPath(err))
	}
	toLink := ""
	for _, e := range es {
		p := filepath.Join(t.path, e.Name())
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p, unwrapPath(err))
		}
		if err := checkEntry(p, fi, owns(e.Name())); err != nil {
			return err
		}
		if toLink == "" && fi.Mode().IsRegular() && !owns(e.Name()) {
			toLink = p
		}
	}
	if toLink != "" {
		if err := canLinkIn(t.parent); err != nil {
			return fmt.Errorf("%s: dadil keeps the files of others in the folder by linking them into the new one, but cannot link files here (%w): move them (or give another folder)", toLink, err)
		}
	}
	return nil
}

// canLinkIn reports whether the file system of the folder dir has hard
// links, by making a file there and a link to it, both removed.
func canLinkIn(dir string) error {
	f, err := os.CreateTemp(dir, ".check*")
	if err != nil {
		return unwrapPath(err)
	}
	f.Close()
	defer os.Remove(f.Name())
	if err := os.Link(f.Name(), f.Name()+".link"); err != nil {
		return unwrapPath(err)
	}
	return os.Remove(f.Name() + ".link")
}

// checkEntry checks one entry p of an existing output folder; owned: the
// command writes files of its name.
func checkEntry(p string, fi fs.FileInfo, owned bool) error {
	mode := fi.Mode()
	switch {
	case owned && mode.IsRegular():
		return nil
	case owned && mode&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: dadil writes this file itself, replacing the folder's files as one set, and does not write through links inside it; remove the link (or give another folder)", p)
	case owned:
		return fmt.Errorf("%s is %s, not a regular file: dadil writes this file itself and refuses to replace it", p, kindOf(fi))
	case mode.IsRegular() && !canLink(p, fi):
		return fmt.Errorf("%s belongs to another user, and dadil may not link it into the new folder to keep it: move it (or give another folder)", p)
	case mode.IsRegular(), mode&fs.ModeSymlink != 0:
		return nil
	}
	return fmt.Errorf("%s is %s: dadil replaces its output folder as a whole and keeps only the files and symbolic links of others in it; move it (or give another folder)", p, kindOf(fi))
}

// kindOf names what fi describes.
func kindOf(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}
