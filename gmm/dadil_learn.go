package gmm

import (
	"errors"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/par"
	"github.com/dadil/dadil/internal/plateau"
	"github.com/dadil/dadil/ot"
)

// errDiverged is returned when the loss or the parameters stop being
// finite.
var errDiverged = errors.New("gmm: LearnDictionary: learning diverged (non-finite loss); lower the learning rate")

// params are the free parameters of a GMM-DaDiL dictionary: for every atom
// k the means m_k, the log standard deviations s_k = log σ_k and the label
// logits z_k (each na rows), and the coordinates α (one row per domain).
type params struct {
	means, logStd, logits []*mat.Dense
	alpha                 *mat.Dense
}

// atoms returns the atoms' mixtures: weights 1/na, σ = exp(s) and
// y = softmax(z), atoms in parallel on up to workers goroutines.
func (p *params) atoms(workers int) []*Mixture {
	return p.atomsInto(make([]*Mixture, len(p.means)), workers)
}

// atomsInto sets dst (one entry per atom) to the atoms' mixtures, as
// atoms, reusing the mixtures already in dst, and returns it.
func (p *params) atomsInto(dst []*Mixture, workers int) []*Mixture {
	par.ForEach(len(dst), workers, func(k int) {
		na, d := p.means[k].Dims()
		_, c := p.logits[k].Dims()
		m := dst[k]
		if m == nil {
			m = &Mixture{Weights: uniform(na), Means: mat.NewDense(na, d, nil), Std: mat.NewDense(na, d, nil), Labels: mat.NewDense(na, c, nil)}
			dst[k] = m
		}
		m.Means.Copy(p.means[k])
		m.Std.Apply(func(_, _ int, v float64) float64 { return math.Exp(v) }, p.logStd[k])
		for i := range na {
			linalg.Softmax(m.Labels.RawRowView(i), p.logits[k].RawRowView(i))
		}
	}, nil)
	return dst
}

// learner holds the state of one LearnDictionary call.
type learner struct {
	set     DictionarySettings
	domains []*Mixture // the sources, then the target
	S       int        // number of sources
	classes int
	p       params
	// stacked[ℓ] is domain ℓ's mixture stacked (see stack); warm[ℓ] the
	// plans of its barycenter in the last step, the start of the next
	// one's.
	stacked []stacked
	warm    [][]ot.Plan
	grads   []*domainGrad
	// Buffers reused from step to step: every domain's scratch, the
	// atoms' mixtures and their stacked form, the gradient with respect
	// to the free parameters and that with respect to the atoms' labels.
	scratch []scratch
	atomBuf []*Mixture
	all     stacked
	g       *params
	gy      []*mat.Dense
	opt     struct{ means, logStd, logits []adam }
	optA    adam
	// lrMeans is η·s, the means' learning rate (DictionarySettings).
	lrMeans float64

	loss     []float64
	status   optimize.Status
	annealed bool
	since    int
	lrScale  float64
}

// newLearner returns the learner of the mixtures with the settings set
// (defaults filled in), its atoms initialised (initAtoms).
func newLearner(sources []*Mixture, target *Mixture, classes int, set DictionarySettings) *learner {
	l := &learner{set: set, S: len(sources), classes: classes, lrScale: 1}
	l.domains = append(append(l.domains, sources...), target)
	l.initAtoms(rand.New(rand.NewPCG(set.Seed, 0x6d6dad)))
	K, N := set.Atoms, len(l.domains)
	l.p.alpha = mat.NewDense(N, K, nil)
	for i := range N {
		copy(l.p.alpha.RawRowView(i), uniform(K))
	}
	na, d := l.p.means[0].Dims()
	l.warm = make([][]ot.Plan, N)
	for _, m := range l.domains {
		l.stacked = append(l.stacked, stack(m))
	}
	l.grads = make([]*domainGrad, N)
	l.scratch = make([]scratch, N)
	l.atomBuf = make([]*Mixture, K)
	for i := range l.grads {
		l.grads[i] = newDomainGrad(K, na, d, classes)
	}
	for _, o := range []*[]adam{&l.opt.means, &l.opt.logStd, &l.opt.logits} {
		*o = make([]adam, K)
	}
	for k := range K {
		l.opt.means[k].init(na * d)
		l.opt.logStd[k].init(na * d)
		l.opt.logits[k].init(na * classes)
	}
	l.optA.init(N * K)
	l.lrMeans = set.LearningRate * featureSpread(l.domains)
	return l
}

