package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/clip"
)

// dataFlags are the flags of the commands that read a user's domains:
// labeled sources, a target whose labels (if any) only score, scaling and
// the readers' options.
type dataFlags struct {
	fs      *flag.FlagSet
	sources multiFlag
	target  string
	scale   string
	missing string
	rf      readerFlags
}

func (d *dataFlags) register(fs *flag.FlagSet) {
	d.fs = fs
	fs.Var(&d.sources, "source", "labeled source domain `PATH` (.csv, .npy, .npz or .mat); repeat for every source")
	fs.StringVar(&d.target, "target", "", "target domain `PATH`; its labels, if any, are only used to report accuracy")
	fs.StringVar(&d.scale, "scale", "standard", "feature scaling over all domains together: `standard`, minmax or none (--paper: minmax unless given)")
	fs.StringVar(&d.missing, "missing", "impute", "missing feature values (\"?\", empty cells, NA, NaN): `impute` with the sources' means, drop the features that miss any, or error")
	d.rf.register(fs)
}

// check reports missing or malformed flags.
func (d *dataFlags) check() error {
	switch {
	case len(d.sources) == 0:
		return usageError{errors.New("at least one --source is required")}
	case d.target == "":
		return usageError{errors.New("--target is required")}
	}
	if _, err := dataset.ParseScaling(d.scale); err != nil {
		return usageError{err}
	}
	if _, err := dataset.ParseMissing(d.missing); err != nil {
		return usageError{err}
	}
	return nil
}

// reportHeader holds the keys that begin the reports of the commands that
// read a user's domains: the files, the label values, the number of
// features, the scaling and the final classifier.
type reportHeader struct {
	Sources    []string `json:"sources"`
	Target     string   `json:"target"`
	Classes    []int    `json:"classes"`
	Features   int      `json:"features"`
	Scaling    string   `json:"scaling"`
	Classifier string   `json:"classifier"`
}

// header returns the report header of the domains ld read from the files
// of d, whose classifier is called classifier.
func (d *dataFlags) header(ld *dataset.Loaded, classifier string) reportHeader {
	h := reportHeader{Sources: d.sources, Target: d.target, Classes: ld.Labels.Values, Scaling: ld.Scaler.Kind.String(), Classifier: classifier}
	_, h.Features = ld.Target.X.Dims()
	return h
}

// noter collects the remarks made to the user (a report's notes) and
// prints each on stderr, unless quiet.
type noter struct {
	e     *env
	quiet bool
	notes []string
}

func (n *noter) note(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	n.notes = append(n.notes, s)
	if !n.quiet {
		fmt.Fprintln(n.e.stderr, "note:", s)
	}
}

// checkValidate reports a --validate that cannot run: holding a source
// out needs at least two of them.
func (d *dataFlags) checkValidate(validate bool) error {
	if validate && len(d.sources) < 2 {
		return usageError{errors.New("--validate holds a source out, so it needs at least 2 --source")}
	}
	return nil
}

// load reads the domains (dataset.Load); note receives remarks for the
// user. With paper (--paper) and no --scale, the features are min-max
// scaled, as in the paper. Errors of the arguments (a file given twice,
// features too large for --scale none) are usage errors.
func (d *dataFlags) load(paper bool, note func(format string, a ...any)) (*dataset.Loaded, error) {
	scale := d.scale
	if paper && !flagSet(d.fs, "scale") {
		scale = "minmax"
	}
	kind, err := dataset.ParseScaling(scale)
	if err != nil {
		return nil, usageError{err}
	}
	missing, err := dataset.ParseMissing(d.missing)
	if err != nil {
		return nil, usageError{err}
	}
	l, err := dataset.Load(d.sources, d.target, &dataset.LoadOptions{
		Read: *d.rf.options(), Scaling: kind, Missing: missing,
		Note: func(msg string) { note("%s", msg) },
	})
	if errors.Is(err, dataset.ErrArgument) {
		return nil, usageError{err}
	}
	return l, err
}

// dictFlags are the DaDiL hyper-parameter flags of fit and analyze.
type dictFlags struct {
	fs                            *flag.FlagSet
	classifier                    string
	atoms, samples, batch, epochs int
	extraAtoms                    int  // --atoms +M
	autoAtoms                     bool // --atoms auto (chooseAtoms)
	// allowAuto tells that the command chooses K with --atoms auto.
	allowAuto                   bool
	recBlock                    int
	lr, plateau                 float64
	l2                          string
	seed                        uint64
	init, transport, ensembleTr string
	paper, sharedBatch, hard    bool
	shift, balancedTarget       bool
	maxMemory                   string
	maxBytes                    int64 // of --max-memory, 0 when not given
	// swept maps a flag to the flag that gives the values an analysis
	// fits instead ("atoms" to "sweep-atoms"), for messages.
	swept map[string]string
}

