package main

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/sysmem"
	"github.com/dadil/dadil/modelfile"
	"github.com/dadil/dadil/npy"
)

// gmmFitReport is DIR/report.json of dadil fit --method gmm: the keys of
// fitReport that apply to GMM-DaDiL, and the components of the domains'
// mixtures.
type gmmFitReport struct {
	Method string `json:"method"`
	reportHeader
	Settings modelfile.GMMSettings `json:"settings"`
	Notes    []string              `json:"notes,omitempty"`
	Epochs   int                   `json:"epochs"`
	Stopped  string                `json:"stopped"`
	Loss     []float64             `json:"loss"`
	Alpha    map[string][]float64  `json:"alpha"`
	// Components holds the number of components of every domain's
	// mixture, which the dictionary is learned from.
	Components map[string]int     `json:"components"`
	Seconds    map[string]float64 `json:"seconds"`
	// TargetAccuracy (percent) holds, when the target's labels are
	// known, the scores of gmm_dadil_r, gmm_dadil_e and gmm_dadil_map.
	TargetAccuracy      map[string]float64 `json:"target_accuracy,omitempty"`
	UnknownTargetLabels []int              `json:"unknown_target_labels,omitempty"`
	// HeldOutSources holds, with --validate, the accuracy of
	// GMM-DaDiL-R and GMM-DaDiL-E on every source held out as the target
	// of the others.
	HeldOutSources []gmmHeldOutScore `json:"held_out_sources,omitempty"`
}

// gmmHeldOutScore is one source's score in held-out-source validation.
type gmmHeldOutScore struct {
	Source    string  `json:"source"`
	R         float64 `json:"gmm_dadil_r"` // percent of the source's rows
	E         float64 `json:"gmm_dadil_e"`
	RBalanced float64 `json:"gmm_dadil_r_balanced"`
	EBalanced float64 `json:"gmm_dadil_e_balanced"`
}

// gmmPredictors are the columns of predictions.csv and the keys of the
// target accuracies of dadil fit --method gmm, and the names of dadil
// predict --method.
var gmmPredictors = []struct{ column, method string }{
	{"gmm_dadil_r", "r"}, {"gmm_dadil_e", "e"}, {"gmm_dadil_map", "map"},
}

// runGMM fits GMM-DaDiL on the loaded domains, reports and writes it.
func (c *fitCommand) runGMM(e *env, ld *dataset.Loaded, nt *noter, start time.Time) error {
	trainer, err := c.dict.trainer(ld.Scaler.Kind)
	if err != nil {
		return err
	}
	if c.dict.extraAtoms > 0 || c.dict.autoAtoms {
		return usageError{fmt.Errorf("--atoms %s: --method gmm takes a number of atoms K", c.fs.Lookup("atoms").Value)}
	}
	m := c.gmm.method(c.dict.atoms, c.dict.plateau, c.dict.seed, trainer)
	m.BalancedTarget = c.dict.balancedTarget
	lim := memoryLimit(c.dict.maxBytes)
	if err := checkGMMMemory(ld.Problem, lim); err != nil {
		return err
	}
	defer useMemoryLimit(lim)()
	t0 := time.Now()
	if err := m.Fit(ld.Problem); err != nil {
		return err
	}
	fit := time.Since(t0).Seconds()
	if !c.quiet {
		lo, hi := componentRange(m)
		fmt.Fprintf(e.stderr, "fitted in %.1f s (mixtures of %d to %d components, %d epochs, stopped by %s)\n", fit, lo, hi, m.Dict.Epochs, dictionary.StopReason(m.Dict.Status))
		if tc := m.Dict.Settings.TargetClasses; tc != nil {
			fmt.Fprintln(e.stderr, gmmTargetClassesLine(tc))
		}
	}
	preds, err := gmmPredict(m, ld.Target.X)
	if err != nil {
		return err
	}
	rep, err := newGMMFitReport(c, ld, m, preds, trainer.Name(), nt.notes)
	if err != nil {
		return err
	}
	rep.Seconds = map[string]float64{"fit": fit}
	if c.validate {
		t1 := time.Now()
		build := func() adapt.Method {
			m := c.gmm.method(c.dict.atoms, c.dict.plateau, c.dict.seed, trainer)
			m.BalancedTarget = c.dict.balancedTarget
			return m
		}
		h, err := validateOnSources(ld.Problem, build, c.validationLine(e, "GMM-DaDiL"))
		if err != nil {
			return err
		}
		rep.Seconds["validation"] = time.Since(t1).Seconds()
		for _, sc := range h {
			rep.HeldOutSources = append(rep.HeldOutSources, gmmHeldOutScore(sc))
		}
		printHeldOutMean(e, "GMM-DaDiL", h)
	}
	rep.Seconds["total"] = time.Since(start).Seconds()
	if err := c.writeGMM(ld, m, preds, rep); err != nil {
		return err
	}
	if !c.quiet {
		fmt.Fprintf(e.stderr, "wrote %s\n", c.out)
	}
	if a := rep.TargetAccuracy; a != nil {
		fmt.Fprintf(e.stdout, "target accuracy: GMM-DaDiL-R %.2f%%, GMM-DaDiL-E %.2f%%, MAP %.2f%%\n", a["gmm_dadil_r"], a["gmm_dadil_e"], a["gmm_dadil_map"])
	}
	return nil
}

