package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/modelfile"
	"github.com/dadil/dadil/npy"

	"github.com/dadil/dadil/synth"
)

// writeCSV writes a synthetic domain as CSV with label values 10, 20, 30.
func writeCSV(t *testing.T, path string, d dataset.Domain, withLabels bool, edit func(i int, row []string) []string) {
	t.Helper()
	var b strings.Builder
	if withLabels {
		b.WriteString("x1,x2,label\n")
	} else {
		b.WriteString("x1,x2\n")
	}
	n, _ := d.X.Dims()
	for i := 0; i < n; i++ {
		row := []string{fmt.Sprint(d.X.At(i, 0)), fmt.Sprint(d.X.At(i, 1))}
		if withLabels {
			row = append(row, fmt.Sprint(10*(d.Y[i]+1)))
		}
		if edit != nil {
			row = edit(i, row)
		}
		b.WriteString(strings.Join(row, ","))
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func synthFiles(t *testing.T, dir string, targetLabels bool) (sources []string, target string) {
	t.Helper()
	p := synth.Generate(synth.Default(), 1)
	for i, s := range p.Sources {
		path := filepath.Join(dir, fmt.Sprintf("s%d.csv", i+1))
		writeCSV(t, path, s, true, nil)
		sources = append(sources, path)
	}
	target = filepath.Join(dir, "t.csv")
	writeCSV(t, target, *p.Test, targetLabels, nil)
	return sources, target
}

func TestFitPredict(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	out := filepath.Join(dir, "out")
	args := []string{"fit", "--out", out, "--target", tgt, "--atoms", "4", "--samples", "100", "--batch", "59", "--quiet"}
	for _, s := range src {
		args = append(args, "--source", s)
	}
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "target accuracy: DaDiL-R") {
		t.Errorf("stdout %q", stdout)
	}
	rep := readReport(t, out)
	if rep.TargetAccuracy["dadil_r"] < 95 || rep.TargetAccuracy["dadil_e"] < 95 {
		t.Errorf("target accuracy %v, want ≥ 95%%", rep.TargetAccuracy)
	}
	if len(rep.Alpha) != 4 || len(rep.Loss) != rep.Epochs || rep.Epochs < 1 || len(rep.DomainLoss[tgt]) != rep.Epochs {
		t.Errorf("report: %d α rows, %d losses for %d epochs", len(rep.Alpha), len(rep.Loss), rep.Epochs)
	}
	if notes := strings.Join(rep.Notes, " "); !strings.Contains(notes, "--samples 100 is not a multiple of the 3 classes: rounded to 99") ||
		!strings.Contains(notes, "--batch 59 is not a multiple of the 3 classes: rounded to 60") {
		t.Errorf("notes %q lack the rounding of --samples 100 to 99 and of --batch 59 to 60", rep.Notes)
	}
	// predictions.csv: one line per target row, the user's label values.
	pb, err := os.ReadFile(filepath.Join(out, "predictions.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(pb)), "\n")
	if lines[0] != "row,dadil_r,dadil_e" || len(lines) != 301 {
		t.Fatalf("predictions: header %q, %d lines", lines[0], len(lines))
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		for _, v := range f[1:] {
			if v != "10" && v != "20" && v != "30" {
				t.Fatalf("prediction %q is not a user label", l)
			}
		}
	}
	// dadil predict reproduces the R column.
	code, pout, perr := runCLI("predict", "--model", filepath.Join(out, "model.dadil"), "--data", tgt)
	if code != 0 {
		t.Fatalf("predict: exit %d: %s", code, perr)
	}
	plines := strings.Split(strings.TrimSpace(pout), "\n")
	if plines[0] != "row,label" || len(plines) != len(lines) {
		t.Fatalf("predict: header %q, %d lines", plines[0], len(plines))
	}
	for i := 1; i < len(lines); i++ {
		want := strings.Split(lines[i], ",")[1]
		if got := strings.Split(plines[i], ",")[1]; got != want {
			t.Fatalf("row %d: predict gives %s, fit gave %s", i-1, got, want)
		}
	}
	// The target file carries labels: predict scores against them, as fit
	// did.
	if want := fmt.Sprintf("accuracy against the labels in %s: %.2f%% (", tgt, rep.TargetAccuracy["dadil_r"]); !strings.Contains(perr, want) {
		t.Errorf("predict: stderr %q, want %q", perr, want)
	}
	// Labels the model does not know count as errors, with a note; an
	// exact count on a file whose rows all carry the unknown label.
	p := synth.Generate(synth.Default(), 1)
	odd := filepath.Join(dir, "odd.csv")
	writeCSV(t, odd, *p.Test, true, func(i int, row []string) []string {
		row[2] = "99"
		return row
	})
	n, _ := p.Target.X.Dims()
	code, _, perr = runCLI("predict", "--model", filepath.Join(out, "model.dadil"), "--data", odd)
	if want := fmt.Sprintf("accuracy against the labels in %s: 0.00%% (0 of %d rows)", odd, n); code != 0 || !strings.Contains(perr, want) ||
		!strings.Contains(perr, "note: labels [99] of "+odd+" are not among the model's classes [10 20 30]; those rows count as errors") {
		t.Errorf("predict with unknown labels: exit %d, stderr %q", code, perr)
	}
	// Columns named otherwise than in the training files are an error.
	swapped := filepath.Join(dir, "swapped.csv")
	writeCSV(t, swapped, p.Target, false, nil)
	if b, err := os.ReadFile(swapped); err == nil {
		os.WriteFile(swapped, []byte(strings.Replace(string(b), "x1,x2", "x2,x1", 1)), 0o644)
	}
	code, _, perr = runCLI("predict", "--model", filepath.Join(out, "model.dadil"), "--data", swapped)
	if want := `column 1 is "x2", but the model ` + filepath.Join(out, "model.dadil") + ` was fitted with "x1" there`; code != 1 || !strings.Contains(perr, want) {
		t.Errorf("predict on renamed columns: exit %d, stderr %q", code, perr)
	}
	// --method e and --out.
	pe := filepath.Join(dir, "e.csv")
	if code, _, perr := runCLI("predict", "--model", filepath.Join(out, "model.dadil"), "--data", tgt, "--method", "e", "--out", pe); code != 0 {
		t.Fatalf("predict -method e: %s", perr)
	}
	eb, _ := os.ReadFile(pe)
	elines := strings.Split(strings.TrimSpace(string(eb)), "\n")
	for i := 1; i < len(lines); i++ {
		if want, got := strings.Split(lines[i], ",")[2], strings.Split(elines[i], ",")[1]; got != want {
			t.Fatalf("row %d: predict -method e gives %s, fit gave %s", i-1, got, want)
		}
	}
}

// TestFitValidate: --validate scores DaDiL-R and DaDiL-E on every source
// held out as the target of the others, and reports it.
func TestFitValidate(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, false)
	out := filepath.Join(dir, "out")
	args := []string{"fit", "--out", out, "--target", tgt, "--validate", "--samples", "60"}
	for _, s := range src {
		args = append(args, "--source", s)
	}
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "held-out-source validation (no target labels): DaDiL-R") || !strings.Contains(stdout, "mean over 3 sources") {
		t.Errorf("stdout %q", stdout)
	}
	if !strings.Contains(stderr, "validation: "+src[2]+" held out: DaDiL-R") {
		t.Errorf("stderr %q", stderr)
	}
	rep := readReport(t, out)
	if len(rep.HeldOutSources) != 3 || rep.Seconds["validation"] <= 0 {
		t.Fatalf("held-out scores %+v, %v s", rep.HeldOutSources, rep.Seconds["validation"])
	}
	for i, sc := range rep.HeldOutSources {
		if sc.Source != src[i] {
			t.Errorf("score %d is for %s, want %s", i, sc.Source, src[i])
		}
		t.Logf("%s held out: R %.2f%%, E %.2f%%", sc.Source, sc.R, sc.E)
	}
	// Sources 1 and 2 differ only by a horizontal shift along which the
	// classes do not vary: each carries to the other.
	for _, sc := range rep.HeldOutSources[:2] {
		if sc.R < 90 || sc.E < 90 || sc.RBalanced < 90 || sc.EBalanced < 90 || sc.RBalanced > 100 || sc.EBalanced > 100 {
			t.Errorf("%s held out: R %.2f%%, E %.2f%%, balanced %.2f%% and %.2f%%; want ≥ 90", sc.Source, sc.R, sc.E, sc.RBalanced, sc.EBalanced)
		}
	}
}

// TestFitSettingsFlags: --paper runs the paper's fixed setting (10 epochs,
// 8 atoms, one atom batch per domain, classifiers on hard labels),
// --shared-atom-batch draws one batch for all domains, --hard-labels alone
// only changes the classifiers' labels; the report records the settings.
func TestFitSettingsFlags(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	paper := func(shared bool) func(fitReport) bool {
		return func(rep fitReport) bool {
			s := rep.Settings
			return rep.Epochs == 3 && s.Atoms == 8 && s.Init.String() == "gaussian" && s.RawAlphaGradient &&
				s.PlateauTol < 0 && s.SharedAtomBatch == shared && s.HardLabels && s.BalancedTarget
		}
	}
	hard := func(want bool) func(fitReport) bool {
		return func(rep fitReport) bool {
			s := rep.Settings
			return s.HardLabels == want && !s.RawAlphaGradient && !s.SharedAtomBatch && s.Init.String() == "data"
		}
	}
	for i, tc := range []struct {
		flags []string
		ok    func(fitReport) bool
	}{
		{[]string{"--paper", "--epochs", "3"}, paper(false)},
		{[]string{"--paper", "--epochs", "3", "--shared-atom-batch"}, paper(true)},
		{[]string{"--epochs", "2", "--plateau-tol", "0"}, func(rep fitReport) bool {
			return hard(false)(rep) && rep.TargetClasses == nil && !rep.Settings.BalancedTarget
		}},
		{[]string{"--epochs", "2", "--plateau-tol", "0", "--balanced-target"}, func(rep fitReport) bool {
			return hard(false)(rep) && rep.TargetClasses == nil && rep.Settings.BalancedTarget
		}},
		{[]string{"--paper", "--epochs", "3", "--balanced-target=false"}, func(rep fitReport) bool {
			return rep.Settings.Atoms == 8 && !rep.Settings.BalancedTarget
		}},
		{[]string{"--epochs", "2", "--plateau-tol", "0", "--hard-labels"}, hard(true)},
		{[]string{"--epochs", "2", "--plateau-tol", "0", "--reconstruction-block", "64"}, func(rep fitReport) bool {
			return hard(false)(rep) && rep.Settings.ReconstructionBlock == 64
		}},
		{[]string{"--epochs", "2", "--plateau-tol", "0", "--estimate-shift"}, func(rep fitReport) bool {
			tc := rep.TargetClasses
			return hard(false)(rep) && rep.Settings.EstimateShift && tc != nil && len(tc.Estimate) == len(rep.Classes) && tc.Error >= 0
		}},
	} {
		out := filepath.Join(dir, fmt.Sprint("out", i))
		args := append([]string{"fit", "--out", out, "--target", tgt, "--quiet"}, tc.flags...)
		for _, s := range src {
			args = append(args, "--source", s)
		}
		if code, _, stderr := runCLI(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.flags, code, stderr)
		}
		if rep := readReport(t, out); !tc.ok(*rep) {
			t.Errorf("%v: settings not applied: %d epochs, %+v", tc.flags, rep.Epochs, rep.Settings)
		}
	}
}