func (f *dictFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.classifier, "classifier", defaultClassifier, "the final classifier of every method: `NAME` among "+strings.Join(adapt.ClassifierNames(), ", ")+" (--paper: softmax unless given)")
	fs.StringVar(&f.l2, "l2", "", "penalty `λ` of the softmax classifier (--classifier softmax) on its squared weights, for every method (default 0.01 with --scale standard, else 0.001, the paper's); auto: DaDiL-R and DaDiL-E choose theirs on the labeled sources, anchored at the default, which the other methods keep")
	fs.Var(&atomsValue{&f.atoms, &f.extraAtoms, &f.autoAtoms}, "atoms", "number of atoms `K`, +M for M atoms beyond the number of sources, or auto (fit, adapt, bench suite: the number of sources or one more, chosen by held-out sources' balanced accuracy; 2 more fits per source) (default: the number of sources, +0)")
	fs.IntVar(&f.samples, "samples", 0, "support size `n` of every atom (default 100 per class, up to as many as the features and the sources' rows per class allow, at most 2000 in all, and as many per class as the largest domain has rows where those are at most 50; rounded to a multiple of the number of classes)")
	fs.IntVar(&f.batch, "batch", 0, "mini-batch size `n_b` (default 20 per class; rounded to a multiple of the number of classes)")
	fs.Float64Var(&f.lr, "lr", 0.1, "Adam learning rate `η` (for the features, scaled by the data's spread unless --init gaussian)")
	fs.IntVar(&f.epochs, "epochs", 100, "maximal number of epochs `N`")
	fs.Float64Var(&f.plateau, "plateau-tol", 0.01, "stop when the loss of the last 5 epochs is within `r` (relative) of the 5 before; 0 runs exactly --epochs epochs")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed")
	fs.StringVar(&f.transport, "transport", "auto", "last step of DaDiL-R towards the target: none (the reconstruction alone), sources (the reconstruction and the sources' rows moved along the dictionary towards the target, half the weight each), map (the reconstruction moved onto the target rows by an exact plan), labels (the target rows labeled through the plan) or `auto` (sources)")
	fs.StringVar(&f.ensembleTr, "ensemble-transport", "auto", "last step of DaDiL-E towards the target: none (the paper's: classifiers on the atoms), barycenter (every atom moved onto the target's reconstruction), map (every atom moved onto the target rows), labels (the target rows labeled through every atom's plan) or `auto` (barycenter)")
	fs.StringVar(&f.init, "init", "data", "atom initialisation: `data` (from the sources) or gaussian (the paper's N(0, I), with unscaled learning rate)")
	fs.BoolVar(&f.balancedTarget, "balanced-target", false, "draw the target's atom batches class-balanced, as the paper's Algorithm 2, instead of in the class proportions the sources share (the default when they share unequal ones; --paper: true unless given); GMM-DaDiL: match the target's mixture with its reconstruction's classes of equal mass, not of the shared proportions")
	fs.BoolVar(&f.shift, "estimate-shift", false, "estimate the target's class proportions (label shift), shrink the estimate towards the proportions the sources share (equal ones without them) by its error on the sources, and draw the target's atom batches in them, so that DaDiL does not move the mass of its rarer classes onto its commoner ones")
	fs.BoolVar(&f.sharedBatch, "shared-atom-batch", false, "draw one atom batch per step for all domains instead of one per domain (faster, usually less accurate)")
	fs.BoolVar(&f.hard, "hard-labels", false, "train the DaDiL-R and DaDiL-E classifiers on the argmax of the atoms' and the reconstruction's soft labels, as the authors' demonstration does")
	fs.IntVar(&f.recBlock, "reconstruction-block", 0, "reconstruct DaDiL-R's training set from atoms of more than `N` points in blocks of at most N (default 2048; -1: in one barycenter whatever the size, which needs memory and time growing like n² and n³)")
	fs.StringVar(&f.maxMemory, "max-memory", "", maxMemoryUsage)
	fs.BoolVar(&f.paper, "paper", false, "the paper's Caltech-Office setting: K = 8 and 10 fixed epochs (unless --atoms/--epochs are given), N(0, I) atoms, η in data units, the authors' α update, classifiers on hard labels")
}

