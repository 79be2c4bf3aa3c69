package atomicfile

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// lockID returns the ID of name if it is the lock file of a run writing
// the folder base.
func lockID(base, name string) (string, bool) {
	id, ok := strings.CutPrefix(name, "."+base+".dadil-")
	if !ok {
		return "", false
	}
	if id, ok = strings.CutSuffix(id, ".lock"); !ok || len(id) != idLen {
		return "", false
	}
	for _, c := range id {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return "", false
		}
	}
	return id, true
}

// cleanStale cleans, in the folder parent, the leftovers of the killed
// runs that wrote the folder base: the runs whose lock file nobody holds.
// It never reports: what it cannot clean stays for the next run.
func cleanStale(parent, base string) {
	if !canLock {
		return
	}
	es, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range es {
		if id, ok := lockID(base, e.Name()); ok {
			cleanRun(parent, base, id)
		}
	}
}

// cleanRun cleans after the run id if it is dead.
func cleanRun(parent, base, id string) {
	lock := filepath.Join(parent, lockName(base, id))
	f, err := os.OpenFile(lock, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if ok, _ := lockFile(f, false); !ok || !samePath(f, lock) {
		return // live, or already cleaned
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return
	}
	stage, old := filepath.Join(parent, stageName(base, id)), filepath.Join(parent, oldName(base, id))
	var m manifest
	switch {
	case len(b) == 0:
		// Killed before it wrote its manifest: its staging folder, if
		// made, is empty (Remove removes no other).
		os.Remove(stage)
	case json.Unmarshal(b, &m) != nil || m.Out != base:
		return // not a lock file of this folder
	default:
		owns, err := ownership(m.Owned)
		if err != nil {
			return
		}
		cleanFolders(stage, old, filepath.Join(parent, base), m.Stage, owns)
	}
	if !exists(stage) && !exists(old) {
		os.Remove(lock)
	}
}

// cleanFolders cleans the folders of a dead run writing dir. While its
// staging folder is the one the run made, the run did not publish: a
// previous folder it moved aside goes back to dir, then the staging folder
// is removed; if dir is taken, both stay. Otherwise the run published, and
// the previous folder (at the staging folder's name after a swap, or moved
// aside) is tidied and removed.
func cleanFolders(stage, old, dir, stageID string, owns func(string) bool) {
	if fi, err := os.Lstat(stage); err == nil && fi.IsDir() && stageID != "" && fileID(fi) == stageID {
		if exists(old) && renameNoReplace(old, dir) != nil {
			return
		}
		os.RemoveAll(stage)
		return
	}
	for _, f := range []string{stage, old} {
		if exists(f) && len(tidy(f, dir, owns, nil)) == 0 {
			os.Remove(f)
		}
	}
}

// exists reports whether there is an entry at p.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return !errors.Is(err, fs.ErrNotExist)
}