func TestFitBadInput(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, false)
	p := synth.Generate(synth.Default(), 2)
	unlabeled := filepath.Join(dir, "nolabel.csv")
	writeCSV(t, unlabeled, p.Sources[0], false, nil)
	nan := filepath.Join(dir, "nan.csv")
	writeCSV(t, nan, p.Sources[0], true, func(i int, row []string) []string {
		if i == 7 {
			row[1] = "NaN"
		}
		return row
	})
	three := filepath.Join(dir, "three.csv")
	os.WriteFile(three, []byte("a,b,c,label\n1,2,3,1\n2,3,4,2\n"), 0o644)
	empty := filepath.Join(dir, "empty.csv")
	os.WriteFile(empty, nil, 0o644)
	single := filepath.Join(dir, "single.csv")
	writeCSV(t, single, p.Sources[1], true, func(i int, row []string) []string { row[2] = "10"; return row })
	swapped := filepath.Join(dir, "swapped.csv")
	writeCSV(t, swapped, p.Sources[1], true, func(i int, row []string) []string { return []string{row[1], row[0], row[2]} })
	if b, err := os.ReadFile(swapped); err == nil {
		os.WriteFile(swapped, []byte("x2,x1,label\n"+strings.SplitN(string(b), "\n", 2)[1]), 0o644)
	}
	huge := filepath.Join(dir, "huge.csv")
	writeCSV(t, huge, p.Sources[1], true, func(i int, row []string) []string {
		if i == 4 {
			row[1] = "-3e120"
		}
		return row
	})
	base := func(extra ...string) []string {
		a := []string{"fit", "--quiet", "--target", tgt}
		return append(a, extra...)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no source", base("--out", filepath.Join(dir, "o1")), 2, "--source"},
		{"no out", base("--source", src[0]), 2, "--out"},
		{"out under a file", base("--source", src[0], "--out", filepath.Join(tgt, "run", "x")), 2, "is not a directory"},
		{"unlabeled source", base("--source", unlabeled, "--out", filepath.Join(dir, "o2")), 1, "nolabel.csv has no labels"},
		{"NaN", base("--source", nan, "--missing", "error", "--out", filepath.Join(dir, "o3")), 1, "nan.csv: line 9, column \"x2\": \"NaN\" is a missing value"},
		{"missing policy", base("--source", src[0], "--missing", "zero", "--out", filepath.Join(dir, "o3")), 2, "unknown missing-value policy \"zero\""},
		{"atoms 0", base("--source", src[0], "--atoms", "0", "--out", filepath.Join(dir, "o3")), 2, `invalid value "0" for flag -atoms: want a positive number of atoms K, +M for M ≥ 0 atoms beyond the number of sources, or auto`},
		{"atoms +x", base("--source", src[0], "--atoms", "+x", "--out", filepath.Join(dir, "o3")), 2, `invalid value "+x" for flag -atoms`},
		{"atoms auto one source", base("--source", src[0], "--atoms", "auto", "--out", filepath.Join(dir, "o3")), 2, "--atoms auto holds each source out in turn, so it needs at least 2 --source"},
		{"atoms +1 gmm", base("--source", src[0], "--atoms", "+1", "--method", "gmm", "--out", filepath.Join(dir, "o3")), 2, "--atoms +1: --method gmm takes a number of atoms K"},
		{"samples 0", base("--source", src[0], "--samples", "0", "--out", filepath.Join(dir, "o3")), 2, "--samples 0: need a positive number; leave the flag out"},
		{"batch 0", base("--source", src[0], "--batch", "0", "--out", filepath.Join(dir, "o3")), 2, "--batch 0: need a positive number; leave the flag out"},
		{"epochs 0", base("--source", src[0], "--epochs", "0", "--out", filepath.Join(dir, "o3")), 2, "--epochs 0: need a positive number; leave the flag out"},
		{"reconstruction-block 0", base("--source", src[0], "--reconstruction-block", "0", "--out", filepath.Join(dir, "o3")), 2, "--reconstruction-block 0: need a block size, or -1 for one barycenter; leave the flag out"},
		{"samples negative", base("--source", src[0], "--samples", "-5", "--out", filepath.Join(dir, "o3")), 2, "--samples -5: need a positive number"},
		{"dimensions", base("--source", src[0], "--source", three, "--out", filepath.Join(dir, "o4")), 1, "three.csv"},
		{"empty", base("--source", empty, "--out", filepath.Join(dir, "o5")), 1, "empty.csv"},
		{"single class", base("--source", single, "--out", filepath.Join(dir, "o6")), 1, "single class"},
		{"K", base("--source", src[0], "--atoms", "-2", "--out", filepath.Join(dir, "o7")), 2, `invalid value "-2" for flag -atoms`},
		{"block", base("--source", src[0], "--reconstruction-block", "-3", "--out", filepath.Join(dir, "o12")), 2, "--reconstruction-block -3"},
		{"batch", base("--source", src[0], "--samples", "30", "--batch", "60", "--out", filepath.Join(dir, "o8")), 1, "larger than"},
		{"scale", base("--source", src[0], "--scale", "log", "--out", filepath.Join(dir, "o9")), 2, "log"},
		{"huge unscaled", base("--source", src[0], "--source", huge, "--scale", "none", "--out", filepath.Join(dir, "o18")), 2, "huge.csv: row 5, feature 2 is -3e+120: with --scale none"},
		{"missing", base("--source", filepath.Join(dir, "nope.csv"), "--out", filepath.Join(dir, "o10")), 1, "nope.csv"},
		{"validate one source", base("--source", src[0], "--validate", "--out", filepath.Join(dir, "o11")), 2, "at least 2 --source"},
		{"same file twice", base("--source", src[0], "--source", filepath.Join(dir, ".", filepath.Base(src[0])), "--out", filepath.Join(dir, "o13")), 2, "are the same file"},
		{"source as target", base("--source", tgt, "--out", filepath.Join(dir, "o14")), 2, "are the same file"},
		{"columns reordered", base("--source", src[0], "--source", swapped, "--out", filepath.Join(dir, "o15")), 1, `column 1 is "x1" in ` + src[0] + ` but "x2" in ` + swapped},
		{"atoms beyond memory", base("--source", src[0], "--atoms", "9223372036854775807", "--out", filepath.Join(dir, "o16")), 1, "--atoms 9223372036854775807, --samples (default 200): a fit of K = 9223372036854775807 atoms of n = 200 points (batches of n_b = 40) would need at least 8.0 EiB with any data"},
		{"samples beyond memory", base("--source", src[0], "--samples", "9223372036854775807", "--out", filepath.Join(dir, "o17")), 1, "--samples 9223372036854775807, --atoms (default 1): a fit of K = 1 atoms of n = 9223372036854775807 points (batches of n_b = 40) would need at least 8.0 EiB with any data"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, c.code, stderr, c.want)
			}
		})
	}
	// A source without some class gets a note (here printed before the
	// settings are refused).
	noThirty := filepath.Join(dir, "nothirty.csv")
	writeCSV(t, noThirty, p.Sources[1], true, func(i int, row []string) []string {
		if row[2] == "30" {
			row[2] = "20"
		}
		return row
	})
	code, _, stderr := runCLI("fit", "--target", tgt, "--source", src[0], "--source", noThirty, "--samples", "30", "--batch", "60", "--out", filepath.Join(dir, "o18"))
	if want := "note: source " + noThirty + " has no rows of class [30] (of [10 20 30])"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("source without a class: exit %d, stderr %q, want %q", code, stderr, want)
	}
	// No failed run left an output directory or temporary files behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestPredictBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.dadil")
	os.WriteFile(bad, []byte("not a model"), 0o644)
	data := filepath.Join(dir, "d.csv")
	os.WriteFile(data, []byte("x1,x2\n1,2\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"predict", "--data", data}, 2, "--model"},
		{[]string{"predict", "--model", bad, "--data", data}, 1, "not a dadil model file"},
		{[]string{"predict", "--model", bad, "--data", data, "--method", "x"}, 2, "--method"},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, stderr)
		}
	}
}

