package atomicfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// idLen is the length of the random ID of a run's lock file and folders.
const idLen = 8

func lockName(base, id string) string  { return "." + base + ".dadil-" + id + ".lock" }
func stageName(base, id string) string { return "." + base + ".dadil-" + id + ".new" }
func oldName(base, id string) string   { return "." + base + ".dadil-" + id + ".old" }

// manifest is the content of a lock file.
type manifest struct {
	Out   string   `json:"out"`   // the output folder's name
	Owned []string `json:"owned"` // patterns of the names the command owns
	Stage string   `json:"stage"` // fileID of the staging folder
}

// run is one WriteDir between its lock and its end.
type run struct {
	t                    *target
	owns                 func(string) bool
	lock                 *os.File
	lockPath, stage, old string
	newMode              fs.FileMode            // of a new folder, the umask applied
	written              []string               // names the writers filled
	placed               map[string]fs.FileInfo // the user's entries kept in the staging folder
}

// newRun creates and locks the lock file and the staging folder of a run
// writing the folder t.
func newRun(t *target, owned []string, owns func(string) bool) (*run, error) {
	for range 10 {
		id := make([]byte, idLen)
		for i := range id {
			id[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rand.N(36)]
		}
		r := &run{t: t, owns: owns, placed: map[string]fs.FileInfo{},
			lockPath: filepath.Join(t.parent, lockName(t.base, string(id))),
			stage:    filepath.Join(t.parent, stageName(t.base, string(id))),
			old:      filepath.Join(t.parent, oldName(t.base, string(id)))}
		f, err := os.OpenFile(r.lockPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: creating a lock file beside it: %w", t.path, unwrapPath(err))
		}
		r.lock = f
		// Without flock (an error), a cleaner cannot take the lock either,
		// and leaves the run alone.
		lockFile(f, true)
		if !samePath(f, r.lockPath) {
			// A cleaner took the lock before this run and removed the file.
			f.Close()
			continue
		}
		if err := r.makeStage(owned); err != nil {
			r.abandon()
			return nil, err
		}
		return r, nil
	}
	return nil, fmt.Errorf("%s: could not create a lock file beside it", t.path)
}

// samePath reports whether the path p still names the open file f.
func samePath(f *os.File, p string) bool {
	fi, err1 := f.Stat()
	pi, err2 := os.Lstat(p)
	return err1 == nil && err2 == nil && os.SameFile(fi, pi)
}

// makeStage creates the private staging folder and records it in the lock
// file.
func (r *run) makeStage(owned []string) error {
	if err := os.Mkdir(r.stage, 0o755); err != nil {
		return fmt.Errorf("%s: creating its staging folder: %w", r.t.path, unwrapPath(err))
	}
	fi, err := os.Stat(r.stage)
	if err != nil {
		return err
	}
	r.newMode = fi.Mode().Perm()
	if err := os.Chmod(r.stage, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(manifest{Out: r.t.base, Owned: owned, Stage: fileID(fi)})
	if err != nil {
		return err
	}
	if _, err := r.lock.WriteAt(b, 0); err != nil {
		return fmt.Errorf("%s: %w", r.lockPath, unwrapPath(err))
	}
	return r.lock.Sync()
}

func hook(step string) {
	if StepHook != nil {
		StepHook(step)
	}
}

// write fills, checks and publishes the folder (see the steps at the top
// of dir.go).
func (r *run) write(dir string, files map[string]func(string) error) error {
	published := false
	// This also runs if a writer panics.
	defer func() {
		if !published {
			r.abandon()
		}
	}()
	hook(StepLocked)
	if err := r.fill(files); err != nil {
		return err
	}
	hook(StepStaged)
	// Things may have changed during the work: check again.
	t, err := inspect(dir, r.owns)
	if err != nil {
		return err
	}
	if t.path != r.t.path {
		return fmt.Errorf("%s now leads to %s, not %s: nothing was written", dir, t.path, r.t.path)
	}
	r.t = t
	if err := r.keep(); err != nil {
		return err
	}
	if err := r.sync(); err != nil {
		return err
	}
	hook(StepLinked)
	old, err := r.publish()
	if err != nil {
		return err
	}
	published = true
	hook(StepPublished)
	return r.finish(old)
}

// abandon removes the staging folder of a run that did not publish it,
// and the lock file; but if the previous folder is aside (a failed
// fallback that could not put it back), both stay, telling the next run
// to put it back.
func (r *run) abandon() {
	if !exists(r.old) {
		os.RemoveAll(r.stage)
		os.Remove(r.lockPath)
	}
	r.lock.Close()
}

// fill runs the writers, in the order of their names.
func (r *run) fill(files map[string]func(string) error) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := filepath.Join(r.stage, n)
		if err := files[n](p); err != nil {
			return err
		}
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: the writer of %s left no file", r.t.path, n)
		}
		r.written = append(r.written, n)
	}
	return nil
}

