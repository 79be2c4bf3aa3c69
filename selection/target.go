package selection

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/dataset"
)

// proba returns the predictor's class probabilities of the rows of X, or
// an error when it gives none.
func proba(pr adapt.Predictor, X *mat.Dense) (*mat.Dense, error) {
	if pr.Proba == nil {
		return nil, fmt.Errorf("%s gives no class probabilities", pr.Name)
	}
	return pr.Proba(X)
}

// targetProba returns the class probabilities of the target rows under
// every scored predictor, errors prefixed with the scorer's name.
func targetProba(p *dataset.Problem, c *Candidate, scorer string) ([]*mat.Dense, error) {
	ps, err := c.predictors()
	if err != nil {
		return nil, err
	}
	if p == nil || p.Target.X == nil || p.Target.X.IsEmpty() {
		return nil, fmt.Errorf("selection: %s: the target has no rows", scorer)
	}
	out := make([]*mat.Dense, len(ps))
	for i, pr := range ps {
		if out[i], err = proba(pr, p.Target.X); err != nil {
			return nil, fmt.Errorf("selection: %s: %w", scorer, err)
		}
	}
	return out, nil
}

// Entropy scores a method by the confidence of its predictions on the
// target rows (Morerio, Cavazza & Murino, "Minimal-Entropy Correlation
// Alignment for Unsupervised Deep Domain Adaptation", ICLR 2018): minus
// the mean Shannon entropy, in nats, of the class probabilities p̂(x) of
// the n target rows,
//
//	score = (1/n) Σ_i Σ_c p̂_c(x_i) log p̂_c(x_i) ∈ [−log C, 0],
//
// with 0 log 0 = 0. Cost: no fit. It assumes that an adapted classifier
// is confident where it is right: it cannot tell a confident wrong
// classifier from a right one, and prefers any classifier that puts the
// whole target in one class with certainty.
type Entropy struct{}

// Name returns "entropy".
func (Entropy) Name() string { return "entropy" }

// Refits returns 0.
func (Entropy) Refits(*dataset.Problem, int) int { return 0 }

// Score returns minus every scored predictor's mean prediction entropy
// on the target rows.
func (e Entropy) Score(p *dataset.Problem, c *Candidate) ([]float64, error) {
	Ps, err := targetProba(p, c, e.Name())
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(Ps))
	for i, P := range Ps {
		r, _ := P.Dims()
		for q := range r {
			out[i] -= entropy(P.RawRowView(q))
		}
		out[i] /= float64(r)
	}
	return out, nil
}

// entropy returns −Σ p log p over the positive entries of p.
func entropy(p []float64) float64 {
	var h float64
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log(v)
		}
	}
	return h
}

// DefaultTemperature is SND's default temperature τ, Saito et al.'s.
const DefaultTemperature = 0.05

// SND is soft neighbourhood density (Saito, Kim, Teterwak, Sclaroff,
// Darrell & Saenko, "Tune it the Right Way: Unsupervised Validation of
// Domain Adaptation via Soft Neighborhood Density", ICCV 2021), computed on
// the class probabilities of the n target rows, as the authors do.
// With f_i = p̂(x_i)/‖p̂(x_i)‖₂, the similarity of rows i ≠ j is s_ij =
// f_i·f_j / τ; each row's neighbours get the distribution
//
//	P_ij = exp(s_ij) / Σ_{k≠i} exp(s_ik),  j ≠ i,
//
// and the score is its mean entropy,
//
//	score = −(1/n) Σ_i Σ_{j≠i} P_ij log P_ij ∈ [0, log(n−1)].
//
// A high score means that every row has many close neighbours in the
// output space: the predictions form dense clusters rather than scattered
// points. Cost: no fit, but n² similarities (computed in blocks of rows,
// in memory linear in n). It assumes that the right classifier maps the
// target into dense, well-separated clusters; like entropy it rewards a
// classifier that collapses the target into one class.
type SND struct {
	// Temperature τ > 0; 0 means DefaultTemperature.
	Temperature float64
}

// Name returns "snd".
func (*SND) Name() string { return "snd" }

// Refits returns 0.
func (*SND) Refits(*dataset.Problem, int) int { return 0 }

