package adapt

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/ot"
)

// WJDOTLoss is the label loss L(y, f(x)) in the ground cost of WJDOT.
type WJDOTLoss int

const (
	// WJDOTSquared is the squared loss on probabilities,
	// L(y, p) = ‖e_y − p‖², as in the authors' code (the squared
	// Euclidean distance between joint vectors (x, y) and (x', f(x'))).
	WJDOTSquared WJDOTLoss = iota

	// WJDOTCrossEntropy is the cross-entropy L(y, p) = −log p_y, with p_y
	// clamped to at least 1e-12.
	WJDOTCrossEntropy
)

// String returns "squared" or "cross-entropy".
func (l WJDOTLoss) String() string {
	switch l {
	case WJDOTSquared:
		return "squared"
	case WJDOTCrossEntropy:
		return "cross-entropy"
	}
	return fmt.Sprintf("WJDOTLoss(%d)", int(l))
}

// Default values used by WJDOT for zero fields.
const (
	// DefaultWJDOTBeta is the weight β of the feature term, whose squared
	// distances are divided by their maximum.
	DefaultWJDOTBeta = 10

	// DefaultWJDOTMaxIter is the number of iterations, each one exact
	// optimal-transport problem.
	DefaultWJDOTMaxIter = 30

	// DefaultWJDOTStepAlpha is the step μ_α of the projected gradient on
	// the source weights α.
	DefaultWJDOTStepAlpha = 0.5

	// DefaultWJDOTLearningRate is the Adam learning rate of the
	// classifier, as in the authors' code.
	DefaultWJDOTLearningRate = 0.01

	// DefaultWJDOTClassifierSteps is the number of Adam steps on the
	// classifier per iteration.
	DefaultWJDOTClassifierSteps = 10
)

// wjdotMinProb is the smallest probability used in the cross-entropy.
const wjdotMinProb = 1e-12