// featureSpread returns sqrt of the mean over features of the variance of
// the equal-weight pool of the mixtures, the scale of the means' steps; 1
// if it is 0.
func featureSpread(ms []*Mixture) float64 {
	d := ms[0].Dim()
	mean, sq := make([]float64, d), make([]float64, d)
	for _, m := range ms {
		f := 1 / float64(len(ms))
		for k, w := range m.Weights {
			mu, sd := m.Means.RawRowView(k), m.Std.RawRowView(k)
			for j := range d {
				mean[j] += f * w * mu[j]
				sq[j] += f * w * (mu[j]*mu[j] + sd[j]*sd[j])
			}
		}
	}
	var v float64
	for j := range d {
		v += math.Max(sq[j]-mean[j]*mean[j], 0)
	}
	if s := math.Sqrt(v / float64(d)); s > 0 {
		return s
	}
	return 1
}

// initAtoms sets the atoms' starting parameters. Atom k starts on source
// k mod S: for every class some source has, ComponentsPerClass of the
// source's components of that class (those of all sources when it has
// none), drawn in a random order and repeated in turn if there are fewer,
// with their means and deviations and labels of 90% confidence (logit
// log(9(c−1)) on the class; 0 with one class). Atoms k ≥ S, which repeat
// a source, have their means moved by 0.5·σ·ξ, ξ ~ N(0, I), so that no
// two atoms start equal.
func (l *learner) initAtoms(rng *rand.Rand) {
	K, m, c := l.set.Atoms, l.set.ComponentsPerClass, l.classes
	byClass := make([][][]int, l.S) // [source][class] → components
	present := make([]bool, c)
	for s, src := range l.domains[:l.S] {
		byClass[s] = make([][]int, c)
		for i := range src.Components() {
			if src.Weights[i] > 0 {
				y := argmax(src.Labels.RawRowView(i))
				byClass[s][y] = append(byClass[s][y], i)
				present[y] = true
			}
		}
	}
	conf := 0.0
	if c > 1 {
		conf = math.Log(9 * float64(c-1))
	}
	for k := range K {
		s := k % l.S
		var means, stds [][]float64
		var labels []int
		for y := range c {
			if !present[y] {
				continue
			}
			type ref struct{ s, i int }
			var pool []ref
			for t := range l.S {
				if t != s && len(byClass[s][y]) > 0 {
					continue
				}
				for _, i := range byClass[t][y] {
					pool = append(pool, ref{t, i})
				}
			}
			perm := rng.Perm(len(pool))
			for r := range m {
				ref := pool[perm[r%len(pool)]]
				src := l.domains[ref.s]
				means = append(means, src.Means.RawRowView(ref.i))
				stds = append(stds, src.Std.RawRowView(ref.i))
				labels = append(labels, y)
			}
		}
		l.addAtom(means, stds, labels, conf, k >= l.S, rng)
	}
}

// addAtom appends an atom of the given components' means, deviations and
// classes (logit conf on the class), its means perturbed when jitter.
func (l *learner) addAtom(means, stds [][]float64, labels []int, conf float64, jitter bool, rng *rand.Rand) {
	na, d := len(means), len(means[0])
	M, S, Z := mat.NewDense(na, d, nil), mat.NewDense(na, d, nil), mat.NewDense(na, l.classes, nil)
	for i := range na {
		for j := range d {
			mu := means[i][j]
			if jitter {
				mu += 0.5 * stds[i][j] * rng.NormFloat64()
			}
			M.Set(i, j, mu)
			S.Set(i, j, math.Log(stds[i][j]))
		}
		Z.Set(i, labels[i], conf)
	}
	l.p.means = append(l.p.means, M)
	l.p.logStd = append(l.p.logStd, S)
	l.p.logits = append(l.p.logits, Z)
}

// run takes full-batch steps until the plateau rule or the epoch cap
// stops learning.
func (l *learner) run() error {
	for epoch := 1; epoch <= l.set.Epochs; epoch++ {
		if err := l.step(); err != nil {
			return err
		}
		if l.status = l.stopRule(epoch); l.status != optimize.NotTerminated {
			return nil
		}
	}
	return nil
}

// step computes the loss and its gradients at the current parameters
// (domains in parallel) and moves them by one Adam step. It reports
// errDiverged when the parameters or the loss are no longer finite.
func (l *learner) step() error {
	atoms := l.p.atomsInto(l.atomBuf, l.set.Workers)
	for _, a := range atoms {
		if a.Validate() != nil {
			return errDiverged
		}
	}
	if _, _, ok := linalg.FirstNonFiniteEntry(l.p.alpha); !ok {
		return errDiverged
	}
	stackInto(&l.all, atoms...)
	err := par.Run(len(l.domains), l.set.Workers, func(i int) error {
		return l.domainStep(i, atoms, l.all)
	}, nil)
	if err != nil {
		return err
	}
	var loss float64
	for _, g := range l.grads {
		loss += g.loss
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return errDiverged
	}
	l.loss = append(l.loss, loss)
	l.update(atoms)
	return nil
}

