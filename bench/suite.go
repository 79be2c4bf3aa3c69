package bench

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/par"
	"github.com/dadil/dadil/matfile"
	"github.com/dadil/dadil/npy"
	"github.com/dadil/dadil/selection"
)

// A SuiteSet is one data set of the development suite: one file content
// per domain (features and the labels as read) and how its experiments are
// scored. Every domain in turn is the target, the others its sources, and
// the problem is prepared as dadil adapt --scale minmax prepares users'
// files (min-max scaling over all domains together, missing values imputed
// with the sources' means).
type SuiteSet struct {
	Name    string
	Domains []*dataset.File
	// Balanced scores the set by balanced accuracy (imbalanced classes)
	// instead of accuracy.
	Balanced bool
	// Protocol describes the set's domains in a line.
	Protocol string
}

// Problem returns the problem whose target is domain t, the other domains
// its sources in order, prepared as dadil adapt --scale minmax does.
func (s *SuiteSet) Problem(t int) (*dataset.Loaded, error) {
	return s.ProblemScaled(t, dataset.ScaleMinMax)
}

// ProblemScaled is Problem with the features scaled as sc says:
// dataset.ScaleStandard as dadil bench suite does by default
// (SuiteOptions.Standard), dataset.ScaleMinMax as Problem.
func (s *SuiteSet) ProblemScaled(t int, sc dataset.Scaling) (*dataset.Loaded, error) {
	if t < 0 || t >= len(s.Domains) {
		return nil, fmt.Errorf("bench: suite: %s has no domain %d", s.Name, t)
	}
	// Prepare replaces the features of files it imputes: give it copies.
	var src []*dataset.File
	for k, f := range s.Domains {
		if k != t {
			c := *f
			src = append(src, &c)
		}
	}
	tgt := *s.Domains[t]
	l, err := dataset.Prepare(src, &tgt, &dataset.LoadOptions{Scaling: sc, Missing: dataset.MissingImpute})
	if err != nil {
		return nil, fmt.Errorf("bench: suite: %s, target %s: %w", s.Name, tgt.Name, err)
	}
	l.Name = s.Name + " → " + tgt.Name
	return l, nil
}

// SuiteSetNames are the data sets LoadSuite knows, in table order.
var SuiteSetNames = []string{"office-caltech10", "cwru", "two-tanks", "landmine", "heart-disease", "coil20"}

// LoadSuite reads the data sets named (nil: SuiteSetNames) from dir, the
// folder holding their folders. A set whose files are absent is skipped
// and named in the returned notes; any other error is returned.
func LoadSuite(dir string, names []string, seed uint64) ([]*SuiteSet, []string, error) {
	if names == nil {
		names = SuiteSetNames
	}
	var sets []*SuiteSet
	var notes []string
	for _, name := range names {
		load, ok := suiteLoaders[name]
		if !ok {
			return nil, nil, fmt.Errorf("bench: suite: unknown data set %s (known: %s)", clip.Quote(name), strings.Join(SuiteSetNames, ", "))
		}
		s, err := load(filepath.Join(dir, name), seed)
		if errors.Is(err, os.ErrNotExist) {
			notes = append(notes, fmt.Sprintf("%s skipped: %v", name, err))
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		sets = append(sets, s)
	}
	return sets, notes, nil
}

// suiteLoaders read the data sets, each from its own folder.
var suiteLoaders = map[string]func(dir string, seed uint64) (*SuiteSet, error){
	"office-caltech10": loadSuiteOfficeCaltech,
	"cwru":             loadSuiteCWRU,
	"two-tanks":        loadSuiteTwoTanks,
	"landmine":         loadSuiteLandmine,
	"heart-disease":    loadSuiteHeart,
	"coil20":           loadSuiteCOIL,
}

// present returns an error wrapping os.ErrNotExist unless every path
// exists.
func present(paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s: %w", p, os.ErrNotExist)
		}
	}
	return nil
}

