package modelfile

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/linalg"
)

// checkGMM verifies that a GMM-DaDiL model is complete before it is
// written: a dictionary of atoms of one size, a reconstruction per row of
// α, GMM-DaDiL-R's classifier and GMM-DaDiL-E's, one per atom or none
// (then GMM-DaDiL-E weighs the atoms' MAP rules), for classes classes.
func checkGMM(m *adapt.GMMDaDiL, classes int) error {
	d := m.Dict
	switch {
	case d == nil || len(d.Atoms) == 0 || d.Alpha == nil:
		return errors.New("the GMM-DaDiL model has no dictionary, atoms or coordinates")
	case m.R == nil:
		return errors.New("the GMM-DaDiL model has no classifier of its reconstruction (fitted with MAP): model files hold GMM-DaDiL-R's classifier")
	}
	if len(m.E) != 0 && len(m.E) != len(d.Atoms) {
		return fmt.Errorf("the GMM-DaDiL model has %d GMM-DaDiL-E classifiers for %d atoms", len(m.E), len(d.Atoms))
	}
	for k, e := range m.E {
		if e == nil {
			return fmt.Errorf("the GMM-DaDiL model has no GMM-DaDiL-E classifier for atom %d", k)
		}
	}
	if N, _ := d.Alpha.Dims(); len(d.Reconstructions) != N || N < 2 {
		return fmt.Errorf("the GMM-DaDiL model has %d reconstructions for %d domains (at least one source and the target)", len(d.Reconstructions), N)
	}
	for k, a := range d.Atoms {
		if a == nil || a.Means == nil || a.Labels == nil {
			return fmt.Errorf("atom %d has no means or no labels", k)
		}
	}
	if c := d.Atoms[0].Classes(); c != classes {
		return fmt.Errorf("%d label values for %d classes", classes, c)
	}
	if p := m.Projection; p != nil {
		if p.Basis == nil {
			return errors.New("the GMM-DaDiL model's projection has no basis")
		}
		if D, q := p.Dims(); len(p.Mean) != D || q != d.Atoms[0].Dim() {
			return fmt.Errorf("the GMM-DaDiL model's projection maps %d features (mean of %d) onto %d directions, its atoms have %d", D, len(p.Mean), q, d.Atoms[0].Dim())
		}
	}
	return nil
}

// gmmHeaders checks the headers of the members of a GMM-DaDiL model
// against the manifest: α (N×K), every atom's and every reconstruction's
// mixture (Components components), and the classifiers of GMM-DaDiL-R and
// (from version 3) GMM-DaDiL-E, whose points, if they keep any, may not
// outnumber the rows they train on: SamplesPerClass (default
// adapt.DefaultGMMSamplesPerClass) per class, and for GMM-DaDiL-R the
// sources' moved rows (gmmRRows).
func gmmHeaders(a *archive, man *manifest) error {
	K, N := man.Atoms, len(man.Domains)
	if err := a.header("alpha", N, K); err != nil {
		return err
	}
	for _, p := range gmmMixtures(K, N) {
		if err := a.mixtureHeaders(man, p); err != nil {
			return err
		}
	}
	if q := man.Directions; q > 0 {
		if err := a.header("projection_mean", man.Features); err != nil {
			return err
		}
		if err := a.header("projection_basis", q, man.Features); err != nil {
			return err
		}
	}
	per := man.GMM.SamplesPerClass
	if per == 0 {
		per = adapt.DefaultGMMSamplesPerClass
	}
	drawn := min(per, math.MaxInt/man.Classes) * man.Classes
	for _, p := range man.classifierPrefixes() {
		limit := drawn
		if p == "r" {
			limit = gmmRRows(man.GMM, drawn, N-1)
		}
		if err := a.classifierHeaders(man, p, limit); err != nil {
			return err
		}
	}
	return nil
}

// gmmRRows returns the most rows GMM-DaDiL-R's classifier trains on: the
// drawn rows and, unless its Transport is dictionary.TransportNone, at
// most TransportRows of each of the sources (as many as drawn for 0,
// maxLabeledRows for all).
func gmmRRows(s GMMSettings, drawn, sources int) int {
	if s.Transport == dictionary.TransportNone {
		return drawn
	}
	rows := s.TransportRows
	switch {
	case rows == 0:
		rows = drawn
	case rows < 0:
		rows = maxLabeledRows
	}
	if sources > 0 && rows > (math.MaxInt-drawn)/sources {
		return math.MaxInt
	}
	return drawn + max(sources, 0)*rows
}

