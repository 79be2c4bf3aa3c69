//go:build !linux

package atomicfile

// exchange always returns errNoExchange: only Linux swaps two folders in
// one step here, and the others take the fallback of WriteDir.
func exchange(a, b string) error { return errNoExchange }

// renameNoReplace renames a to b unless b exists (fs.ErrExist); the check
// and the rename are two steps.
func renameNoReplace(a, b string) error { return renameIfFree(a, b) }
