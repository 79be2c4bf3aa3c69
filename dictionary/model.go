package dictionary

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/barycenter"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/par"
	"github.com/dadil/dadil/ot"
)

// DefaultReconstructionBlock is the default of
// Settings.ReconstructionBlock.
const DefaultReconstructionBlock = 2048

// Reconstruct returns B(α; P), the labeled Wasserstein barycenter of the
// full atoms at the coordinates alpha (Algorithm 1 with the dictionary's
// N_itb, τ and β), with n support points initialised from the atoms' points.
// For the target's coordinates this is DaDiL-R's labeled training set.
//
// Atoms of more than Settings.ReconstructionBlock points (default 2048;
// more than 20 classes at the default 100 points per class) are
// reconstructed in blocks: every atom's points are split into the same
// number B of blocks of at most that size, stratified by the argmax of
// their labels (each class's points, in an order shuffled by seed, dealt
// in turn), and B(α; P) is the union of the barycenters of the atoms' b-th
// blocks. Each block is a sample of its atom with nearly the same class
// proportions, of about the size of the mini-batches the dictionary was
// learned with, and the union has n points as the whole barycenter has.
// It bounds the memory at about (2K + 1) block² numbers instead of
// (2K + 1) n² (0.24 GB instead of 22 GB at 200 classes and K = 3), and
// the time, whose exact assignments grow like n³. In the result the plans
// are block-diagonal (in the atoms' indices), Costs and Cost are the
// blocks' values weighted by their sizes, History the same weighted J per
// iteration (a block that stopped early counts with its last J),
// Iterations the most any block made and Converged whether every block
// converged.
func (d *Dictionary) Reconstruct(alpha []float64, seed uint64) (*barycenter.Result, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	ms := make([]barycenter.Measure, len(d.Atoms))
	for k, a := range d.Atoms {
		ms[k] = barycenter.Measure{X: a.X, Y: a.Labels()}
	}
	n, _ := d.Atoms[0].X.Dims()
	same := true
	for _, a := range d.Atoms {
		r, _ := a.X.Dims()
		same = same && r == n
		n = max(n, r)
	}
	block := d.Settings.ReconstructionBlock
	if block == 0 {
		block = DefaultReconstructionBlock
	}
	if block > 0 && n > block && same {
		return d.reconstructBlocks(ms, alpha, block, seed)
	}
	res, err := barycenter.Labeled(ms, alpha, d.barycenterSettings(n, seed, 0))
	if err != nil {
		return nil, fmt.Errorf("dictionary: reconstruction: %w", err)
	}
	return res, nil
}

// check verifies that d is a whole dictionary, as Fit returns one: at
// least one atom, every atom with points, label logits for each of them
// and the same number of features, and coordinates for every atom.
func (d *Dictionary) check() error {
	if d == nil || len(d.Atoms) == 0 {
		return errors.New("dictionary: the dictionary has no atoms")
	}
	if d.Classes < 1 {
		return fmt.Errorf("dictionary: the dictionary has %d classes", d.Classes)
	}
	var dim int
	for k, a := range d.Atoms {
		if a.X == nil || a.X.IsEmpty() {
			return fmt.Errorf("dictionary: atom %d has no points", k)
		}
		n, dk := a.X.Dims()
		if k == 0 {
			dim = dk
		} else if dk != dim {
			return fmt.Errorf("dictionary: atom %d has %d features, atom 0 has %d", k, dk, dim)
		}
		if a.Logits == nil || a.Logits.IsEmpty() {
			return fmt.Errorf("dictionary: atom %d has no label logits", k)
		}
		if r, c := a.Logits.Dims(); r != n || c != d.Classes {
			return fmt.Errorf("dictionary: atom %d has %d×%d label logits, want %d×%d", k, r, c, n, d.Classes)
		}
	}
	if d.Alpha == nil || d.Alpha.IsEmpty() {
		return errors.New("dictionary: the dictionary has no coordinates α")
	}
	if _, K := d.Alpha.Dims(); K != len(d.Atoms) {
		return fmt.Errorf("dictionary: α has %d columns for %d atoms", K, len(d.Atoms))
	}
	return nil
}

