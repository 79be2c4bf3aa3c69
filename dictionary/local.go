package dictionary

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
)

// LocalStart is where FitLocal starts from: given atoms and the domain's
// coordinates.
type LocalStart struct {
	// Atoms are the K atoms to start from, every one n×d points and n×c
	// label logits with the same n. FitLocal copies them and never
	// modifies them.
	Atoms []Atom
	// Alpha is the domain's α ∈ Δ_K to start from; nil starts uniform.
	Alpha []float64
	// FixAtoms learns α only, the atoms held fixed (as WBR does with the
	// sources).
	FixAtoms bool
	// State, if not nil, carries the optimisers' state (Adam's moments
	// and step counts for the atoms and α) from one FitLocal call to the
	// next: an empty State starts afresh and receives the state at the
	// end; a State of the same shapes is continued, and updated. A State
	// of other shapes starts afresh. nil: the optimisers start afresh
	// every call.
	State *LocalState
}

// LocalState is the state of FitLocal's optimisers that a caller keeps
// between calls (LocalStart.State): a federated site that keeps its Adam
// moments from round to round, its atoms replaced meanwhile by the
// coordinator's. Its zero value is empty.
type LocalState struct {
	optX []lazyAdam
	optZ []adam
	optA adam
}

// SecondMoments returns views of the atoms' Adam second moments v (see
// adam), the running means of the squared gradients that divide every
// step: for atom k, X[k] holds n·d values laid out as its features and
// Z[k] n·c values laid out as its label logits, row-major. They are nil
// for an empty state. Writing them changes the state: a federated site
// whose coordinator shares the sites' mean second moments
// (federate.Config.ShareMoments) replaces its own with the mean before
// its local epochs, so that every site divides its gradients by the same
// v, as the centralised fit's single Adam does.
func (s *LocalState) SecondMoments() (X, Z [][]float64) {
	for k := range s.optX {
		X = append(X, s.optX[k].v)
		Z = append(Z, s.optZ[k].v)
	}
	return X, Z
}

// fits reports whether s holds optimisers for K atoms of n×d points and
// n×c logits and one domain's α.
func (s *LocalState) fits(K, n, d, c int) bool {
	if len(s.optX) != K || len(s.optZ) != K || len(s.optA.m) != K {
		return false
	}
	for k := range K {
		if s.optX[k].width != d || len(s.optX[k].last) != n || len(s.optZ[k].m) != n*c {
			return false
		}
	}
	return true
}

// FitLocal runs paper Algorithm 2 on the single domain dm from the atoms
// and coordinates of start instead of initialising them (line 1): the loop
// of lines 2–18 with N = 1, for at most Settings.Epochs epochs of ⌈n/n_b⌉
// batches (the plateau rule applies as in Fit; a negative
// Settings.PlateauTol runs exactly Epochs epochs), the optimisers' states
// starting afresh. It is the local update of a site in federated DaDiL
// (Castellon, Montesuma et al., ICASSP 2024): the domain's loss is
// W_c(Q̂_ℓ, B(α_ℓ; P)) with the label term of eq. 9 if dm is labeled, W_2²
// if it is not (the atoms' labels then receive no gradient).
//
// Settings.Atoms and Settings.Samples are taken from the atoms and
// Settings.Init is ignored; with the default Settings.FeatureScale the
// features' learning rate is scaled by the spread of dm alone. The result
// holds the updated atoms, one row of coordinates (α_ℓ) and the
// history of this call; the same seed gives the same result whatever the
// number of goroutines.
func FitLocal(dm dataset.Domain, classes int, start LocalStart, s *Settings) (*Dictionary, error) {
	var ss Settings
	if s != nil {
		ss = *s
	}
	K := len(start.Atoms)
	if K == 0 {
		return nil, errors.New("dictionary: FitLocal: no atoms to start from")
	}
	if dm.X == nil || dm.X.IsEmpty() {
		return nil, fmt.Errorf("dictionary: FitLocal: domain %s is empty", dm.Name)
	}
	_, d := dm.X.Dims()
	n, err := checkStartAtoms("FitLocal", start.Atoms, d, classes)
	if err != nil {
		return nil, err
	}
	if start.Alpha != nil {
		if err := checkWeights(start.Alpha, K); err != nil {
			return nil, fmt.Errorf("dictionary: FitLocal: starting α: %w", err)
		}
	}
	ss.Atoms, ss.ExtraAtoms, ss.Samples = K, 0, n
	domains := []dataset.Domain{dm}
	set, err := validateDomains(domains, classes, &ss, false)
	if err != nil {
		return nil, err
	}
	if err := checkMemory(SizesOf(domains, classes), &set, MemoryEstimate.Learning); err != nil {
		return nil, err
	}
	f := newFitter(domains, classes, set)
	f.fixed = start.FixAtoms
	f.alpha0 = start.Alpha
	f.carry = start.State
	f.startFrom(start.Atoms)
	if err := f.run(); err != nil {
		return nil, err
	}
	return f.dict, nil
}

