package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
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
	// HeldOutSources holds, with --validate, the accuracy of DaDiL-R and
	// DaDiL-E on every source held out as the target of the others.
	HeldOutSources []heldOutScore `json:"held_out_sources,omitempty"`
}

// heldOutScore is one source's score in held-out-source validation.
type heldOutScore struct {
	Source string  `json:"source"`
	R      float64 `json:"dadil_r"` // percent of the source's rows
	E      float64 `json:"dadil_e"`
}

// validateOnSources scores DaDiL-R and DaDiL-E in held-out-source
// validation (adapt.ValidatePredictors: one dictionary per held-out source,
// scored by both predictors), with the settings set. The user's target is
// not used. done, if not nil, receives each source's score.
func validateOnSources(src []adapt.Domain, classes int, set dictionary.Settings, done func(heldOutScore)) ([]heldOutScore, error) {
	set.Progress = nil
	score := func(s []adapt.Scores, k int) heldOutScore {
		return heldOutScore{Source: s[0].HeldOut[k].Source, R: 100 * s[0].HeldOut[k].Accuracy, E: 100 * s[1].HeldOut[k].Accuracy}
	}
	scores, err := adapt.ValidatePredictors(src, classes, func() adapt.Method {
		s := set
		return adapt.NewDaDiLR(&s)
	}, func(k int, s []adapt.Scores) {
		if done != nil {
			done(score(s, k))
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]heldOutScore, len(src))
	for k := range out {
		out[k] = score(scores, k)
	}
	return out, nil
}

func runFit(args []string, e *env) error {
	fs := newFlags("dadil fit", e)
	var data dataFlags
	data.register(fs)
	out := fs.String("out", "", "output `DIR` (predictions.csv, report.json, model.dadil)")
	var df dictFlags
	df.register(fs)
	quiet := fs.Bool("quiet", false, "no progress output")
	validate := fs.Bool("validate", false, "also score DaDiL-R and DaDiL-E without target labels: each source in turn is held out as the target of the others (one more fit per source)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil fit --source PATH [--source PATH ...] --target PATH --out DIR [flags]")
		fmt.Fprintln(fs.Output(), "\nLearns a dataset dictionary (DaDiL) from labeled sources and an unlabeled target, and")
		fmt.Fprintln(fs.Output(), "classifies the target with DaDiL-R and DaDiL-E.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := data.check(); err != nil {
		return err
	}
	if *out == "" {
		return usageError{errors.New("--out is required")}
	}
	if err := checkOutputDir("--out", *out); err != nil {
		return err
	}
	if err := df.check(); err != nil {
		return err
	}
	if err := data.checkValidate(*validate); err != nil {
		return err
	}
	start := time.Now()
	nt := &noter{e: e, quiet: *quiet}
	note := nt.note
	ld, err := data.load(note)
	if err != nil {
		return err
	}
	doms, st, truth, classes, scaler := ld.domains, ld.target, ld.truth, ld.classes, ld.scaler
	rep := &fitReport{Target: data.target, Classes: classes.Values, Scaling: ld.scaling.String(), Sources: ld.sourcePaths, UnknownTargetLabels: ld.unknown}
	_, rep.Features = st.X.Dims()
	set, err := df.settings(fs, classes.Len(), note)
	if err != nil {
		return err
	}
	rep.Notes = nt.notes
	bar := newProgress(e, *quiet, set.Epochs)
	set.Progress = bar.epoch
	t0 := time.Now()
	dict, err := dictionary.Fit(doms, classes.Len(), &set)
	bar.done()
	if err != nil {
		return err
	}
	fitSecs := time.Since(t0).Seconds()
	if !*quiet {
		// The reconstruction of the target from the full atoms can take
		// as long as several epochs on large problems: say what is going on.
		fmt.Fprintf(e.stderr, "fitted in %.1f s (%d epochs, stopped by %s); reconstructing the target and training the classifiers\n", fitSecs, len(dict.History.Loss), dict.History.Stopped)
	}
	t0 = time.Now()
	model, err := dictionary.NewModel(dict, len(doms)-1, nil, set.Seed)
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
		accR, err := classify.Accuracy(predR, truth)
		if err != nil {
			return err
		}
		accE, err := classify.Accuracy(predE, truth)
		if err != nil {
			return err
		}
		rep.TargetAccuracy = map[string]float64{"dadil_r": 100 * accR, "dadil_e": 100 * accE}
	}
	rep.Seconds = map[string]float64{"fit": fitSecs, "classifiers": modelSecs}
	if *validate {
		t0 := time.Now()
		rep.HeldOutSources, err = validateOnSources(ld.adaptSources(), classes.Len(), set, func(sc heldOutScore) {
			if !*quiet {
				fmt.Fprintf(e.stderr, "validation: %s held out: DaDiL-R %.2f%%, DaDiL-E %.2f%%\n", sc.Source, sc.R, sc.E)
			}
		})
		if err != nil {
			return err
		}
		rep.Seconds["validation"] = time.Since(t0).Seconds()
	}
	rep.Seconds["total"] = time.Since(start).Seconds()

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
			return modelfile.Save(p, &modelfile.File{Model: model, Scaler: scaler, Labels: classes.Values, Features: ld.features})
		},
	})
	if err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(e.stderr, "reconstruction and classifiers in %.1f s; wrote %s\n", modelSecs, *out)
	}
	if h := rep.HeldOutSources; h != nil {
		var r, ee float64
		for _, sc := range h {
			r += sc.R / float64(len(h))
			ee += sc.E / float64(len(h))
		}
		fmt.Fprintf(e.stdout, "held-out-source validation (no target labels): DaDiL-R %.2f%%, DaDiL-E %.2f%% (mean over %d sources)\n", r, ee, len(h))
	}
	if rep.TargetAccuracy != nil {
		fmt.Fprintf(e.stdout, "target accuracy: DaDiL-R %.2f%%, DaDiL-E %.2f%%\n", rep.TargetAccuracy["dadil_r"], rep.TargetAccuracy["dadil_e"])
	}
	return nil
}

// writeDirAtomic creates the files of a command's output directory: each
// writer fills a file in a fresh temporary directory next to dir; only when
// all succeeded, and every name in dir is free or a regular file, are the
// files renamed into dir (created if needed), so a failure leaves dir as it
// was.
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
	// Renames over folders, links or devices would fail half-way or destroy
	// them: check every name first.
	for name := range files {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file: refusing to replace it (nothing was written)", filepath.Join(dir, name))
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