// keep puts the entries of the existing folder that the command does not
// own into the staging folder, gives the replaced files' permissions to
// the new ones, and the folder's to the staging folder.
func (r *run) keep() error {
	if r.t.fi == nil {
		return os.Chmod(r.stage, r.newMode)
	}
	es, err := os.ReadDir(r.t.path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", r.t.path, unwrapPath(err))
	}
	for _, e := range es {
		if err := r.keepEntry(e.Name()); err != nil {
			return err
		}
	}
	chownLike(r.stage, r.t.fi)
	return os.Chmod(r.stage, r.t.fi.Mode()&(fs.ModePerm|fs.ModeSetgid|fs.ModeSetuid|fs.ModeSticky))
}

// keepEntry keeps the entry name of the existing folder: a file of the
// user's is hard-linked, a symbolic link copied; a file the command
// writes lends its permissions to the new one, and one it did not write
// this time is dropped.
func (r *run) keepEntry(name string) error {
	src, dst := filepath.Join(r.t.path, name), filepath.Join(r.stage, name)
	fi, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", src, unwrapPath(err))
	}
	if r.owns(name) {
		if fi.Mode().IsRegular() && slices.Contains(r.written, name) {
			return os.Chmod(dst, fi.Mode().Perm())
		}
		return nil
	}
	switch {
	case fi.Mode().IsRegular():
		err = os.Link(src, dst)
	case fi.Mode()&fs.ModeSymlink != 0:
		var to string
		if to, err = os.Readlink(src); err == nil {
			err = os.Symlink(to, dst)
		}
	default:
		return checkEntry(src, fi, false)
	}
	if err != nil {
		return fmt.Errorf("%s: keeping it in the new folder: %w", src, unwrapPath(err))
	}
	r.placed[name], err = os.Lstat(dst)
	return err
}

// sync makes the written files and the staging folder durable.
func (r *run) sync() error {
	for _, n := range r.written {
		f, err := os.Open(filepath.Join(r.stage, n))
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: syncing %s: %w", r.t.path, n, unwrapPath(err))
		}
	}
	syncDir(r.stage)
	return nil
}

// syncDir makes a folder's entries durable where the platform can.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// publish puts the staging folder in place of the output folder in one
// rename, and returns where the previous folder is ("" if there was none).
func (r *run) publish() (string, error) {
	for range 3 {
		var err error
		if _, err = os.Lstat(r.t.path); errors.Is(err, fs.ErrNotExist) {
			err = renameNoReplace(r.stage, r.t.path)
			if errors.Is(err, fs.ErrExist) {
				continue // another run published first
			}
			if err != nil {
				return "", fmt.Errorf("%s: publishing the new folder: %w", r.t.path, unwrapPath(err))
			}
			return "", nil
		}
		err = exchange(r.stage, r.t.path)
		switch {
		case err == nil:
			return r.stage, nil
		case errors.Is(err, errNoExchange):
			return r.moveAside()
		case errors.Is(err, fs.ErrNotExist):
			continue
		}
		return "", fmt.Errorf("%s: swapping in the new folder: %w", r.t.path, unwrapPath(err))
	}
	return "", fmt.Errorf("%s keeps appearing and disappearing: nothing was written", r.t.path)
}

