//go:build linux

package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the entries at a and b, which must both exist, in one
// step (renameat2 with RENAME_EXCHANGE). It returns errNoExchange when the
// kernel or the file system cannot.
func exchange(a, b string) error {
	if forceFallback {
		return errNoExchange
	}
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if unsupported(err) {
		return errNoExchange
	}
	return err
}

// renameNoReplace renames a to b, or fails with an error that is
// fs.ErrExist if b exists (renameat2 with RENAME_NOREPLACE where the file
// system has it).
func renameNoReplace(a, b string) error {
	if !forceFallback {
		err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_NOREPLACE)
		if !unsupported(err) {
			return err
		}
	}
	return renameIfFree(a, b)
}

func unsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)
}