// loadSuiteOfficeCaltech reads the four SURF domains whole (not the
// paper's folds): Webcam, Amazon, DSLR and Caltech, 10 classes, 800
// features.
func loadSuiteOfficeCaltech(dir string, _ uint64) (*SuiteSet, error) {
	files := officeCaltechFiles["surf"]
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(dir, f))
	}
	if err := present(paths...); err != nil {
		return nil, err
	}
	s := &SuiteSet{Name: "office-caltech10", Protocol: "SURF features, 4 domains (W, A, D, C), all rows"}
	for k, p := range paths {
		f, err := dataset.Read(p, nil)
		if err != nil {
			return nil, fmt.Errorf("bench: suite: %w", err)
		}
		f.Name = OfficeCaltechDomains[k]
		s.Domains = append(s.Domains, f)
	}
	return s, nil
}

// SuiteCWRU is the CWRU protocol of the suite: Fourier magnitudes of
// random windows of the raw drive-end recordings, without an encoder,
// small enough for every method on two cores.
var SuiteCWRU = CWRUProtocol{Window: 2048, Coeffs: 1024, Windows: 200, Train: 100}

// loadSuiteCWRU draws SuiteCWRU's windows of every load (seeded by seed).
func loadSuiteCWRU(dir string, seed uint64) (*SuiteSet, error) {
	if err := present(filepath.Join(dir, "12k_DE")); err != nil {
		return nil, err
	}
	c, err := LoadCWRU(dir, CWRUFiles(), SuiteCWRU.Window)
	if err != nil {
		return nil, err
	}
	s := &SuiteSet{Name: "cwru", Protocol: fmt.Sprintf("raw spectra (window %d, %d magnitudes, %d windows per class), %d loads", SuiteCWRU.Window, SuiteCWRU.Coeffs, SuiteCWRU.Windows, len(c.Domains))}
	for _, d := range c.Domains {
		sp, err := c.Spectra(d, seed, &SuiteCWRU)
		if err != nil {
			return nil, err
		}
		labels := make([]int, len(sp.Y))
		for i, k := range sp.Y {
			labels[i] = c.Labels[k]
		}
		s.Domains = append(s.Domains, &dataset.File{Name: d, X: sp.X, Labels: labels})
	}
	return s, nil
}

// loadSuiteTwoTanks splits the 10-domain two-tanks file by its domain
// column: 2 features, 5 classes.
func loadSuiteTwoTanks(dir string, _ uint64) (*SuiteSet, error) {
	path := filepath.Join(dir, "ttanks_acf_0.05.npy")
	if err := present(path); err != nil {
		return nil, err
	}
	a, err := npy.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: suite: %w", err)
	}
	if len(a.Shape) != 2 || a.Shape[1] != 4 {
		return nil, fmt.Errorf("bench: suite: %s: shape %v, want (rows, 4)", path, a.Shape)
	}
	byDomain := map[int][]int{}
	var doms []int
	for i := range a.Shape[0] {
		d := int(a.Data[4*i+3])
		if _, ok := byDomain[d]; !ok {
			doms = append(doms, d)
		}
		byDomain[d] = append(byDomain[d], i)
	}
	slices.Sort(doms)
	s := &SuiteSet{Name: "two-tanks", Protocol: fmt.Sprintf("ACF features, %d domains of growing simulator mismatch", len(doms))}
	for _, d := range doms {
		rows := byDomain[d]
		X := mat.NewDense(len(rows), 2, nil)
		y := make([]int, len(rows))
		for r, i := range rows {
			X.Set(r, 0, a.Data[4*i])
			X.Set(r, 1, a.Data[4*i+1])
			y[r] = int(a.Data[4*i+2])
		}
		s.Domains = append(s.Domains, &dataset.File{Name: fmt.Sprintf("d%d", d), X: X, Labels: y})
	}
	return s, nil
}

// loadSuiteHeart reads the four hospitals, the label binary (num > 0),
// with their missing values.
func loadSuiteHeart(dir string, _ uint64) (*SuiteSet, error) {
	names := []string{"cleveland", "hungarian", "switzerland", "va"}
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join(dir, "processed."+n+".data"))
	}
	if err := present(paths...); err != nil {
		return nil, err
	}
	s := &SuiteSet{Name: "heart-disease", Balanced: true, Protocol: "4 hospitals, 13 clinical features with missing values, disease (num > 0) or not"}
	for k, p := range paths {
		f, err := dataset.ReadCSV(p, &dataset.ReadOptions{NoHeader: true, LabelColumn: "14", AllowMissing: true})
		if err != nil {
			return nil, fmt.Errorf("bench: suite: %w", err)
		}
		for i, y := range f.Labels {
			f.Labels[i] = min(y, 1)
		}
		f.Name = names[k]
		s.Domains = append(s.Domains, f)
	}
	return s, nil
}

