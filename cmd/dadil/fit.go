package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/modelfile"
)

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// readerFlags are the flags shared by commands that read domains.
type readerFlags struct {
	labelColumn, featuresVar, labelsVar string
}

func (r *readerFlags) register(fs interface {
	StringVar(*string, string, string, string)
}) {
	fs.StringVar(&r.labelColumn, "label-column", "", "CSV column holding the labels (default \"label\")")
	fs.StringVar(&r.featuresVar, "features-var", "", "features variable of .mat/.npz files (default: feas, fts or X; X for .npz)")
	fs.StringVar(&r.labelsVar, "labels-var", "", "labels variable of .mat/.npz files (default: labels or y; y for .npz)")
}

func (r *readerFlags) options() *dataset.ReadOptions {
	o := &dataset.ReadOptions{LabelColumn: r.labelColumn}
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
	Sources        []string             `json:"sources"`
	Target         string               `json:"target"`
	Classes        []int                `json:"classes"`
	Features       int                  `json:"features"`
	Scaling        string               `json:"scaling"`
	Settings       dictionary.Settings  `json:"settings"`
	Notes          []string             `json:"notes,omitempty"`
	Epochs         int                  `json:"epochs"`
	Stopped        string               `json:"stopped"`
	Loss           []float64            `json:"loss"`
	DomainLoss     map[string][]float64 `json:"domain_loss"`
	Alpha          map[string][]float64 `json:"alpha"`
	Seconds        map[string]float64   `json:"seconds"`
	TargetAccuracy map[string]float64   `json:"target_accuracy,omitempty"`
	// UnknownTargetLabels lists target label values absent from the
	// sources; such rows can never be predicted right.
	UnknownTargetLabels []int `json:"unknown_target_labels,omitempty"`
}