// gmmMixtures returns the member prefixes of the mixtures of a GMM-DaDiL
// model of K atoms and N domains: "atom0" … then "rec0" ….
func gmmMixtures(K, N int) []string {
	var out []string
	for k := range K {
		out = append(out, fmt.Sprintf("atom%d", k))
	}
	for l := range N {
		out = append(out, fmt.Sprintf("rec%d", l))
	}
	return out
}

// mixtureHeaders checks the headers of the mixture of prefix p.
func (a *archive) mixtureHeaders(man *manifest, p string) error {
	n, d, c := man.Components, man.inner(), man.Classes
	if err := a.header(p+"_weights", n); err != nil {
		return err
	}
	for _, name := range []string{"_means", "_std"} {
		if err := a.header(p+name, n, d); err != nil {
			return err
		}
	}
	return a.header(p+"_labels", n, c)
}

// readGMM reads the GMM-DaDiL model of a model file whose headers were
// checked: α, the mixtures, each a valid labeled mixture whose labels are
// on the simplex, GMM-DaDiL-R's classifier and, from version 3,
// GMM-DaDiL-E's (a version 2 model has none: its GMM-DaDiL-E weighs the
// atoms' MAP rules, as the dadil that wrote it did).
func readGMM(a *archive, man *manifest) (*adapt.GMMDaDiL, error) {
	alpha, err := a.alpha(len(man.Domains))
	if err != nil {
		return nil, err
	}
	d := &gmm.Dictionary{Alpha: alpha, Settings: man.GMM.Dictionary}
	for i, p := range gmmMixtures(man.Atoms, len(man.Domains)) {
		m, err := a.mixture(p)
		if err != nil {
			return nil, err
		}
		if i < man.Atoms {
			d.Atoms = append(d.Atoms, m)
		} else {
			d.Reconstructions = append(d.Reconstructions, m)
		}
	}
	proj, err := a.projection(man)
	if err != nil {
		return nil, err
	}
	var r classify.Classifier
	var e []classify.Classifier
	for i, p := range man.classifierPrefixes() {
		h, err := a.classifier(man, p)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			r = h
		} else {
			e = append(e, h)
		}
	}
	m := man.GMM.model(d, r, e)
	m.Projection = proj
	return m, nil
}

// projectionTol bounds |⟨v_i, v_j⟩ − δ_ij| for the rows of a stored
// projection's basis.
const projectionTol = 1e-9

// projection reads the projection of a model with principal directions
// (nil for one without), whose basis must have orthonormal rows.
func (a *archive) projection(man *manifest) (*adapt.Projection, error) {
	if man.Directions == 0 {
		return nil, nil
	}
	mu, err := a.vector("projection_mean")
	if err != nil {
		return nil, err
	}
	V, err := a.matrix("projection_basis")
	if err != nil {
		return nil, err
	}
	q, _ := V.Dims()
	for i := range q {
		for j := range i + 1 {
			want := 0.0
			if i == j {
				want = 1
			}
			if g := floats.Dot(V.RawRowView(i), V.RawRowView(j)); math.Abs(g-want) > projectionTol {
				return nil, fmt.Errorf("projection_basis.npy: rows %d and %d have the inner product %g, not %g: the rows are not orthonormal", i, j, g, want)
			}
		}
	}
	return &adapt.Projection{Mean: mu, Basis: V}, nil
}

// mixture reads the labeled mixture of prefix p.
func (a *archive) mixture(p string) (*gmm.Mixture, error) {
	w, err := a.vector(p + "_weights")
	if err != nil {
		return nil, err
	}
	m := &gmm.Mixture{Weights: w}
	for _, x := range []struct {
		name string
		dst  **mat.Dense
	}{{"_means", &m.Means}, {"_std", &m.Std}, {"_labels", &m.Labels}} {
		if *x.dst, err = a.matrix(p + x.name); err != nil {
			return nil, err
		}
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("mixture %s: %w", p, err)
	}
	n, _ := m.Labels.Dims()
	for i := range n {
		row := m.Labels.RawRowView(i)
		if ok, k, sum := linalg.OnSimplex(row, linalg.SimplexTol); k >= 0 {
			return nil, fmt.Errorf("%s_labels.npy: row %d has a negative label %g", p, i, row[k])
		} else if !ok {
			return nil, fmt.Errorf("%s_labels.npy: row %d sums to %.17g, not 1", p, i, sum)
		}
	}
	return m, nil
}