// WJDOT is multi-source domain adaptation with Weighted Joint Distribution
// Optimal Transport (Turrisi, Flamary, Rakotomamonjy & Pontil, "Multi-source
// domain adaptation via weighted joint distributions optimal transport",
// UAI 2022), which the DaDiL paper (Montesuma et al., ECAI 2023, Section 5)
// compares against.
//
// # Problem
//
// Let P̂_k = (1/n_k) Σ_i δ_(x_i^(k), y_i^(k)) be the labeled sources and
// P̂_T^f = (1/m) Σ_j δ_(x_j, f(x_j)) the target with the labels predicted
// by the classifier f, here the softmax regression of package classify,
// f(x) = softmax(W x + b). WJDOT learns source weights α ∈ Δ_{N_S} and f
// minimising the Wasserstein distance between the α-mixture of the sources
// and the target's joint distribution,
//
//	min_{α ∈ Δ, f} W(Σ_k α_k P̂_k, P̂_T^f) + λ‖W‖²_F,
//	W(·,·) = min_π Σ_ij π_ij [β ‖x_i − x_j‖²/s + L(y_i, f(x_j))],
//
// over the plans π with row marginals α_k/n_k on the rows of source k and
// column marginals 1/m. L is the squared loss on probabilities (Loss,
// default, as in the authors' code) or the cross-entropy; s is the largest
// squared distance between a source row and a target row, so that the
// feature term lies in [0, β] whatever the scale of the features; λ‖W‖²
// is the L2 penalty of package classify (Classifier.L2, default 1e-3),
// added so that f stays bounded (the authors' code uses no weight decay).
//
// # Algorithm
//
// Following the paper's Algorithm 1, each iteration solves the exact
// transport problem (ot.EMD) at the current (α, f) and, holding the plan
// π* fixed (by the envelope theorem, the gradients of W at fixed π* are
// those of W itself),
//
//   - takes a projected gradient step on α: the derivative of W with
//     respect to the mass a_i of row i is its dual potential u_i, so
//     ∂W/∂α_k = (1/n_k) Σ_{i ∈ source k} u_i and
//     α ← P_Δ(α − μ_α ∂W/∂α) (ot.ProjectSimplex; the potentials are
//     defined up to a constant, which the projection ignores);
//   - takes ClassifierSteps Adam steps (Kingma & Ba 2015, β₁ = 0.9,
//     β₂ = 0.999) on f for the loss Σ_ij π*_ij L(y_i, f(x_j)) + λ‖W‖².
//     With q_j = Σ_i π*_ij e_{y_i}, the gradient with respect to the
//     logits z_j of target row j is J(p_j) 2(p_j/m − q_j) for the
//     squared loss, with J(p) = diag(p) − ppᵀ, and p_j/m − q_j for the
//     cross-entropy.
//
// f starts from the classifier trained on the pooled sources (source-only,
// with the settings Classifier; the authors' code starts from a random
// network) and α from uniform weights, as in the authors' code. Predict
// classifies with f.
//
// By default each iteration uses all the rows (full batch), as the
// authors' code does on Caltech-Office; with BatchSize > 0, it uses
// BatchSize rows drawn without replacement from each source and from the
// target (all rows of a smaller domain), with a random generator seeded
// by Seed, and the mass of source k is shared among its drawn rows.
//
// # Hyper-parameters
//
// The authors' code for Caltech-Office runs up to 1000 full-batch
// iterations of one Adam step (learning rate 0.01, no weight decay) with
// early stopping, the α step sharing the learning rate, on joint vectors
// (x, y) and (x', 0.3 f(x')) compared by the squared Euclidean distance:
// on raw DeCAF features the feature term dominates the label term. An
// iteration's exact transport problem costs far more than a classifier
// step, so the defaults here, our choices, trade iterations for
// classifier steps: MaxIter 30 iterations of 10 Adam steps (learning rate
// 0.01), μ_α = 0.5, the squared loss, and β = 10, which keeps the
// (normalised) feature term dominant as in the authors' setting (see
// docs/defaults.md for the alternatives measured). There is no early
// stopping: the authors' criteria need held-out data (the α-weighted
// accuracy on a validation split of the sources, or a clustering score on
// a split of the target).
//
// WJDOT is deterministic for a given Seed (and, in full batch, does not
// depend on it). Fit holds the n_S×m matrix of squared distances and one
// plan's cost matrix, and costs MaxIter exact transport problems.
type WJDOT struct {
	// Beta is β, the weight of the normalised feature term. Zero means
	// DefaultWJDOTBeta; it must be positive and finite.
	Beta float64

	// Loss is the label loss; the zero value is WJDOTSquared.
	Loss WJDOTLoss

	// MaxIter is the number of iterations. Zero means
	// DefaultWJDOTMaxIter; it must not be negative.
	MaxIter int

	// StepAlpha is μ_α, the step on α. Zero means DefaultWJDOTStepAlpha;
	// it must be positive and finite.
	StepAlpha float64

	// LearningRate is the Adam learning rate of the classifier, and
	// ClassifierSteps the number of Adam steps per iteration. Zero means
	// DefaultWJDOTLearningRate and DefaultWJDOTClassifierSteps; they
	// must not be negative (and LearningRate must be finite).
	LearningRate    float64
	ClassifierSteps int

	// BatchSize is the number of rows drawn from each domain per
	// iteration; zero means full batch. It must not be negative.
	BatchSize int

	// Seed seeds the mini-batch draws.
	Seed uint64

	// Classifier chooses the softmax regression f: its source-only
	// initialisation and its L2 penalty λ, which a classify.SoftmaxTrainer
	// sets (nil: package classify's default) and a classify.SoftmaxCV
	// chooses by cross-validation on the pooled sources. Another trainer
	// (k nearest neighbours, …) is trained at the end on the sources
	// weighted by the learned α (rows of source k weigh α_k/n_k) and
	// classifies in f's place.
	Classifier classify.Trainer
	// final is that trainer's classifier.
	final classify.Classifier

	// Alpha holds the learned source weights α, on the simplex, and
	// Model the learned classifier f; Losses holds the transport cost
	// W of each iteration. They are set by Fit.
	Alpha  []float64
	Model  *classify.Softmax
	Losses []float64
}