// check verifies that m is a whole model, as NewModel returns one.
func (m *Model) check() error {
	if m == nil {
		return errors.New("dictionary: no model")
	}
	if err := m.Dict.check(); err != nil {
		return err
	}
	if m.R == nil || len(m.E) != len(m.Dict.Atoms) {
		return fmt.Errorf("dictionary: the model has no classifiers (%d for %d atoms)", len(m.E), len(m.Dict.Atoms))
	}
	for k, h := range m.E {
		if h == nil {
			return fmt.Errorf("dictionary: the model has no classifier for atom %d", k)
		}
	}
	return nil
}

// checkWeights verifies that alpha holds K weights on the simplex.
func checkWeights(alpha []float64, K int) error {
	if len(alpha) != K {
		return fmt.Errorf("dictionary: %d weights for %d atoms", len(alpha), K)
	}
	if ok, k, sum := linalg.OnSimplex(alpha, linalg.SimplexTol); k >= 0 {
		return fmt.Errorf("dictionary: weight %d is %g, not a non-negative number", k, alpha[k])
	} else if !ok {
		return fmt.Errorf("dictionary: the weights must lie on the simplex, but they sum to %.17g", sum)
	}
	return nil
}

// barycenterSettings are the settings of Reconstruct's barycenter of n
// points, or of its block b (from 1; 0 for the whole).
func (d *Dictionary) barycenterSettings(n int, seed uint64, b int) *barycenter.Settings {
	return &barycenter.Settings{
		Support:     n,
		MaxIter:     d.Settings.BarycenterIter,
		Tol:         d.Settings.BarycenterTol,
		Beta:        d.Settings.Beta,
		InitSamples: true,
		Rand:        rand.New(rand.NewPCG(seed, 0xb417+uint64(b))),
	}
}

// reconstructBlocks is Reconstruct for atoms of n > block points each.
func (d *Dictionary) reconstructBlocks(ms []barycenter.Measure, alpha []float64, block int, seed uint64) (*barycenter.Result, error) {
	K := len(ms)
	n, dim := ms[0].X.Dims()
	_, c := ms[0].Y.Dims()
	B := (n + block - 1) / block
	order := classOrder(ms, c, seed)
	res := &barycenter.Result{
		Measure: barycenter.Measure{X: mat.NewDense(n, dim, nil), Y: mat.NewDense(n, c, nil)},
		Plans:   make([]ot.Plan, K),
		Costs:   make([]float64, K),
		// Whether every block converged.
		Converged: true,
	}
	for k := range res.Plans {
		res.Plans[k].N, res.Plans[k].M = n, n
	}
	rows := make([][]int, K)
	at := 0 // first support row of the block
	// A block's buffers are garbage once it is solved: collect them
	// before the next block allocates as much (see releaseStep).
	release := bytesOf(reconstructionNumbers(float64(K), float64(block), float64(dim), float64(c), block)) > releaseThreshold
	for b := range B {
		if b > 0 && release {
			runtime.GC()
		}
		blk := make([]barycenter.Measure, K)
		for k, m := range ms {
			rows[k] = rows[k][:0]
			for t := b; t < n; t += B {
				rows[k] = append(rows[k], order[k][t])
			}
			blk[k] = barycenter.Measure{X: linalg.Rows(m.X, rows[k]), Y: linalg.Rows(m.Y, rows[k])}
		}
		nb := len(rows[0])
		r, err := barycenter.Labeled(blk, alpha, d.barycenterSettings(nb, seed, b+1))
		if err != nil {
			return nil, fmt.Errorf("dictionary: reconstruction block %d of %d: %w", b+1, B, err)
		}
		addBlock(res, r, rows, at)
		at += nb
	}
	res.W = ot.Uniform(n)
	return res, nil
}

// classOrder returns, for each atom k, its points by class (argmax of its
// c label columns), each class's points shuffled by a generator seeded
// from seed and k: block b of B takes order[k][b], order[k][b+B], …, so
// that every block has about the atom's class proportions.
func classOrder(ms []barycenter.Measure, c int, seed uint64) [][]int {
	order := make([][]int, len(ms))
	for k, m := range ms {
		rng := rand.New(rand.NewPCG(seed, 0xb10c+uint64(k)))
		byClass := make([][]int, c)
		for i, q := range classify.Argmax(m.Y) {
			byClass[q] = append(byClass[q], i)
		}
		for _, idx := range byClass {
			rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
			order[k] = append(order[k], idx...)
		}
	}
	return order
}

