package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchSuiteFrom: --from prints the tables of saved results, with the
// fixed choice of DaDiL-R beside the scorers.
func TestBenchSuiteFrom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "suite.json")
	js := `{"results": [
	 {"set": "s", "target": "a", "method": "source-only", "score": 60, "selection": [{"scorer": "entropy", "score": -0.5}]},
	 {"set": "s", "target": "a", "method": "dadil-r", "score": 80, "selection": [{"scorer": "entropy", "score": -0.9}]},
	 {"set": "s", "target": "b", "method": "source-only", "score": 70, "selection": [{"scorer": "entropy", "score": -0.1}]},
	 {"set": "s", "target": "b", "method": "dadil-r", "score": 65, "selection": [{"scorer": "entropy", "score": -0.2}]}]}`
	if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI("bench", "suite", "--from", path, "--methods", "source-only,dadil-r")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"| source-only | 65.00 (2) | 2.00 |",
		"| dadil-r | 72.50 (1) | 1.00 |",
		"| oracle (target labels) | 75.00 (+0.00) | 75.00 (+0.00) |",
		"| entropy | 65.00 (-10.00) | 65.00 (-10.00) |",
		"| always dadil-r | 72.50 (-2.50) | 72.50 (-2.50) |",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if code, _, _ := runCLI("bench", "suite", "--from", filepath.Join(t.TempDir(), "none.json")); code == 0 {
		t.Error("a missing file is not an error")
	}
}

// TestBenchSuiteFromSeeds: --from summarises the runs of several seeds
// together, a file without per-result seeds gives them its own, the same
// run twice is an error naming it, and --seeds below 1 is a usage error.
func TestBenchSuiteFromSeeds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, js string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a := write("a.json", `{"seed": 1, "results": [
	 {"set": "s", "target": "a", "method": "source-only", "score": 60},
	 {"set": "s", "target": "a", "method": "dadil-r", "score": 80}]}`)
	b := write("b.json", `{"seed": 1, "results": [
	 {"seed": 2, "set": "s", "target": "a", "method": "source-only", "score": 70},
	 {"seed": 2, "set": "s", "target": "a", "method": "dadil-r", "score": 70}]}`)
	code, stdout, stderr := runCLI("bench", "suite", "--from", a+","+b, "--methods", "source-only,dadil-r")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"| source-only | 65.00 (2) | 2.00 |", "| dadil-r | 75.00 (1) | 1.00 |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	code, _, stderr = runCLI("bench", "suite", "--from", a+","+a)
	if code == 0 || !strings.Contains(stderr, "two results of source-only on s → a with seed 1") {
		t.Errorf("the same run twice: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI("bench", "suite", "--data", dir, "--seeds", "0"); code != 2 || !strings.Contains(stderr, "--seeds must be at least 1") {
		t.Errorf("--seeds 0: exit %d, %s", code, stderr)
	}
}

// TestBenchSuiteSelectAmongUsage: --select-among needs --select and
// methods that run; both are usage errors before anything is read.
func TestBenchSuiteSelectAmongUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--select-among", "dadil-r"}, "--select-among needs --select"},
		{[]string{"--select", "ensv", "--methods", "source-only,sa", "--select-among", "sa,dadil-r"}, "--select-among: dadil-r is not among the methods run"},
		{[]string{"--select", "ensv", "--select-among", "dadil"}, `--select-among: unknown method "dadil"`},
	} {
		code, _, stderr := runCLI(append([]string{"bench", "suite", "--data", dir}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %s; want %q", tc.args, code, stderr, tc.want)
		}
	}
}