// moveAside publishes in two renames, where folders cannot be swapped.
func (r *run) moveAside() (string, error) {
	if err := renameNoReplace(r.t.path, r.old); err != nil {
		return "", fmt.Errorf("%s: moving it aside: %w", r.t.path, unwrapPath(err))
	}
	hook(StepMovedAside)
	if err := renameNoReplace(r.stage, r.t.path); err != nil {
		if err2 := renameNoReplace(r.old, r.t.path); err2 != nil {
			return "", fmt.Errorf("%s: publishing the new folder: %v; the previous folder is %s, which the next run into %s puts back", r.t.path, unwrapPath(err), r.old, r.t.path)
		}
		return "", fmt.Errorf("%s: publishing the new folder: %w", r.t.path, unwrapPath(err))
	}
	return r.old, nil
}

// finish empties and removes the previous folder old, then the lock file.
func (r *run) finish(old string) error {
	syncDir(r.t.parent)
	if old != "" {
		kept := tidy(old, r.t.path, r.owns, r.placed)
		if len(kept) == 0 {
			if err := os.Remove(old); err != nil {
				kept = append(kept, "the folder itself")
			}
		}
		if len(kept) > 0 {
			// The lock file stays: the next run into the folder tries again.
			r.lock.Close()
			return fmt.Errorf("wrote %s, but could not put back %s, changed while dadil wrote: see %s", r.t.path, strings.Join(kept, ", "), old)
		}
	}
	hook(StepTidied)
	os.Remove(r.lockPath)
	r.lock.Close()
	return nil
}

// tidy empties the previous folder old of an output folder dir, and
// returns the names it left: it removes the files dir's command owns
// (replaced or dropped by the new run) and the entries that are also in
// dir (the same file, or a link to the same place); it moves into dir the
// entries dir lacks (made during the run); an entry whose name dir holds
// otherwise replaces it if dir's is the copy placed there by the run (the
// entry changed during the run), else stays. Nothing else is removed.
func tidy(old, dir string, owns func(string) bool, placed map[string]fs.FileInfo) []string {
	es, err := os.ReadDir(old)
	if err != nil {
		return []string{filepath.Base(old)}
	}
	var kept []string
	for _, e := range es {
		if !tidyEntry(old, dir, e.Name(), owns(e.Name()), placed[e.Name()]) {
			kept = append(kept, e.Name())
		}
	}
	return kept
}

// tidyEntry tidies the entry name of old (see tidy) and reports whether
// it is gone.
func tidyEntry(old, dir, name string, owned bool, placed fs.FileInfo) bool {
	p, q := filepath.Join(old, name), filepath.Join(dir, name)
	fi, err := os.Lstat(p)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	qi, qerr := os.Lstat(q)
	switch {
	case owned && !fi.IsDir():
		return os.Remove(p) == nil
	case qerr == nil && sameEntry(p, fi, q, qi):
		return os.Remove(p) == nil
	case qerr == nil && placed != nil && os.SameFile(qi, placed) && !fi.IsDir():
		return os.Rename(p, q) == nil
	case errors.Is(qerr, fs.ErrNotExist):
		return renameNoReplace(p, q) == nil
	}
	return false
}

// sameEntry reports whether the entries p and q are one file, or symbolic
// links to one place.
func sameEntry(p string, pi fs.FileInfo, q string, qi fs.FileInfo) bool {
	if pi.IsDir() || qi.IsDir() {
		return false
	}
	if os.SameFile(pi, qi) {
		return true
	}
	if pi.Mode()&fs.ModeSymlink == 0 || qi.Mode()&fs.ModeSymlink == 0 {
		return false
	}
	a, err1 := os.Readlink(p)
	b, err2 := os.Readlink(q)
	return err1 == nil && err2 == nil && a == b
}

// renameIfFree renames a to b unless b exists (fs.ErrExist); the check and
// the rename are two steps.
func renameIfFree(a, b string) error {
	if _, err := os.Lstat(b); err == nil {
		return &os.LinkError{Op: "rename", Old: a, New: b, Err: fs.ErrExist}
	}
	return os.Rename(a, b)
}
