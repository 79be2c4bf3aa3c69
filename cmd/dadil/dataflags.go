package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/linalg"
)

// dataFlags are the flags of the commands that read a user's domains:
// labeled sources, a target whose labels (if any) only score, scaling and
// the readers' options.
type dataFlags struct {
	sources multiFlag
	target  string
	scale   string
	rf      readerFlags
}

func (d *dataFlags) register(fs *flag.FlagSet) {
	fs.Var(&d.sources, "source", "labeled source domain `PATH` (.csv, .npy, .npz or .mat); repeat for every source")
	fs.StringVar(&d.target, "target", "", "target domain `PATH`; its labels, if any, are only used to report accuracy")
	fs.StringVar(&d.scale, "scale", "minmax", "feature scaling over all domains together: `minmax`, standard or none")
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
	return nil
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

// userData is a user's problem, read, checked and scaled.
type userData struct {
	// domains holds the scaled sources (class indices) and, last, the
	// unlabeled target.
	domains     []dictionary.Domain
	target      *dataset.Domain // scaled, with the user's labels if any
	truth       []int           // target class indices (−1: unknown to the sources); nil without labels
	unknown     []int           // target label values absent from the sources
	classes     *dataset.Classes
	scaler      *dataset.Scaler
	scaling     dataset.Scaling
	sourcePaths []string
	// features names the feature columns when the files do (CSV).
	features []string
}

// adaptSources returns the scaled labeled sources as adapt domains.
func (u *userData) adaptSources() []adapt.Domain {
	src := make([]adapt.Domain, len(u.domains)-1)
	for k, d := range u.domains[:len(src)] {
		src[k] = adapt.Domain{Name: d.Name, X: d.X, Y: d.Y}
	}
	return src
}

// checkValidate reports a --validate that cannot run: holding a source
// out needs at least two of them.
func (d *dataFlags) checkValidate(validate bool) error {
	if validate && len(d.sources) < 2 {
		return usageError{errors.New("--validate holds a source out, so it needs at least 2 --source")}
	}
	return nil
}

// load reads the domains; note receives remarks for the user.
func (d *dataFlags) load(note func(format string, a ...any)) (*userData, error) {
	kind, err := dataset.ParseScaling(d.scale)
	if err != nil {
		return nil, usageError{err}
	}
	if err := distinctFiles(append(append([]string(nil), d.sources...), d.target), "domain"); err != nil {
		return nil, err
	}
	opt := d.rf.options()
	var src []*dataset.Domain
	for _, p := range d.sources {
		dom, err := dataset.Read(p, opt)
		if err != nil {
			return nil, err
		}
		if !dom.Labeled() {
			return nil, fmt.Errorf("source %s has no labels (no label column or labels variable)", p)
		}
		src = append(src, dom)
	}
	topt := *opt
	topt.LabelsOptional = true
	tgt, err := dataset.Read(d.target, &topt)
	if err != nil {
		return nil, err
	}
	all := append(append([]*dataset.Domain(nil), src...), tgt)
	if err := dataset.CheckCompatible(all...); err != nil {
		return nil, err
	}
	classes, err := dataset.NewClasses(src...)
	if err != nil {
		return nil, err
	}
	// A source without some class is legal (its coordinates then cannot
	// draw on that class), but usually a mistake worth a note.
	for _, dom := range src {
		var missing []int
		for _, v := range classes.Values {
			if !slices.Contains(dom.Labels, v) {
				missing = append(missing, v)
			}
		}
		if len(missing) > 0 {
			note("source %s has no rows of class %v (of %v)", dom.Path, missing, classes.Values)
		}
	}
	u := &userData{classes: classes, scaling: kind}
	for _, dom := range all {
		if dom.Features != nil {
			u.features = dom.Features
			break
		}
	}
	if tgt.Labeled() {
		u.truth, u.unknown = classIndices(tgt.Labels, classes.Index)
		note("the target %s carries labels: they are used only to report accuracy, never to fit", d.target)
		if len(u.unknown) > 0 {
			note("target labels %v do not occur in the sources; those rows count as errors", u.unknown)
		}
	}
	if u.scaler, err = dataset.FitScaler(kind, all...); err != nil {
		return nil, err
	}
	if kind == dataset.ScaleNone {
		for _, dom := range all {
			if i, j, ok := linalg.FirstEntryAbove(dom.X, maxUnscaled); !ok {
				return nil, usageError{fmt.Errorf("%s: row %d, feature %d is %g: with --scale none, features beyond ±%g make squared distances overflow; use --scale minmax or standard", dom.Path, i+1, j+1, dom.X.At(i, j), maxUnscaled)}
			}
		}
	}
	for _, dom := range src {
		sd, err := u.scaler.TransformDomain(dom)
		if err != nil {
			return nil, err
		}
		y, err := classes.Encode(dom.Labels)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dom.Path, err)
		}
		u.domains = append(u.domains, dictionary.Domain{Name: dom.Path, X: sd.X, Y: y})
		u.sourcePaths = append(u.sourcePaths, dom.Path)
	}
	if u.target, err = u.scaler.TransformDomain(tgt); err != nil {
		return nil, err
	}
	u.domains = append(u.domains, dictionary.Domain{Name: tgt.Path, X: u.target.X})
	return u, nil
}

// maxUnscaled bounds the magnitude of unscaled features: squared
// distances between points of 10⁵ such features stay far below float64's
// largest value, 1.8·10³⁰⁸.
const maxUnscaled = 1e100

