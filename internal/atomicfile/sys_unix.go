//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// canLock: a lock file's lock is released when its process ends, so the
// leftovers of killed runs can be told from live ones and cleaned.
const canLock = true

// lockFile takes the exclusive flock of f, waiting for it if wait, and
// reports whether it got it.
func lockFile(f *os.File, wait bool) (bool, error) {
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return true, nil
		case err == unix.EINTR:
			continue
		case err == unix.EWOULDBLOCK:
			return false, nil
		}
		return false, err
	}
}

// fileID names the file fi describes by its device and inode.
func fileID(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d", uint64(st.Dev), uint64(st.Ino))
}

// sameDevice reports whether a and b are on one file system.
func sameDevice(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return !ok1 || !ok2 || sa.Dev == sb.Dev
}

// ownedByMe reports whether this process's user owns the file fi (root
// owns everything here).
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	euid := os.Geteuid()
	return !ok || euid == 0 || int(st.Uid) == euid
}

// canLink reports whether the regular file at path may be hard-linked by
// this process: the kernel's protected_hardlinks lets a user link the
// files he owns or may read and write.
func canLink(path string, fi fs.FileInfo) bool {
	return ownedByMe(fi) || unix.Access(path, unix.R_OK|unix.W_OK) == nil
}

// canRenameIn reports whether this process may rename the entry fi in the
// folder parent: in a sticky folder (like /tmp) only the owner of the
// entry or of the folder may.
func canRenameIn(parent, fi fs.FileInfo) bool {
	return parent.Mode()&fs.ModeSticky == 0 || ownedByMe(fi) || ownedByMe(parent)
}

// writable reports whether this process may create and remove entries in
// the folder path, without creating one.
func writable(path string) error {
	return unix.Access(path, unix.W_OK|unix.X_OK)
}

// chownLike gives path the owner and group of fi where this process may
// (root may; a user may set a group he belongs to); failures are ignored.
func chownLike(path string, fi fs.FileInfo) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		os.Lchown(path, int(st.Uid), int(st.Gid))
		os.Lchown(path, -1, int(st.Gid))
	}
}
