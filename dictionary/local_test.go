package dictionary

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
)

// localDomain returns a two-class domain of n points in the plane.
func localDomain(seed uint64, n int, labeled bool) dataset.Domain {
	rng := rand.New(rand.NewPCG(seed, 1))
	X := mat.NewDense(n, 2, nil)
	y := make([]int, n)
	for i := range n {
		y[i] = i % 2
		X.Set(i, 0, 3*float64(y[i])+0.3*rng.NormFloat64())
		X.Set(i, 1, 1+0.3*rng.NormFloat64())
	}
	if !labeled {
		y = nil
	}
	return dataset.Domain{Name: "d", X: X, Y: y}
}

// localAtoms returns K Gaussian atoms of n points, balanced classes.
func localAtoms(K, n, d, c int) []Atom {
	rng := rand.New(rand.NewPCG(7, 7))
	atoms := make([]Atom, K)
	for k := range atoms {
		X := mat.NewDense(n, d, nil)
		Z := mat.NewDense(n, c, nil)
		for i := range n {
			for q := range d {
				X.Set(i, q, rng.NormFloat64())
			}
			Z.Set(i, i%c, 2)
		}
		atoms[k] = Atom{X: X, Logits: Z}
	}
	return atoms
}

func TestFitLocal(t *testing.T) {
	set := &Settings{Batch: 10, Epochs: 3, PlateauTol: -1, Seed: 3, Workers: 1}
	atoms := localAtoms(2, 20, 2, 2)
	orig := mat.DenseCopyOf(atoms[0].X)
	alpha := []float64{0.25, 0.75}
	run := func(dm dataset.Domain, st LocalStart, workers int) *Dictionary {
		t.Helper()
		s := *set
		s.Workers = workers
		d, err := FitLocal(dm, 2, st, &s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	lab := localDomain(1, 60, true)
	d := run(lab, LocalStart{Atoms: atoms, Alpha: alpha}, 1)
	if !mat.Equal(atoms[0].X, orig) {
		t.Error("FitLocal modified the starting atoms")
	}
	if r, c := d.Alpha.Dims(); r != 1 || c != 2 || len(d.History.Loss) != 3 {
		t.Fatalf("α %d×%d, %d epochs; want 1×2, 3", r, c, len(d.History.Loss))
	}
	if mat.Equal(d.Atoms[0].X, orig) || mat.Equal(d.Atoms[0].Logits, atoms[0].Logits) {
		t.Error("a labeled domain moved neither the features nor the labels of atom 0")
	}
	if d.Alpha.At(0, 0) == 0.5 {
		t.Error("α did not start from the given coordinates")
	}
	if d2 := run(lab, LocalStart{Atoms: atoms, Alpha: alpha}, 4); !mat.Equal(d.Atoms[1].X, d2.Atoms[1].X) || !mat.Equal(d.Alpha, d2.Alpha) {
		t.Error("the result depends on the number of goroutines")
	}
	un := run(localDomain(2, 60, false), LocalStart{Atoms: atoms}, 1)
	if !mat.Equal(un.Atoms[0].Logits, atoms[0].Logits) || mat.Equal(un.Atoms[0].X, atoms[0].X) {
		t.Error("an unlabeled domain must move the features and leave the labels")
	}
	fixed := run(localDomain(2, 60, false), LocalStart{Atoms: atoms, FixAtoms: true}, 1)
	if !mat.Equal(fixed.Atoms[1].X, atoms[1].X) || mat.Equal(fixed.Alpha, mat.NewDense(1, 2, []float64{0.5, 0.5})) {
		t.Error("FixAtoms must move α only")
	}
}

func TestFitLocalErrors(t *testing.T) {
	dm := localDomain(1, 40, true)
	good := localAtoms(2, 10, 2, 2)
	bad := localAtoms(2, 10, 3, 2)
	short := localAtoms(2, 10, 2, 2)
	short[1].X = mat.NewDense(5, 2, nil)
	nan := localAtoms(2, 10, 2, 2)
	nan[0].Logits.Set(1, 1, math.Inf(1))
	for _, c := range []struct {
		name string
		st   LocalStart
		want string
	}{
		{"no atoms", LocalStart{}, "no atoms"},
		{"features", LocalStart{Atoms: bad}, "want 10×2"},
		{"rows", LocalStart{Atoms: short}, "atom 1 has 5×2"},
		{"infinite", LocalStart{Atoms: nan}, "+Inf"},
		{"alpha length", LocalStart{Atoms: good, Alpha: []float64{1}}, "1 weights for 2 atoms"},
		{"alpha simplex", LocalStart{Atoms: good, Alpha: []float64{0.7, 0.7}}, "simplex"},
	} {
		_, err := FitLocal(dm, 2, c.st, &Settings{Batch: 10, Epochs: 1})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestFitLocalState: an empty State receives the optimisers' state; a
// second call that continues it differs from one that starts afresh, and
// its history counts only its own steps; a State of other shapes starts
// afresh.
func TestFitLocalState(t *testing.T) {
	set := &Settings{Batch: 10, Epochs: 2, PlateauTol: -1, Seed: 3, Workers: 1}
	dm := localDomain(1, 40, true)
	fit := func(st LocalStart) *Dictionary {
		t.Helper()
		d, err := FitLocal(dm, 2, st, set)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	var state LocalState
	first := fit(LocalStart{Atoms: localAtoms(2, 20, 2, 2), State: &state})
	if !state.fits(2, 20, 2, 2) || state.optX[0].t != 4 {
		t.Fatalf("the state after a call of 4 steps: fits %v, t %d", state.fits(2, 20, 2, 2), state.optX[0].t)
	}
	alpha := mat.Row(nil, 0, first.Alpha)
	fresh := fit(LocalStart{Atoms: first.Atoms, Alpha: alpha})
	kept := fit(LocalStart{Atoms: first.Atoms, Alpha: alpha, State: &state})
	if mat.Equal(fresh.Atoms[0].X, kept.Atoms[0].X) {
		t.Error("continuing the optimisers' state changed nothing")
	}
	if state.optX[0].t != 8 || len(kept.History.DeltaX) != 4 || !(kept.History.DeltaX[0] > 0) {
		t.Errorf("after two calls: t %d, this call's ΔX %v", state.optX[0].t, kept.History.DeltaX)
	}
	other := LocalState{}
	fit(LocalStart{Atoms: localAtoms(3, 20, 2, 2), State: &other})
	again := fit(LocalStart{Atoms: first.Atoms, Alpha: alpha, State: &other})
	if !mat.Equal(fresh.Atoms[0].X, again.Atoms[0].X) || !mat.Equal(fresh.Atoms[1].Logits, again.Atoms[1].Logits) {
		t.Error("a state of 3 atoms did not start 2 atoms afresh")
	}
}

// TestFitFrom: Fit's learning on several domains from given atoms, which
// it copies, with K and n taken from them; the same atoms and seed give
// the same dictionary whatever the number of goroutines, and other atoms
// another one.
func TestFitFrom(t *testing.T) {
	domains := []dataset.Domain{localDomain(1, 60, true), localDomain(2, 60, true), localDomain(3, 60, false)}
	atoms := localAtoms(2, 20, 2, 2)
	orig := mat.DenseCopyOf(atoms[0].X)
	run := func(a []Atom, workers int) *Dictionary {
		t.Helper()
		d, err := FitFrom(domains, 2, a, &Settings{Atoms: 5, Samples: 4, Batch: 10, Epochs: 4, PlateauTol: -1, Seed: 3, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := run(atoms, 1)
	if !mat.Equal(atoms[0].X, orig) {
		t.Error("FitFrom modified the starting atoms")
	}
	if r, c := d.Alpha.Dims(); r != 3 || c != 2 || d.Settings.Atoms != 2 || d.Settings.Samples != 20 || len(d.History.Loss) != 4 {
		t.Fatalf("α %d×%d, K = %d, n = %d, %d epochs; want 3×2, 2, 20, 4", r, c, d.Settings.Atoms, d.Settings.Samples, len(d.History.Loss))
	}
	if mat.Equal(d.Atoms[0].X, orig) || !(d.History.Loss[3] < d.History.Loss[0]) {
		t.Errorf("the atoms did not move, or the loss did not fall (%v)", d.History.Loss)
	}
	if d2 := run(atoms, 4); !mat.Equal(d.Atoms[1].X, d2.Atoms[1].X) || !mat.Equal(d.Alpha, d2.Alpha) {
		t.Error("the result depends on the number of goroutines")
	}
	other := localAtoms(2, 20, 2, 2)
	other[0].X.Scale(2, other[0].X)
	if d3 := run(other, 1); mat.Equal(d.Atoms[0].X, d3.Atoms[0].X) {
		t.Error("other starting atoms gave the same dictionary")
	}
	for _, c := range []struct {
		name  string
		atoms []Atom
		want  string
	}{
		{"no atoms", nil, "FitFrom: no atoms"},
		{"features", localAtoms(2, 10, 3, 2), "the atoms have 3 features, the domains 2"},
		{"classes", localAtoms(2, 10, 2, 3), "FitFrom: atom 0 has 10×3 label logits, want 10×2"},
	} {
		if _, err := FitFrom(domains, 2, c.atoms, &Settings{Batch: 10, Epochs: 1}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}