// distinctFiles reports two paths that name the same file: a domain given
// twice would count twice (and a source given as the target would be
// its own target).
func distinctFiles(paths []string, what string) error {
	infos := make([]os.FileInfo, len(paths))
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue // the reader names the problem
		}
		for j := range i {
			if infos[j] != nil && os.SameFile(infos[j], fi) {
				return usageError{fmt.Errorf("%s and %s are the same file: give every %s once", paths[j], p, what)}
			}
		}
		infos[i] = fi
	}
	return nil
}

// dictFlags are the DaDiL hyper-parameter flags of fit and analyze.
type dictFlags struct {
	atoms, samples, batch, epochs int
	recBlock                      int
	lr, plateau                   float64
	seed                          uint64
	init                          string
	paper, sharedBatch, hard      bool
}

func (f *dictFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.atoms, "atoms", 0, "number of atoms `K` (default: the number of sources)")
	fs.IntVar(&f.samples, "samples", 0, "support size `n` of every atom (default 100 per class; rounded to a multiple of the number of classes)")
	fs.IntVar(&f.batch, "batch", 0, "mini-batch size `n_b` (default 20 per class; rounded to a multiple of the number of classes)")
	fs.Float64Var(&f.lr, "lr", 0.1, "Adam learning rate `η` (for the features, scaled by the data's spread unless --init gaussian)")
	fs.IntVar(&f.epochs, "epochs", 100, "maximal number of epochs `N`")
	fs.Float64Var(&f.plateau, "plateau-tol", 0.01, "stop when the loss of the last 5 epochs is within `r` (relative) of the 5 before; 0 runs exactly --epochs epochs")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed")
	fs.StringVar(&f.init, "init", "data", "atom initialisation: `data` (from the sources) or gaussian (the paper's N(0, I), with unscaled learning rate)")
	fs.BoolVar(&f.sharedBatch, "shared-atom-batch", false, "draw one atom batch per step for all domains instead of one per domain (faster, usually less accurate)")
	fs.BoolVar(&f.hard, "hard-labels", false, "train the DaDiL-R and DaDiL-E classifiers on the argmax of the atoms' and the reconstruction's soft labels, as the authors' demonstration does")
	fs.IntVar(&f.recBlock, "reconstruction-block", 0, "reconstruct DaDiL-R's training set from atoms of more than `N` points in blocks of at most N (default 2048; -1: in one barycenter whatever the size, which needs memory and time growing like n² and n³)")
	fs.BoolVar(&f.paper, "paper", false, "the paper's Caltech-Office setting: K = 8 and 10 fixed epochs (unless --atoms/--epochs are given), N(0, I) atoms, η in data units, the authors' α update, classifiers on hard labels")
}

// check reports malformed values before any data is read.
func (f *dictFlags) check() error {
	if f.atoms < 0 {
		return usageError{fmt.Errorf("--atoms %d: need at least one atom", f.atoms)}
	}
	if !(f.lr > 0) || math.IsInf(f.lr, 0) {
		return usageError{fmt.Errorf("--lr %g: the learning rate must be positive", f.lr)}
	}
	if math.IsNaN(f.plateau) || math.IsInf(f.plateau, 0) {
		return usageError{fmt.Errorf("--plateau-tol %g: want a number (0 or negative: run exactly --epochs epochs)", f.plateau)}
	}
	if f.recBlock < -1 {
		return usageError{fmt.Errorf("--reconstruction-block %d: need a block size, or -1 for one barycenter", f.recBlock)}
	}
	var init dictionary.Init
	if err := init.UnmarshalText([]byte(f.init)); err != nil {
		return usageError{err}
	}
	return nil
}

// settings returns the dictionary settings of the flags for a problem with
// classes classes; note receives the adjustments made.
func (f *dictFlags) settings(fs *flag.FlagSet, classes int, note func(format string, a ...any)) (dictionary.Settings, error) {
	var init dictionary.Init
	if err := init.UnmarshalText([]byte(f.init)); err != nil {
		return dictionary.Settings{}, usageError{err}
	}
	set := dictionary.Settings{
		Atoms: f.atoms, Samples: f.samples, Batch: f.batch, LearningRate: f.lr,
		Epochs: f.epochs, PlateauTol: f.plateau, Seed: f.seed, Init: init,
		SharedAtomBatch: f.sharedBatch, HardLabels: f.hard, ReconstructionBlock: f.recBlock,
	}
	if f.plateau == 0 {
		set.PlateauTol = -1
	}
	if init == dictionary.InitGaussian {
		set.FeatureScale = dictionary.ScaleNone
	}
	if f.paper {
		if !flagSet(fs, "atoms") {
			set.Atoms = 8
		}
		if !flagSet(fs, "epochs") {
			set.Epochs = 10
		}
		set.PlateauTol = -1
		set.Init = dictionary.InitGaussian
		set.FeatureScale = dictionary.ScaleNone
		set.RawAlphaGradient = true
		set.HardLabels = true
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
		return n // (sizes beyond any memory are refused by dictionary.Fit)
	}
	r := max(c, (n+c/2)/c*c)
	note("%s %d is not a multiple of the %d classes: rounded to %d", flag, n, c, r)
	return r
}

// classIndices maps label values to class indices with index, −1 for the
// values it does not know, which it also returns in order of first
// appearance: the truth for scoring predictions with classify.Accuracy,
// where unknown labels count as errors.
func classIndices(labels []int, index func(y int) (int, bool)) (truth, unknown []int) {
	truth = make([]int, len(labels))
	for i, y := range labels {
		k, ok := index(y)
		if !ok {
			k = -1
			if !slices.Contains(unknown, y) {
				unknown = append(unknown, y)
			}
		}
		truth[i] = k
	}
	return truth, unknown
}