// Name returns "wjdot".
func (m *WJDOT) Name() string { return "wjdot" }

// wjdotConfig holds validated settings.
type wjdotConfig struct {
	beta, stepAlpha, lr, lambda float64
	maxIter, steps, batch       int
	loss                        WJDOTLoss
}

func (m *WJDOT) settings() (wjdotConfig, error) {
	cfg := wjdotConfig{
		beta: DefaultWJDOTBeta, stepAlpha: DefaultWJDOTStepAlpha, lr: DefaultWJDOTLearningRate,
		lambda: classify.DefaultL2, maxIter: DefaultWJDOTMaxIter, steps: DefaultWJDOTClassifierSteps,
		batch: m.BatchSize, loss: m.Loss,
	}
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
	switch {
	case bad(m.Beta):
		return cfg, fmt.Errorf("adapt: wjdot: Beta = %g; need a positive, finite value", m.Beta)
	case bad(m.StepAlpha):
		return cfg, fmt.Errorf("adapt: wjdot: StepAlpha = %g; need a positive, finite value", m.StepAlpha)
	case bad(m.LearningRate):
		return cfg, fmt.Errorf("adapt: wjdot: LearningRate = %g; need a positive, finite value", m.LearningRate)
	case m.MaxIter < 0:
		return cfg, fmt.Errorf("adapt: wjdot: MaxIter = %d is negative", m.MaxIter)
	case m.ClassifierSteps < 0:
		return cfg, fmt.Errorf("adapt: wjdot: ClassifierSteps = %d is negative", m.ClassifierSteps)
	case m.BatchSize < 0:
		return cfg, fmt.Errorf("adapt: wjdot: BatchSize = %d is negative", m.BatchSize)
	case m.Loss != WJDOTSquared && m.Loss != WJDOTCrossEntropy:
		return cfg, fmt.Errorf("adapt: wjdot: unknown loss %v", m.Loss)
	}
	if m.Beta > 0 {
		cfg.beta = m.Beta
	}
	if m.StepAlpha > 0 {
		cfg.stepAlpha = m.StepAlpha
	}
	if m.LearningRate > 0 {
		cfg.lr = m.LearningRate
	}
	if m.MaxIter > 0 {
		cfg.maxIter = m.MaxIter
	}
	if m.ClassifierSteps > 0 {
		cfg.steps = m.ClassifierSteps
	}
	if t, ok := m.Classifier.(*classify.SoftmaxTrainer); ok && t.Settings != nil {
		switch c := t.Settings; {
		case c.NoPenalty:
			cfg.lambda = 0
		case c.L2 > 0 && !math.IsInf(c.L2, 0):
			cfg.lambda = c.L2
		}
	}
	return cfg, nil
}

// penalty returns λ of f: the configured one, or the one cross-validation
// chooses on the pooled sources Xs, ys for a classify.SoftmaxCV.
func (m *WJDOT) penalty(cfg wjdotConfig, Xs *mat.Dense, ys []int, classes int) (float64, error) {
	cv, ok := m.Classifier.(*classify.SoftmaxCV)
	if !ok {
		return cfg.lambda, nil
	}
	l2, _, err := cv.Select(Xs, classify.OneHot(ys, classes), nil)
	return l2, err
}

