//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package atomicfile

import (
	"io/fs"
	"os"
)

// canLock is false: without flock a lock file cannot tell a killed run
// from a live one, so the leftovers of killed runs are not cleaned.
const canLock = false

// lockFile reports that it did not lock f unless asked to wait, when it
// does nothing.
func lockFile(f *os.File, wait bool) (bool, error) { return wait, nil }

func fileID(fs.FileInfo) string               { return "" }
func sameDevice(a, b fs.FileInfo) bool        { return true }
func ownedByMe(fs.FileInfo) bool              { return true }
func canLink(string, fs.FileInfo) bool        { return true }
func canRenameIn(parent, fi fs.FileInfo) bool { return true }
func writable(string) error                   { return nil }
func chownLike(string, fs.FileInfo)           {}
