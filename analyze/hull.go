package analyze

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/par"
)

// HullSettings configure Hull.
type HullSettings struct {
	// Dictionary holds the settings of every fit; Atoms is overridden
	// (3 for the grid, each of Atoms below for the draws).
	Dictionary dictionary.Settings
	// Classifier trains DaDiL-R and DaDiL-E (nil: a softmax regression
	// with the default penalty).
	Classifier classify.Trainer
	// Steps is m, the grid over Δ₃ has step 1/m ((m+1)(m+2)/2 points);
	// 0 means 10, a negative value skips the grid.
	Steps int
	// Atoms lists the K of the random-coordinate study (paper Figure 6);
	// nil means 3 … 8, an empty non-nil slice skips it.
	Atoms []int
	// Draws is the number of coordinates drawn uniformly from Δ_K for
	// every K; 0 means 20.
	Draws int
	// Workers bounds the fits and evaluations run at once; 0 means
	// GOMAXPROCS.
	Workers int
	// Progress, if not nil, is called after every fit and evaluation.
	Progress func(done, total int, what string)
}

// HullPoint is one point α of the Wasserstein hull of the atoms:
// W2 = W₂(B(α; P), Q̂_T) on the target's rows, and the accuracies of
// DaDiL-R trained on B(α; P) and of DaDiL-E weighted by α.
type HullPoint struct {
	Alpha     []float64 `json:"alpha"`
	W2        float64   `json:"w2"`
	AccuracyR Score     `json:"accuracy_r"`
	AccuracyE Score     `json:"accuracy_e"`
}

// HullGrid is the grid study of one problem (paper Figures 4 and 5) with
// K = 3 atoms.
type HullGrid struct {
	Problem string `json:"problem"`
	Steps   int    `json:"steps"`
	// Learned is the point of the learned α_T.
	Learned HullPoint   `json:"learned"`
	Points  []HullPoint `json:"points"` // in the order of SimplexGrid(3, Steps)
	// CorrelationR and CorrelationE are Pearson's correlations between
	// W2 and the accuracies over the grid.
	CorrelationR Score `json:"correlation_r"`
	CorrelationE Score `json:"correlation_e"`
}

// HullDraws is the random-coordinate study of one problem and one K (paper
// Figure 6).
type HullDraws struct {
	Problem string      `json:"problem"`
	Atoms   int         `json:"atoms"`
	Learned HullPoint   `json:"learned"`
	Draws   []HullPoint `json:"draws"`
}

// HullResult holds both studies.
type HullResult struct {
	Grids []HullGrid  `json:"grids,omitempty"`
	Draws []HullDraws `json:"draws,omitempty"`
}

// Hull explores the Wasserstein hull M(P) = {B(α; P) : α ∈ Δ_K} of learned
// dictionaries (paper Section 5, "how well do α ∈ Δ_K perform?"): for every
// problem it fits a dictionary with K = 3 atoms and evaluates every α of a
// uniform grid over Δ₃ — the reconstruction loss W₂(B(α; P), Q̂_T) against
// the target's unlabeled rows, the accuracy of DaDiL-R trained on B(α; P)
// and of DaDiL-E with the atom classifiers weighted by α — and the learned
// α_T; then, for every K of s.Atoms, it fits a dictionary and evaluates
// s.Draws coordinates drawn uniformly from Δ_K against α_T. Fits, then
// evaluations, run in parallel; results depend only on the settings' seed.
// The predictors are the paper's, without a transport step towards the
// target (dictionary.Settings.Transport and EnsembleTransport are set to
// none): a transport step would train every classifier on the target rows,
// whatever α.
func Hull(problems []*dataset.Problem, s *HullSettings) (*HullResult, error) {
	pl, err := planHull(problems, s)
	if err != nil {
		return nil, err
	}
	points, err := pl.run(problems, s)
	if err != nil {
		return nil, err
	}
	return pl.result(problems, points), nil
}

// hullFit is one dictionary of the study: problem p with K atoms.
type hullFit struct{ p, K int }

// hullEval is one point of the study: α on the dictionary fits[fit]; a
// nil alpha is the learned α_T.
type hullEval struct {
	fit   int
	alpha []float64
}

