package dictionary

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/barycenter"
	"github.com/dadil/dadil/classify"
)

// Reconstruct returns B(α; P), the labeled Wasserstein barycenter of the
// full atoms at the coordinates alpha (Algorithm 1 with the dictionary's
// N_itb, τ and β), with n support points initialised from the atoms' points.
// For the target's coordinates this is DaDiL-R's labeled training set.
func (d *Dictionary) Reconstruct(alpha []float64, seed uint64) (*barycenter.Result, error) {
	ms := make([]barycenter.Measure, len(d.Atoms))
	for k, a := range d.Atoms {
		ms[k] = barycenter.Measure{X: a.X, Y: a.Labels()}
	}
	n, _ := d.Atoms[0].X.Dims()
	for _, a := range d.Atoms {
		r, _ := a.X.Dims()
		n = max(n, r)
	}
	return barycenter.Labeled(ms, alpha, &barycenter.Settings{
		Support:     n,
		MaxIter:     d.Settings.BarycenterIter,
		Tol:         d.Settings.BarycenterTol,
		Beta:        d.Settings.Beta,
		InitSamples: true,
		Rand:        rand.New(rand.NewPCG(seed, 0xb417)),
	})
}

// Model classifies a target domain with a dictionary, in the two ways of
// the paper (Section 4.2):
//
//   - DaDiL-R trains one classifier on the reconstruction B(α_T; P) of the
//     target, whose labels are the propagated soft labels;
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
	R      *classify.Softmax
	E      []*classify.Softmax
	// Reconstruction is B(α_T; P), on which R was trained.
	Reconstruction *barycenter.Result
}

// NewModel trains the DaDiL-R and DaDiL-E classifiers of the domain in row
// target of d.Alpha. s configures the classifiers (nil: defaults); seed
// drives the reconstruction's initialisation.
func NewModel(d *Dictionary, target int, s *classify.Settings, seed uint64) (*Model, error) {
	N, K := d.Alpha.Dims()
	if target < 0 || target >= N {
		return nil, fmt.Errorf("dictionary: target row %d outside the %d domains", target, N)
	}
	m := &Model{Dict: d, Target: target, Alpha: mat.Row(nil, target, d.Alpha)}
	var err error
	if m.R, m.Reconstruction, err = d.ClassifierR(m.Alpha, s, seed); err != nil {
		return nil, err
	}
	m.E = make([]*classify.Softmax, K)
	for k, a := range d.Atoms {
		if m.E[k], err = d.fitClassifier(a.X, a.Labels(), s); err != nil {
			return nil, fmt.Errorf("dictionary: DaDiL-E classifier of atom %d: %w", k, err)
		}
	}
	return m, nil
}

// ClassifierR trains DaDiL-R's classifier for the coordinates alpha: a
// softmax regression (settings s, nil for defaults) on the reconstruction
// B(α; P) with its propagated soft labels (their argmax with
// Settings.HardLabels), which it also returns. With α_T
// it is the R of NewModel; other α explore the Wasserstein hull of the
// atoms (paper Figure 4).
func (d *Dictionary) ClassifierR(alpha []float64, s *classify.Settings, seed uint64) (*classify.Softmax, *barycenter.Result, error) {
	if len(alpha) != len(d.Atoms) {
		return nil, nil, fmt.Errorf("dictionary: %d coordinates for %d atoms", len(alpha), len(d.Atoms))
	}
	rec, err := d.Reconstruct(alpha, seed)
	if err != nil {
		return nil, nil, err
	}
	h, err := d.fitClassifier(rec.X, normalizeRows(rec.Y), s)
	if err != nil {
		return nil, nil, fmt.Errorf("dictionary: DaDiL-R classifier: %w", err)
	}
	return h, rec, nil
}

// fitClassifier trains a softmax regression (settings s) on the points X
// with the soft labels Y, or on their argmax with Settings.HardLabels.
func (d *Dictionary) fitClassifier(X, Y *mat.Dense, s *classify.Settings) (*classify.Softmax, error) {
	if !d.Settings.HardLabels {
		h, _, err := classify.Fit(X, Y, nil, s)
		return h, err
	}
	h, _, err := classify.FitLabels(X, argmaxRows(Y), d.Classes, nil, s)
	return h, err
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
	var P mat.Dense
	if err := m.R.Proba(&P, X); err != nil {
		return nil, err
	}
	return &P, nil
}

// ProbaE returns DaDiL-E's class probabilities Σ_k α_T,k h_k(x) for the
// rows of X.
func (m *Model) ProbaE(X *mat.Dense) (*mat.Dense, error) {
	return m.ProbaEWith(m.Alpha, X)
}

// ProbaEWith is ProbaE with the atom classifiers weighted by alpha instead
// of α_T (for exploring the Wasserstein hull).
func (m *Model) ProbaEWith(alpha []float64, X *mat.Dense) (*mat.Dense, error) {
	if len(alpha) != len(m.E) {
		return nil, fmt.Errorf("dictionary: %d weights for %d atoms", len(alpha), len(m.E))
	}
	r, _ := X.Dims()
	out := mat.NewDense(r, m.Dict.Classes, nil)
	var P mat.Dense
	for k, h := range m.E {
		if alpha[k] == 0 {
			continue
		}
		P.Reset()
		if err := h.Proba(&P, X); err != nil {
			return nil, err
		}
		out.Add(out, scaled(&P, alpha[k]))
	}
	return out, nil
}

func scaled(A *mat.Dense, f float64) *mat.Dense {
	A.Scale(f, A)
	return A
}

// PredictR returns DaDiL-R's class index for every row of X.
func (m *Model) PredictR(X *mat.Dense) ([]int, error) {
	P, err := m.ProbaR(X)
	if err != nil {
		return nil, err
	}
	return argmaxRows(P), nil
}

// PredictE returns DaDiL-E's class index for every row of X.
func (m *Model) PredictE(X *mat.Dense) ([]int, error) {
	P, err := m.ProbaE(X)
	if err != nil {
		return nil, err
	}
	return argmaxRows(P), nil
}

func argmaxRows(P *mat.Dense) []int {
	r, _ := P.Dims()
	out := make([]int, r)
	for i := range out {
		out[i] = argmax(P.RawRowView(i))
	}
	return out
}