// loadSuiteCOIL splits COIL-20's two published domains into the four
// viewpoint arcs of its README: V1 and V3 from COIL1, V2 and V4 from COIL2,
// rows 0–17 and 18–35 of every class block of 36.
func loadSuiteCOIL(dir string, _ uint64) (*SuiteSet, error) {
	path := filepath.Join(dir, "COIL_1.mat")
	if err := present(path); err != nil {
		return nil, err
	}
	f, err := matfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bench: suite: %w", err)
	}
	var X [2]*mat.Dense
	var Y [2][]int
	for h, v := range [2][2]string{{"X_src", "Y_src"}, {"X_tar", "Y_tar"}} {
		xv, err := f.Lookup(v[0])
		if err != nil {
			return nil, fmt.Errorf("bench: suite: %w", err)
		}
		cols, err := xv.Matrix()
		if err != nil {
			return nil, fmt.Errorf("bench: suite: %s: %w", path, err)
		}
		X[h] = mat.DenseCopyOf(cols.T()) // one image per row
		yv, err := f.Lookup(v[1])
		if err != nil {
			return nil, fmt.Errorf("bench: suite: %w", err)
		}
		if Y[h], err = yv.Ints(); err != nil {
			return nil, fmt.Errorf("bench: suite: %s: %w", path, err)
		}
	}
	s := &SuiteSet{Name: "coil20", Protocol: "32×32 images of 20 objects, 4 viewpoint arcs of 90°"}
	for v := range 4 {
		h, half := v%2, v/2
		var rows []int
		for i, y := range Y[h] {
			if first := (i % 36) < 18; y > 0 && first == (half == 0) {
				rows = append(rows, i)
			}
		}
		labels := make([]int, len(rows))
		for r, i := range rows {
			labels[r] = Y[h][i]
		}
		s.Domains = append(s.Domains, &dataset.File{Name: fmt.Sprintf("V%d", v+1), X: rowsOf(X[h], rows), Labels: labels})
	}
	return s, nil
}

// rowsOf returns the rows of X, in order, as a new matrix.
func rowsOf(X *mat.Dense, rows []int) *mat.Dense {
	_, c := X.Dims()
	out := mat.NewDense(len(rows), c, nil)
	for r, i := range rows {
		out.SetRow(r, X.RawRowView(i))
	}
	return out
}

// landmineGroups are the suite's landmine domains: groups of consecutive
// minefields (numbered from 1), three of the foliated fields 1–15 and three
// of the bare or desert fields 16–29.
var landmineGroups = [][2]int{{1, 5}, {6, 10}, {11, 15}, {16, 20}, {21, 25}, {26, 29}}

// loadSuiteLandmine reads the 29 minefields of LandmineData.mat (one cell
// per field) and pools them into the six landmineGroups: 9 features, mine
// or clutter (about 6% mines).
func loadSuiteLandmine(dir string, _ uint64) (*SuiteSet, error) {
	path := filepath.Join(dir, "LandmineData.mat")
	if err := present(path); err != nil {
		return nil, err
	}
	fields, err := dataset.ReadMATCells(path, "feature", "label")
	if err != nil {
		return nil, fmt.Errorf("bench: suite: %w", err)
	}
	if len(fields) != 29 {
		return nil, fmt.Errorf("bench: suite: %s: %d minefields, want 29", path, len(fields))
	}
	s := &SuiteSet{Name: "landmine", Balanced: true, Protocol: "29 minefields pooled into 6 groups of consecutive fields (3 foliated, 3 bare), 9 radar features, mine or clutter"}
	for _, g := range landmineGroups {
		var X []*mat.Dense
		var y []int
		for f := g[0]; f <= g[1]; f++ {
			X = append(X, fields[f-1].X)
			y = append(y, fields[f-1].Labels...)
		}
		s.Domains = append(s.Domains, &dataset.File{Name: fmt.Sprintf("fields %d-%d", g[0], g[1]), X: stack(X), Labels: y})
	}
	return s, nil
}

// stack returns the rows of the matrices, in order, as one matrix.
func stack(Xs []*mat.Dense) *mat.Dense {
	var doms []dataset.Domain
	for _, X := range Xs {
		doms = append(doms, dataset.Domain{X: X})
	}
	X, _ := dataset.Pool(doms)
	return X
}