// FitFrom runs paper Algorithm 2 on the domains as Fit does, from the
// given atoms instead of initialising them (line 1). Settings.Atoms and
// Settings.Samples are taken from the atoms and Settings.Init is ignored;
// FitFrom copies the atoms and never modifies them. It is the centralised
// fit that federated DaDiL compares with when both start from the same
// atoms (dadil federate demo).
func FitFrom(domains []dataset.Domain, classes int, atoms []Atom, s *Settings) (*Dictionary, error) {
	var ss Settings
	if s != nil {
		ss = *s
	}
	if len(atoms) == 0 || atoms[0].X == nil {
		return nil, errors.New("dictionary: FitFrom: no atoms to start from")
	}
	_, d := atoms[0].X.Dims()
	n, err := checkStartAtoms("FitFrom", atoms, d, classes)
	if err != nil {
		return nil, err
	}
	ss.Atoms, ss.ExtraAtoms, ss.Samples = len(atoms), 0, n
	set, err := validate(domains, classes, &ss)
	if err != nil {
		return nil, err
	}
	if _, dd := domains[0].X.Dims(); dd != d {
		return nil, fmt.Errorf("dictionary: FitFrom: the atoms have %d features, the domains %d", d, dd)
	}
	z := SizesOf(domains, classes)
	if err := checkMemory(z, &set, MemoryEstimate.Learning); err != nil {
		return nil, err
	}
	f := newFitter(domains, classes, set)
	f.startFrom(atoms)
	if err := f.run(); err != nil {
		return nil, err
	}
	return f.dict, nil
}

// startFrom sets the fitter's atoms to copies of atoms, in place of
// initAtoms (FitLocal, FitFrom).
func (f *fitter) startFrom(atoms []Atom) {
	for _, a := range atoms {
		f.X = append(f.X, mat.DenseCopyOf(a.X))
		f.Z = append(f.Z, mat.DenseCopyOf(a.Logits))
	}
}

// checkStartAtoms checks that the atoms given to the function fn all hold
// the same number n of points, of d features, with n×classes finite label
// logits, and returns n.
func checkStartAtoms(fn string, atoms []Atom, d, classes int) (int, error) {
	var n int
	for k, a := range atoms {
		if a.X == nil || a.X.IsEmpty() || a.Logits == nil || a.Logits.IsEmpty() {
			return 0, fmt.Errorf("dictionary: %s: atom %d is empty", fn, k)
		}
		r, dk := a.X.Dims()
		if k == 0 {
			n = r
		}
		if r != n || dk != d {
			return 0, fmt.Errorf("dictionary: %s: atom %d has %d×%d points, want %d×%d", fn, k, r, dk, n, d)
		}
		if rz, c := a.Logits.Dims(); rz != n || c != classes {
			return 0, fmt.Errorf("dictionary: %s: atom %d has %d×%d label logits, want %d×%d", fn, k, rz, c, n, classes)
		}
		for _, m := range []*mat.Dense{a.X, a.Logits} {
			for i := range n {
				for _, v := range m.RawRowView(i) {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						return 0, fmt.Errorf("dictionary: %s: atom %d holds the value %g", fn, k, v)
					}
				}
			}
		}
	}
	return n, nil
}
