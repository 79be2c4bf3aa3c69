// Package golden pins a test's output to a file of the package's testdata
// holding what the code computed when the file was written: a regression
// guard for refactors that must not change results.
//
// Texts are compared token by token: numbers within a relative tolerance of
// 1e-9 or an absolute one of 1e-300 (room for fused multiply-adds on other
// architectures), everything
// else exactly. `go test -golden.update` rewrites the files; a rewrite that
// leaves `git diff` empty shows the output unchanged bit for bit on the
// machine that ran it.
package golden

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

var update = flag.Bool("golden.update", false, "rewrite the golden files of testdata with the current output")

// number matches the numbers of a text, NaN and infinities included.
var number = regexp.MustCompile(`[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|NaN|[-+]?Inf`)

// Tolerance is the relative difference allowed between two numbers, Tiny
// the absolute one.
const (
	Tolerance = 1e-9
	Tiny      = 1e-300
)

// Check compares got with testdata/name, or writes it there under
// -golden.update.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (run go test -golden.update to create it)", err)
	}
	if msg := Diff(string(want), got); msg != "" {
		t.Errorf("golden: %s differs from %s", msg, path)
	}
}

// Diff describes the first difference between want and got, numbers
// compared within Tolerance; "" if none.
func Diff(want, got string) string {
	wi, gi := number.FindAllStringIndex(want, -1), number.FindAllStringIndex(got, -1)
	if len(wi) != len(gi) {
		return strconv.Itoa(len(gi)) + " numbers, want " + strconv.Itoa(len(wi)) + ";"
	}
	wp, gp := 0, 0
	for k := range wi {
		if want[wp:wi[k][0]] != got[gp:gi[k][0]] {
			return "text " + strconv.Quote(got[gp:gi[k][0]]) + ", want " + strconv.Quote(want[wp:wi[k][0]]) + ";"
		}
		w, g := want[wi[k][0]:wi[k][1]], got[gi[k][0]:gi[k][1]]
		if !near(w, g) {
			return "number " + strconv.Itoa(k) + " is " + g + ", want " + w + ";"
		}
		wp, gp = wi[k][1], gi[k][1]
	}
	if want[wp:] != got[gp:] {
		return "trailing text " + strconv.Quote(got[gp:]) + ", want " + strconv.Quote(want[wp:]) + ";"
	}
	return ""
}

// near reports whether the numbers w and g agree within Tolerance or Tiny.
func near(w, g string) bool {
	if w == g {
		return true
	}
	x, err1 := strconv.ParseFloat(w, 64)
	y, err2 := strconv.ParseFloat(g, 64)
	if err1 != nil || err2 != nil || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return false
	}
	return math.Abs(x-y) <= max(Tolerance*max(math.Abs(x), math.Abs(y)), Tiny)
}
