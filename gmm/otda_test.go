package gmm

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

func TestMapOfAMixtureToItselfIsTheIdentity(t *testing.T) {
	P := randMixture(rand.New(rand.NewPCG(15, 15)), 5, 3, 0, 3, false)
	X, _ := draw(t, P, 500, 15)
	m, err := NewMap(P, P.Clone(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var mean, random mat.Dense
	if err := m.Mean(&mean, X); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Random(&random, X, 1); err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(&mean, X, 1e-12) || !mat.EqualApprox(&random, X, 1e-12) {
		t.Error("the map of P onto itself moves points")
	}
}

func TestMapBetweenGaussiansIsAffine(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 16))
	P, Q := randMixture(rng, 1, 4, 0, 3, true), randMixture(rng, 1, 4, 0, 3, true)
	X, _ := draw(t, P, 100, 16)
	m, err := NewMap(P, Q, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"mean", "random"} {
		var Y mat.Dense
		if kind == "mean" {
			err = m.Mean(&Y, X)
		} else {
			_, err = m.Random(&Y, X, 3)
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			for j := range 4 {
				want := Q.Means.At(0, j) + Q.Std.At(0, j)/P.Std.At(0, j)*(X.At(i, j)-P.Means.At(0, j))
				if !near(Y.At(i, j), want, 1e-13) {
					t.Fatalf("%s: row %d, feature %d: %v, want %v", kind, i, j, Y.At(i, j), want)
				}
			}
		}
	}
}

func TestMapPushesComponentsOntoTheirMatches(t *testing.T) {
	// Separated equal-weight components: the plan is a permutation and the
	// rows of source component k, mapped, follow the matched target
	// component: sample moments close to its mean and deviations.
	P := separated(3, 2)
	Q := separated(3, 2)
	for k := range 3 {
		Q.Means.Set(k, 0, Q.Means.At(k, 0)+5)
		Q.Means.Set(k, 1, Q.Means.At(k, 1)-3)
		Q.Std.Set(k, 0, 0.5+0.5*float64(k))
	}
	X, comp := draw(t, P, 30000, 17)
	m, err := NewMap(P, Q, 0)
	if err != nil {
		t.Fatal(err)
	}
	match := make([]int, 3)
	for e := range m.Plan.Mass {
		match[m.Plan.Row[e]] = m.Plan.Col[e]
	}
	for _, kind := range []string{"mean", "random"} {
		Y := mat.DenseCopyOf(X)
		if kind == "mean" {
			err = m.Mean(Y, Y)
		} else {
			_, err = m.Random(Y, Y, 9)
		}
		if err != nil {
			t.Fatal(err)
		}
		for k := range 3 {
			for j := range 2 {
				var col []float64
				for i, c := range comp {
					if c == k {
						col = append(col, Y.At(i, j))
					}
				}
				mu, sd := stat.MeanStdDev(col, nil)
				l := match[k]
				if math.Abs(mu-Q.Means.At(l, j)) > 0.05 || math.Abs(sd-Q.Std.At(l, j)) > 0.05 {
					t.Errorf("%s: component %d → %d, feature %d: N(%.3f, %.3f²), want N(%.3f, %.3f²)",
						kind, k, l, j, mu, sd, Q.Means.At(l, j), Q.Std.At(l, j))
				}
			}
		}
	}
}

func TestRandomMapDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 18))
	P, Q := randMixture(rng, 4, 3, 0, 1, false), randMixture(rng, 6, 3, 0, 1, false)
	X, _ := draw(t, P, 2*blockRows+5, 18)
	m, err := NewMap(P, Q, 0)
	if err != nil {
		t.Fatal(err)
	}
	run := func(procs int, seed uint64) (*mat.Dense, []int) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var Y mat.Dense
		comp, err := m.Random(&Y, X, seed)
		if err != nil {
			t.Fatal(err)
		}
		return &Y, comp
	}
	Y1, c1 := run(1, 5)
	Y2, c2 := run(2, 5)
	if !sameBits(Y1, Y2) {
		t.Error("random map differs between GOMAXPROCS 1 and 2")
	}
	Y3, c3 := run(2, 6)
	if sameBits(Y1, Y3) {
		t.Error("random map does not depend on the seed")
	}
	split := 0
	for i := range c1 {
		if c1[i] != c2[i] {
			t.Fatal("drawn components differ between GOMAXPROCS 1 and 2")
		}
		if c1[i] != c3[i] {
			split++
		}
	}
	if split == 0 {
		t.Error("seeds 5 and 6 drew the same components")
	}
}

func TestMapErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 19))
	P, Q := randMixture(rng, 3, 2, 0, 1, false), randMixture(rng, 2, 2, 0, 1, false)
	m, err := NewMap(P, Q, 0)
	if err != nil {
		t.Fatal(err)
	}
	var Y mat.Dense
	wantErr(t, m.Mean(&Y, mat.NewDense(2, 3, nil)), "3 columns")
	wantErr(t, m.Mean(mat.NewDense(1, 2, nil), mat.NewDense(2, 2, nil)), "dst is 1×2")
	bad := *m
	bad.Target = P
	wantErr(t, bad.Mean(&Y, mat.NewDense(2, 2, nil)), "plan is 3×2")
	bad = *m
	bad.Plan.Mass = append([]float64(nil), m.Plan.Mass...)
	bad.Plan.Mass[0] = -1
	_, err = bad.Random(&Y, mat.NewDense(2, 2, nil), 1)
	wantErr(t, err, "plan entry 0")
	bad = *m
	bad.Plan.Row, bad.Plan.Col, bad.Plan.Mass = m.Plan.Row[1:], m.Plan.Col[1:], m.Plan.Mass[1:]
	for bad.Plan.Row[0] == 0 {
		bad.Plan.Row, bad.Plan.Col, bad.Plan.Mass = bad.Plan.Row[1:], bad.Plan.Col[1:], bad.Plan.Mass[1:]
	}
	wantErr(t, bad.Mean(&Y, mat.NewDense(2, 2, nil)), "source component 0", "no mass")
	_, err = NewMap(P, Q, 1)
	wantErr(t, err, "needs two labeled")
}
