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
	if s == nil {
		return nil, fmt.Errorf("analyze: hull without settings")
	}
	steps := s.Steps
	if steps == 0 {
		steps = 10
	}
	Ks := s.Atoms
	if Ks == nil {
		Ks = []int{3, 4, 5, 6, 7, 8}
	}
	draws := s.Draws
	if draws == 0 {
		draws = 20
	}
	if draws < 0 {
		return nil, fmt.Errorf("analyze: hull: %d draws", draws)
	}
	for _, K := range Ks {
		if K < 2 {
			return nil, fmt.Errorf("analyze: hull: K = %d (want ≥ 2)", K)
		}
	}
	var grid [][]float64
	if steps > 0 {
		grid, _ = SimplexGrid(3, steps)
	}
	// Phase 1: the dictionaries, one per (problem, K).
	type fitJob struct{ p, K int }
	var fits []fitJob
	for i := range problems {
		if err := check(problems[i]); err != nil {
			return nil, err
		}
		ks := slices.Clone(Ks)
		if steps > 0 && !slices.Contains(ks, 3) {
			ks = append(ks, 3)
		}
		for _, K := range ks {
			fits = append(fits, fitJob{i, K})
		}
	}
	if len(fits) == 0 {
		return nil, fmt.Errorf("analyze: hull: nothing to do")
	}
	// Phase 2: the points, one per (fit, α).
	type evalJob struct {
		fit   int
		alpha []float64
	}
	var evals []evalJob
	gridFit := map[int]int{}     // problem → fit index of its K = 3 dictionary
	drawStart := map[int]int{}   // fit → index of its first draw in evals
	learnedEval := map[int]int{} // fit → index of its α_T evaluation, added once the fit is known
	for f, j := range fits {
		if j.K == 3 && steps > 0 {
			gridFit[j.p] = f
		}
		if slices.Contains(Ks, j.K) {
			h := fnv.New64a()
			h.Write([]byte(problems[j.p].Name + "/" + strconv.Itoa(j.K)))
			rng := rand.New(rand.NewPCG(s.Dictionary.Seed, h.Sum64()))
			drawStart[f] = len(evals)
			for range draws {
				evals = append(evals, evalJob{f, UniformSimplex(rng, j.K)})
			}
		}
	}
	gridStart := map[int]int{}
	for p := range problems {
		f, ok := gridFit[p]
		if !ok {
			continue
		}
		gridStart[p] = len(evals)
		for _, a := range grid {
			evals = append(evals, evalJob{f, a})
		}
	}
	for f := range fits {
		learnedEval[f] = len(evals)
		evals = append(evals, evalJob{f, nil}) // nil: the learned α_T
	}

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
		set.Atoms = fits[i].K
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

	res := &HullResult{}
	for p := range problems {
		f, ok := gridFit[p]
		if !ok {
			continue
		}
		g := HullGrid{Problem: problems[p].Name, Steps: steps, Learned: points[learnedEval[f]]}
		g.Points = points[gridStart[p] : gridStart[p]+len(grid)]
		var w, r, e []float64
		for _, q := range g.Points {
			w = append(w, q.W2)
			r = append(r, float64(q.AccuracyR))
			e = append(e, float64(q.AccuracyE))
		}
		g.CorrelationR, g.CorrelationE = Score(Correlation(w, r)), Score(Correlation(w, e))
		res.Grids = append(res.Grids, g)
	}
	for f, j := range fits {
		st, ok := drawStart[f]
		if !ok {
			continue
		}
		res.Draws = append(res.Draws, HullDraws{
			Problem: problems[j.p].Name, Atoms: j.K, Learned: points[learnedEval[f]],
			Draws: points[st : st+draws],
		})
	}
	return res, nil
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