// componentRange returns the fewest and the most components of the
// domains' mixtures of a fitted GMM-DaDiL.
func componentRange(m *adapt.GMMDaDiL) (lo, hi int) {
	lo, hi = m.Target.Components(), m.Target.Components()
	for _, s := range m.Sources {
		lo, hi = min(lo, s.Components()), max(hi, s.Components())
	}
	return lo, hi
}

// gmmPredict returns the classes of the rows of X by GMM-DaDiL-R,
// GMM-DaDiL-E and the MAP rule of the target's reconstruction, in the
// order of gmmPredictors.
func gmmPredict(m *adapt.GMMDaDiL, X *mat.Dense) ([][]int, error) {
	var out [][]int
	for _, p := range gmmPredictors {
		pred, err := gmmPredictor(m, p.method)(X)
		if err != nil {
			return nil, err
		}
		out = append(out, pred)
	}
	return out, nil
}

// gmmPredictor returns the predictor of a GMM-DaDiL model called method:
// r (GMM-DaDiL-R, the classifier trained on the reconstruction), e
// (GMM-DaDiL-E), map (the MAP rule of the target's reconstruction) or
// e-map (the atoms' MAP rules weighed by α_T, GMM-DaDiL-E without its
// classifiers).
func gmmPredictor(m *adapt.GMMDaDiL, method string) func(*mat.Dense) ([]int, error) {
	switch method {
	case "e":
		return m.Predictors()[1].Predict
	case "map":
		rule := *m
		rule.R = nil
		return rule.Predictors()[0].Predict
	case "e-map":
		rules := *m
		rules.E = nil
		return rules.Predictors()[1].Predict
	}
	return m.Predictors()[0].Predict
}

// newGMMFitReport describes the fit and scores its predictions preds
// when the target's labels are known.
func newGMMFitReport(c *fitCommand, ld *dataset.Loaded, m *adapt.GMMDaDiL, preds [][]int, classifier string, notes []string) (*gmmFitReport, error) {
	d := m.Dict
	rep := &gmmFitReport{
		Method: fitGMM, reportHeader: c.data.header(ld, classifier),
		UnknownTargetLabels: ld.Unknown, Settings: modelfile.GMMSettingsOf(m), Notes: notes,
		Epochs: d.Epochs, Stopped: dictionary.StopReason(d.Status), Loss: d.Loss,
		Alpha: map[string][]float64{}, Components: map[string]int{},
	}
	mixtures := append(append([]*gmm.Mixture(nil), m.Sources...), m.Target)
	for l, dom := range ld.Domains() {
		rep.Alpha[dom.Name] = mat.Row(nil, l, d.Alpha)
		rep.Components[dom.Name] = mixtures[l].Components()
	}
	if ld.Test == nil {
		return rep, nil
	}
	rep.TargetAccuracy = map[string]float64{}
	for i, p := range gmmPredictors {
		acc, err := adapt.Score(func(*mat.Dense) ([]int, error) { return preds[i], nil }, ld.Test)
		if err != nil {
			return nil, err
		}
		rep.TargetAccuracy[p.column] = 100 * acc
	}
	return rep, nil
}

// writeGMM writes predictions.csv, report.json and model.dadil into
// --out as one set (atomicfile.WriteDir).
func (c *fitCommand) writeGMM(ld *dataset.Loaded, m *adapt.GMMDaDiL, preds [][]int, rep *gmmFitReport) error {
	var csv bytes.Buffer
	csv.WriteString("row")
	for _, p := range gmmPredictors {
		csv.WriteString("," + p.column)
	}
	csv.WriteByte('\n')
	for i := range preds[0] {
		fmt.Fprintf(&csv, "%d", i)
		for _, pred := range preds {
			fmt.Fprintf(&csv, ",%d", ld.Labels.Decode(pred[i]))
		}
		csv.WriteByte('\n')
	}
	mf := &modelfile.File{GMM: m, Scaler: ld.Scaler, Imputer: ld.Imputer, Labels: ld.Labels.Values, Features: ld.Features}
	return c.writeSet(csv.Bytes(), rep, mf, func(files map[string]func(string) error) error {
		return addGMMReconstruction(files, ld, m)
	})
}

