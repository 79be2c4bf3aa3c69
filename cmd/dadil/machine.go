package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/dadil/dadil/internal/linalg"
)

// machine describes the computer a benchmark runs on. Timings compare
// only on the same machine; results do not depend on it (every kernel
// gives the same bits), so it goes into the JSON of the bench commands and
// on standard error, not into their tables.
func machine() map[string]any {
	return map[string]any{
		"cpu":          cpuModel("/proc/cpuinfo"),
		"logical_cpus": runtime.NumCPU(),
		"gomaxprocs":   runtime.GOMAXPROCS(0),
		"go":           runtime.Version(),
		"os_arch":      runtime.GOOS + "/" + runtime.GOARCH,
		"dot_kernel":   linalg.KernelName(),
	}
}

// cpuModel returns the first "model name" of a Linux cpuinfo file, or
// "unknown".
func cpuModel(cpuinfo string) string {
	b, err := os.ReadFile(cpuinfo)
	if err != nil {
		return "unknown"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
	}
	return "unknown"
}

// announceMachine writes one line about the machine to standard error.
func announceMachine(e *env) {
	m := machine()
	fmt.Fprintf(e.stderr, "machine: %s, %d logical CPUs (%d used), %s, dot-product kernel %s\n",
		m["cpu"], m["logical_cpus"], m["gomaxprocs"], m["go"], m["dot_kernel"])
}

// writeBenchJSON writes a bench command's JSON: fields and "machine".
func writeBenchJSON(path string, fields map[string]any) error {
	fields["machine"] = machine()
	return writeJSON(path, fields)
}