// Score returns the soft neighbourhood density of every scored
// predictor's target probabilities.
func (s *SND) Score(p *dataset.Problem, c *Candidate) ([]float64, error) {
	tau := s.Temperature
	if tau == 0 {
		tau = DefaultTemperature
	}
	if !(tau > 0) || math.IsInf(tau, 1) {
		return nil, fmt.Errorf("selection: snd: temperature %g is not a positive number", tau)
	}
	Ps, err := targetProba(p, c, s.Name())
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(Ps))
	for i, P := range Ps {
		if out[i], err = snd(P, tau); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sndBlock is the number of rows whose similarities snd holds at once.
const sndBlock = 256

// snd returns the soft neighbourhood density of the rows of P at
// temperature tau (see SND).
func snd(P *mat.Dense, tau float64) (float64, error) {
	n, c := P.Dims()
	if n < 2 {
		return 0, errors.New("selection: snd: needs at least 2 target rows")
	}
	F := mat.NewDense(n, c, nil)
	for i := range n {
		row := F.RawRowView(i)
		copy(row, P.RawRowView(i))
		if nrm := floats.Norm(row, 2); nrm > 0 {
			floats.Scale(1/nrm, row)
		}
	}
	var S mat.Dense
	var total float64
	for lo := 0; lo < n; lo += sndBlock {
		hi := min(lo+sndBlock, n)
		S.Reset()
		S.Mul(F.Slice(lo, hi, 0, c), F.T())
		for r := range hi - lo {
			total += neighbourEntropy(S.RawRowView(r), lo+r, tau)
		}
	}
	return total / float64(n), nil
}

// neighbourEntropy returns the entropy of the softmax of s/tau over the
// entries other than self.
func neighbourEntropy(s []float64, self int, tau float64) float64 {
	top := math.Inf(-1)
	for j, v := range s {
		if j != self {
			top = max(top, v/tau)
		}
	}
	// H = log Z − Σ_j P_j (s_j/τ − top), with Z = Σ_j e^{s_j/τ − top}.
	var z, zs float64
	for j, v := range s {
		if j == self {
			continue
		}
		u := v/tau - top
		e := math.Exp(u)
		z += e
		zs += e * u
	}
	return math.Log(z) - zs/z
}

// DefaultMixRatio is MixVal's default mixing ratio λ, Hu et al.'s.
const DefaultMixRatio = 0.55

// MixVal scores a method by the consistency of its predictions on mixed
// target rows (Hu, Liang, Liew, Xue, Bai & Wang, "Mixed Samples as Probes
// for Unsupervised Model Selection in Domain Adaptation", NeurIPS 2023).
// Every target row i is paired with row π(i) of a random permutation π
// (seeded by Seed) and mixed,
//
//	x̃_i = λ x_i + (1 − λ) x_π(i),   λ ∈ (½, 1),
//
// the mixture taking the predicted class of its larger part, ŷ(x_i). The
// pairs of equal predicted classes probe the clusters (intra-cluster),
// the others the boundaries between them (inter-cluster); each group
// scores the fraction of its mixtures predicted ŷ(x_i), and
//
//	score = ½ (ICE_intra + ICE_inter) ∈ [0, 1],
//
// a group without pairs counting 0: a predictor that puts every target row
// in one class gets no credit at the boundaries it does not draw. Cost: no
// fit; one prediction of n mixtures. It assumes that the classes of the
// target form clusters that the right classifier's boundaries separate
// where the data are sparse, and that features mix linearly.
type MixVal struct {
	// Ratio λ ∈ (½, 1); 0 means DefaultMixRatio.
	Ratio float64
	Seed  uint64
}

// Name returns "mixval".
func (*MixVal) Name() string { return "mixval" }

// Refits returns 0.
func (*MixVal) Refits(*dataset.Problem, int) int { return 0 }

// Score returns the mixup consistency of every scored predictor on the
// target rows.
func (s *MixVal) Score(p *dataset.Problem, c *Candidate) ([]float64, error) {
	lambda := s.Ratio
	if lambda == 0 {
		lambda = DefaultMixRatio
	}
	if !(lambda > 0.5 && lambda < 1) {
		return nil, fmt.Errorf("selection: mixval: ratio %g is outside (0.5, 1)", lambda)
	}
	ps, err := c.predictors()
	if err != nil {
		return nil, err
	}
	if p == nil || p.Target.X == nil || p.Target.X.IsEmpty() {
		return nil, errors.New("selection: mixval: the target has no rows")
	}
	X := p.Target.X
	n, _ := X.Dims()
	perm := rand.New(rand.NewPCG(s.Seed, 0x313976)).Perm(n)
	mixed := mixRows(X, perm, lambda)
	out := make([]float64, len(ps))
	for i, pr := range ps {
		y, err := pr.Predict(X)
		if err != nil {
			return nil, fmt.Errorf("selection: mixval: %w", err)
		}
		ym, err := pr.Predict(mixed)
		if err != nil {
			return nil, fmt.Errorf("selection: mixval: %w", err)
		}
		out[i] = consistency(y, ym, perm)
	}
	return out, nil
}

// mixRows returns the rows λ x_i + (1 − λ) x_perm(i) of X.
func mixRows(X *mat.Dense, perm []int, lambda float64) *mat.Dense {
	n, d := X.Dims()
	M := mat.NewDense(n, d, nil)
	for i := range n {
		row := M.RawRowView(i)
		floats.ScaleTo(row, lambda, X.RawRowView(i))
		floats.AddScaled(row, 1-lambda, X.RawRowView(perm[i]))
	}
	return M
}

// consistency returns MixVal's ½ (ICE_intra + ICE_inter) from the classes
// y of the rows, ym of their mixtures and the pairing perm.
func consistency(y, ym, perm []int) float64 {
	var hit, count [2]int // [0] intra-cluster pairs, [1] inter-cluster
	for i, j := range perm {
		g := 0
		if y[i] != y[j] {
			g = 1
		}
		count[g]++
		if ym[i] == y[i] {
			hit[g]++
		}
	}
	var ice float64
	for g := range 2 {
		if count[g] > 0 {
			ice += float64(hit[g]) / float64(count[g]) / 2
		}
	}
	return ice
}