// hullPlan lists the fits and evaluations of a hull study and where each
// study's points sit among the evaluations.
type hullPlan struct {
	steps, draws int
	atoms        []int       // the K of the random-coordinate study
	grid         [][]float64 // SimplexGrid(3, steps), nil without a grid
	fits         []hullFit
	evals        []hullEval
	gridFit      map[int]int // problem → fit index of its K = 3 dictionary
	gridStart    map[int]int // problem → index of its first grid point in evals
	drawStart    map[int]int // fit → index of its first draw in evals
	learnedEval  map[int]int // fit → index of its α_T evaluation
}

// planHull checks the settings and problems and lays out the study: a
// dictionary per (problem, K) of s.Atoms, plus K = 3 for the grid; then
// s.Draws coordinates drawn from Δ_K per fit of s.Atoms, seeded by the
// problem's name and K, the grid points of every problem's K = 3 fit, and
// the learned α_T of every fit.
func planHull(problems []*dataset.Problem, s *HullSettings) (*hullPlan, error) {
	pl, err := hullDefaults(s)
	if err != nil {
		return nil, err
	}
	if pl.steps > 0 {
		pl.grid, _ = SimplexGrid(3, pl.steps)
	}
	for i := range problems {
		if err := check(problems[i]); err != nil {
			return nil, err
		}
		ks := slices.Clone(pl.atoms)
		if pl.steps > 0 && !slices.Contains(ks, 3) {
			ks = append(ks, 3)
		}
		for _, K := range ks {
			pl.fits = append(pl.fits, hullFit{i, K})
		}
	}
	if len(pl.fits) == 0 {
		return nil, fmt.Errorf("analyze: hull: nothing to do")
	}
	pl.gridFit, pl.gridStart = map[int]int{}, map[int]int{}
	pl.drawStart, pl.learnedEval = map[int]int{}, map[int]int{}
	for f, j := range pl.fits {
		if j.K == 3 && pl.steps > 0 {
			pl.gridFit[j.p] = f
		}
		if slices.Contains(pl.atoms, j.K) {
			h := fnv.New64a()
			h.Write([]byte(problems[j.p].Name + "/" + strconv.Itoa(j.K)))
			rng := rand.New(rand.NewPCG(s.Dictionary.Seed, h.Sum64()))
			pl.drawStart[f] = len(pl.evals)
			for range pl.draws {
				pl.evals = append(pl.evals, hullEval{f, UniformSimplex(rng, j.K)})
			}
		}
	}
	for p := range problems {
		f, ok := pl.gridFit[p]
		if !ok {
			continue
		}
		pl.gridStart[p] = len(pl.evals)
		for _, a := range pl.grid {
			pl.evals = append(pl.evals, hullEval{f, a})
		}
	}
	for f := range pl.fits {
		pl.learnedEval[f] = len(pl.evals)
		pl.evals = append(pl.evals, hullEval{f, nil}) // nil: the learned α_T
	}
	return pl, nil
}

// hullDefaults returns a plan holding the grid's steps, the K and the
// number of draws of s, defaults applied, or the error of an invalid one.
func hullDefaults(s *HullSettings) (*hullPlan, error) {
	if s == nil {
		return nil, fmt.Errorf("analyze: hull without settings")
	}
	pl := &hullPlan{steps: s.Steps, atoms: s.Atoms, draws: s.Draws}
	if pl.steps == 0 {
		pl.steps = 10
	}
	if pl.atoms == nil {
		pl.atoms = []int{3, 4, 5, 6, 7, 8}
	}
	if pl.draws == 0 {
		pl.draws = 20
	}
	if pl.draws < 0 {
		return nil, fmt.Errorf("analyze: hull: %d draws", pl.draws)
	}
	for _, K := range pl.atoms {
		if K < 2 {
			return nil, fmt.Errorf("analyze: hull: K = %d (want ≥ 2)", K)
		}
	}
	return pl, nil
}