// addBlock adds the barycenter r of a block of n_b points to the
// reconstruction res of n: r's support fills res's rows from at, r's plan
// k (from the block's rows rows[k] of atom k) joins res's with its mass
// weighted by w = n_b/n, and the costs and the history J add with weight w.
func addBlock(res, r *barycenter.Result, rows [][]int, at int) {
	nb := len(rows[0])
	n, dim := res.X.Dims()
	_, c := res.Y.Dims()
	res.X.Slice(at, at+nb, 0, dim).(*mat.Dense).Copy(r.X)
	res.Y.Slice(at, at+nb, 0, c).(*mat.Dense).Copy(r.Y)
	w := float64(nb) / float64(n)
	for k, p := range r.Plans {
		g := &res.Plans[k]
		for e, l := range p.Row {
			g.Row = append(g.Row, rows[k][l])
			g.Col = append(g.Col, at+p.Col[e])
			g.Mass = append(g.Mass, p.Mass[e]*w)
		}
		res.Costs[k] += w * r.Costs[k]
	}
	res.Cost += w * r.Cost
	// Earlier blocks that stopped before this block's last iteration
	// count with their last J: the history's last entry so far.
	for len(res.History) < len(r.History) {
		last := 0.0
		if len(res.History) > 0 {
			last = res.History[len(res.History)-1]
		}
		res.History = append(res.History, last)
	}
	for it := range res.History {
		res.History[it] += w * r.History[min(it, len(r.History)-1)]
	}
	res.Iterations = max(res.Iterations, r.Iterations)
	res.Converged = res.Converged && r.Converged
}

// Model classifies a target domain with a dictionary, in the two ways of
// the paper (Section 4.2):
//
//   - DaDiL-R trains one classifier on the reconstruction B(α_T; P) of the
//     target, whose labels are the propagated soft labels (by default,
//     with FitModel, beside the sources' rows moved along the dictionary:
//     Settings.Transport, TransportSources);
//   - DaDiL-E trains one classifier h_k per atom, on the atom's soft
//     labels, and predicts Σ_k α_T,k h_k(x).
//
// With Settings.HardLabels both train on the argmax of those labels.
//
// With the dictionary returned by WBR the same two predictors are WBR-R and
// WBR-E.
type Model struct {
	Dict   *Dictionary
	Target int       // row of Dict.Alpha holding α_T
	Alpha  []float64 // α_T
	R      classify.Classifier
	E      []classify.Classifier
	// Reconstruction is B(α_T; P), on which R was trained.
	Reconstruction *barycenter.Result
	// TrainingR is the weighted labeled set R was trained on: the
	// reconstruction, moved or beside the sources' moved rows as
	// Settings.Transport says. Model files keep neither it nor
	// Reconstruction.
	TrainingR *TrainingSet
	// Penalty is the choice of the classifiers' penalty that FitModel
	// made on the sources (Settings.ChoosePenalty), nil when it made none.
	Penalty *classify.PenaltyChoice
	// Elapsed is the time NewModel took: the reconstruction and the
	// classifiers.
	Elapsed time.Duration
}

// FitModel learns a dictionary of the problem's domains (Fit on
// p.Domains(), paper Algorithm 2) and trains the DaDiL-R and DaDiL-E
// classifiers of its target (NewModel) with the trainer c (nil: a softmax
// regression with the default penalty), the reconstruction seeded by the
// dictionary's seed. The model's Dict is the dictionary. p.Test is not
// read.
func FitModel(p *dataset.Problem, s *Settings, c classify.Trainer) (*Model, error) {
	if p == nil {
		return nil, errors.New("dictionary: no problem")
	}
	d, err := fit(p.Domains(), p.Classes, s, MemoryEstimate.Peak)
	if err != nil {
		return nil, err
	}
	releaseStep(SizesOf(p.Domains(), p.Classes), &d.Settings)
	var rows modelRows
	if toTarget(d.Settings.Transport) || toTarget(d.Settings.EnsembleTransport) {
		rows.target = d.transportRows(p.Target.X, d.Settings.Seed)
	}
	choose, err := choosesPenalty(&d.Settings, c)
	if err != nil {
		return nil, err
	}
	if choose || d.Settings.Transport == TransportSources {
		for _, s := range p.Sources {
			rows.sources = append(rows.sources, classify.Labeled{X: s.X, Y: s.Y})
		}
	}
	rows.choose = choose
	return newModel(d, p.TargetIndex(), c, d.Settings.Seed, &rows)
}

