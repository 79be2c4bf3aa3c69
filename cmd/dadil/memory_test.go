package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMemoryGuards: sizes whose fits cannot fit in the memory limit
// (--max-memory, or the machine's) are refused with the flags, the
// estimate and the limit; before the data are read when no data could fit
// (a missing target file is never opened), else before any fit; more
// atoms than labeled rows are refused, and --max-memory itself is
// checked.
func TestMemoryGuards(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	missing := filepath.Join(dir, "no-such-target.csv")
	out := filepath.Join(dir, "out")
	fit := func(target string, extra ...string) []string {
		a := []string{"fit", "--quiet", "--source", src[0], "--source", src[1], "--target", target, "--out", out}
		return append(a, extra...)
	}
	adapt := func(target string, extra ...string) []string { return adaptArgs(src, target, extra...) }
	analyze := func(cmd string, extra ...string) []string {
		a := []string{"analyze", cmd, "--quiet", "--source", src[0], "--source", src[1], "--target", tgt, "--out", out}
		return append(a, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"atoms before reading", fit(missing, "--atoms", "100000"), 1, []string{
			"dadil fit: --atoms 100000, --samples (default 200), --reconstruction-block (default 2048): a fit of K = 100000 atoms of n = 200 points (batches of n_b = 40) would need at least ",
			" with any data (reconstruction ", "more than the limit of ", "; lower --atoms, or raise --max-memory if the machine has more"}},
		{"batch before reading", fit(missing, "--samples", "30000", "--batch", "30000"), 1, []string{
			"dadil fit: --batch 30000, --atoms (default 2): a fit of K = 2 atoms of n = 30000 points (batches of n_b = 30000) would need at least ", "(step "}},
		{"block before reading", fit(missing, "--samples", "300000", "--reconstruction-block", "-1"), 1, []string{
			"dadil fit: --samples 300000, --reconstruction-block -1, --atoms (default 2): ", "(reconstruction ", "lower --samples or --reconstruction-block"}},
		{"max-memory before reading", fit(missing, "--max-memory", "1MB"), 1, []string{
			"would need at least ", "more than the limit of 976.6 KiB (--max-memory)"}},
		{"max-memory after reading", fit(tgt, "--max-memory", "3MiB"), 1, []string{
			"dadil fit: --atoms (default 2), --samples (default 300), --reconstruction-block (default 2048): a fit of K = 2 atoms of n = 300 points (batches of n_b = 60) on N = 3 domains of R = 900 rows (d = 2, c = 3) would need about ",
			"more than the limit of 3.0 MiB (--max-memory)"}},
		{"atoms beyond labeled rows", fit(tgt, "--atoms", "601"), 1, []string{
			"dadil fit: --atoms 601: K = 601 atoms for 600 labeled rows: a dictionary cannot have more atoms than labeled rows"}},
		{"max-memory 0", fit(tgt, "--max-memory", "0"), 2, []string{"--max-memory 0: need a positive size; leave the flag out for the machine's memory"}},
		{"max-memory unit", fit(tgt, "--max-memory", "8parsecs"), 2, []string{`--max-memory 8parsecs: unknown unit "parsecs"`}},
		{"max-memory huge value", fit(tgt, "--max-memory", strings.Repeat("9", 1000)), 2, []string{`--max-memory "` + strings.Repeat("9", 40) + `"… (1000 bytes): want a size such as 8GiB`}},
		{"adapt atoms before reading", adapt(missing, "--methods", "dadil-r", "--atoms", "100000"), 1, []string{"dadil adapt: --atoms 100000, "}},
		{"adapt max-rows", adapt(tgt, "--methods", "jcpot", "--max-rows", "0", "--max-memory", "2MiB"), 1, []string{
			"dadil adapt: --methods jcpot, --max-rows 0: the fits would need about ", "(the data and one method at a time: jcpot ",
			"more than the limit of 2.0 MiB (--max-memory); give --max-rows, or raise --max-memory"}},
		{"adapt methods at once", adapt(tgt, "--methods", "jcpot,wb", "--workers", "2", "--max-memory", "2MiB"), 1, []string{
			"the data and 2 methods at once: wb ", ", jcpot ", "lower --max-rows, give --workers 1, or raise --max-memory"}},
		{"adapt K beyond rows", adapt(tgt, "--methods", "dadil-e", "--atoms", "1000"), 1, []string{"dadil adapt: --atoms 1000: K = 1000 atoms for 900 labeled rows"}},
		{"atoms beyond the data", fit(tgt, "--samples", "450003"), 1, []string{
			"dadil fit: --samples 450003, --atoms (default 2): the K = 2 atoms of n = 450003 points hold 1000 times the 900 rows of the data, more than 1000 times: learning takes time proportional to K·n for no more information; lower --samples"}},
		{"sweep", analyze("sweep", "--sweep-atoms", "2,3", "--sweep-samples", "60,3000", "--sweep-batches", "", "--max-memory", "20MiB", "--workers", "2"), 1, []string{
			"dadil analyze sweep: --sweep-atoms 2,3, --sweep-samples 60,3000, --reconstruction-block (default 2048): a fit of K = 2 atoms of n = 3000 points ",
			"on N = 3 domains", "(2 fits at once: give --workers 1 to run them in turn)"}},
		{"sweep beyond rows", analyze("sweep", "--sweep-atoms", "2,700", "--sweep-samples", "", "--sweep-batches", ""), 1, []string{"dadil analyze sweep: --sweep-atoms 2,700: K = 700 atoms for 600 labeled rows"}},
		{"hull", analyze("hull", "--hull-atoms", "3,700", "--steps", "0"), 1, []string{"dadil analyze hull: --hull-atoms 3,700: K = 700 atoms for 600 labeled rows"}},
		{"stability", analyze("stability", "--seeds", "2", "--workers", "2", "--max-memory", "4MiB"), 1, []string{
			"dadil analyze stability: --atoms (default 2), ", "(2 fits at once: give --workers 1 to run them in turn)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Fatalf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

// TestScaleWarningNote: atoms far beyond the data are fitted with a note
// that says so.
func TestScaleWarningNote(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	code, _, stderr := runCLI("fit", "--source", src[0], "--source", src[1], "--target", tgt, "--out", filepath.Join(dir, "o"),
		"--atoms", "2", "--samples", "9303", "--batch", "30", "--epochs", "1", "--reconstruction-block", "300")
	if want := "note: the 2 atoms of 9303 points hold 21 times the 900 rows of the data"; code != 0 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr %q, want %q", code, stderr, want)
	}
}