// SuiteOptions configure RunSuite.
type SuiteOptions struct {
	// Methods are names of adapt.New (nil: all).
	Methods []string
	// Config builds every method (seed, dictionary settings, row cap).
	Config adapt.Config
	// Workers bounds the fits run at once; 0: GOMAXPROCS. Results do not
	// depend on it.
	Workers int
	// Scorers, if any, score every fit without target labels
	// (SuiteResult.Selection; SummarizeSelection). Their refits run in
	// the fit's job, after it.
	Scorers []selection.Scorer
	// SelectAmong, when not empty, restricts the scorers to these methods,
	// as dadil adapt --methods LIST --select would: the other methods are
	// neither scored nor in the pooled scorers' ensemble, and the
	// scorers' picks are among these (SummarizeSelection), while the
	// oracle stays the best of all methods.
	SelectAmong []string
	// Standard scales the features of every problem to zero mean and
	// unit variance over all its domains together, as dadil adapt and
	// dadil bench suite do by default (--scale standard); false scales
	// them to [0, 1] (--scale minmax, SuiteSet.Problem).
	Standard bool
	// ExtraAtoms, when not empty, chooses DaDiL's number of atoms beyond
	// the sources per target among these, without target labels
	// (selection.ExtraAtoms; dadil bench suite --atoms auto): dadil-r and
	// dadil-e are then fitted, and scored, with the choice
	// (SuiteResult.ExtraAtoms), whose cost counts in their Seconds.
	ExtraAtoms []int
	// Progress, if not nil, receives a line per finished fit.
	Progress func(done, total int, what string, elapsed time.Duration)
}

// SuiteResult is the score of one method on one experiment of the suite.
type SuiteResult struct {
	// Seed is the run's seed (adapt.Config.Seed, and the draw of the
	// sets that draw their rows): results of several seeds can be
	// summarised together (MergeSuiteResults).
	Seed     uint64  `json:"seed"`
	Set      string  `json:"set"`
	Target   string  `json:"target"`
	Method   string  `json:"method"`
	Accuracy float64 `json:"accuracy"` // percent of the target rows
	Balanced float64 `json:"balanced_accuracy"`
	// Score is the set's metric: Balanced or Accuracy.
	Score   float64 `json:"score"`
	Seconds float64 `json:"seconds"` // fit, shared by the -R and -E siblings, and prediction
	// ExtraAtoms is DaDiL's number of atoms beyond the sources chosen for
	// this target (SuiteOptions.ExtraAtoms), nil when none was chosen.
	ExtraAtoms *int `json:"extra_atoms,omitempty"`
	// Selection holds the value of every scorer of SuiteOptions.Scorers,
	// in their order; none reads the target labels.
	Selection []selection.Value `json:"selection,omitempty"`

	// proba holds, for the pooled scorers, the class probabilities of the
	// target rows until every method of the experiment is fitted.
	proba *mat.Dense
}

// suiteJob is one fit: a group of methods on one problem.
type suiteJob struct {
	set     *SuiteSet
	problem *dataset.Loaded
	target  string
	group   []string
}

// RunSuite fits every requested method on every experiment of the sets
// (each domain in turn the target) and scores it on the target's labels.
// Methods that share a fit (adapt.Group) are fitted once.
func RunSuite(sets []*SuiteSet, opt SuiteOptions) ([]SuiteResult, error) {
	methods := opt.Methods
	if methods == nil {
		methods = adapt.Names()
	}
	var jobs []suiteJob
	for _, s := range sets {
		for t := range s.Domains {
			sc := dataset.ScaleMinMax
			if opt.Standard {
				sc = dataset.ScaleStandard
			}
			p, err := s.ProblemScaled(t, sc)
			if err != nil {
				return nil, err
			}
			for _, g := range adapt.Group(methods) {
				jobs = append(jobs, suiteJob{set: s, problem: p, target: s.Domains[t].Name, group: g})
			}
		}
	}
	results := make([][]SuiteResult, len(jobs))
	start := time.Now()
	done := 0
	err := par.Run(len(jobs), opt.Workers, func(i int) error {
		var err error
		among := selection.Among(opt.SelectAmong)
		results[i], err = runSuiteJob(jobs[i], &opt.Config, among.Scorers(opt.Scorers, jobs[i].group), opt.ExtraAtoms)
		for n := range results[i] {
			if r := &results[i][n]; !among.Scores(r.Method) {
				r.Selection, r.proba = nil, nil
			}
		}
		return err
	}, func(i int) {
		done++
		if opt.Progress != nil {
			j := jobs[i]
			opt.Progress(done, len(jobs), fmt.Sprintf("%s on %s", strings.Join(j.group, "/"), j.problem.Name), time.Since(start))
		}
	})
	if err != nil {
		return nil, err
	}
	var out []SuiteResult
	for _, r := range results {
		out = append(out, r...)
	}
	if selection.Pooled(opt.Scorers) {
		poolSuite(out, opt.Scorers)
	}
	return out, nil
}

