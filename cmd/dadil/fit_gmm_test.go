package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/modelfile"
	"github.com/dadil/dadil/npy"
)

// runFitGMM runs dadil fit --method gmm on the synthetic files with the extra
// flags into out, and returns the report.
func runFitGMM(t *testing.T, src []string, tgt, out string, extra ...string) *gmmFitReport {
	t.Helper()
	args := append([]string{"fit", "--method", "gmm", "--out", out, "--target", tgt, "--quiet"}, extra...)
	for _, s := range src {
		args = append(args, "--source", s)
	}
	code, _, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("fit %v: exit %d: %s", extra, code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep gmmFitReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// readLines returns the lines of a CSV file or output.
func readLines(t *testing.T, s string) []string {
	t.Helper()
	return strings.Split(strings.TrimSpace(s), "\n")
}

// TestFitPredictGMM: dadil fit --method gmm fits GMM-DaDiL on the
// synthetic problem, labels its target well with the three predictors,
// reports the fit, and dadil predict reproduces every column with the
// saved model.
func TestFitPredictGMM(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	out := filepath.Join(dir, "out")
	args := []string{"fit", "--method", "gmm", "--out", out, "--target", tgt}
	for _, s := range src {
		args = append(args, "--source", s)
	}
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "target accuracy: GMM-DaDiL-R") || !strings.Contains(stderr, "fitted in") || !strings.Contains(stderr, "wrote "+out) {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
	rep := runFitGMM(t, src, tgt, out)
	t.Logf("target accuracy %v, %d epochs (%s)", rep.TargetAccuracy, rep.Epochs, rep.Stopped)
	// The library's own test asks 85% of both predictors on this problem
	// (adapt.TestGMMDaDiLOnSynthetic); the MAP rule is no worse here.
	for _, k := range []string{"gmm_dadil_r", "gmm_dadil_e", "gmm_dadil_map"} {
		if rep.TargetAccuracy[k] < 85 {
			t.Errorf("%s: target accuracy %.2f%%, want ≥ 85%%", k, rep.TargetAccuracy[k])
		}
	}
	s := rep.Settings
	if rep.Method != "gmm" || s.Dictionary.Atoms != 3 || s.Dictionary.ComponentsPerClass != 3 || s.Dictionary.Epochs != 200 ||
		s.Dictionary.LearningRate != 0.05 || s.EM.VarFloor != 0.1 || s.EM.Tol != 1e-3 || s.Seed != 1 {
		t.Errorf("report: method %q, settings %+v", rep.Method, s)
	}
	if len(rep.Loss) != rep.Epochs || rep.Epochs < 1 || len(rep.Alpha) != 4 || rep.Components[src[0]] != 9 || rep.Components[tgt] != 9 || rep.Seconds["total"] <= 0 {
		t.Errorf("report: %d losses for %d epochs, α %v, components %v, seconds %v", len(rep.Loss), rep.Epochs, rep.Alpha, rep.Components, rep.Seconds)
	}
	pb, err := os.ReadFile(filepath.Join(out, "predictions.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, string(pb))
	if lines[0] != "row,gmm_dadil_r,gmm_dadil_e,gmm_dadil_map" || len(lines) != 301 {
		t.Fatalf("predictions: header %q, %d lines", lines[0], len(lines))
	}
	model := filepath.Join(out, "model.dadil")
	for col, method := range []string{"r", "e", "map"} {
		code, pout, perr := runCLI("predict", "--model", model, "--data", tgt, "--method", method)
		plines := readLines(t, pout)
		if code != 0 || len(plines) != len(lines) || plines[0] != "row,label" {
			t.Fatalf("predict --method %s: exit %d, %d lines: %s", method, code, len(plines), perr)
		}
		for i := 1; i < len(lines); i++ {
			if want, got := strings.Split(lines[i], ",")[1+col], strings.Split(plines[i], ",")[1]; got != want {
				t.Fatalf("--method %s, row %d: predict gives %s, fit gave %s", method, i-1, got, want)
			}
		}
		if want := fmt.Sprintf("accuracy against the labels in %s: %.2f%% (", tgt, rep.TargetAccuracy[gmmPredictors[col].column]); !strings.Contains(perr, want) {
			t.Errorf("predict --method %s: stderr %q, want %q", method, perr, want)
		}
	}
	f, err := modelfile.Load(model)
	if err != nil || f.GMM == nil || f.Model != nil {
		t.Fatalf("model: %v", err)
	}
	if len(f.GMM.E) != 3 {
		t.Fatalf("the model holds %d GMM-DaDiL-E classifiers, want one per atom (3)", len(f.GMM.E))
	}
	// --method e-map: the atoms' MAP rules weighed by α_T.
	d, _, err := f.ReadData(tgt, nil)
	if err != nil {
		t.Fatal(err)
	}
	var P mat.Dense
	if err := f.GMM.Dict.EnsembleProba(&P, d.X, f.GMM.Dict.Alpha.RawRowView(3)); err != nil {
		t.Fatal(err)
	}
	code, pout, perr := runCLI("predict", "--model", model, "--data", tgt, "--method", "e-map")
	plines := readLines(t, pout)
	if code != 0 || len(plines) != len(lines) {
		t.Fatalf("predict --method e-map: exit %d, %d lines: %s", code, len(plines), perr)
	}
	for i, c := range classify.Argmax(&P) {
		if want, got := fmt.Sprint(f.Labels[c]), strings.Split(plines[i+1], ",")[1]; got != want {
			t.Fatalf("--method e-map, row %d: predict gives %s, the atoms' MAP rules %s", i, got, want)
		}
	}
}

// TestFitGMMFlags: the GMM-DaDiL flags, --atoms and --plateau-tol reach
// the fit and its report; --validate scores the held-out sources.
func TestFitGMMFlags(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, false)
	rep := runFitGMM(t, src, tgt, filepath.Join(dir, "a"), "--gmm-components", "2", "--gmm-target-components", "5", "--gmm-var-floor", "0.2",
		"--gmm-tol", "0.01", "--gmm-epochs", "7", "--gmm-lr", "0.02", "--gmm-ensemble-transport", "none", "--gmm-transport", "none", "--atoms", "2", "--plateau-tol", "0", "--seed", "5")
	s := rep.Settings
	if s.Dictionary.ComponentsPerClass != 2 || s.TargetComponents != 5 || s.EM.VarFloor != 0.2 || s.EM.Tol != 0.01 || s.Dictionary.Epochs != 7 ||
		s.Dictionary.LearningRate != 0.02 || s.EnsembleTransport != dictionary.TransportNone || s.Transport != dictionary.TransportNone || s.Dictionary.Atoms != 2 || s.Dictionary.PlateauTol >= 0 || s.Seed != 5 || s.Dictionary.Seed != 5 {
		t.Errorf("settings %+v", s)
	}
	if rep.Epochs != 7 || rep.Stopped != "epochs" || rep.Components[tgt] != 5 || rep.Components[src[1]] != 6 || len(rep.Alpha[tgt]) != 2 {
		t.Errorf("%d epochs stopped by %s, components %v, α_T %v", rep.Epochs, rep.Stopped, rep.Components, rep.Alpha[tgt])
	}
	if rep.TargetAccuracy != nil {
		t.Errorf("accuracy %v without target labels", rep.TargetAccuracy)
	}
	// --gmm-dims 1 projects the 2 features onto 1 direction: the model
	// keeps the projection, classifies the target's rows through it and
	// exports its reconstruction in the 2 features.
	rep = runFitGMM(t, src, tgt, filepath.Join(dir, "p"), "--gmm-dims", "1", "--gmm-epochs", "5", "--export-reconstruction")
	if z, err := npy.ReadNPZ(filepath.Join(dir, "p", "reconstruction.npz")); err != nil || z["X"] == nil || z["X"].Shape[1] != 2 || z["mixture_std"].Shape[1] != 2 {
		t.Errorf("--gmm-dims 1 --export-reconstruction: %v", err)
	}
	f, err := modelfile.Load(filepath.Join(dir, "p", "model.dadil"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Settings.Dims != 1 || f.GMM.Projection == nil || f.GMM.Dict.Atoms[0].Dim() != 1 {
		t.Errorf("--gmm-dims 1: settings' dims %d, projection %v, atoms of %d features", rep.Settings.Dims, f.GMM.Projection != nil, f.GMM.Dict.Atoms[0].Dim())
	}
	if code, out, stderr := runCLI("predict", "--model", filepath.Join(dir, "p", "model.dadil"), "--data", tgt); code != 0 || len(readLines(t, out)) < 2 {
		t.Errorf("predict with a projected model: exit %d, %d lines: %s", code, len(readLines(t, out)), stderr)
	}
	rep = runFitGMM(t, src, tgt, filepath.Join(dir, "v"), "--validate", "--gmm-epochs", "30", "--gmm-transport", "none")
	if len(rep.HeldOutSources) != 3 || rep.HeldOutSources[0].Source != src[0] || rep.Seconds["validation"] <= 0 {
		t.Fatalf("held-out scores %+v", rep.HeldOutSources)
	}
	// Sources 1 and 2 differ only by a shift along which the classes do
	// not vary (see TestFitValidate). GMM-DaDiL-R on the reconstruction
	// alone: source 0, rotated, moved by its classes' shifts (the default)
	// would cost it about 10 points here.
	for _, sc := range rep.HeldOutSources[:2] {
		if sc.R < 80 || sc.RBalanced < 80 || sc.RBalanced > 100 {
			t.Errorf("%s held out: R %.2f%% (balanced %.2f%%), E %.2f%%; want R ≥ 80", sc.Source, sc.R, sc.RBalanced, sc.E)
		}
	}
}

// TestFitGMMDeterministic: the saved model does not depend on the number
// of threads.
func TestFitGMMDeterministic(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	var models [][]byte
	for _, procs := range []int{1, 2, 4} {
		out := filepath.Join(dir, fmt.Sprint("p", procs))
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			runFitGMM(t, src, tgt, out, "--gmm-epochs", "40")
		}()
		// Every member of the archive, the manifest without the date
		// of its writing.
		zr, err := zip.OpenReader(filepath.Join(out, "model.dadil"))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for _, m := range zr.File {
			rc, err := m.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(rc)
			rc.Close()
			if m.Name == "manifest.json" {
				data = regexp.MustCompile(`"created": "[^"]*"`).ReplaceAll(data, nil)
			}
			fmt.Fprintf(&b, "%s %d\n", m.Name, len(data))
			b.Write(data)
		}
		zr.Close()
		p, _ := os.ReadFile(filepath.Join(out, "predictions.csv"))
		models = append(models, append(b.Bytes(), p...))
	}
	for i := 1; i < len(models); i++ {
		if !bytes.Equal(models[0], models[i]) {
			t.Errorf("the model fitted with GOMAXPROCS %d differs from that with 1", []int{1, 2, 4}[i])
		}
	}
}

// TestFitGMMBadInput: bad GMM-DaDiL flags, and the flags of the other
// method, are usage errors naming the flag.
func TestFitGMMBadInput(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, false)
	base := func(extra ...string) []string {
		return append([]string{"fit", "--quiet", "--target", tgt, "--source", src[0], "--out", filepath.Join(dir, "o")}, extra...)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"method", base("--method", "vae"), 2, `--method "vae": want dadil or gmm`},
		{"components 0", base("--method", "gmm", "--gmm-components", "0"), 2, "--gmm-components 0: need a positive number; leave the flag out for the default (3)"},
		{"target components 0", base("--method", "gmm", "--gmm-target-components", "0"), 2, "--gmm-target-components 0: need a positive number; leave the flag out for the default (--gmm-components × the number of classes)"},
		{"epochs negative", base("--method", "gmm", "--gmm-epochs", "-1"), 2, "--gmm-epochs -1: need a positive number"},
		{"var floor", base("--method", "gmm", "--gmm-var-floor", "0"), 2, "--gmm-var-floor 0: need a positive number"},
		{"tol", base("--method", "gmm", "--gmm-tol", "NaN"), 2, "--gmm-tol NaN: need a positive number"},
		{"lr", base("--method", "gmm", "--gmm-lr", "-0.1"), 2, "--gmm-lr -0.1: need a positive number"},
		{"dims negative", base("--method", "gmm", "--gmm-dims", "-2"), 2, "--gmm-dims -2: need a number of directions, or 0 to keep the features"},
		{"ensemble transport map", base("--method", "gmm", "--gmm-ensemble-transport", "map"), 2, `--gmm-ensemble-transport "map": want auto, barycenter or none`},
		{"ensemble transport unknown", base("--method", "gmm", "--gmm-ensemble-transport", "atoms"), 2, `--gmm-ensemble-transport "atoms": want auto, barycenter or none`},
		{"transport barycenter", base("--method", "gmm", "--gmm-transport", "barycenter"), 2, `--gmm-transport "barycenter": want auto, none or sources`},
		{"GMM ensemble flag", base("--gmm-ensemble-transport", "none"), 2, "--gmm-ensemble-transport: the --gmm-… flags set --method gmm"},
		{"DaDiL flag", base("--method", "gmm", "--samples", "30"), 2, "--samples applies to --method dadil"},
		{"GMM flag", base("--gmm-epochs", "3"), 2, "--gmm-epochs: the --gmm-… flags set --method gmm"},
		{"memory", base("--method", "gmm", "--max-memory", "1KB"), 1, "--method gmm: the fit would need about"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, c.code, stderr, c.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "o")); !os.IsNotExist(err) {
		t.Errorf("a failed fit left its output: %v", err)
	}
	// The MAP rule belongs to GMM-DaDiL models.
	out := filepath.Join(dir, "dadil")
	if code, _, stderr := runCLI("fit", "--quiet", "--target", tgt, "--source", src[0], "--out", out, "--epochs", "2"); code != 0 {
		t.Fatal(stderr)
	}
	model := filepath.Join(out, "model.dadil")
	if code, _, stderr := runCLI("predict", "--model", model, "--data", tgt, "--method", "map"); code != 2 || !strings.Contains(stderr, "--method map: the model "+model+" is a DaDiL model") {
		t.Errorf("predict --method map with a DaDiL model: exit %d, %q", code, stderr)
	}
}

// TestAdaptGMMFlags: dadil adapt's gmm-dadil and gmm-dadil-e are the fit
// of dadil fit --method gmm with the same flags, and the GMM-DaDiL flags
// reach them and the report.
func TestAdaptGMMFlags(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	for i, flags := range [][]string{nil, {"--gmm-components", "2", "--gmm-epochs", "9", "--gmm-var-floor", "0.3", "--gmm-ensemble-transport", "none", "--seed", "3"}} {
		fit, ad := filepath.Join(dir, fmt.Sprint("fit", i)), filepath.Join(dir, fmt.Sprint("adapt", i))
		runFitGMM(t, src, tgt, fit, flags...)
		if code, _, stderr := runCLI(adaptArgs(src, tgt, append([]string{"--methods", "gmm-dadil,gmm-dadil-e", "--out", ad}, flags...)...)...); code != 0 {
			t.Fatalf("adapt %v: exit %d: %s", flags, code, stderr)
		}
		rows, want := readPredictions(t, ad), readCSVRows(t, filepath.Join(fit, "predictions.csv"))
		if len(rows) != len(want) || rows[0][1] != "gmm-dadil" || rows[0][2] != "gmm-dadil-e" {
			t.Fatalf("adapt %v: predictions %v", flags, rows[0])
		}
		for r := 1; r < len(rows); r++ {
			if rows[r][1] != want[r][1] || rows[r][2] != want[r][2] {
				t.Fatalf("adapt %v, row %d: %v, fit gave %v", flags, r-1, rows[r], want[r])
			}
		}
		rep := readAdaptReport(t, ad)
		if rep.GMM == nil || rep.DaDiL != nil {
			t.Fatalf("adapt %v: report settings GMM %v, DaDiL %v", flags, rep.GMM, rep.DaDiL)
		}
		if i == 1 && (rep.GMM.Dictionary.ComponentsPerClass != 2 || rep.GMM.Dictionary.Epochs != 9 || rep.GMM.EM.VarFloor != 0.3 || rep.GMM.EnsembleTransport != dictionary.TransportNone || rep.GMM.Seed != 3) {
			t.Errorf("adapt %v: settings %+v", flags, rep.GMM)
		}
	}
	if code, _, stderr := runCLI(adaptArgs(src, tgt, "--methods", "gmm-dadil", "--gmm-tol", "0")...); code != 2 || !strings.Contains(stderr, "--gmm-tol 0: need a positive number") {
		t.Errorf("--gmm-tol 0: exit %d, %q", code, stderr)
	}
}

// TestFitGMMExportReconstruction: --method gmm --export-reconstruction
// writes the target's reconstructed mixture and the rows drawn from it,
// both in the files' units: the rows drawn from every component have
// about its mean and standard deviation, and they span the files' range,
// not the scaled [0, 1]; and GMM-DaDiL-R's whole training set, those rows
// then the sources' moved rows (checkTraining). A later run without the
// flag removes the files.
func TestFitGMMExportReconstruction(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, false)
	out := filepath.Join(dir, "out")
	runFitGMM(t, src, tgt, out, "--export-reconstruction")
	a, err := npy.ReadNPZ(filepath.Join(out, "reconstruction.npz"))
	if err != nil {
		t.Fatal(err)
	}
	X, P, y, comp := a["X"], a["P"], a["y"], a["component"]
	W, M, S, MP, My := a["mixture_weights"], a["mixture_means"], a["mixture_std"], a["mixture_P"], a["mixture_y"]
	const n, d, K, c = 300, 2, 9, 3 // 100 rows and 3 components per class
	if !slices.Equal(X.Shape, []int{n, d}) || !slices.Equal(P.Shape, []int{n, c}) || len(y.Data) != n || len(comp.Data) != n ||
		!slices.Equal(a["labels"].Data, []float64{10, 20, 30}) || len(W.Data) != K || !slices.Equal(M.Shape, []int{K, d}) ||
		!slices.Equal(S.Shape, []int{K, d}) || !slices.Equal(MP.Shape, []int{K, c}) || len(My.Data) != K {
		t.Fatalf("shapes X %v, P %v, y %d, component %d, weights %d, means %v, std %v, P %v, y %d",
			X.Shape, P.Shape, len(y.Data), len(comp.Data), len(W.Data), M.Shape, S.Shape, MP.Shape, len(My.Data))
	}
	var lo, hi float64
	sum, sq, count := make([]float64, K*d), make([]float64, K*d), make([]float64, K)
	for i := range n {
		k := int(comp.Data[i])
		if k < 0 || k >= K || !slices.Equal(P.Data[c*i:c*i+c], MP.Data[c*k:c*k+c]) || y.Data[i] != My.Data[k] {
			t.Fatalf("row %d: component %d, labels %v, label %v", i, k, P.Data[c*i:c*i+c], y.Data[i])
		}
		count[k]++
		for j := range d {
			v := X.Data[d*i+j]
			sum[d*k+j] += v
			sq[d*k+j] += v * v
		}
		lo, hi = min(lo, X.Data[d*i+1]), max(hi, X.Data[d*i+1])
	}
	if hi-lo < 4 {
		t.Errorf("the second feature spans [%g, %g]: not in the files' units", lo, hi)
	}
	for k := range K {
		if count[k] < 10 {
			continue
		}
		for j := range d {
			mean := sum[d*k+j] / count[k]
			sd := math.Sqrt(max(sq[d*k+j]/count[k]-mean*mean, 0))
			m, s := M.Data[d*k+j], S.Data[d*k+j]
			if math.Abs(mean-m) > 5*s/math.Sqrt(count[k]) || sd < s/2 || sd > 2*s {
				t.Errorf("component %d, feature %d: %v rows of mean %.3g and deviation %.3g, the mixture's %.3g and %.3g",
					k, j, count[k], mean, sd, m, s)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "reconstruction.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := readLines(t, string(b)); lines[0] != "x1,x2,p_10,p_20,p_30,label,component" || len(lines) != n+1 {
		t.Errorf("reconstruction.csv: header %q, %d lines", lines[0], len(lines))
	}
	b, err = os.ReadFile(filepath.Join(out, "reconstruction_mixture.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := readLines(t, string(b)); lines[0] != "weight,mean_x1,mean_x2,std_x1,std_x2,p_10,p_20,p_30,label" || len(lines) != K+1 {
		t.Errorf("reconstruction_mixture.csv: header %q, %d lines", lines[0], len(lines))
	}
	checkTraining(t, out, X, len(src))
	runFitGMM(t, src, tgt, out)
	for _, f := range []string{"reconstruction.npz", "reconstruction.csv", "reconstruction_mixture.csv", "training.npz", "training.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); !os.IsNotExist(err) {
			t.Errorf("%s after a run without --export-reconstruction: %v", f, err)
		}
	}
}
