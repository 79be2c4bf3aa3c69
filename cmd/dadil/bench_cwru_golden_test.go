package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/golden"
)

// TestBenchCWRUGolden pins what dadil bench cwru prints, writes and
// returns, times masked, for small runs on fixture recordings (on the
// target and with sources held out) and a table of bad command lines, to
// testdata/bench_cwru.golden.
func TestBenchCWRUGolden(t *testing.T) {
	dir := t.TempDir()
	mp := cwruFixture(t, dir, []string{"1772", "1750", "1730"}, 3000)
	js := filepath.Join(dir, "r.json")
	small := []string{"--data", dir, "--files", mp, "--window", "256", "--coeffs", "16", "--windows", "16", "--train", "10",
		"--encoder-epochs", "2", "--methods", "mlp,source-only", "--targets", "1730", "--seeds", "1", "--workers", "1", "--json", js}
	// Times and the machine are masked.
	seconds := regexp.MustCompile(`[0-9.e+-]+ s\b|\S+ elapsed, ETA \S+|"seconds": *[0-9.e+-]+|"encoder_seconds": *[0-9.e+-]+|machine: [^\n]*|"machine": \{[^}]*\}`)
	var b strings.Builder
	for _, args := range [][]string{
		{"--data", dir, "--encoder-epochs", "0"},
		{"--data", dir, "--encoder-weight-decay", "NaN"},
		{"--data", dir, "--workers", "-1"},
		{"--data", dir, "--scale", "log"},
		{"--data", dir, "--l2", "auto"},
		{"--data", dir, "--l2", "x"},
		small,
		append([]string{"--held-out-sources", "--scale", "minmax", "--l2", "0.1", "--paper-scale", "none", "--encoder-weight-decay", "0.01"}, small...),
	} {
		os.Remove(js)
		code, stdout, stderr := runCLI(append([]string{"bench", "cwru"}, args...)...)
		fmt.Fprintf(&b, "%s\nexit %d\nstdout: %s\nstderr: %s\n", strings.Join(args, " "), code, stdout, stderr)
		if j, err := os.ReadFile(js); err == nil {
			fmt.Fprintf(&b, "json: %s\n", j)
		}
	}
	golden.Check(t, "bench_cwru.golden", seconds.ReplaceAllString(strings.ReplaceAll(b.String(), dir, "DIR"), "TIME"))
}
