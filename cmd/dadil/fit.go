package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/modelfile"
	"github.com/dadil/dadil/npy"
)

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// readerFlags are the flags shared by commands that read domains.
type readerFlags struct {
	labelColumn, featuresVar, labelsVar string
	noHeader                            bool
}

func (r *readerFlags) register(fs interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&r.labelColumn, "label-column", "", "CSV column holding the labels (default \"label\"; with --no-header its number, counted from 1)")
	fs.BoolVar(&r.noHeader, "no-header", false, "CSV and text files have no header row: their first row is data and columns are named 1, 2, …")
	fs.StringVar(&r.featuresVar, "features-var", "", "features variable of .mat/.npz files (default: feas, fts or X; X for .npz)")
	fs.StringVar(&r.labelsVar, "labels-var", "", "labels variable of .mat/.npz files (default: labels or y; y for .npz)")
}

func (r *readerFlags) options() *dataset.ReadOptions {
	o := &dataset.ReadOptions{LabelColumn: r.labelColumn, NoHeader: r.noHeader}
	if r.featuresVar != "" {
		o.FeaturesVar = []string{r.featuresVar}
	}
	if r.labelsVar != "" {
		o.LabelsVar = []string{r.labelsVar}
	}
	return o
}

// fitReport is DIR/report.json.
type fitReport struct {
	Method string `json:"method"`
	reportHeader
	Settings       dictionary.Settings  `json:"settings"`
	Notes          []string             `json:"notes,omitempty"`
	Epochs         int                  `json:"epochs"`
	Stopped        string               `json:"stopped"`
	Loss           []float64            `json:"loss"`
	DomainLoss     map[string][]float64 `json:"domain_loss"`
	Alpha          map[string][]float64 `json:"alpha"`
	Seconds        map[string]float64   `json:"seconds"`
	TargetAccuracy map[string]float64   `json:"target_accuracy,omitempty"`
	// Penalty is the choice of the softmax classifiers' penalty on the
	// sources (--l2 auto, dictionary.Settings.ChoosePenalty).
	Penalty *classify.PenaltyChoice `json:"penalty,omitempty"`
	// TargetClasses gives the class proportions (in the order of
	// Classes) the target's atom batches were drawn in and where they
	// came from; absent when class-balanced without --estimate-shift.
	TargetClasses *dictionary.TargetClasses `json:"target_classes,omitempty"`
	// UnknownTargetLabels lists target label values absent from the
	// sources; such rows can never be predicted right.
	UnknownTargetLabels []int `json:"unknown_target_labels,omitempty"`
	// HeldOutSources holds, with --validate, the accuracy of DaDiL-R and
	// DaDiL-E on every source held out as the target of the others.
	HeldOutSources []heldOutScore `json:"held_out_sources,omitempty"`
}

// heldOutScore is one source's score in held-out-source validation.
type heldOutScore struct {
	Source string  `json:"source"`
	R      float64 `json:"dadil_r"` // percent of the source's rows
	E      float64 `json:"dadil_e"`
	// RBalanced and EBalanced are the balanced accuracies (percent).
	RBalanced float64 `json:"dadil_r_balanced"`
	EBalanced float64 `json:"dadil_e_balanced"`
}