// modelRows holds the rows a model's last steps read, beside the
// dictionary: the target's (a transport to them), the labeled sources (to
// move them along the dictionary, TransportSources, or to choose the
// penalty on, when choose is true), in the order of the rows of the
// dictionary's Alpha.
type modelRows struct {
	target  *mat.Dense
	sources []classify.Labeled
	choose  bool
}

// choosesPenalty reports whether FitModel chooses the penalty of the
// trainer t (Settings.ChoosePenalty), and an error if it should but t is
// not a penalised softmax regression.
func choosesPenalty(s *Settings, t classify.Trainer) (bool, error) {
	if !s.ChoosePenalty {
		return false, nil
	}
	if st, ok := t.(*classify.SoftmaxTrainer); t == nil || ok && (st.Settings == nil || !st.Settings.NoPenalty) {
		return true, nil
	}
	return false, fmt.Errorf("dictionary: Settings.ChoosePenalty chooses the penalty of a penalised softmax regression, not of a %s classifier", t.Name())
}

// NewModel trains the DaDiL-R and DaDiL-E classifiers of the domain in row
// target of d.Alpha with the trainer t (nil: a softmax regression with the
// default penalty); seed drives the reconstruction's initialisation.
func NewModel(d *Dictionary, target int, t classify.Trainer, seed uint64) (*Model, error) {
	return newModel(d, target, t, seed, &modelRows{})
}