// poolSuite fills in the values of the pooled scorers, experiment by
// experiment: every method fitted on the same target is scored with the
// others (but those SuiteOptions.SelectAmong leaves out, whose values
// are nil).
func poolSuite(results []SuiteResult, scorers []selection.Scorer) {
	for _, rows := range experimentRows(results) {
		values := make([][]selection.Value, len(rows))
		probas := make([]*mat.Dense, len(rows))
		for n, i := range rows {
			values[n], probas[n] = results[i].Selection, results[i].proba
			results[i].proba = nil
		}
		selection.Pool(values, probas, scorers)
	}
}

// runSuiteJob fits one group on its problem, scores its members on the
// target labels, then with the scorers; DaDiL's group with the number of
// atoms beyond the sources chosen among extras, when given.
func runSuiteJob(j suiteJob, cfg *adapt.Config, scorers []selection.Scorer, extras []int) ([]SuiteResult, error) {
	t0 := time.Now()
	chosen, cfg, err := chooseExtraAtoms(j, cfg, extras)
	if err != nil {
		return nil, err
	}
	m, err := cfg.New(j.group[0])
	if err != nil {
		return nil, err
	}
	if err := m.Fit(j.problem.Problem); err != nil {
		return nil, fmt.Errorf("bench: suite: %s on %s: %w", j.group[0], j.problem.Name, err)
	}
	fit := time.Since(t0).Seconds()
	var out []SuiteResult
	for i, pr := range adapt.Predictors(m)[:len(j.group)] {
		t1 := time.Now()
		pred, err := pr.Predict(j.problem.Test.X)
		if err != nil {
			return nil, fmt.Errorf("bench: suite: %s on %s: %w", j.group[i], j.problem.Name, err)
		}
		r := SuiteResult{Seed: cfg.Seed, Set: j.set.Name, Target: j.target, Method: j.group[i], Seconds: fit + time.Since(t1).Seconds(), ExtraAtoms: chosen}
		acc, err := classify.Accuracy(pred, j.problem.Test.Y)
		if err != nil {
			return nil, err
		}
		bal, err := classify.BalancedAccuracy(pred, j.problem.Test.Y)
		if err != nil {
			return nil, err
		}
		r.Accuracy, r.Balanced, r.Score = 100*acc, 100*bal, 100*acc
		if j.set.Balanced {
			r.Score = r.Balanced
		}
		out = append(out, r)
	}
	c := &selection.Candidate{Method: m, Build: cfg.Builder(j.group[0]), Predictors: len(j.group)}
	for i, v := range selection.Values(j.problem.Problem, c, scorers) {
		out[i].Selection = v
	}
	for i, P := range selection.PoolProba(j.problem.Problem, c, scorers) {
		out[i].proba = P
	}
	return out, nil
}

// chooseExtraAtoms returns, for DaDiL's group (dadil-r, dadil-e) and a
// non-empty extras, the number of atoms beyond the sources that
// selection.ExtraAtoms chooses on the job's problem and a copy of cfg
// with it; otherwise nil and cfg.
func chooseExtraAtoms(j suiteJob, cfg *adapt.Config, extras []int) (*int, *adapt.Config, error) {
	if len(extras) == 0 || (j.group[0] != "dadil-r" && j.group[0] != "dadil-e") {
		return nil, cfg, nil
	}
	ch, err := selection.ExtraAtoms(j.problem.Problem, *cfg, extras)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: suite: %s on %s: %w", j.group[0], j.problem.Name, err)
	}
	c := selection.WithExtraAtoms(*cfg, ch.Extra)
	return &ch.Extra, &c, nil
}