// addGMMReconstruction adds the target's reconstruction B(α_T; P) of a
// GMM-DaDiL fit to the output files, in the units of the files' kept
// features (the scaling undone: means m = m'/s + o, standard deviations
// σ = σ'/s for the scaler x' = (x − o)·s; for a model on principal
// directions, the means mapped back onto the features and each feature's
// standard deviation in each component, adapt.Projection.InverseSpread):
// reconstruction.npz holds
// GMM-DaDiL-R's training set drawn from it as addReconstruction's arrays
// (X, P, y, labels) with component (the component of every row), and the
// mixture as mixture_weights (K), mixture_means and mixture_std (K×d),
// mixture_P (K×classes, the components' soft labels) and mixture_y (their
// argmax as label values); reconstruction.csv the rows as DaDiL's, with a
// last column component, and reconstruction_mixture.csv a row per
// component: weight, mean_<feature>…, std_<feature>…, p_<label>…, label;
// and training.npz and training.csv, GMM-DaDiL-R's whole training set
// (adapt.GMMDaDiL.TrainingR: the drawn rows, then the sources' moved
// rows), as DaDiL's (addTraining).
func addGMMReconstruction(files map[string]func(string) error, ld *dataset.Loaded, m *adapt.GMMDaDiL) error {
	Xs, T, comp, err := m.ReconstructionSamples()
	if err != nil {
		return err
	}
	from := make([]float64, len(comp))
	for i, k := range comp {
		from[i] = float64(k)
	}
	arrays, rows, err := reconstructionSamples(ld, Xs, T, column{"component", from})
	if err != nil {
		return err
	}
	B := m.Dict.Target()
	Bm, Bs := B.Means, B.Std
	if p := m.Projection; p != nil {
		Bm, Bs = p.Inverse(Bm), p.InverseSpread(Bs)
	}
	var means, std mat.Dense
	if err := ld.Scaler.Inverse(&means, Bm); err != nil {
		return err
	}
	if err := ld.Scaler.InverseSpread(&std, Bs); err != nil {
		return err
	}
	K, d := means.Dims()
	c := B.Classes()
	y := make([]float64, K)
	for k, v := range classify.Argmax(B.Labels) {
		y[k] = float64(ld.Labels.Decode(v))
	}
	arrays["mixture_weights"] = &npy.Array{Shape: []int{K}, Data: append([]float64(nil), B.Weights...)}
	arrays["mixture_means"] = &npy.Array{Shape: []int{K, d}, Data: means.RawMatrix().Data}
	arrays["mixture_std"] = &npy.Array{Shape: []int{K, d}, Data: std.RawMatrix().Data}
	arrays["mixture_P"] = &npy.Array{Shape: []int{K, c}, Data: mat.DenseCopyOf(B.Labels).RawMatrix().Data}
	arrays["mixture_y"] = &npy.Array{Shape: []int{K}, Data: y}
	var csv bytes.Buffer
	csv.WriteString("weight")
	names := featureNames(ld, d)
	for _, prefix := range []string{"mean_", "std_"} {
		for _, n := range names {
			csv.WriteString("," + prefix + n)
		}
	}
	for _, v := range ld.Labels.Values {
		fmt.Fprintf(&csv, ",p_%d", v)
	}
	csv.WriteString(",label\n")
	for k := range K {
		writeFloats(&csv, B.Weights[k:k+1], false)
		writeFloats(&csv, means.RawRowView(k), true)
		writeFloats(&csv, std.RawRowView(k), true)
		writeFloats(&csv, B.Labels.RawRowView(k), true)
		fmt.Fprintf(&csv, ",%d\n", int(y[k]))
	}
	files["reconstruction.npz"] = func(p string) error { return npy.WriteNPZ(p, arrays) }
	files["reconstruction.csv"] = func(p string) error { return os.WriteFile(p, rows, 0o644) }
	files["reconstruction_mixture.csv"] = func(p string) error { return os.WriteFile(p, csv.Bytes(), 0o644) }
	if m.TrainingR == nil { // the MAP rule trains no classifier
		return nil
	}
	ts := *m.TrainingR
	if m.Projection != nil {
		ts.X = m.Projection.Inverse(ts.X)
	}
	return addTraining(files, ld, &ts)
}

// checkGMMMemory refuses, once the problem is read, a GMM-DaDiL fit whose
// estimate (adapt.EstimateMemory) and the data exceed the limit lim.
func checkGMMMemory(p *dataset.Problem, lim sysmem.Limit) error {
	b, err := adapt.EstimateMemory("gmm-dadil", nil, p)
	if err != nil {
		return err
	}
	z := dictionary.SizesOf(p.Domains(), p.Classes)
	data := dictionary.EstimateMemory(z, &dictionary.Settings{Atoms: 1, Samples: 1, Batch: 1}).Data
	if need := saturatingAdd(data, b); need > lim.Bytes {
		return fmt.Errorf("--method gmm: the fit would need about %s (the data %s, GMM-DaDiL %s), more than the limit of %s; raise --max-memory if the machine has more",
			sysmem.Size(need), sysmem.Size(data), sysmem.Size(b), lim)
	}
	return nil
}