// newModel is NewModel whose classifiers train on points moved towards the
// rows as Settings.Transport (DaDiL-R) and Settings.EnsembleTransport
// (DaDiL-E) say (without the rows they read: no transport), and, when
// rows.choose is true, the penalty of DaDiL-R's softmax regression is
// chosen on the sources (classify.ChoosePenalty) and given to the DaDiL-E
// classifiers. The DaDiL-R classifier and the K DaDiL-E classifiers train
// in parallel.
func newModel(d *Dictionary, target int, t classify.Trainer, seed uint64, rows *modelRows) (*Model, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	N, K := d.Alpha.Dims()
	if target < 0 || target >= N {
		return nil, fmt.Errorf("dictionary: target row %d outside the %d domains", target, N)
	}
	start := time.Now()
	m := &Model{Dict: d, Target: target, Alpha: mat.Row(nil, target, d.Alpha)}
	m.E = make([]classify.Classifier, K)
	onB := d.Settings.EnsembleTransport == TransportBarycenter
	rFirst := onB || rows.choose // the atoms move onto the reconstruction, or take R's penalty
	fitR := func() error {
		var err error
		var r *fittedR
		if r, err = d.classifierR(m.Alpha, t, seed, rows); err == nil {
			m.R, m.Reconstruction, m.TrainingR, m.Penalty = r.h, r.rec, r.train, r.penalty
		}
		return err
	}
	if rFirst {
		if err := fitR(); err != nil {
			return nil, err
		}
	}
	if m.Penalty != nil {
		t = &classify.SoftmaxTrainer{Settings: &classify.Settings{L2: m.Penalty.L2}}
	}
	err := par.Run(K+1, 0, func(k int) error {
		if k == K {
			if rFirst {
				return nil
			}
			return fitR()
		}
		X, Y, err := d.ensemblePoints(k, m.Reconstruction, rows.target)
		if err == nil {
			m.E[k], err = d.fitClassifier(X, Y, nil, t)
		}
		if err != nil {
			return fmt.Errorf("dictionary: DaDiL-E classifier of atom %d: %w", k, err)
		}
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	m.Elapsed = time.Since(start)
	return m, nil
}

// ensemblePoints returns the points and soft labels atom k's DaDiL-E
// classifier trains on under Settings.EnsembleTransport: the atom's, moved
// onto the reconstruction rec through its barycenter plan
// (TransportBarycenter), or onto the target rows XT (transport).
func (d *Dictionary) ensemblePoints(k int, rec *barycenter.Result, XT *mat.Dense) (*mat.Dense, *mat.Dense, error) {
	a := d.Atoms[k]
	if d.Settings.EnsembleTransport != TransportBarycenter {
		return d.transport(d.Settings.EnsembleTransport, a.X, a.Labels(), XT)
	}
	var X mat.Dense
	if err := rec.Plans[k].BarycentricMap(&X, rec.X); err != nil {
		return nil, nil, fmt.Errorf("dictionary: atom %d onto the reconstruction: %w", k, err)
	}
	return &X, a.Labels(), nil
}

// ClassifierR trains DaDiL-R's classifier for the coordinates alpha with
// the trainer t (nil: a softmax regression with the default penalty) on the
// reconstruction B(α; P) with its propagated soft labels (their argmax with
// Settings.HardLabels), which it also returns. With α_T it is the R of
// NewModel; other α explore the Wasserstein hull of the atoms (paper
// Figure 4).
func (d *Dictionary) ClassifierR(alpha []float64, t classify.Trainer, seed uint64) (classify.Classifier, *barycenter.Result, error) {
	r, err := d.classifierR(alpha, t, seed, &modelRows{})
	if err != nil {
		return nil, nil, err
	}
	return r.h, r.rec, nil
}

// fittedR is DaDiL-R's classifier h, the reconstruction rec, the set h
// was trained on and the penalty chosen for it (nil when none was).
type fittedR struct {
	h       classify.Classifier
	rec     *barycenter.Result
	train   *TrainingSet
	penalty *classify.PenaltyChoice
}

// TrainingSet is a weighted set of labeled points a classifier trains on.
type TrainingSet struct {
	// X holds the points and Y their soft labels, a row per point (with
	// Settings.HardLabels the classifier trains on Y's argmax).
	X, Y *mat.Dense
	// Weights are the points' weights in the classifier's loss, summing
	// to 1 (nil: equal).
	Weights []float64
	// Source gives, for every point, the row of Dictionary.Alpha of the
	// source it is a moved row of, or -1 for a point of the
	// reconstruction.
	Source []int
}

// classifierR is ClassifierR whose classifier trains on the reconstruction
// moved onto the target rows, or beside the sources' rows moved along the
// dictionary, as Settings.Transport says (without the rows it reads: the
// reconstruction alone), a softmax regression whose penalty is chosen on
// the sources when rows.choose is true (classify.ChoosePenalty, anchored
// at the penalty of t, a softmax regression), which it returns.
func (d *Dictionary) classifierR(alpha []float64, t classify.Trainer, seed uint64, rows *modelRows) (*fittedR, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if len(alpha) != len(d.Atoms) {
		return nil, fmt.Errorf("dictionary: %d coordinates for %d atoms", len(alpha), len(d.Atoms))
	}
	rec, err := d.Reconstruct(alpha, seed)
	if err != nil {
		return nil, err
	}
	ts, err := d.trainingSetR(rec, alpha, rows, seed)
	if err != nil {
		return nil, err
	}
	r := &fittedR{rec: rec, train: ts}
	if rows.choose {
		var s *classify.Settings // λ₀ and the fits' settings
		if st, ok := t.(*classify.SoftmaxTrainer); ok {
			s = st.Settings
		}
		c, err := classify.ChoosePenalty(ts.X, d.trainingLabels(ts.Y), ts.Weights, rows.sources, nil, s)
		if err != nil {
			return nil, fmt.Errorf("dictionary: DaDiL-R classifier: %w", err)
		}
		r.h, r.penalty = c.Model, c
		return r, nil
	}
	if r.h, err = d.fitClassifier(ts.X, ts.Y, ts.Weights, t); err != nil {
		return nil, fmt.Errorf("dictionary: DaDiL-R classifier: %w", err)
	}
	return r, nil
}

// trainingSetR returns the set DaDiL-R's classifier trains on under
// Settings.Transport, from the reconstruction rec of the coordinates alpha
// and the rows.
func (d *Dictionary) trainingSetR(rec *barycenter.Result, alpha []float64, rows *modelRows, seed uint64) (*TrainingSet, error) {
	n, _ := rec.X.Dims()
	own := slices.Repeat([]int{-1}, n)
	if d.Settings.Transport != TransportSources || len(rows.sources) == 0 {
		X, Y, err := d.transport(d.Settings.Transport, rec.X, normalizeRows(rec.Y), rows.target)
		return &TrainingSet{X: X, Y: Y, Source: own}, err
	}
	Xs, ys, from, err := d.movedSources(rec, alpha, rows.sources, seed)
	if err != nil || Xs == nil {
		return &TrainingSet{X: rec.X, Y: normalizeRows(rec.Y), Source: own}, err
	}
	// Half the weight to the reconstruction's points, equal among them, and
	// half to the moved rows, every class of them weighing equally.
	w := classify.HalfWeights(n, ys, d.Classes)
	var XX, YY mat.Dense
	XX.Stack(rec.X, Xs)
	YY.Stack(normalizeRows(rec.Y), classify.OneHot(ys, d.Classes))
	return &TrainingSet{X: &XX, Y: &YY, Weights: w, Source: append(own, from...)}, nil
}

// fitClassifier trains t (nil: a softmax regression with the default
// penalty) on the points X with the soft labels Y, or on their argmax with
// Settings.HardLabels, weighed by w (nil: equally).
func (d *Dictionary) fitClassifier(X, Y *mat.Dense, w []float64, t classify.Trainer) (classify.Classifier, error) {
	if t == nil {
		t = &classify.SoftmaxTrainer{}
	}
	return t.Train(X, d.trainingLabels(Y), w)
}

// trainingLabels returns the labels the classifiers train on: Y, or its
// argmax with Settings.HardLabels.
func (d *Dictionary) trainingLabels(Y *mat.Dense) *mat.Dense {
	if d.Settings.HardLabels {
		return classify.OneHot(classify.Argmax(Y), d.Classes)
	}
	return Y
}

// normalizeRows rescales every row of Y to sum to one (the propagated
// labels are convex combinations of probability vectors, so only rounding
// is removed) and returns Y.
func normalizeRows(Y *mat.Dense) *mat.Dense {
	r, _ := Y.Dims()
	for i := 0; i < r; i++ {
		row := Y.RawRowView(i)
		var s float64
		for _, v := range row {
			s += v
		}
		for q := range row {
			row[q] /= s
		}
	}
	return Y
}

// ProbaR returns DaDiL-R's class probabilities for the rows of X.
func (m *Model) ProbaR(X *mat.Dense) (*mat.Dense, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	var P mat.Dense
	if err := m.R.Proba(&P, X); err != nil {
		return nil, fmt.Errorf("dictionary: DaDiL-R: %w", err)
	}
	return &P, nil
}

// ProbaE returns DaDiL-E's class probabilities Σ_k α_T,k h_k(x) for the
// rows of X.
func (m *Model) ProbaE(X *mat.Dense) (*mat.Dense, error) {
	return m.ProbaEWith(m.Alpha, X)
}

// ProbaEWith is ProbaE with the atom classifiers weighted by alpha instead
// of α_T (for exploring the Wasserstein hull). alpha must lie on the
// simplex (within 1e-9), so that the result's rows are probability
// vectors.
func (m *Model) ProbaEWith(alpha []float64, X *mat.Dense) (*mat.Dense, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if err := checkWeights(alpha, len(m.E)); err != nil {
		return nil, err
	}
	if X == nil || X.IsEmpty() {
		return nil, errors.New("dictionary: features X are empty")
	}
	out, err := classify.Ensemble(m.E, alpha, X)
	if err != nil {
		return nil, fmt.Errorf("dictionary: DaDiL-E: %w", err)
	}
	return out, nil
}

// PredictR returns DaDiL-R's class index for every row of X.
func (m *Model) PredictR(X *mat.Dense) ([]int, error) {
	P, err := m.ProbaR(X)
	if err != nil {
		return nil, err
	}
	return classify.Argmax(P), nil
}

// TargetClasses returns the class proportions the model's target domain
// had its atom batches drawn in, and where they came from
// (History.TargetClasses); nil when none were recorded (class-balanced
// batches without Settings.EstimateShift).
func (m *Model) TargetClasses() *TargetClasses {
	if tc := m.Dict.History.TargetClasses; m.Target < len(tc) {
		return &tc[m.Target]
	}
	return nil
}

// PredictE returns DaDiL-E's class index for every row of X.
func (m *Model) PredictE(X *mat.Dense) ([]int, error) {
	P, err := m.ProbaE(X)
	if err != nil {
		return nil, err
	}
	return classify.Argmax(P), nil
}
