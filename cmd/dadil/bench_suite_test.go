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