// check reports malformed values before any data is read.
func (f *dictFlags) check() error {
	if f.autoAtoms && !f.allowAuto {
		return usageError{errors.New("--atoms auto: only dadil fit, dadil adapt and dadil bench suite choose K; give K or +M")}
	}
	for _, c := range []struct {
		name, def string
		v         int
	}{
		{"samples", "100 per class, more for many features and rows, fewer for small sources", f.samples},
		{"batch", "20 per class", f.batch}, {"epochs", "100", f.epochs},
	} {
		if err := countFlag(f.fs, c.name, c.v, c.def); err != nil {
			return err
		}
	}
	if !(f.lr > 0) || math.IsInf(f.lr, 0) {
		return usageError{fmt.Errorf("--lr %g: the learning rate must be positive", f.lr)}
	}
	if math.IsNaN(f.plateau) || math.IsInf(f.plateau, 0) {
		return usageError{fmt.Errorf("--plateau-tol %g: want a number (0 or negative: run exactly --epochs epochs)", f.plateau)}
	}
	var err error
	if f.maxBytes, err = parseMaxMemory(f.maxMemory, flagSet(f.fs, "max-memory")); err != nil {
		return err
	}
	if f.recBlock < -1 || (f.recBlock == 0 && flagSet(f.fs, "reconstruction-block")) {
		return usageError{fmt.Errorf("--reconstruction-block %d: need a block size, or -1 for one barycenter; leave the flag out for the default (2048)", f.recBlock)}
	}
	var init dictionary.Init
	if err := init.UnmarshalText([]byte(f.init)); err != nil {
		return usageError{err}
	}
	if _, err := adapt.NewClassifier(f.classifier, 0); err != nil {
		return usageError{err}
	}
	if flagSet(f.fs, "l2") {
		if _, err = parseL2(f.l2); err != nil {
			return err
		}
	}
	if name := f.classifierName(); flagSet(f.fs, "l2") && name != "softmax" {
		return usageError{fmt.Errorf("--l2 sets the penalty of --classifier softmax, not of %s", name)}
	}
	var tr dictionary.Transport
	for _, v := range []string{f.transport, f.ensembleTr} {
		if err := tr.UnmarshalText([]byte(v)); err != nil {
			return usageError{err}
		}
	}
	return nil
}

// parseL2 returns the penalty of --l2 v: a positive number, or 0 for auto.
func parseL2(v string) (float64, error) {
	if v == "auto" {
		return 0, nil
	}
	l2, err := strconv.ParseFloat(v, 64)
	if err != nil || !(l2 > 0) || math.IsInf(l2, 0) {
		return 0, usageError{fmt.Errorf("--l2 %s: want a positive number or auto", clip.Quote(v))}
	}
	return l2, nil
}

// defaultClassifier is the default of --classifier.
const defaultClassifier = "softmax"

// trainer returns the classifier of --classifier, seeded by --seed; for
// softmax, with the penalty of --l2, or without it (and with auto, whose
// choice DaDiL's settings then anchor there: settings) the default penalty
// of features scaled by kind (adapt.DefaultPenalty). With --paper and no
// --classifier, the paper's softmax regression.
func (f *dictFlags) trainer(kind dataset.Scaling) (classify.Trainer, error) {
	t, err := adapt.NewClassifier(f.classifierName(), f.seed)
	if err != nil {
		return nil, usageError{err}
	}
	if s, ok := t.(*classify.SoftmaxTrainer); ok {
		s.Settings = &classify.Settings{L2: penalty(f.l2, kind)}
	}
	return t, nil
}

// classifierLabel is the name of the classifier trainer for the tables of
// the benchmarks, noting --l2 auto (l2), with which DaDiL-R and DaDiL-E
// choose their penalty.
func classifierLabel(trainer, l2 string) string {
	if l2 == "auto" {
		return trainer + " (DaDiL's λ chosen on the sources)"
	}
	return trainer
}

// penalty returns the softmax penalty of the --l2 value v, checked by
// parseL2, for features scaled by kind: v's number, or for no value and
// for auto the default penalty of the scaling (adapt.DefaultPenalty).
func penalty(v string, kind dataset.Scaling) float64 {
	if l2, err := parseL2(v); err == nil && l2 > 0 {
		return l2
	}
	return adapt.DefaultPenalty(kind)
}