// domainStep computes domain i's plans (barycenterPlans) and its term of
// the loss with its gradients into l.grads[i].
func (l *learner) domainStep(i int, atoms []*Mixture, all stacked) error {
	alpha := l.p.alpha.RawRowView(i)
	pl, err := l.plans(i, atoms, all, alpha)
	if err != nil {
		return err
	}
	evalDomain(l.grads[i], pl.B, atoms, alpha, l.domains[i], pl, &l.scratch[i])
	l.warm[i] = pl.bary
	return nil
}

// plans returns the plans of domain i's term (its barycenter in the
// domain's scratch): those of its barycenter
// B(α_i; P) (fixedPoint, from the plans of the last step), and the
// optimal plan from B to the domain's mixture, supervised for a source
// (label weight Beta, or the largest feature cost between the two) and
// unsupervised for the target.
func (l *learner) plans(i int, atoms []*Mixture, all stacked, alpha []float64) (*domainPlans, error) {
	s := &l.scratch[i]
	B, bary, b, err := fixedPoint(atoms, all, alpha, l.warm[i], l.set.Beta, l.set.BarycenterIter, s)
	if err != nil {
		return nil, errf("LearnDictionary: domain %d: %s", i, trimPrefix(err))
	}
	beta := 0.0
	if i < l.S {
		beta = l.set.Beta
		if beta == 0 {
			beta = -1
		}
	}
	w := B.Weights
	if i >= l.S && l.set.TargetClasses != nil {
		s.w = classWeights(s.w, B, l.set.TargetClasses)
		w = s.w
	}
	fit, beta, err := fitPlan(B, l.domains[i], w, b, l.stacked[i], beta, s)
	if err != nil {
		return nil, errf("LearnDictionary: domain %d: %s", i, trimPrefix(err))
	}
	return &domainPlans{B: B, bary: bary, fit: fit, beta: beta}, nil
}

// gradient returns the sum over the domains, in their order, of the
// gradients in l.grads with respect to the free parameters (atomGradient
// for every atom, atoms in parallel, and the coordinates), in l.g.
func (l *learner) gradient(atoms []*Mixture) *params {
	K := len(atoms)
	if l.g == nil {
		l.g = &params{means: make([]*mat.Dense, K), logStd: make([]*mat.Dense, K), logits: make([]*mat.Dense, K),
			alpha: mat.NewDense(len(l.domains), K, nil)}
		l.gy = make([]*mat.Dense, K)
		for k, a := range atoms {
			na, d := a.Means.Dims()
			l.g.means[k], l.g.logStd[k] = mat.NewDense(na, d, nil), mat.NewDense(na, d, nil)
			l.g.logits[k], l.gy[k] = mat.NewDense(na, l.classes, nil), mat.NewDense(na, l.classes, nil)
		}
	}
	g := l.g
	par.ForEach(K, l.set.Workers, func(k int) {
		l.atomGradient(g.means[k], g.logStd[k], g.logits[k], l.gy[k], k, atoms[k])
	}, nil)
	for i, dg := range l.grads {
		copy(g.alpha.RawRowView(i), dg.alpha)
	}
	return g
}

// atomGradient sets gm, gs and gz to the sum over the domains, in their
// order, of the gradients in l.grads with respect to atom k's free
// parameters: its means, its log deviations by ∂L/∂s = σ ⊙ ∂L/∂σ and its
// logits by ∂L/∂z = y ⊙ (∂L/∂y − ⟨∂L/∂y, y⟩); gy receives ∂L/∂y.
func (l *learner) atomGradient(gm, gs, gz, gy *mat.Dense, k int, a *Mixture) {
	gm.Zero()
	gs.Zero()
	gy.Zero()
	for _, dg := range l.grads {
		gm.Add(gm, dg.atoms[k].means)
		gs.Add(gs, dg.atoms[k].std)
		gy.Add(gy, dg.atoms[k].labels)
	}
	gs.MulElem(gs, a.Std)
	na, _ := gz.Dims()
	for i := range na {
		logitGrad(gz.RawRowView(i), a.Labels.RawRowView(i), gy.RawRowView(i))
	}
}