// Fit learns α and the classifier.
func (m *WJDOT) Fit(p *dataset.Problem) error {
	if err := checkProblem(m, p); err != nil {
		return err
	}
	sources, target, classes := p.Sources, p.Target.X, p.Classes
	cfg, err := m.settings()
	if err != nil {
		return err
	}
	m.Alpha, m.Model, m.Losses, m.final = nil, nil, nil, nil

	Xs, ys := p.PoolSources()
	if cfg.lambda, err = m.penalty(cfg, Xs, ys, classes); err != nil {
		return fmt.Errorf("adapt: wjdot: %w", err)
	}
	init := &classify.Settings{L2: cfg.lambda, NoPenalty: cfg.lambda == 0}
	if t, ok := m.Classifier.(*classify.SoftmaxTrainer); ok && t.Settings != nil {
		init = t.Settings
	}
	model, _, err := classify.FitLabels(Xs, ys, classes, nil, init)
	if err != nil {
		return fmt.Errorf("adapt: wjdot: %w", err)
	}
	w := newWJDOTState(sources, target, classes, cfg, model)
	if err := w.features(Xs, target); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(m.Seed, 0x3d07))
	losses := make([]float64, 0, cfg.maxIter)
	for it := 0; it < cfg.maxIter; it++ {
		w.draw(rng)
		loss, err := w.iterate()
		if err != nil {
			return err
		}
		losses = append(losses, loss)
	}
	m.Alpha = append([]float64(nil), w.alpha...)
	m.Losses = losses
	if err := m.train(Xs, ys, classes, w.start); err != nil {
		return err
	}
	m.Model = w.model
	return nil
}

// train trains a classifier that is not a softmax regression on the
// sources weighted by α: row i of source k weighs α_k/n_k.
func (m *WJDOT) train(Xs *mat.Dense, ys []int, classes int, start []int) error {
	switch m.Classifier.(type) {
	case nil, *classify.SoftmaxTrainer, *classify.SoftmaxCV:
		return nil
	}
	w := make([]float64, len(ys))
	for k, a := range m.Alpha {
		for i := start[k]; i < start[k+1]; i++ {
			w[i] = a / float64(start[k+1]-start[k])
		}
	}
	var err error
	if m.final, err = trainLabels(m.Classifier, Xs, ys, classes, w); err != nil {
		return fmt.Errorf("adapt: wjdot: %w", err)
	}
	return nil
}

// Predict classifies the rows of X with the learned classifier.
func (m *WJDOT) Predict(X *mat.Dense) ([]int, error) {
	c, err := m.classifier()
	if err != nil {
		return nil, err
	}
	return named(m.Name())(c.Predict(X))
}

// Proba returns the class probabilities of the rows of X under the
// learned classifier.
func (m *WJDOT) Proba(X *mat.Dense) (*mat.Dense, error) {
	c, err := m.classifier()
	if err != nil {
		return nil, err
	}
	return probaOf(m.Name(), c, X)
}

// classifier returns the classifier that predicts: the final trainer's
// when there is one, else f.
func (m *WJDOT) classifier() (classify.Classifier, error) {
	if m.Model == nil {
		return nil, ErrNotFitted
	}
	if m.final != nil {
		return m.final, nil
	}
	return m.Model, nil
}

// wjdotState holds the data and work space of one Fit.
type wjdotState struct {
	cfg     wjdotConfig
	classes int
	d       int
	ns, nt  int
	start   []int // first pooled row of each source, and ns
	ys      []int // pooled labels
	xt      *mat.Dense
	feat    []float64 // ns×nt squared distances / max
	alpha   []float64
	model   *classify.Softmax

	// Current batch: pooled source rows (grouped by source) and target
	// rows, and the number of drawn rows per source.
	rows, cols []int
	drawn      []int
	full       bool

	// Work space.
	cost     mat.Dense
	a, b     []float64
	solver   ot.EMDSolver
	res      ot.EMDResult
	grad     []float64 // per source
	next     []float64
	xb       *mat.Dense // batch target rows (xt itself in full batch)
	z, p     *mat.Dense // logits and probabilities, batch×classes
	q        *mat.Dense // class mass received by each batch target row
	delta    *mat.Dense
	gw       *mat.Dense // gradient in W
	gb       []float64
	mW, vW   []float64 // Adam moments of W (row-major) and b
	mB, vB   []float64
	adamStep int
	tmpP     []float64 // classes×batch, probabilities transposed (or logs)
	sqP      []float64 // ‖p_j‖²
	perm     []int
}

