package dictionary

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/testproblem"
)

// classDomain returns a domain of rows rows per class of c Gaussian classes
// (unit noise around means, shifted by shift in every feature), without
// the classes in lacking; labeled or not.
func classDomain(rng *rand.Rand, means *mat.Dense, rows int, shift float64, lacking map[int]bool, labeled bool) dataset.Domain {
	c, d := means.Dims()
	var data []float64
	var y []int
	for k := range c {
		if lacking[k] {
			continue
		}
		for range rows {
			for j := range d {
				data = append(data, means.At(k, j)+shift+rng.NormFloat64())
			}
			y = append(y, k)
		}
	}
	dm := dataset.Domain{Name: "d", X: mat.NewDense(len(y), d, data), Y: y}
	if !labeled {
		dm.Y = nil
	}
	return dm
}

// classMeans returns the means of six classes in 10 features, N(0, 3²)
// each.
func classMeans(rng *rand.Rand) *mat.Dense { return testproblem.Means(rng, 6, 10, 3) }

// lackingProblem returns six well-separated classes in 10 features: three
// labeled sources, the second without class 2 and the third without
// classes 4 and 5, and a target holding every class (with its labels, to
// score).
func lackingProblem() ([]dataset.Domain, []int) {
	rng := rand.New(rand.NewPCG(11, 11))
	means := classMeans(rng)
	target := classDomain(rng, means, 40, 1.5, nil, true)
	domains := []dataset.Domain{
		classDomain(rng, means, 50, 0, nil, true),
		classDomain(rng, means, 30, 0.5, map[int]bool{2: true}, true),
		classDomain(rng, means, 40, 1, map[int]bool{4: true, 5: true}, true),
		{Name: "target", X: target.X},
	}
	return domains, target.Y
}

// TestLackedClasses: the atoms started on a source that lacks classes hold
// every class, n/c points each, those it lacks drawn from the other
// sources; every domain's atom batch holds only the classes of the domain,
// as many of each as its own batch.
func TestLackedClasses(t *testing.T) {
	domains, _ := lackingProblem()
	lacks := lackedClasses(domains, 6)
	if lacks[0] != nil || lacks[3] != nil || !lacks[1][2] || lacks[1][3] || !lacks[2][4] || !lacks[2][5] {
		t.Fatalf("lacked classes %v", lacks)
	}
	set, err := validate(domains, 6, &Settings{Samples: 60, Batch: 12, Epochs: 1, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	f := newFitter(domains, 6, set)
	f.initAtoms()
	for k, Z := range f.Z {
		count := make([]int, 6)
		for i := range 60 {
			row := Z.RawRowView(i)
			for y, v := range row {
				if v > 0 {
					count[y]++
				}
			}
		}
		for y, n := range count {
			if n != 10 {
				t.Errorf("atom %d holds %d points of class %d, want 10 (n/c)", k, n, y)
			}
		}
	}
	f.setup()
	f.drawBatches()
	for l := range 3 {
		inDomain := make([]int, 6)
		for _, y := range classesOfBatch(f.dbs[l].YQ) {
			inDomain[y]++
		}
		for k := range f.K {
			inAtom := make([]int, 6)
			for _, r := range f.abs[l].idx[k] {
				inAtom[f.cls[k][r]]++
			}
			for y := range 6 {
				if inAtom[y] != inDomain[y] {
					t.Errorf("domain %d, atom %d: %v points per class in the atom batch, %v in the domain's", l, k, inAtom, inDomain)
					break
				}
			}
		}
	}
}

// classesOfBatch returns the class of every row of a batch's one-hot
// labels.
func classesOfBatch(Y *mat.Dense) []int {
	r, _ := Y.Dims()
	out := make([]int, r)
	for i := range r {
		for y, v := range Y.RawRowView(i) {
			if v == 1 {
				out[i] = y
			}
		}
	}
	return out
}

// TestFitModelLackingSources: sources that lack some classes still give
// DaDiL-R its accuracy on a target that has them all. Atoms that mixed a
// lacked class's mass into the source's other classes (class-balanced atom
// batches against a batch of fewer classes) classify this target at about
// 83%.
func TestFitModelLackingSources(t *testing.T) {
	domains, y := lackingProblem()
	p := &dataset.Problem{Sources: domains[:3], Target: domains[3], Classes: 6}
	m, err := FitModel(p, &Settings{Seed: 1, Epochs: 40}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pred, err := m.PredictR(domains[3].X)
	if err != nil {
		t.Fatal(err)
	}
	if acc := accuracy(pred, y); acc < 0.95 {
		t.Errorf("DaDiL-R %.1f%% on the target, want ≥ 95%%", 100*acc)
	}
}