// classifierName is the name of --classifier; with --paper and no
// --classifier, softmax.
func (f *dictFlags) classifierName() string {
	if f.paper && !flagSet(f.fs, "classifier") {
		return "softmax"
	}
	return f.classifier
}

// settings returns the dictionary settings of the flags for a problem with
// classes classes; note receives the adjustments made. --paper starts from
// dictionary.Paper and keeps the flags given explicitly.
func (f *dictFlags) settings(fs *flag.FlagSet, classes int, note func(format string, a ...any)) (dictionary.Settings, error) {
	var init dictionary.Init
	if err := init.UnmarshalText([]byte(f.init)); err != nil {
		return dictionary.Settings{}, usageError{err}
	}
	set := dictionary.Settings{
		Atoms: f.atoms, ExtraAtoms: f.extraAtoms, Epochs: f.epochs, PlateauTol: f.plateau, Init: init,
		HardLabels: f.hard, ChoosePenalty: f.l2 == "auto",
	}
	if f.plateau == 0 {
		set.PlateauTol = -1
	}
	if init == dictionary.InitGaussian {
		set.FeatureScale = dictionary.ScaleNone
	}
	if f.paper {
		set = *dictionary.Paper(f.seed)
		set.ChoosePenalty = f.l2 == "auto"
		if flagSet(fs, "atoms") {
			set.Atoms, set.ExtraAtoms = f.atoms, f.extraAtoms
		}
		if flagSet(fs, "epochs") {
			set.Epochs = f.epochs
		}
	}
	set.Samples, set.Batch, set.LearningRate, set.Seed = f.samples, f.batch, f.lr, f.seed
	set.SharedAtomBatch, set.ReconstructionBlock, set.MaxMemory = f.sharedBatch, f.recBlock, f.maxBytes
	set.EstimateShift = f.shift
	if !f.paper || flagSet(fs, "balanced-target") {
		set.BalancedTarget = f.balancedTarget
	}
	if !f.paper || flagSet(fs, "transport") {
		if err := set.Transport.UnmarshalText([]byte(f.transport)); err != nil {
			return set, usageError{err}
		}
	}
	if !f.paper || flagSet(fs, "ensemble-transport") {
		if err := set.EnsembleTransport.UnmarshalText([]byte(f.ensembleTr)); err != nil {
			return set, usageError{err}
		}
	}
	set.Samples = roundSamples("--samples", set.Samples, classes, note)
	set.Batch = roundSamples("--batch", set.Batch, classes, note)
	return set, nil
}

// roundSamples rounds a support or batch size n to a positive multiple of
// the number of classes c (atoms hold n/c points per class, batches draw
// n/c per class), with a note.
func roundSamples(flag string, n, c int, note func(format string, a ...any)) int {
	if n <= 0 || n%c == 0 || n > math.MaxInt/2 {
		return n // (sizes beyond any memory are refused by the memory guards)
	}
	r := max(c, (n+c/2)/c*c)
	note("%s %d is not a multiple of the %d classes: rounded to %d", flag, n, c, r)
	return r
}

// distinctFiles is dataset.DistinctFiles, a usage error: a file named
// twice on the command line.
func distinctFiles(paths []string, what string) error {
	if err := dataset.DistinctFiles(paths, what); err != nil {
		return usageError{err}
	}
	return nil
}

// atomsValue is the value of --atoms: K, a positive count, into *k; +M,
// M ≥ 0 atoms beyond the number of sources, into *extra
// (dictionary.Settings.ExtraAtoms); or auto into *auto.
type atomsValue struct {
	k, extra *int
	auto     *bool
}

func (v *atomsValue) String() string {
	switch {
	case v.k == nil: // the zero value, for the flag package
		return "0"
	case *v.auto:
		return "auto"
	case *v.extra > 0:
		return "+" + strconv.Itoa(*v.extra)
	}
	return strconv.Itoa(*v.k)
}

func (v *atomsValue) Set(s string) error {
	*v.k, *v.extra, *v.auto = 0, 0, false
	if s == "auto" {
		*v.auto = true
		return nil
	}
	rel, ok := strings.CutPrefix(s, "+")
	n, err := strconv.Atoi(rel)
	switch {
	case err != nil || n < 0 || (!ok && n == 0):
		return fmt.Errorf("want a positive number of atoms K, +M for M ≥ 0 atoms beyond the number of sources, or auto")
	case ok:
		*v.extra = n
	default:
		*v.k = n
	}
	return nil
}