func newWJDOTState(sources []dataset.Domain, target *mat.Dense, classes int, cfg wjdotConfig, model *classify.Softmax) *wjdotState {
	nt, d := target.Dims()
	w := &wjdotState{cfg: cfg, classes: classes, d: d, nt: nt, xt: target, model: model}
	w.start = make([]int, 0, len(sources)+1)
	for _, s := range sources {
		w.start = append(w.start, w.ns)
		r, _ := s.X.Dims()
		w.ns += r
		w.ys = append(w.ys, s.Y...)
	}
	w.start = append(w.start, w.ns)
	w.alpha = make([]float64, len(sources))
	for k := range w.alpha {
		w.alpha[k] = 1 / float64(len(sources))
	}
	w.grad = make([]float64, len(sources))
	w.next = make([]float64, len(sources))
	w.drawn = make([]int, len(sources))
	w.full = cfg.batch == 0
	if w.full {
		w.rows = make([]int, w.ns)
		for i := range w.rows {
			w.rows[i] = i
		}
		w.cols = make([]int, nt)
		for j := range w.cols {
			w.cols[j] = j
		}
		for k := range sources {
			w.drawn[k] = w.start[k+1] - w.start[k]
		}
		w.xb = target
	}
	w.gw = mat.NewDense(classes, d, nil)
	w.gb = make([]float64, classes)
	w.mW, w.vW = make([]float64, classes*d), make([]float64, classes*d)
	w.mB, w.vB = make([]float64, classes), make([]float64, classes)
	return w
}

// features computes the normalised squared distances between the pooled
// sources and the target.
func (w *wjdotState) features(Xs, Xt *mat.Dense) error {
	var D mat.Dense
	if err := ot.SqEuclidean(&D, Xs, Xt); err != nil {
		return fmt.Errorf("adapt: wjdot: %w", err)
	}
	w.feat = D.RawMatrix().Data
	if !jcpotFinite(w.feat) {
		return errors.New("adapt: wjdot: squared distances overflow; rescale the features")
	}
	mx := floats.Max(w.feat)
	if mx > 0 {
		floats.Scale(1/mx, w.feat)
	}
	return nil
}

// draw selects the rows of the next iteration.
func (w *wjdotState) draw(rng *rand.Rand) {
	if w.full {
		return
	}
	bs := w.cfg.batch
	w.rows = w.rows[:0]
	for k := range w.drawn {
		n := w.start[k+1] - w.start[k]
		q := min(bs, n)
		if cap(w.perm) < n {
			w.perm = make([]int, n)
		}
		idx := dataset.UniformBatch(rng, n, q, w.perm[:0])
		for _, i := range idx {
			w.rows = append(w.rows, w.start[k]+i)
		}
		w.drawn[k] = q
	}
	q := min(bs, w.nt)
	if cap(w.perm) < w.nt {
		w.perm = make([]int, w.nt)
	}
	idx := dataset.UniformBatch(rng, w.nt, q, w.perm[:0])
	w.cols = append(w.cols[:0], idx...)
	if w.xb == nil {
		w.xb = mat.NewDense(q, w.d, nil)
	}
	for r, j := range w.cols {
		copy(w.xb.RawRowView(r), w.xt.RawRowView(j))
	}
}