func TestDemo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := runCLI("demo", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	acc := demoAccuracies(stdout)
	if acc["DaDiL-R"] < 95 || acc["DaDiL-E"] < 95 || acc["source-only"] > acc["DaDiL-R"]-30 {
		t.Errorf("accuracies %v", acc)
	}
	checkDemoFigures(t, out)
}

// TestDemoGMM: dadil demo --method gmm fits the GMM methods and draws
// GMM-DaDiL's figures, the same files as DaDiL's.
func TestDemoGMM(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := runCLI("demo", "--method", "gmm", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	acc := demoAccuracies(stdout)
	for _, m := range []string{"GMM-OTDA", "GMM-WBT", "GMM-DaDiL-R", "GMM-DaDiL-E", "GMM-DaDiL-MAP"} {
		if acc[m] < 85 || acc[m] < acc["source-only"]+30 {
			t.Errorf("%s: %.2f%% (source-only %.2f%%)", m, acc[m], acc["source-only"])
		}
	}
	if !strings.Contains(stdout, "GMM-DaDiL: K = 3 atoms of 9 components") {
		t.Errorf("stdout %q", stdout)
	}
	checkDemoFigures(t, out)
	if code, _, stderr := runCLI("demo", "--method", "vae", "--out", out); code != 2 || !strings.Contains(stderr, `--method "vae": want dadil or gmm`) {
		t.Errorf("--method vae: exit %d, %q", code, stderr)
	}
}

// demoAccuracies returns the target accuracies of dadil demo's table, by
// method.
func demoAccuracies(stdout string) map[string]float64 {
	acc := map[string]float64{}
	for _, l := range strings.Split(stdout, "\n") {
		var name string
		var v float64
		if n, _ := fmt.Sscanf(l, "%s %f%%", &name, &v); n == 2 {
			acc[name] = v
		}
	}
	return acc
}

// checkDemoFigures checks that dadil demo wrote its five figures in out.
func checkDemoFigures(t *testing.T, out string) {
	t.Helper()
	for _, f := range []string{"domains.png", "atoms.png", "reconstructions.png", "alpha.png", "loss.png"} {
		st, err := os.Stat(filepath.Join(out, f))
		if err != nil || st.Size() < 10000 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// readReport decodes DIR/report.json of dadil fit.
func readReport(t *testing.T, dir string) *fitReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep fitReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// TestWriteDirAtomicChecksFirst: when one name of the output directory is
// taken by something that is not a regular file, nothing is replaced.
func TestWriteDirAtomicChecksFirst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	os.MkdirAll(filepath.Join(dir, "b.txt", "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("old"), 0o644)
	write := func(s string) func(string) error {
		return func(p string) error { return os.WriteFile(p, []byte(s), 0o644) }
	}
	err := atomicfile.WriteDir(dir, []string{"a.txt", "b.txt"}, map[string]func(string) error{"a.txt": write("new"), "b.txt": write("new")})
	if err == nil || !strings.Contains(err.Error(), "b.txt is a folder, not a regular file") {
		t.Fatalf("error %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "old" {
		t.Errorf("a.txt now holds %q", b)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestFitMissingValues: by default, missing feature values are imputed with
// the sources' means and a note says so; the model then completes new data
// the same way.
func TestFitMissingValues(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	holes := filepath.Join(dir, "holes.csv")
	p := synth.Generate(synth.Default(), 1)
	writeCSV(t, holes, p.Sources[0], true, func(i int, row []string) []string {
		if i%10 == 3 {
			row[1] = "?"
		}
		return row
	})
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI("fit", "--source", holes, "--source", src[1], "--target", tgt, "--out", out, "--epochs", "5")
	if code != 0 || !strings.Contains(stderr, "holes.csv: 30 missing values, imputed with the sources' means") || !strings.Contains(stdout, "target accuracy") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// The model completes new data as the training did: predict reads a
	// labeled file with missing cells and scores it.
	newHoles := filepath.Join(dir, "new-holes.csv")
	writeCSV(t, newHoles, *p.Test, true, func(i int, row []string) []string {
		if i%7 == 2 {
			row[i%2] = []string{"", "NA", "?", "NaN"}[i%4]
		}
		return row
	})
	n, _ := p.Test.X.Dims()
	predictScores(t, filepath.Join(out, "model.dadil"), newHoles, n)

	// --missing drop drops x2, which holes.csv misses: the model reads the
	// two raw columns and uses x1, whatever x2 holds.
	drop := filepath.Join(dir, "drop")
	code, stdout, stderr = runCLI("fit", "--source", holes, "--source", src[1], "--target", tgt, "--out", drop, "--epochs", "5", "--missing", "drop")
	if code != 0 || !strings.Contains(stderr, "holes.csv: 30 missing values, their features dropped") || !strings.Contains(stderr, "1 of 2 features dropped (x2)") {
		t.Fatalf("--missing drop: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if rep := readReport(t, drop); rep.Features != 1 {
		t.Errorf("--missing drop: report of %d features, want 1", rep.Features)
	}
	model := filepath.Join(drop, "model.dadil")
	predictScores(t, model, newHoles, n)
	// A file of the kept column alone has not the raw columns.
	x1 := filepath.Join(dir, "x1.csv")
	os.WriteFile(x1, []byte("x1\n1\n2\n"), 0o644)
	if code, _, perr := runCLI("predict", "--model", model, "--data", x1); code != 1 ||
		!strings.Contains(perr, "x1.csv has 1 features but the model "+model+" was fitted on 2 (and keeps 1 of them") {
		t.Errorf("predict on the kept column alone: exit %d, stderr %q", code, perr)
	}
}

// predictScores runs dadil predict with the model on the labeled data of n
// rows and checks that it predicts every row and reports its accuracy.
func predictScores(t *testing.T, model, data string, n int) {
	t.Helper()
	code, pout, perr := runCLI("predict", "--model", model, "--data", data)
	if lines := strings.Split(strings.TrimSpace(pout), "\n"); code != 0 || len(lines) != n+1 || lines[0] != "row,label" {
		t.Fatalf("predict %s with %s: exit %d, %d lines, stderr %q", data, model, code, len(lines), perr)
	}
	if want := "accuracy against the labels in " + data + ": "; !strings.Contains(perr, want) {
		t.Errorf("predict %s with %s: stderr %q, want %q", data, model, perr, want)
	}
}

// TestFitPredictClassifiers: the models of every --classifier are saved,
// and dadil predict reproduces fit's predictions with them.
func TestFitPredictClassifiers(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	for _, c := range []string{"knn", "mlp", "softmax-cv"} {
		t.Run(c, func(t *testing.T) {
			out := filepath.Join(dir, c)
			args := []string{"fit", "--out", out, "--target", tgt, "--epochs", "3", "--samples", "60", "--batch", "30", "--classifier", c, "--quiet"}
			for _, s := range src {
				args = append(args, "--source", s)
			}
			if code, _, stderr := runCLI(args...); code != 0 {
				t.Fatalf("fit: exit %d: %s", code, stderr)
			}
			pb, err := os.ReadFile(filepath.Join(out, "predictions.csv"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(pb)), "\n")
			for col, method := range []string{"r", "e"} {
				code, pout, perr := runCLI("predict", "--model", filepath.Join(out, "model.dadil"), "--data", tgt, "--method", method)
				plines := strings.Split(strings.TrimSpace(pout), "\n")
				if code != 0 || len(plines) != len(lines) {
					t.Fatalf("predict --method %s: exit %d, %d lines: %s", method, code, len(plines), perr)
				}
				for i := 1; i < len(lines); i++ {
					if want, got := strings.Split(lines[i], ",")[1+col], strings.Split(plines[i], ",")[1]; got != want {
						t.Fatalf("--method %s, row %d: predict gives %s, fit gave %s", method, i-1, got, want)
					}
				}
			}
		})
	}
}

// TestFitExportReconstruction: --export-reconstruction writes DaDiL-R's
// training set in the files' units, with soft labels and label values.
func TestFitExportReconstruction(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, false)
	out := filepath.Join(dir, "out")
	args := []string{"fit", "--out", out, "--target", tgt, "--epochs", "4", "--quiet", "--export-reconstruction"}
	for _, s := range src {
		args = append(args, "--source", s)
	}
	if code, _, stderr := runCLI(args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	a, err := npy.ReadNPZ(filepath.Join(out, "reconstruction.npz"))
	if err != nil {
		t.Fatal(err)
	}
	X, P, y, labels := a["X"], a["P"], a["y"], a["labels"]
	n := X.Shape[0]
	if len(X.Shape) != 2 || X.Shape[1] != 2 || n != 300 || !slices.Equal(P.Shape, []int{n, 3}) || len(y.Data) != n || !slices.Equal(labels.Data, []float64{10, 20, 30}) {
		t.Fatalf("shapes X %v, P %v, y %d, labels %v", X.Shape, P.Shape, len(y.Data), labels.Data)
	}
	// The points are in the units of the files: within the range of the
	// synthetic domains (y between about -2 and 12), not in [0, 1].
	var lo, hi float64
	for i := range n {
		v := X.Data[2*i+1]
		lo, hi = min(lo, v), max(hi, v)
		var s float64
		best := 0
		for k := range 3 {
			s += P.Data[3*i+k]
			if P.Data[3*i+k] > P.Data[3*i+best] {
				best = k
			}
		}
		if math.Abs(s-1) > 1e-9 || y.Data[i] != labels.Data[best] {
			t.Fatalf("row %d: labels sum to %v, label %v for probabilities %v", i, s, y.Data[i], P.Data[3*i:3*i+3])
		}
	}
	if hi-lo < 4 {
		t.Errorf("the second feature spans [%g, %g]: not in the files' units", lo, hi)
	}
	b, err := os.ReadFile(filepath.Join(out, "reconstruction.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != "x1,x2,p_10,p_20,p_30,label" || len(lines) != n+1 {
		t.Errorf("CSV header %q, %d lines", lines[0], len(lines))
	}
	checkTraining(t, out, X, len(src))
}

// checkTraining checks training.npz and training.csv in out: the
// reconstruction's points X first (source 0), then rows of every one of
// the sources sources (1, 2, …, in order) with one-hot labels, the
// weights summing to 1 and the two halves equal.
func checkTraining(t *testing.T, out string, X *npy.Array, sources int) {
	t.Helper()
	a, err := npy.ReadNPZ(filepath.Join(out, "training.npz"))
	if err != nil {
		t.Fatal(err)
	}
	TX, TP, w, from := a["X"], a["P"], a["weight"], a["source"]
	n, m := X.Shape[0], TX.Shape[0]
	if m <= n || !slices.Equal(TX.Data[:len(X.Data)], X.Data) || len(w.Data) != m || len(from.Data) != m {
		t.Fatalf("training set of %d rows for a reconstruction of %d", m, n)
	}
	var half [2]float64
	for i, l := range from.Data {
		moved := i >= n
		if moved != (l > 0) || l > float64(sources) || i > n && l < from.Data[i-1] {
			t.Fatalf("row %d from source %v", i, l)
		}
		if moved && slices.Max(TP.Data[3*i:3*i+3]) != 1 {
			t.Fatalf("moved row %d: labels %v, not one-hot", i, TP.Data[3*i:3*i+3])
		}
		half[min(i/n, 1)] += w.Data[i]
	}
	if math.Abs(half[0]-0.5) > 1e-9 || math.Abs(half[1]-0.5) > 1e-9 {
		t.Errorf("weights of the reconstruction %v and of the moved rows %v, want 0.5 each", half[0], half[1])
	}
	b, err := os.ReadFile(filepath.Join(out, "training.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != "x1,x2,p_10,p_20,p_30,label,weight,source" || len(lines) != m+1 {
		t.Errorf("training.csv header %q, %d lines", lines[0], len(lines))
	}
}

// TestFitL2: --l2 reaches the softmax classifier (the report names it, and
// a much larger penalty shrinks the weights), --l2 auto makes DaDiL choose
// it (the report gives the choice), and --l2 is a usage error with another
// classifier or a penalty that is not positive.
func TestFitL2(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	fit := func(out string, extra ...string) (int, string) {
		args := []string{"fit", "--out", filepath.Join(dir, out), "--target", tgt, "--epochs", "3", "--samples", "60", "--batch", "30", "--quiet"}
		for _, s := range src {
			args = append(args, "--source", s)
		}
		code, _, stderr := runCLI(append(args, extra...)...)
		return code, stderr
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--l2", "0"}, `--l2 "0": want a positive number or auto`},
		{[]string{"--l2", ""}, `--l2 "": want a positive number or auto`},
		{[]string{"--l2", "-1e-3"}, `--l2 "-1e-3": want a positive number or auto`},
		{[]string{"--l2", "small"}, `--l2 "small": want a positive number or auto`},
		{[]string{"--l2", "0.1", "--classifier", "knn"}, "--l2 sets the penalty of --classifier softmax, not of knn"},
		{[]string{"--l2", "auto", "--classifier", "mlp"}, "--l2 sets the penalty of --classifier softmax, not of mlp"},
	} {
		if code, stderr := fit("bad", c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
	report := func(out string) fitReport {
		b, err := os.ReadFile(filepath.Join(dir, out, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var r fitReport
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		out, classifier, scaling string
		args                     []string
	}{
		{"default", "softmax, λ = 0.01", "standard", nil},
		{"minmax", "softmax", "minmax", []string{"--scale", "minmax"}},
		{"paper", "softmax", "minmax", []string{"--paper", "--atoms", "2"}},
		{"paper-standard", "softmax, λ = 0.01", "standard", []string{"--paper", "--atoms", "2", "--scale", "standard"}},
		{"strong", "softmax, λ = 10", "standard", []string{"--l2", "10"}},
		{"auto", "softmax, λ = %g, chosen on the sources", "standard", []string{"--l2", "auto"}},
	} {
		if code, stderr := fit(c.out, c.args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		r := report(c.out)
		if c.out == "auto" && r.Penalty != nil {
			c.classifier = fmt.Sprintf(c.classifier, r.Penalty.L2)
		}
		if r.Classifier != c.classifier || r.Scaling != c.scaling {
			t.Errorf("%v: report classifier %q and scaling %q, want %q and %q", c.args, r.Classifier, r.Scaling, c.classifier, c.scaling)
		}
		if auto := c.out == "auto"; (r.Penalty != nil) != auto || auto && (len(r.Penalty.Score) != len(classify.DefaultL2Grid) || !r.Settings.ChoosePenalty) {
			t.Errorf("%v: report penalty %+v, settings.ChoosePenalty %v", c.args, r.Penalty, r.Settings.ChoosePenalty)
		}
	}
	m0, err := modelfile.Load(filepath.Join(dir, "default", "model.dadil"))
	if err != nil {
		t.Fatal(err)
	}
	m1, err := modelfile.Load(filepath.Join(dir, "strong", "model.dadil"))
	if err != nil {
		t.Fatal(err)
	}
	w0, w1 := m0.Model.R.(*classify.Softmax).W, m1.Model.R.(*classify.Softmax).W
	if n0, n1 := mat.Norm(w0, 2), mat.Norm(w1, 2); !(n1 < n0/2) {
		t.Errorf("‖W‖ with --l2 10 is %g, with the default %g: want a much smaller norm", n1, n0)
	}
}

// TestTargetClassesLine: the line says where the proportions come from
// and whether the batches follow them.
func TestTargetClassesLine(t *testing.T) {
	for _, c := range []struct {
		tc   dictionary.TargetClasses
		want string
	}{
		{dictionary.TargetClasses{Estimate: []float64{0.7, 0.3}, Error: 0.1, Drawn: []float64{0.6, 0.4}},
			"target class proportions estimated 0.700 0.300 (error 0.100): atom batches drawn in 0.600 0.400"},
		{dictionary.TargetClasses{Estimate: []float64{0.55, 0.45}, Error: 0.2},
			"target class proportions estimated 0.550 0.450 (error 0.200): atom batches class-balanced"},
		{dictionary.TargetClasses{Shared: []float64{0.9, 0.1}, Drawn: []float64{0.9, 0.1}},
			"target class proportions shared by the sources 0.900 0.100: atom batches drawn in 0.900 0.100"},
		{dictionary.TargetClasses{Shared: []float64{0.9, 0.1}, Estimate: []float64{0.5, 0.5}, Error: 0.3, Drawn: []float64{0.8, 0.2}},
			"target class proportions shared by the sources 0.900 0.100, estimated 0.500 0.500 (error 0.300): atom batches drawn in 0.800 0.200"},
	} {
		if got := targetClassesLine(&c.tc); got != c.want {
			t.Errorf("targetClassesLine(%+v) = %q, want %q", c.tc, got, c.want)
		}
	}
}

// fitSynth runs dadil fit on the synthetic files with 2 epochs and the
// flags given, and returns its report and the sources.
func fitSynth(t *testing.T, flags ...string) (*fitReport, []string) {
	t.Helper()
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	out := filepath.Join(dir, "out")
	args := append([]string{"fit", "--out", out, "--target", tgt, "--epochs", "2", "--plateau-tol", "0", "--quiet"}, flags...)
	for _, s := range src {
		args = append(args, "--source", s)
	}
	if code, _, stderr := runCLI(args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	return readReport(t, out), src
}

// checkAtoms fails the test unless every domain's α has k atoms.
func checkAtoms(t *testing.T, rep *fitReport, k int) {
	t.Helper()
	for name, a := range rep.Alpha {
		if len(a) != k {
			t.Errorf("α of %s has %d atoms, want %d", name, len(a), k)
		}
	}
}

// TestFitExtraAtoms: --atoms +1 fits one atom more than there are sources.
func TestFitExtraAtoms(t *testing.T) {
	rep, src := fitSynth(t, "--atoms", "+1")
	if len(rep.Alpha) != len(src)+1 {
		t.Fatalf("α of %d domains, want %d", len(rep.Alpha), len(src)+1)
	}
	checkAtoms(t, rep, len(src)+1)
}

// TestFitAutoAtoms: --atoms auto scores K = N and N + 1 by held-out
// sources, says so, and fits the K it chose.
func TestFitAutoAtoms(t *testing.T) {
	rep, src := fitSynth(t, "--atoms", "auto")
	notes := strings.Join(rep.Notes, " ")
	_, after, ok := strings.Cut(notes, "--atoms auto: DaDiL-R's balanced accuracy on the held-out sources is ")
	if !ok {
		t.Fatalf("notes %q lack the choice of --atoms auto", notes)
	}
	var a, b float64
	var n, n1, k int
	if _, err := fmt.Sscanf(after, "%f with K = %d atoms (the number of sources), %f with K = %d: K = %d", &a, &n, &b, &n1, &k); err != nil {
		t.Fatalf("note %q: %v", after, err)
	}
	want := n
	if b > a {
		want = n1
	}
	if n != len(src) || n1 != n+1 || k != want {
		t.Fatalf("note %q: want K = %d and %d scored and K = %d chosen", after, len(src), len(src)+1, want)
	}
	checkAtoms(t, rep, k)
}
