package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// analyzeArgs returns the data flags of the demo problem written as CSV
// files, with the target's labels (scoring only).
func analyzeArgs(t *testing.T, dir string, labels bool) []string {
	src, tgt := synthFiles(t, dir, labels)
	var args []string
	for _, s := range src {
		args = append(args, "--source", s)
	}
	return append(args, "--target", tgt, "--samples", "60", "--batch", "30", "--epochs", "15", "--quiet")
}

func checkFigures(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		png, err := os.ReadFile(filepath.Join(dir, n+".png"))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("%s.png: %v", n, err)
		}
		svg, err := os.ReadFile(filepath.Join(dir, n+".svg"))
		if err != nil || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s.svg: %v", n, err)
		}
	}
}

func TestAnalyzeSweep(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep")
	args := append([]string{"analyze", "sweep", "--out", out, "--sweep-atoms", "3,4", "--sweep-samples", "31,60", "--sweep-batches", "15", "--atoms", "+1"}, analyzeArgs(t, dir, true)...)
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"Accuracy against number of atoms K", "| 4 |", "Density of the atoms' supports", "| 30 |", "| 15 |"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("report lacks %q:\n%s", s, stdout)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "sweep.md"))
	if string(md) != stdout {
		t.Error("sweep.md differs from stdout")
	}
	v := readJSON(t, filepath.Join(out, "sweep.json"))
	runs := v["runs"].([]any)
	if len(runs) != 5 || v["analysis"] != "sweep" {
		t.Fatalf("%d runs", len(runs))
	}
	notes := strings.Join(anyStrings(v["notes"]), " ")
	if !strings.Contains(notes, "--sweep-samples 31 is not a multiple of the 3 classes: rounded to 30") {
		t.Errorf("notes %q", notes)
	}
	for _, r := range runs {
		m := r.(map[string]any)
		if acc := m["accuracy_r"].(float64); acc < 90 || acc > 100 {
			t.Errorf("run %v: DaDiL-R %v%% on the demo problem", m["value"], acc)
		}
	}
	checkFigures(t, out, "sweep_accuracy", "sweep_sparsity", "sweep_density")
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestAnalyzeHullUnlabeledTarget(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "hull")
	args := append([]string{"analyze", "hull", "--out", out, "--steps", "3", "--hull-atoms", "3", "--draws", "3"}, analyzeArgs(t, dir, false)...)
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	v := readJSON(t, filepath.Join(out, "hull.json"))
	grids := v["grids"].([]any)
	g := grids[0].(map[string]any)
	if n := len(g["points"].([]any)); n != 10 {
		t.Errorf("%d grid points for step 1/3, want 10", n)
	}
	learned := g["learned"].(map[string]any)
	if learned["accuracy_r"] != nil || !(learned["w2"].(float64) > 0) {
		t.Errorf("unlabeled target: learned point %v (want w2 > 0, accuracy null)", learned)
	}
	var sum float64
	for _, a := range learned["alpha"].([]any) {
		sum += a.(float64)
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("α_T sums to %v", sum)
	}
	if !strings.Contains(stdout, "Grid over Δ₃") {
		t.Errorf("report:\n%s", stdout)
	}
	checkFigures(t, out, "hull_grid_t.csv")
}

func TestAnalyzeHullAndStability(t *testing.T) {
	dir := t.TempDir()
	data := analyzeArgs(t, dir, true)
	out := filepath.Join(dir, "hull")
	code, _, stderr := runCLI(append([]string{"analyze", "hull", "--out", out, "--steps", "4", "--hull-atoms", "3,4", "--draws", "4"}, data...)...)
	if code != 0 {
		t.Fatalf("hull: exit %d: %s", code, stderr)
	}
	v := readJSON(t, filepath.Join(out, "hull.json"))
	g := v["grids"].([]any)[0].(map[string]any)
	if c, ok := g["correlation_r"].(float64); !ok || c >= 0 {
		t.Errorf("correlation of W₂ and DaDiL-R accuracy %v, want negative", g["correlation_r"])
	}
	if d := v["draws"].([]any); len(d) != 2 {
		t.Errorf("%d draw sets, want 2", len(d))
	}
	checkFigures(t, out, "hull_grid_t.csv", "hull_correlation", "hull_draws")

	out = filepath.Join(dir, "stab")
	code, stdout, stderr := runCLI(append([]string{"analyze", "stability", "--out", out, "--seeds", "2"}, data...)...)
	if code != 0 {
		t.Fatalf("stability: exit %d: %s", code, stderr)
	}
	v = readJSON(t, filepath.Join(out, "stability.json"))
	if runs := v["runs"].([]any); len(runs) != 2 {
		t.Errorf("%d runs", len(runs))
	}
	bands := v["bands"].(map[string]any)["t.csv"].(map[string]any)
	for _, k := range []string{"loss", "delta_x", "delta_y", "delta_a"} {
		if _, ok := bands[k]; !ok {
			t.Errorf("no %s band", k)
		}
	}
	if !strings.Contains(stdout, "| t.csv |") {
		t.Errorf("report:\n%s", stdout)
	}
	checkFigures(t, out, "stability_loss", "stability_updates")
}

func TestAnalyzeBadInput(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	out := filepath.Join(dir, "out")
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("x1,x2,label\n1,Inf,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := []string{"--source", src[0], "--source", src[1], "--target", tgt}
	checkBadInput(t, []string{"analyze"}, out, []badInput{
		{"no out", append([]string{"sweep"}, data...), "--out is required"},
		{"no data", []string{"hull", "--out", out}, "--source is required"},
		{"both", append([]string{"sweep", "--out", out, "--bench", "office-caltech10", "--data", dir}, data...), "not both"},
		{"data without bench", append([]string{"sweep", "--out", out, "--data", dir}, data...), "--data goes with --bench"},
		{"unknown bench", []string{"sweep", "--out", out, "--bench", "cwru", "--data", dir}, `--bench "cwru"`},
		{"bench without data", []string{"sweep", "--out", out, "--bench", "office-caltech10"}, "--bench needs --data"},
		{"bench folder", []string{"sweep", "--out", out, "--bench", "office-caltech10", "--data", dir}, dir},
		{"sweep list", append([]string{"sweep", "--out", out, "--sweep-atoms", "3,x"}, data...), `--sweep-atoms: "x"`},
		{"empty sweep", append([]string{"sweep", "--out", out, "--sweep-atoms", "", "--sweep-samples", "", "--sweep-batches", ""}, data...), "nothing to sweep"},
		{"hull K", append([]string{"hull", "--out", out, "--hull-atoms", "1"}, data...), "K = 1"},
		{"hull nothing", append([]string{"hull", "--out", out, "--steps", "0", "--hull-atoms", ""}, data...), "nothing to do"},
		{"seeds", append([]string{"stability", "--out", out, "--seeds", "1"}, data...), "--seeds 1"},
		{"NaN", []string{"stability", "--out", out, "--source", bad, "--target", tgt}, "bad.csv"},
		{"init", append([]string{"stability", "--out", out, "--init", "zeros"}, data...), "zeros"},
		{"dims", []string{"hull", "--out", out, "--source", src[0], "--target", bad}, "bad.csv"},
	})
}