// proba computes the logits and probabilities of the batch target rows.
func (w *wjdotState) proba() {
	nb := len(w.cols)
	if w.z == nil {
		w.z = mat.NewDense(nb, w.classes, nil)
		w.p = mat.NewDense(nb, w.classes, nil)
	}
	w.z.Mul(w.xb, w.model.W.T())
	for j := 0; j < nb; j++ {
		z := w.z.RawRowView(j)
		p := w.p.RawRowView(j)
		floats.Add(z, w.model.B)
		mx := floats.Max(z)
		var s float64
		for c, v := range z {
			p[c] = math.Exp(v - mx)
			s += p[c]
		}
		floats.Scale(1/s, p)
	}
}

// iterate performs one iteration and returns the transport cost.
func (w *wjdotState) iterate() (float64, error) {
	w.proba()
	w.transportCost(w.labelLoss())
	w.marginals()
	if err := w.solver.Solve(&w.res, w.a, w.b, &w.cost); err != nil {
		return 0, fmt.Errorf("adapt: wjdot: %w", err)
	}
	if err := w.alphaStep(); err != nil {
		return 0, err
	}
	w.classMass()
	for range w.cfg.steps {
		w.classifierStep()
	}
	return w.res.Cost, nil
}

// labelLoss returns the label loss L(c, f(x_j)) of every class c and batch
// target row j, at index c·nc + j (nc target rows): 1 − 2p_jc + ‖p_j‖² for
// the squared loss, −log max(p_jc, wjdotMinProb) for the cross-entropy.
func (w *wjdotState) labelLoss() []float64 {
	nc, C := len(w.cols), w.classes
	if cap(w.tmpP) < C*nc {
		w.tmpP = make([]float64, C*nc)
		w.sqP = make([]float64, nc)
	}
	lt := w.tmpP[:C*nc]
	for j := 0; j < nc; j++ {
		p := w.p.RawRowView(j)
		var sq float64
		for _, v := range p {
			sq += v * v
		}
		for c, v := range p {
			switch w.cfg.loss {
			case WJDOTSquared:
				lt[c*nc+j] = 1 - 2*v + sq
			default:
				lt[c*nc+j] = -math.Log(math.Max(v, wjdotMinProb))
			}
		}
	}
	return lt
}

// transportCost sets the cost of the batch's transport problem,
// β ‖x_i − x_j‖²/s + L(y_i, f(x_j)) between batch source row i and batch
// target row j, from the label loss lt of labelLoss.
func (w *wjdotState) transportCost(lt []float64) {
	nr, nc := len(w.rows), len(w.cols)
	if w.cost.IsEmpty() {
		w.cost.ReuseAs(nr, nc)
		w.a = make([]float64, nr)
		w.b = make([]float64, nc)
	}
	beta := w.cfg.beta
	for r, i := range w.rows {
		row := w.cost.RawRowView(r)
		f := w.feat[i*w.nt : (i+1)*w.nt]
		l := lt[w.ys[i]*nc : (w.ys[i]+1)*nc]
		if w.full {
			for j := range row {
				row[j] = beta*f[j] + l[j]
			}
		} else {
			for q, j := range w.cols {
				row[q] = beta*f[j] + l[q]
			}
		}
	}
}

// marginals sets the plan's marginals: α_k/n_k on each of the n_k drawn
// rows of source k, 1/nc on each of the nc batch target rows.
func (w *wjdotState) marginals() {
	r := 0
	for k, n := range w.drawn {
		for range n {
			w.a[r] = w.alpha[k] / float64(n)
			r++
		}
	}
	nc := len(w.cols)
	for j := range w.b {
		w.b[j] = 1 / float64(nc)
	}
}

// alphaStep takes the projected gradient step on α from the plan's dual
// potentials: ∂W/∂α_k is the mean potential u_i of the rows of source k,
// and α ← P_Δ(α − μ_α ∂W/∂α). It fails if α diverged to NaN.
func (w *wjdotState) alphaStep() error {
	r := 0
	for k, n := range w.drawn {
		var s float64
		for range n {
			s += w.res.U[r]
			r++
		}
		w.grad[k] = s / float64(n)
	}
	for k := range w.next {
		w.next[k] = w.alpha[k] - w.cfg.stepAlpha*w.grad[k]
	}
	ot.ProjectSimplex(w.alpha, w.next)
	if math.IsNaN(w.alpha[0]) {
		return errors.New("adapt: wjdot: the source weights diverged")
	}
	return nil
}

