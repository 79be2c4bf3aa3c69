package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/mattest"
)

// officeFixture writes a Caltech-Office-like benchmark folder (named
// office-caltech10, in a temporary folder) and returns it: the four SURF
// files (Webcam, Amazon, DSLR, Caltech; rows "fts", column "labels") with n
// rows of three well-separated classes in R^5, each domain shifted a
// little, and the folds file assigning row i of every domain to fold
// i mod 5 + 1.
func officeFixture(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "office-caltech10")
	for _, sub := range []string{"surf", "folds"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const d = 5
	rng := rand.New(rand.NewPCG(3, 4))
	files := []string{"webcam_SURF_L10.mat", "amazon_SURF_L10.mat", "dslr_SURF_L10.mat", "Caltech10_SURF_L10.mat"}
	folds := map[string]map[string][]int{}
	offset := 0
	for k, name := range files {
		X := make([]float64, n*d) // column-major
		y := make([]float64, n)
		for i := range n {
			c := i % 3
			y[i] = float64(c + 1)
			for j := range d {
				v := 0.3*float64(k)*float64(j%2) + 0.4*rng.NormFloat64()
				if j == c {
					v += 4
				}
				X[j*n+i] = v
			}
		}
		mattest.WriteFile(t, filepath.Join(dir, "surf", name),
			mattest.Var{Name: "fts", Dims: []int{n, d}, Data: X}, mattest.Column("labels", y))
		dom := map[string][]int{}
		for i := range n {
			f := fmt.Sprintf("Fold %d", i%5+1)
			dom[f] = append(dom[f], offset+i)
		}
		folds[fmt.Sprintf("Domain %d", k+1)] = dom
		offset += n
	}
	b, _ := json.Marshal(folds)
	if err := os.WriteFile(filepath.Join(dir, "folds", "Objects_crossval_index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBenchOfficeCaltechJSON runs dadil bench office-caltech10 end to end on
// a generated benchmark and checks the table and the JSON schema that other
// tools rely on.
func TestBenchOfficeCaltechJSON(t *testing.T) {
	dir := officeFixture(t, 60)
	js := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCLI("bench", "office-caltech10", "--data", dir, "--methods", "source-only,wb,dadil-r,dadil-e",
		"--targets", "w,c", "--folds", "1,3", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"surf features", "| Method | W | C | Avg |", "| source-only |", "| wb |", "| dadil-r |", "| dadil-e |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "[12/12]") || !strings.Contains(stderr, "ETA") {
		t.Errorf("progress:\n%s", stderr)
	}
	v := readJSON(t, js)
	if v["benchmark"] != "office-caltech10" || v["features"] != "surf" || v["scaling"] != "standard" || v["classifier"] != "softmax, λ = 0.01" {
		t.Errorf("benchmark %v, features %v, scaling %v, classifier %v", v["benchmark"], v["features"], v["scaling"], v["classifier"])
	}
	rs, _ := v["results"].([]any)
	if len(rs) != 16 {
		t.Fatalf("%d results, want 4 methods × 2 targets × 2 folds", len(rs))
	}
	seen := map[string]bool{}
	for _, r := range rs {
		m := r.(map[string]any)
		key := fmt.Sprintf("%v %v %v", m["method"], m["target"], m["fold"])
		if seen[key] {
			t.Errorf("duplicate result %s", key)
		}
		seen[key] = true
		if tg := m["target"]; tg != "W" && tg != "C" {
			t.Errorf("target %v", tg)
		}
		if f := m["fold"].(float64); f != 1 && f != 3 {
			t.Errorf("fold %v", f)
		}
		// The classes are separated by 4 standard deviations in every
		// domain: every method must classify nearly all test rows.
		if a := m["accuracy"].(float64); a < 90 || a > 100 {
			t.Errorf("%s: accuracy %v", key, a)
		}
		if s := m["seconds"].(float64); s <= 0 {
			t.Errorf("%s: seconds %v", key, s)
		}
	}
}

func TestBenchOfficeCaltechBadInput(t *testing.T) {
	dir := officeFixture(t, 20)
	empty := t.TempDir()
	js := filepath.Join(t.TempDir(), "r.json")
	checkBadInput(t, []string{"bench", "office-caltech10"}, js, []badInput{
		{"no data", nil, "--data is required"},
		{"folds", []string{"--data", dir, "--folds", "one"}, `--folds: "one" is not a number`},
		{"fold range", []string{"--data", dir, "--folds", "6", "--methods", "source-only", "--json", js}, "fold 6"},
		{"features", []string{"--data", dir, "--features", "sift"}, `unknown features "sift"`},
		{"missing surf", []string{"--data", empty, "--json", js}, filepath.Join(empty, "surf", "webcam_SURF_L10.mat")},
		{"missing decaf", []string{"--data", dir, "--features", "decaf", "--json", js}, filepath.Join(dir, "decaf", "amazon_decaf.mat")},
		{"method", []string{"--data", dir, "--methods", "dadil", "--json", js}, "dadil"},
		{"target", []string{"--data", dir, "--targets", "X", "--methods", "source-only", "--json", js}, `"X"`},
		{"json folder", []string{"--data", dir, "--json", filepath.Join(js, "no", "r.json")}, "cannot create a file beside it"},
		{"held-out folds", []string{"--data", dir, "--held-out-sources", "--folds", "1", "--json", js}, "--folds has no meaning with --held-out-sources"},
		{"l2", []string{"--data", dir, "--l2", "-1", "--json", js}, `--l2 "-1": want a positive number or auto`},
		{"scale", []string{"--data", dir, "--scale", "none", "--json", js}, `--scale: want minmax or standard, not "none"`},
	})
}

func TestBenchOfficeCaltechHeldOutSources(t *testing.T) {
	dir := officeFixture(t, 40)
	js := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCLI("bench", "office-caltech10", "--data", dir, "--methods", "source-only,dadil-r",
		"--targets", "D", "--held-out-sources", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"held-out-source validation, without the target", "| Method | D | Avg |", "| source-only |", "| dadil-r |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "dadil-r on the sources of D, C held out") {
		t.Errorf("progress:\n%s", stderr)
	}
	v := readJSON(t, js)
	if v["validation"] != "held-out-sources" {
		t.Errorf("validation %v", v["validation"])
	}
	rs, _ := v["results"].([]any)
	if len(rs) != 6 {
		t.Fatalf("%d results, want 2 methods × 3 held-out sources", len(rs))
	}
	held := map[string]int{}
	for _, r := range rs {
		m := r.(map[string]any)
		held[fmt.Sprint(m["held_out"])]++
		if a := m["accuracy"].(float64); a < 90 || a > 100 {
			t.Errorf("%v with %v held out: accuracy %v", m["method"], m["held_out"], a)
		}
	}
	if held["W"] != 2 || held["A"] != 2 || held["C"] != 2 {
		t.Errorf("held-out sources %v, want W, A and C twice each", held)
	}
}

// TestBenchDaDiLGoOnly times the paper-setting fit on a generated benchmark
// without the Python reference and checks the table and the JSON.
func TestBenchDaDiLGoOnly(t *testing.T) {
	dir := officeFixture(t, 40)
	js := filepath.Join(t.TempDir(), "t.json")
	code, stdout, stderr := runCLI("bench", "dadil", "--data", filepath.Dir(dir), "--targets", "D", "--folds", "2",
		"--threads", "all", "--python", "none", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if row := fmt.Sprintf("| dadil (Go) | D | 2 | %d |", runtime.GOMAXPROCS(0)); !strings.Contains(stdout, row) || strings.Contains(stdout, "Python") {
		t.Errorf("table:\n%s", stdout)
	}
	v := readJSON(t, js)
	rs, _ := v["results"].([]any)
	if v["benchmark"] != "dadil-fit" || len(rs) != 1 {
		t.Fatalf("JSON %v", v)
	}
	m, _ := v["machine"].(map[string]any)
	if m["dot_kernel"] != linalg.KernelName() || m["logical_cpus"] != float64(runtime.NumCPU()) || m["go"] != runtime.Version() {
		t.Errorf("machine %v", m)
	}
	if !strings.Contains(stderr, "machine: ") || !strings.Contains(stderr, "dot-product kernel "+linalg.KernelName()) {
		t.Errorf("stderr does not describe the machine:\n%s", stderr)
	}
	r := rs[0].(map[string]any)
	learn, model, total := r["learn_seconds"].(float64), r["model_seconds"].(float64), r["total_seconds"].(float64)
	if learn <= 0 || model <= 0 || total < learn+model-1e-9 || total > learn+model+1e-9 {
		t.Errorf("seconds: learn %v + model %v vs total %v", learn, model, total)
	}
	if a := r["accuracy_r"].(float64); a < 0 || a > 100 {
		t.Errorf("accuracy_r %v", a)
	}

	checkBadInput(t, []string{"bench", "dadil"}, "", []badInput{
		{"no data", nil, "--data is required"},
		{"threads", []string{"--data", filepath.Dir(dir), "--threads", "0"}, "--threads"},
		{"python", []string{"--data", filepath.Dir(dir), "--python", filepath.Join(dir, "nopython")}, "cannot import torch, ot"},
		{"benchmark", []string{"--data", dir, "--python", "none"}, "missing"},
	})
}

// TestBenchTransport: the benchmarks' --transport sets the default DaDiL-R's
// last step (nil settings for auto), and a value that is not one of
// DaDiL-R's is a usage error naming the flag, before any data is read.
func TestBenchTransport(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want dictionary.Transport
		ok   bool
	}{
		{"auto", dictionary.TransportAuto, true},
		{"none", dictionary.TransportNone, true},
		{"sources", dictionary.TransportSources, true},
		{"labels", dictionary.TransportLabels, true},
		{"barycenter", 0, false},
		{"bogus", 0, false},
	} {
		s, err := transportSettings(tc.v)
		switch {
		case !tc.ok:
			if err == nil {
				t.Errorf("--transport %s accepted", tc.v)
			}
		case err != nil:
			t.Errorf("--transport %s: %v", tc.v, err)
		case tc.want == dictionary.TransportAuto && s != nil, tc.want != dictionary.TransportAuto && (s == nil || s.Transport != tc.want):
			t.Errorf("--transport %s: settings %+v", tc.v, s)
		}
	}
	for _, args := range [][]string{
		{"bench", "office-caltech10", "--data", t.TempDir(), "--transport", "barycenter"},
		{"bench", "cwru", "--data", t.TempDir(), "--transport", "bogus"},
	} {
		if code, _, stderr := runCLI(args...); code != 2 || !strings.Contains(stderr, "--transport: want none, sources, map, labels or auto") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}