// validateOnSources scores a dictionary method's two predictors (R and E)
// in held-out-source validation (adapt.ValidatePredictors: one fit of
// build's method per held-out source, scored by both predictors). The
// problem's target is not used. done, if not nil, receives each source's
// score.
func validateOnSources(p *dataset.Problem, build func() adapt.Method, done func(heldOutScore)) ([]heldOutScore, error) {
	score := func(s []adapt.Scores, k int) heldOutScore {
		r, e := s[0].HeldOut[k], s[1].HeldOut[k]
		return heldOutScore{Source: r.Source, R: 100 * r.Accuracy, E: 100 * e.Accuracy, RBalanced: 100 * r.Balanced, EBalanced: 100 * e.Balanced}
	}
	scores, err := adapt.ValidatePredictors(p, build, func(k int, s []adapt.Scores) {
		if done != nil {
			done(score(s, k))
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]heldOutScore, len(p.Sources))
	for k := range out {
		out[k] = score(scores, k)
	}
	return out, nil
}

// dadilBuilder returns a builder of DaDiL with the settings set, without
// progress, and the classifier t.
func dadilBuilder(set dictionary.Settings, t classify.Trainer) func() adapt.Method {
	set.Progress = nil
	return func() adapt.Method {
		s := set
		return &adapt.DaDiL{Settings: &s, Classifier: t}
	}
}

// fitOutputs are the files dadil fit writes in --out; a run replaces all
// of them, so the reconstruction files of an earlier run with
// --export-reconstruction disappear from a run without.
var fitOutputs = []string{"predictions.csv", "report.json", "model.dadil", "reconstruction.npz", "reconstruction.csv", "reconstruction_mixture.csv", "training.npz", "training.csv"}

// fitCommand holds the flags of dadil fit.
type fitCommand struct {
	fs                      *flag.FlagSet
	data                    dataFlags
	dict                    dictFlags
	gmm                     gmmFlags
	method, out             string
	quiet, validate, export bool
}

// The methods of dadil fit --method.
const (
	fitDaDiL = "dadil"
	fitGMM   = "gmm"
)

// dadilOnlyFlags are the flags of dadil fit that set DaDiL alone.
var dadilOnlyFlags = []string{"samples", "batch", "lr", "epochs", "init", "transport", "ensemble-transport",
	"shared-atom-batch", "hard-labels", "reconstruction-block", "paper", "estimate-shift"}

// parseFit parses and checks the flags of dadil fit, before any work.
func parseFit(args []string, e *env) (*fitCommand, error) {
	c := &fitCommand{fs: newFlags("dadil fit", e)}
	fs := c.fs
	c.data.register(fs)
	fs.StringVar(&c.out, "out", "", "output `DIR` (predictions.csv, report.json, model.dadil)")
	fs.StringVar(&c.method, "method", fitDaDiL, "`dadil` (point-cloud atoms, DaDiL-R and DaDiL-E) or gmm (Gaussian-mixture atoms, GMM-DaDiL-R and GMM-DaDiL-E; set by the --gmm-… flags, --atoms, --plateau-tol, --seed and --classifier)")
	c.dict.register(fs)
	c.gmm.register(fs)
	fs.BoolVar(&c.quiet, "quiet", false, "no progress output")
	fs.BoolVar(&c.export, "export-reconstruction", false, "also write the target's labeled reconstruction B(α_T; P) to DIR/reconstruction.npz and DIR/reconstruction.csv (features in the files' units, soft labels, label), and the set DaDiL-R's classifier trains on (by default the reconstruction and the sources' rows moved along the dictionary, with their weights and sources) to DIR/training.npz and DIR/training.csv; with --method gmm, the reconstructed mixture too (its components' weights, means, standard deviations and labels, also in DIR/reconstruction_mixture.csv) and GMM-DaDiL-R's training set drawn from it")
	fs.BoolVar(&c.validate, "validate", false, "also score DaDiL-R and DaDiL-E without target labels: each source in turn is held out as the target of the others (one more fit per source)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil fit --source PATH [--source PATH ...] --target PATH --out DIR [flags]")
		fmt.Fprintln(fs.Output(), "\nLearns a dataset dictionary (DaDiL) from labeled sources and an unlabeled target, and")
		fmt.Fprintln(fs.Output(), "classifies the target with DaDiL-R and DaDiL-E; with --method gmm, a dictionary of")
		fmt.Fprintln(fs.Output(), "Gaussian mixtures (GMM-DaDiL), which classifies with GMM-DaDiL-R, GMM-DaDiL-E and the MAP rule.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if err := c.data.check(); err != nil {
		return nil, err
	}
	if c.out == "" {
		return nil, usageError{errors.New("--out is required")}
	}
	if err := checkOutputDir("--out", c.out, fitOutputs); err != nil {
		return nil, err
	}
	if err := c.dict.allowAutoAtoms(len(c.data.sources)); err != nil {
		return nil, err
	}
	if err := c.dict.check(); err != nil {
		return nil, err
	}
	if err := c.gmm.check(); err != nil {
		return nil, err
	}
	if err := c.data.checkValidate(c.validate); err != nil {
		return nil, err
	}
	if err := c.checkMethod(); err != nil {
		return nil, err
	}
	if c.method == fitGMM {
		return c, nil
	}
	return c, c.dict.checkEarly(len(c.data.sources))
}

// checkMethod refuses an unknown --method and the flags of the other
// method.
func (c *fitCommand) checkMethod() error {
	switch c.method {
	case fitDaDiL:
		if g := c.gmm.given(); len(g) > 0 {
			return usageError{fmt.Errorf("%s: the --gmm-… flags set --method gmm (this fit is --method dadil)", strings.Join(g, ", "))}
		}
	case fitGMM:
		for _, n := range dadilOnlyFlags {
			if flagSet(c.fs, n) {
				return usageError{fmt.Errorf("--%s applies to --method dadil; GMM-DaDiL's settings are the --gmm-… flags (with --atoms, --plateau-tol, --seed, --classifier and --balanced-target)", n)}
			}
		}
	default:
		return usageError{fmt.Errorf("--method %s: want dadil or gmm", clip.Quote(c.method))}
	}
	return nil
}

func runFit(args []string, e *env) error {
	c, err := parseFit(args, e)
	if err != nil {
		return err
	}
	start := time.Now()
	nt := &noter{e: e, quiet: c.quiet}
	ld, err := c.data.load(c.dict.paper, nt.note)
	if err != nil {
		return err
	}
	if c.method == fitGMM {
		return c.runGMM(e, ld, nt, start)
	}
	set, err := c.dict.settings(c.fs, ld.Classes, nt.note)
	if err != nil {
		return err
	}
	if err := c.dict.checkFit(ld.Problem, []dictionary.Settings{c.dict.worstAtoms(set)}, 1, 0, nt.note); err != nil {
		return err
	}
	defer useMemoryLimit(memoryLimit(c.dict.maxBytes))()
	trainer, err := c.dict.trainer(ld.Scaler.Kind)
	if err != nil {
		return err
	}
	if err := c.dict.chooseAtoms(ld.Problem, &set, trainer, nt.note); err != nil {
		return err
	}
	model, err := c.learn(e, ld.Problem, set, trainer)
	if err != nil {
		return err
	}
	rep, err := newFitReport(c, ld, model, trainer.Name(), nt.notes)
	if err != nil {
		return err
	}
	if c.validate {
		if err := c.validateSources(e, ld.Problem, set, trainer, rep); err != nil {
			return err
		}
	}
	rep.Seconds["total"] = time.Since(start).Seconds()
	if err := c.write(ld, model, rep); err != nil {
		return err
	}
	if !c.quiet {
		fmt.Fprintf(e.stderr, "reconstruction and classifiers in %.1f s; wrote %s\n", rep.Seconds["classifiers"], c.out)
		if p := rep.Penalty; p != nil {
			i := slices.Index(p.Grid, p.L2)
			fmt.Fprintf(e.stderr, "softmax penalty λ = %g, chosen on the sources (balanced accuracy %.2f%% ± %.2f)\n", p.L2, 100*p.Score[i], 100*p.SE[i])
		}
		if tc := rep.TargetClasses; tc != nil {
			fmt.Fprintln(e.stderr, targetClassesLine(tc))
		}
	}
	printFitSummary(e, rep)
	return nil
}

// targetClassesLine describes the class proportions the target's atom
// batches were drawn in.
func targetClassesLine(tc *dictionary.TargetClasses) string {
	var from []string
	if tc.Shared != nil {
		from = append(from, "shared by the sources "+shares(tc.Shared))
	}
	if tc.Estimate != nil {
		from = append(from, fmt.Sprintf("estimated %s (error %.3f)", shares(tc.Estimate), tc.Error))
	}
	line := "target class proportions " + strings.Join(from, ", ") + ": "
	if tc.Drawn == nil {
		return line + "atom batches class-balanced"
	}
	return line + "atom batches drawn in " + shares(tc.Drawn)
}

// gmmTargetClassesLine describes the class proportions GMM-DaDiL weighed
// the target's reconstruction in (gmm.DictionarySettings.TargetClasses).
func gmmTargetClassesLine(h []float64) string {
	return "target class proportions shared by the sources " + shares(h) + ": the target's reconstruction weighed in them"
}

// shares formats class proportions.
func shares(h []float64) string {
	f := make([]string, len(h))
	for y, p := range h {
		f[y] = fmt.Sprintf("%.3f", p)
	}
	return strings.Join(f, " ")
}

// learn fits the dictionary and the target's model, with a progress bar
// and a line when learning stops.
func (c *fitCommand) learn(e *env, p *dataset.Problem, set dictionary.Settings, t classify.Trainer) (*dictionary.Model, error) {
	bar := newProgress(e, c.quiet, set.Epochs)
	set.Progress = func(s dictionary.EpochStats) {
		bar.epoch(s)
		if s.Status == optimize.NotTerminated {
			return
		}
		bar.done()
		if !c.quiet {
			// The reconstruction of the target from the full atoms can
			// take as long as several epochs on large problems: say what
			// is going on.
			fmt.Fprintf(e.stderr, "fitted in %.1f s (%d epochs, stopped by %s); reconstructing the target and training the classifiers\n", s.Elapsed.Seconds(), s.Epoch, dictionary.StopReason(s.Status))
		}
	}
	m, err := dictionary.FitModel(p, &set, t)
	bar.done()
	return m, err
}

// newFitReport describes the fit and scores it when the target's labels
// are known.
func newFitReport(c *fitCommand, ld *dataset.Loaded, m *dictionary.Model, classifier string, notes []string) (*fitReport, error) {
	d, h := m.Dict, m.Dict.History
	if m.Penalty != nil {
		classifier = fmt.Sprintf("softmax, λ = %g, chosen on the sources", m.Penalty.L2)
	}
	rep := &fitReport{
		Method: fitDaDiL, reportHeader: c.data.header(ld, classifier),
		UnknownTargetLabels: ld.Unknown, Settings: d.Settings, Notes: notes,
		Epochs: len(h.Loss), Stopped: dictionary.StopReason(h.Stopped), Loss: h.Loss,
		DomainLoss: map[string][]float64{}, Alpha: map[string][]float64{}, Penalty: m.Penalty,
		TargetClasses: m.TargetClasses(),
	}
	for l, dom := range ld.Domains() {
		series := make([]float64, len(h.DomainLoss))
		for ep := range h.DomainLoss {
			series[ep] = h.DomainLoss[ep][l]
		}
		rep.DomainLoss[dom.Name] = series
		rep.Alpha[dom.Name] = mat.Row(nil, l, d.Alpha)
	}
	fit := h.Elapsed.Seconds()
	rep.Seconds = map[string]float64{"fit": fit, "classifiers": m.Elapsed.Seconds()}
	if ld.Test == nil {
		return rep, nil
	}
	accR, err := adapt.Score(m.PredictR, ld.Test)
	if err != nil {
		return nil, err
	}
	accE, err := adapt.Score(m.PredictE, ld.Test)
	if err != nil {
		return nil, err
	}
	rep.TargetAccuracy = map[string]float64{"dadil_r": 100 * accR, "dadil_e": 100 * accE}
	return rep, nil
}

// validationLine returns the callback that prints a held-out source's
// scores of the method's R and E predictors, unless quiet.
func (c *fitCommand) validationLine(e *env, method string) func(heldOutScore) {
	return func(sc heldOutScore) {
		if !c.quiet {
			fmt.Fprintf(e.stderr, "validation: %s held out: %s-R %.2f%%, %s-E %.2f%%\n", sc.Source, method, sc.R, method, sc.E)
		}
	}
}

// validateSources adds held-out-source validation to the report.
func (c *fitCommand) validateSources(e *env, p *dataset.Problem, set dictionary.Settings, t classify.Trainer, rep *fitReport) error {
	t0 := time.Now()
	var err error
	rep.HeldOutSources, err = validateOnSources(p, dadilBuilder(set, t), c.validationLine(e, "DaDiL"))
	rep.Seconds["validation"] = time.Since(t0).Seconds()
	return err
}

// write writes predictions.csv, report.json and model.dadil (and the
// reconstruction files) into --out as one set (atomicfile.WriteDir).
func (c *fitCommand) write(ld *dataset.Loaded, m *dictionary.Model, rep *fitReport) error {
	X := ld.Target.X
	predR, err := m.PredictR(X)
	if err != nil {
		return err
	}
	predE, err := m.PredictE(X)
	if err != nil {
		return err
	}
	var csv bytes.Buffer
	csv.WriteString("row,dadil_r,dadil_e\n")
	for i := range predR {
		fmt.Fprintf(&csv, "%d,%d,%d\n", i, ld.Labels.Decode(predR[i]), ld.Labels.Decode(predE[i]))
	}
	mf := &modelfile.File{Model: m, Scaler: ld.Scaler, Imputer: ld.Imputer, Labels: ld.Labels.Values, Features: ld.Features}
	return c.writeSet(csv.Bytes(), rep, mf, func(files map[string]func(string) error) error {
		return addReconstruction(files, ld, m)
	})
}

// writeSet writes predictions.csv, report.json (rep) and model.dadil (mf)
// into --out as one set (atomicfile.WriteDir), with the reconstruction
// files that export adds under --export-reconstruction.
func (c *fitCommand) writeSet(predictions []byte, rep any, mf *modelfile.File, export func(map[string]func(string) error) error) error {
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	files := map[string]func(string) error{
		"predictions.csv": func(p string) error { return os.WriteFile(p, predictions, 0o644) },
		"report.json":     func(p string) error { return os.WriteFile(p, append(js, '\n'), 0o644) },
		"model.dadil":     func(p string) error { return modelfile.Save(p, mf) },
	}
	if c.export {
		if err := export(files); err != nil {
			return err
		}
	}
	return atomicfile.WriteDir(c.out, fitOutputs, files)
}

// addReconstruction adds reconstruction.npz (X: the points in the units of
// the files' kept features, P: the soft labels, one column per class, y:
// their argmax as label values, labels: the label values of the columns)
// and reconstruction.csv (the same, a row per point) to the output files,
// and training.npz and training.csv, DaDiL-R's training set (addTraining).
func addReconstruction(files map[string]func(string) error, ld *dataset.Loaded, m *dictionary.Model) error {
	arrays, csv, err := reconstructionSamples(ld, m.Reconstruction.X, m.Reconstruction.Y)
	if err != nil {
		return err
	}
	files["reconstruction.npz"] = func(p string) error { return npy.WriteNPZ(p, arrays) }
	files["reconstruction.csv"] = func(p string) error { return os.WriteFile(p, csv, 0o644) }
	return addTraining(files, ld, m.TrainingR)
}

// addTraining adds training.npz and training.csv: the set DaDiL-R's
// classifier trained on (the reconstruction, moved onto the target or
// beside the sources' moved rows as --transport says) as
// reconstruction.npz's arrays with weight (every point's weight in the
// classifier's loss, summing to 1) and source (0 for a point of the
// reconstruction, ℓ for a moved row of the ℓ-th --source), also the last
// two columns of training.csv.
func addTraining(files map[string]func(string) error, ld *dataset.Loaded, ts *dictionary.TrainingSet) error {
	n, _ := ts.X.Dims()
	w, from := ts.Weights, make([]float64, n)
	if w == nil {
		w = make([]float64, n)
		for i := range w {
			w[i] = 1 / float64(n)
		}
	}
	for i, l := range ts.Source {
		from[i] = float64(l + 1)
	}
	arrays, csv, err := reconstructionSamples(ld, ts.X, ts.Y, column{"weight", w}, column{"source", from})
	if err != nil {
		return err
	}
	files["training.npz"] = func(p string) error { return npy.WriteNPZ(p, arrays) }
	files["training.csv"] = func(p string) error { return os.WriteFile(p, csv, 0o644) }
	return nil
}

// column is a named column of numbers, one per row.
type column struct {
	name string
	v    []float64
}

// reconstructionSamples returns the arrays X, P, y and labels of
// reconstruction.npz (see addReconstruction) for the points Xs, in the
// scaled units, with the soft labels P, and reconstruction.csv: a header
// of the feature names (f1, f2, … without names), p_<label> for every
// class and label, then a row per point. The extra columns (GMM-DaDiL:
// the component each point was drawn from) are arrays of their names too
// and the last columns of the CSV.
func reconstructionSamples(ld *dataset.Loaded, Xs, P *mat.Dense, extra ...column) (map[string]*npy.Array, []byte, error) {
	var X mat.Dense
	if err := ld.Scaler.Inverse(&X, Xs); err != nil {
		return nil, nil, err
	}
	n, d := X.Dims()
	_, c := P.Dims()
	y := make([]float64, n)
	for i, k := range classify.Argmax(P) {
		y[i] = float64(ld.Labels.Decode(k))
	}
	arrays := map[string]*npy.Array{
		"X": {Shape: []int{n, d}, Data: X.RawMatrix().Data},
		"P": {Shape: []int{n, c}, Data: mat.DenseCopyOf(P).RawMatrix().Data},
		"y": {Shape: []int{n}, Data: y}, "labels": {Shape: []int{c}, Data: labelValues(ld)},
	}
	var csv bytes.Buffer
	csv.WriteString(strings.Join(featureNames(ld, d), ","))
	for _, v := range ld.Labels.Values {
		fmt.Fprintf(&csv, ",p_%d", v)
	}
	csv.WriteString(",label")
	for _, e := range extra {
		csv.WriteString("," + e.name)
		arrays[e.name] = &npy.Array{Shape: []int{n}, Data: e.v}
	}
	csv.WriteByte('\n')
	for i := range n {
		writeFloats(&csv, X.RawRowView(i), false)
		writeFloats(&csv, P.RawRowView(i), true)
		fmt.Fprintf(&csv, ",%d", int(y[i]))
		for _, e := range extra {
			writeFloats(&csv, e.v[i:i+1], true)
		}
		csv.WriteByte('\n')
	}
	return arrays, csv.Bytes(), nil
}

// labelValues returns the label values of the classes, in class order.
func labelValues(ld *dataset.Loaded) []float64 {
	labels := make([]float64, len(ld.Labels.Values))
	for k, v := range ld.Labels.Values {
		labels[k] = float64(v)
	}
	return labels
}

// featureNames returns the names of the kept features, f1 … fd when the
// files have none.
func featureNames(ld *dataset.Loaded, d int) []string {
	names := ld.Features
	if names == nil {
		for j := range d {
			names = append(names, fmt.Sprintf("f%d", j+1))
		}
	}
	return names
}

// writeFloats writes the values to b, comma-separated, with a leading
// comma when lead, each in the shortest form that reads back exactly.
func writeFloats(b *bytes.Buffer, v []float64, lead bool) {
	for j, x := range v {
		if lead || j > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	}
}

// printFitSummary prints the validation and target scores on stdout.
func printFitSummary(e *env, rep *fitReport) {
	printHeldOutMean(e, "DaDiL", rep.HeldOutSources)
	if rep.TargetAccuracy != nil {
		fmt.Fprintf(e.stdout, "target accuracy: DaDiL-R %.2f%%, DaDiL-E %.2f%%\n", rep.TargetAccuracy["dadil_r"], rep.TargetAccuracy["dadil_e"])
	}
}

// printHeldOutMean prints the mean held-out-source scores of the method's
// R and E predictors, if validated.
func printHeldOutMean(e *env, method string, h []heldOutScore) {
	if h == nil {
		return
	}
	var r, ee float64
	for _, sc := range h {
		r += sc.R / float64(len(h))
		ee += sc.E / float64(len(h))
	}
	fmt.Fprintf(e.stdout, "held-out-source validation (no target labels): %s-R %.2f%%, %s-E %.2f%% (mean over %d sources)\n", method, r, method, ee, len(h))
}