// classMass sets q_j = Σ_i π*_ij e_{y_i}, the class mass each batch target
// row j receives under the plan.
func (w *wjdotState) classMass() {
	if w.q == nil {
		w.q = mat.NewDense(len(w.cols), w.classes, nil)
		w.delta = mat.NewDense(len(w.cols), w.classes, nil)
	}
	w.q.Zero()
	pl := &w.res.Plan
	for t, mass := range pl.Mass {
		q := w.q.RawRowView(pl.Col[t])
		q[w.ys[w.rows[pl.Row[t]]]] += mass
	}
}

// classifierStep takes one Adam step on f for the loss
// Σ_ij π_ij L(y_i, f(x_j)) + λ‖W‖² with the plan held fixed.
func (w *wjdotState) classifierStep() {
	w.gradient()
	w.adam()
}

// gradient computes the probabilities of the batch target rows and the
// gradient (gw, gb) of Σ_ij π_ij L(y_i, f(x_j)) with respect to W and b,
// without the penalty, from the class masses q. Every target row of the
// batch receives mass 1/nc.
func (w *wjdotState) gradient() {
	w.proba()
	nc := len(w.cols)
	bj := 1 / float64(nc)
	for j := 0; j < nc; j++ {
		p := w.p.RawRowView(j)
		q := w.q.RawRowView(j)
		dl := w.delta.RawRowView(j)
		for c, v := range p {
			dl[c] = v*bj - q[c]
		}
		if w.cfg.loss == WJDOTSquared {
			// J(p)·2g with J = diag(p) − ppᵀ.
			var pg float64
			for c, v := range p {
				pg += v * dl[c]
			}
			for c, v := range p {
				dl[c] = 2 * v * (dl[c] - pg)
			}
		}
	}
	w.gw.Mul(w.delta.T(), w.xb)
	for c := range w.gb {
		w.gb[c] = 0
	}
	for j := 0; j < nc; j++ {
		floats.Add(w.gb, w.delta.RawRowView(j))
	}
}

// adam takes one Adam step with the gradient (gw, gb) plus that of the
// penalty λ‖W‖².
func (w *wjdotState) adam() {
	W := w.model.W.RawMatrix()
	gw := w.gw.RawMatrix()
	lam2 := 2 * w.cfg.lambda
	w.adamStep++
	const b1, b2, eps = 0.9, 0.999, 1e-8
	c1 := 1 - math.Pow(b1, float64(w.adamStep))
	c2 := 1 - math.Pow(b2, float64(w.adamStep))
	lr := w.cfg.lr
	for c := 0; c < w.classes; c++ {
		wr := W.Data[c*W.Stride : c*W.Stride+w.d]
		gr := gw.Data[c*gw.Stride : c*gw.Stride+w.d]
		mr := w.mW[c*w.d : (c+1)*w.d]
		vr := w.vW[c*w.d : (c+1)*w.d]
		for k, g := range gr {
			g += lam2 * wr[k]
			mr[k] = b1*mr[k] + (1-b1)*g
			vr[k] = b2*vr[k] + (1-b2)*g*g
			wr[k] -= lr * (mr[k] / c1) / (math.Sqrt(vr[k]/c2) + eps)
		}
	}
	for c, g := range w.gb {
		w.mB[c] = b1*w.mB[c] + (1-b1)*g
		w.vB[c] = b2*w.vB[c] + (1-b2)*g*g
		w.model.B[c] -= lr * (w.mB[c] / c1) / (math.Sqrt(w.vB[c]/c2) + eps)
	}
}