// MergeSuiteResults joins the results of several runs, in order, and
// refuses two results of the same seed, set, target and method (one run
// given twice, or two runs of one seed).
func MergeSuiteResults(runs ...[]SuiteResult) ([]SuiteResult, error) {
	type key struct {
		seed                uint64
		set, target, method string
	}
	seen := map[key]bool{}
	var out []SuiteResult
	for _, run := range runs {
		for _, r := range run {
			k := key{r.Seed, r.Set, r.Target, r.Method}
			if seen[k] {
				return nil, fmt.Errorf("bench: suite: two results of %s on %s → %s with seed %d", r.Method, r.Set, r.Target, r.Seed)
			}
			seen[k] = true
			out = append(out, r)
		}
	}
	return out, nil
}

// SuiteSummary holds, for every set (in the order given) and method, the
// mean score over the set's targets (and seeds) and the method's rank among the
// methods on that set (1 the best; ties share the mean of their ranks).
type SuiteSummary struct {
	Sets, Methods []string
	Mean, Rank    [][]float64 // [method][set]
	// AvgRank is every method's mean rank over the sets.
	AvgRank []float64
}

// Summarize averages results per set and method and ranks the methods.
// Methods and sets come in the order given; a method without results on a
// set has a NaN mean there and the worst rank.
func Summarize(results []SuiteResult, sets, methods []string) *SuiteSummary {
	sum := &SuiteSummary{Sets: sets, Methods: methods}
	type key struct{ m, s string }
	acc := map[key][]float64{}
	for _, r := range results {
		acc[key{r.Method, r.Set}] = append(acc[key{r.Method, r.Set}], r.Score)
	}
	sum.Mean = make([][]float64, len(methods))
	sum.Rank = make([][]float64, len(methods))
	for i, m := range methods {
		sum.Mean[i] = make([]float64, len(sets))
		sum.Rank[i] = make([]float64, len(sets))
		for j, s := range sets {
			v := acc[key{m, s}]
			if len(v) == 0 {
				sum.Mean[i][j] = math.NaN()
				continue
			}
			var t float64
			for _, x := range v {
				t += x
			}
			sum.Mean[i][j] = t / float64(len(v))
		}
	}
	for j := range sets {
		col := make([]float64, len(methods))
		for i := range methods {
			col[i] = sum.Mean[i][j]
		}
		for i, r := range ranks(col) {
			sum.Rank[i][j] = r
		}
	}
	sum.AvgRank = make([]float64, len(methods))
	for i := range methods {
		for j := range sets {
			sum.AvgRank[i] += sum.Rank[i][j] / float64(len(sets))
		}
	}
	return sum
}

// ranks returns the rank of every value, highest first from 1; equal
// values share the mean of their ranks; NaN ranks last.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	key := func(i int) float64 {
		if math.IsNaN(v[i]) {
			return math.Inf(-1)
		}
		return v[i]
	}
	sort.SliceStable(idx, func(a, b int) bool { return key(idx[a]) > key(idx[b]) })
	out := make([]float64, len(v))
	for a := 0; a < len(idx); {
		b := a
		for b+1 < len(idx) && key(idx[b+1]) == key(idx[a]) {
			b++
		}
		r := float64(a+b)/2 + 1
		for c := a; c <= b; c++ {
			out[idx[c]] = r
		}
		a = b + 1
	}
	return out
}

// setsHeader returns the header and rule of a Markdown table of a first
// column, a column per set and a last column, those but the first
// right-aligned.
func setsHeader(first string, sets []string, last string) string {
	h := "| " + first + " |"
	for _, set := range sets {
		h += " " + set + " |"
	}
	return h + " " + last + " |\n|---|" + strings.Repeat("---:|", len(sets)+1) + "\n"
}

// Markdown formats the summary: one row per method, the mean score of
// every set and its rank in brackets, and the mean rank.
func (s *SuiteSummary) Markdown() string {
	var b strings.Builder
	b.WriteString(setsHeader("method", s.Sets, "mean rank"))
	for i, m := range s.Methods {
		fmt.Fprintf(&b, "| %s |", m)
		for j := range s.Sets {
			fmt.Fprintf(&b, " %.2f (%g) |", s.Mean[i][j], s.Rank[i][j])
		}
		fmt.Fprintf(&b, " %.2f |\n", s.AvgRank[i])
	}
	return b.String()
}