// logitGrad sets dst = y ⊙ (g − ⟨g, y⟩), the gradient with respect to the
// logits of y = softmax(z) given g, the gradient with respect to y.
func logitGrad(dst, y, g []float64) {
	s := dot(g, y)
	for j, v := range y {
		dst[j] = v * (g[j] - s)
	}
}

// update moves the parameters by one Adam step on the gradient (see
// gradient; atoms in parallel), with learning rates times the plateau
// rule's factor: the means by η·s, the log deviations and logits by η,
// and every α_ℓ by η on the component of its gradient tangent to the
// simplex, then projected onto the simplex.
func (l *learner) update(atoms []*Mixture) {
	g := l.gradient(atoms)
	lr := l.lrScale * l.set.LearningRate
	par.ForEach(len(atoms), l.set.Workers, func(k int) {
		l.opt.means[k].step(raw(l.p.means[k]), raw(g.means[k]), l.lrScale*l.lrMeans)
		l.opt.logStd[k].step(raw(l.p.logStd[k]), raw(g.logStd[k]), lr)
		l.opt.logits[k].step(raw(l.p.logits[k]), raw(g.logits[k]), lr)
	}, nil)
	for i := range len(l.domains) {
		linalg.Centre(g.alpha.RawRowView(i))
	}
	l.optA.step(raw(l.p.alpha), raw(g.alpha), lr)
	for i := range len(l.domains) {
		row := l.p.alpha.RawRowView(i)
		ot.ProjectSimplex(row, row)
	}
}

// raw returns the backing slice of a matrix made by mat.NewDense.
func raw(m *mat.Dense) []float64 { return m.RawMatrix().Data }

// stopRule decides, after epoch, whether learning goes on, as DaDiL's
// (dictionary.Settings.PlateauTol): the first plateau of the losses
// divides the learning rates by 10, the second one, counted from the
// first, stops learning (optimize.FunctionConvergence); epoch Epochs is
// the last in any case (optimize.IterationLimit).
func (l *learner) stopRule(epoch int) optimize.Status {
	if plateau.Reached(l.loss[l.since:], l.set.Window, l.set.PlateauTol) {
		if l.annealed {
			return optimize.FunctionConvergence
		}
		l.annealed, l.lrScale, l.since = true, 0.1, len(l.loss)
	}
	if epoch == l.set.Epochs {
		return optimize.IterationLimit
	}
	return optimize.NotTerminated
}

// finish returns the dictionary of the current parameters, with every
// domain's reconstruction B(α_ℓ; P) computed anew from its last
// barycenter with up to DefaultBarycenterMaxIter iterations.
func (l *learner) finish() (*Dictionary, error) {
	atoms := l.p.atoms(l.set.Workers)
	all := stack(atoms...)
	recs := make([]*Mixture, len(l.domains))
	err := par.Run(len(l.domains), l.set.Workers, func(i int) error {
		B, _, _, err := fixedPoint(atoms, all, l.p.alpha.RawRowView(i), l.warm[i], l.set.Beta, DefaultBarycenterMaxIter, nil)
		if err != nil {
			return errf("LearnDictionary: domain %d: %s", i, trimPrefix(err))
		}
		recs[i] = B
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return &Dictionary{Atoms: atoms, Alpha: mat.DenseCopyOf(l.p.alpha), Reconstructions: recs, Loss: l.loss,
		Epochs: len(l.loss), Status: l.status, Settings: l.set}, nil
}

// Adam's constants (Kingma & Ba 2015), as in PyTorch.
const (
	adamB1  = 0.9
	adamB2  = 0.999
	adamEps = 1e-8
)

// adam is the state of the Adam optimiser for one parameter vector, with
// bias correction:
//
//	m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,
//	p ← p − η (m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε).
type adam struct {
	m, v []float64
	t    int
}

func (a *adam) init(n int) {
	a.m, a.v, a.t = make([]float64, n), make([]float64, n), 0
}

// step moves p by one Adam step on the gradient g with learning rate lr.
func (a *adam) step(p, g []float64, lr float64) {
	a.t++
	c1 := 1 - math.Pow(adamB1, float64(a.t))
	c2 := 1 - math.Pow(adamB2, float64(a.t))
	for i, gi := range g {
		a.m[i] = adamB1*a.m[i] + (1-adamB1)*gi
		a.v[i] = adamB2*a.v[i] + (1-adamB2)*gi*gi
		p[i] -= lr * (a.m[i] / c1) / (math.Sqrt(a.v[i]/c2) + adamEps)
	}
}
