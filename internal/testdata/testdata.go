// Package testdata locates the real benchmark data (../shared/data next to
// the module) for tests, which skip with a message when it is absent. The
// data are never part of the repository.
package testdata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Dir returns the benchmark data folder if it holds sub (a path such as
// "office-caltech10/surf"), and otherwise skips tb with a message saying
// where it looked. The folder is $DADIL_DATA if set, else the folder
// shared/data beside the module's root.
func Dir(tb testing.TB, sub string) string {
	tb.Helper()
	var cands []string
	if d := os.Getenv("DADIL_DATA"); d != "" {
		cands = append(cands, d)
	}
	if root := moduleRoot(); root != "" {
		cands = append(cands, filepath.Join(filepath.Dir(root), "shared", "data"))
	}
	var tried []string
	for _, c := range cands {
		p := filepath.Join(c, sub)
		if _, err := os.Stat(p); err == nil {
			return c
		}
		tried = append(tried, p)
	}
	tb.Skipf("benchmark data %s not found (looked in %s; set DADIL_DATA): skipping", sub, strings.Join(tried, ", "))
	return ""
}

// moduleRoot returns the folder of the nearest go.mod above the working
// directory, or "".
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