func runFit(args []string, e *env) error {
	fs := newFlags("dadil fit", e)
	var sources multiFlag
	fs.Var(&sources, "source", "labeled source domain `PATH` (.csv, .npy, .npz or .mat); repeat for every source")
	target := fs.String("target", "", "target domain `PATH`; its labels, if any, are only used to report accuracy")
	out := fs.String("out", "", "output `DIR` (predictions.csv, report.json, model.dadil)")
	atoms := fs.Int("atoms", 0, "number of atoms `K` (default: the number of sources)")
	samples := fs.Int("samples", 0, "support size `n` of every atom (default 100 per class; rounded to a multiple of the number of classes)")
	batch := fs.Int("batch", 0, "mini-batch size `n_b` (default 20 per class)")
	lr := fs.Float64("lr", 0.1, "Adam learning rate `η` (for the features, scaled by the data's spread unless --init gaussian)")
	epochs := fs.Int("epochs", 100, "maximal number of epochs `N`")
	plateau := fs.Float64("plateau-tol", 0.01, "stop when the loss of the last 5 epochs is within `r` (relative) of the 5 before; 0 runs exactly --epochs epochs")
	seed := fs.Uint64("seed", 1, "random seed")
	scale := fs.String("scale", "minmax", "feature scaling over all domains together: `minmax`, standard or none")
	initName := fs.String("init", "data", "atom initialisation: `data` (from the sources) or gaussian (the paper's N(0, I), with unscaled learning rate)")
	paper := fs.Bool("paper", false, "the paper's Caltech-Office setting: K = 8 and 10 fixed epochs (unless --atoms/--epochs are given), N(0, I) atoms, η in data units, the authors' α update")
	quiet := fs.Bool("quiet", false, "no progress output")
	var rf readerFlags
	rf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil fit --source PATH [--source PATH ...] --target PATH --out DIR [flags]")
		fmt.Fprintln(fs.Output(), "\nLearns a dataset dictionary (DaDiL) from labeled sources and an unlabeled target, and")
		fmt.Fprintln(fs.Output(), "classifies the target with DaDiL-R and DaDiL-E.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case len(sources) == 0:
		return usageError{errors.New("at least one --source is required")}
	case *target == "":
		return usageError{errors.New("--target is required")}
	case *out == "":
		return usageError{errors.New("--out is required")}
	}
	if *atoms < 0 {
		return usageError{fmt.Errorf("--atoms %d: need at least one atom", *atoms)}
	}
	kind, err := dataset.ParseScaling(*scale)
	if err != nil {
		return usageError{err}
	}
	var init dictionary.Init
	if err := init.UnmarshalText([]byte(*initName)); err != nil {
		return usageError{err}
	}
	start := time.Now()
	opt := rf.options()
	var src []*dataset.Domain
	for _, p := range sources {
		d, err := dataset.Read(p, opt)
		if err != nil {
			return err
		}
		if !d.Labeled() {
			return fmt.Errorf("source %s has no labels (no label column or labels variable)", p)
		}
		src = append(src, d)
	}
	topt := *opt
	topt.LabelsOptional = true
	tgt, err := dataset.Read(*target, &topt)
	if err != nil {
		return err
	}
	all := append(append([]*dataset.Domain(nil), src...), tgt)
	if err := dataset.CheckCompatible(all...); err != nil {
		return err
	}
	classes, err := dataset.NewClasses(src...)
	if err != nil {
		return err
	}
	c := classes.Len()
	rep := &fitReport{Target: *target, Classes: classes.Values, Scaling: kind.String()}
	_, rep.Features = tgt.X.Dims()
	note := func(format string, a ...any) {
		s := fmt.Sprintf(format, a...)
		rep.Notes = append(rep.Notes, s)
		if !*quiet {
			fmt.Fprintln(e.stderr, "note:", s)
		}
	}
	// Target labels are only used for scoring.
	var truth []int
	if tgt.Labeled() {
		truth = make([]int, len(tgt.Labels))
		for i, y := range tgt.Labels {
			k, ok := classes.Index(y)
			if !ok {
				k = -1
				if !containsInt(rep.UnknownTargetLabels, y) {
					rep.UnknownTargetLabels = append(rep.UnknownTargetLabels, y)
				}
			}
			truth[i] = k
		}
		note("the target %s carries labels: they are used only to report accuracy, never to fit", *target)
		if len(rep.UnknownTargetLabels) > 0 {
			note("target labels %v do not occur in the sources; those rows count as errors", rep.UnknownTargetLabels)
		}
	}
	scaler, err := dataset.FitScaler(kind, all...)
	if err != nil {
		return err
	}
	var doms []dictionary.Domain
	for _, d := range src {
		sd, err := scaler.TransformDomain(d)
		if err != nil {
			return err
		}
		y, err := classes.Encode(d.Labels)
		if err != nil {
			return fmt.Errorf("%s: %w", d.Path, err)
		}
		doms = append(doms, dictionary.Domain{Name: d.Path, X: sd.X, Y: y})
		rep.Sources = append(rep.Sources, d.Path)
	}
	st, err := scaler.TransformDomain(tgt)
	if err != nil {
		return err
	}
	doms = append(doms, dictionary.Domain{Name: tgt.Path, X: st.X})

	set := dictionary.Settings{
		Atoms: *atoms, Samples: *samples, Batch: *batch, LearningRate: *lr,
		Epochs: *epochs, PlateauTol: *plateau, Seed: *seed, Init: init,
	}
	if *plateau == 0 {
		set.PlateauTol = -1
	}
	if init == dictionary.InitGaussian {
		set.FeatureScale = dictionary.ScaleNone
	}
	if *paper {
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		if !given["atoms"] {
			set.Atoms = 8
		}
		if !given["epochs"] {
			set.Epochs = 10
		}
		set.PlateauTol = -1
		set.Init = dictionary.InitGaussian
		set.FeatureScale = dictionary.ScaleNone
		set.RawAlphaGradient = true
	}
	if n := set.Samples; n > 0 && n%c != 0 {
		r := max(c, (n+c/2)/c*c)
		note("--samples %d is not a multiple of the %d classes: rounded to %d", n, c, r)
		set.Samples = r
	}
	bar := newProgress(e, *quiet, *epochs)
	set.Progress = bar.epoch
	t0 := time.Now()
	dict, err := dictionary.Fit(doms, c, &set)
	bar.done()
	if err != nil {
		return err
	}
	fitSecs := time.Since(t0).Seconds()
	t0 = time.Now()
	model, err := dictionary.NewModel(dict, len(doms)-1, nil, *seed)
	if err != nil {
		return err
	}
	modelSecs := time.Since(t0).Seconds()
	predR, err := model.PredictR(st.X)
	if err != nil {
		return err
	}
	predE, err := model.PredictE(st.X)
	if err != nil {
		return err
	}

	h := dict.History
	rep.Settings = dict.Settings
	rep.Epochs, rep.Stopped, rep.Loss = len(h.Loss), h.Stopped, h.Loss
	rep.DomainLoss = map[string][]float64{}
	rep.Alpha = map[string][]float64{}
	for l, d := range doms {
		series := make([]float64, len(h.DomainLoss))
		for ep := range h.DomainLoss {
			series[ep] = h.DomainLoss[ep][l]
		}
		rep.DomainLoss[d.Name] = series
		rep.Alpha[d.Name] = mat.Row(nil, l, dict.Alpha)
	}
	if truth != nil {
		rep.TargetAccuracy = map[string]float64{"dadil_r": 100 * agree(predR, truth), "dadil_e": 100 * agree(predE, truth)}
	}
	rep.Seconds = map[string]float64{"fit": fitSecs, "classifiers": modelSecs, "total": time.Since(start).Seconds()}

	var csv bytes.Buffer
	csv.WriteString("row,dadil_r,dadil_e\n")
	for i := range predR {
		fmt.Fprintf(&csv, "%d,%d,%d\n", i, classes.Decode(predR[i]), classes.Decode(predE[i]))
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	err = writeDirAtomic(*out, map[string]func(string) error{
		"predictions.csv": func(p string) error { return os.WriteFile(p, csv.Bytes(), 0o644) },
		"report.json":     func(p string) error { return os.WriteFile(p, append(js, '\n'), 0o644) },
		"model.dadil": func(p string) error {
			return modelfile.Save(p, &modelfile.File{Model: model, Scaler: scaler, Labels: classes.Values})
		},
	})
	if err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(e.stderr, "fitted in %.1f s (%d epochs, stopped by %s); wrote %s\n", fitSecs, rep.Epochs, rep.Stopped, *out)
	}
	if rep.TargetAccuracy != nil {
		fmt.Fprintf(e.stdout, "target accuracy: DaDiL-R %.2f%%, DaDiL-E %.2f%%\n", rep.TargetAccuracy["dadil_r"], rep.TargetAccuracy["dadil_e"])
	}
	return nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// agree returns the fraction of equal entries.
func agree(pred, truth []int) float64 {
	ok := 0
	for i, p := range pred {
		if p == truth[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(pred))
}

// writeDirAtomic creates the files of a command's output directory: each
// writer fills a file in a fresh temporary directory next to dir; only when
// all succeeded are the files renamed into dir (created if needed), so a
// failure leaves dir as it was.
func writeDirAtomic(dir string, files map[string]func(path string) error) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for name, write := range files {
		if err := write(filepath.Join(tmp, name)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name := range files {
		if err := os.Rename(filepath.Join(tmp, name), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}