// run fits the plan's dictionaries, then evaluates its points, each step
// in parallel, and returns the points in the order of pl.evals.
func (pl *hullPlan) run(problems []*dataset.Problem, s *HullSettings) ([]HullPoint, error) {
	fits, evals := pl.fits, pl.evals
	total := len(fits) + len(evals)
	done := 0
	report := func(what string) {
		done++
		if s.Progress != nil {
			s.Progress(done, total, what)
		}
	}
	dicts := make([]*dictionary.Dictionary, len(fits))
	models := make([]*dictionary.Model, len(fits))
	err := par.Run(len(fits), s.Workers, func(i int) error {
		set := inner(s.Dictionary, len(fits), s.Workers)
		set.Transport, set.EnsembleTransport = dictionary.TransportNone, dictionary.TransportNone
		set.Atoms, set.ExtraAtoms = fits[i].K, 0
		var err error
		dicts[i], models[i], err = fit(problems[fits[i].p], set, s.Classifier)
		return err
	}, func(i int) { report(fmt.Sprintf("%s: dictionary with K = %d", problems[fits[i].p].Name, fits[i].K)) })
	if err != nil {
		return nil, err
	}
	points := make([]HullPoint, len(evals))
	err = par.Run(len(evals), s.Workers, func(i int) error {
		e := evals[i]
		p := problems[fits[e.fit].p]
		var err error
		points[i], err = evaluate(p, dicts[e.fit], models[e.fit], e.alpha, s.Dictionary.Seed, s.Classifier)
		if err != nil {
			at := fmt.Sprint(e.alpha)
			if e.alpha == nil {
				at = "the learned α_T"
			}
			return fmt.Errorf("analyze: %s: α = %s: %w", p.Name, at, err)
		}
		return nil
	}, func(i int) {
		report(fmt.Sprintf("%s: K = %d, α %d", problems[fits[evals[i].fit].p].Name, fits[evals[i].fit].K, i+1))
	})
	if err != nil {
		return nil, err
	}
	return points, nil
}

// result gathers the evaluated points into the grid study of every problem
// — with Pearson's correlations between W2 and the accuracies — and the
// random-coordinate study of every fit of s.Atoms.
func (pl *hullPlan) result(problems []*dataset.Problem, points []HullPoint) *HullResult {
	res := &HullResult{}
	for p := range problems {
		f, ok := pl.gridFit[p]
		if !ok {
			continue
		}
		g := HullGrid{Problem: problems[p].Name, Steps: pl.steps, Learned: points[pl.learnedEval[f]]}
		g.Points = points[pl.gridStart[p] : pl.gridStart[p]+len(pl.grid)]
		var w, r, e []float64
		for _, q := range g.Points {
			w = append(w, q.W2)
			r = append(r, float64(q.AccuracyR))
			e = append(e, float64(q.AccuracyE))
		}
		g.CorrelationR, g.CorrelationE = Score(Correlation(w, r)), Score(Correlation(w, e))
		res.Grids = append(res.Grids, g)
	}
	for f, j := range pl.fits {
		st, ok := pl.drawStart[f]
		if !ok {
			continue
		}
		res.Draws = append(res.Draws, HullDraws{
			Problem: problems[j.p].Name, Atoms: j.K, Learned: points[pl.learnedEval[f]],
			Draws: points[st : st+pl.draws],
		})
	}
	return res
}

// evaluate scores one point α of the hull of d; a nil alpha is the
// learned α_T, whose reconstruction and DaDiL-R classifier m already holds.
func evaluate(p *dataset.Problem, d *dictionary.Dictionary, m *dictionary.Model, alpha []float64, seed uint64, t classify.Trainer) (HullPoint, error) {
	at := *m
	if alpha != nil {
		h, rec, err := d.ClassifierR(alpha, t, seed)
		if err != nil {
			return HullPoint{}, err
		}
		at.Alpha, at.R, at.Reconstruction = alpha, h, rec
	}
	pt := HullPoint{Alpha: slices.Clone(at.Alpha)}
	var err error
	if pt.W2, err = W2(at.Reconstruction.X, p.Target.X); err != nil {
		return pt, err
	}
	if pt.AccuracyR, err = accuracy(p, at.PredictR); err != nil {
		return pt, err
	}
	pt.AccuracyE, err = accuracy(p, at.PredictE)
	return pt, err
}
