package adapt

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dadil/dadil/dataset"
	"gonum.org/v1/gonum/mat"
)

// translatedProblem returns two sources of two classes in the plane
// (class 0 around (0, 0), class 1 around (3, 0), spread 0.3, perClass
// points per class and source, so that the pooled sources are separable),
// and a target made of the pooled source rows translated by t, with its
// labels. drop target rows are left out from the end.
func translatedProblem(seed uint64, perClass int, t [2]float64, drop int) ([]dataset.Domain, *mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 11))
	var src []dataset.Domain
	for k := range 2 {
		n := 2 * perClass
		X := mat.NewDense(n, 2, nil)
		y := make([]int, n)
		for i := range n {
			y[i] = i % 2
			X.Set(i, 0, 3*float64(y[i])+0.3*rng.NormFloat64())
			X.Set(i, 1, 0.3*rng.NormFloat64())
		}
		src = append(src, dataset.Domain{Name: string(rune('a' + k)), X: X, Y: y})
	}
	Xs, ys := dataset.Pool(src)
	n, _ := Xs.Dims()
	Xt := mat.NewDense(n-drop, 2, nil)
	for i := range n - drop {
		Xt.Set(i, 0, Xs.At(i, 0)+t[0])
		Xt.Set(i, 1, Xs.At(i, 1)+t[1])
	}
	return src, Xt, ys[:n-drop]
}

// TestOTDATranslation: when the target is the pooled sources translated by
// t, the exact optimal map of the squared Euclidean cost is the
// translation, so the mapped sources are the sources + t, and the
// classifier trained on them labels the target correctly where source-only
// fails.
func TestOTDATranslation(t *testing.T) {
	shift := [2]float64{4.5, -1}
	src, tgt, truth := translatedProblem(1, 40, shift, 0)
	Xs, _ := dataset.Pool(src)

	so := &SourceOnly{}
	if err := fit(so, src, tgt, 2); err != nil {
		t.Fatal(err)
	}
	p, _ := so.Predict(tgt)
	soAcc := accuracy(p, truth)
	if soAcc > 0.6 {
		t.Fatalf("source-only accuracy %.4f: the problem does not need adaptation", soAcc)
	}

	emd := NewOTDAEMD()
	if err := fit(emd, src, tgt, 2); err != nil {
		t.Fatal(err)
	}
	n, _ := Xs.Dims()
	for i := range n {
		for j := range 2 {
			if d := math.Abs(emd.Mapped.At(i, j) - (Xs.At(i, j) + shift[j])); d > 1e-12 {
				t.Fatalf("row %d: mapped %v, want the source + t", i, emd.Mapped.RawRowView(i))
			}
		}
	}

	for _, m := range []*OTDA{emd, NewOTDASinkhorn()} {
		if m.Mapped == nil {
			if err := fit(m, src, tgt, 2); err != nil {
				t.Fatal(err)
			}
		}
		p, err := m.Predict(tgt)
		if err != nil {
			t.Fatal(err)
		}
		acc := accuracy(p, truth)
		t.Logf("%s: accuracy %.4f (source-only %.4f)", m.Name(), acc, soAcc)
		if acc < 0.99 {
			t.Errorf("%s: accuracy %.4f", m.Name(), acc)
		}
	}
}

// With different numbers of source and target rows the exact plan comes
// from ot.EMD and splits mass; with equal class proportions, the mapped
// sources still lie in their class's cluster of the target.
func TestOTDAUnequalSizes(t *testing.T) {
	shift := [2]float64{4.5, -1}
	src, tgt, truth := translatedProblem(2, 30, shift, 20) // 20 rows: 10 per class
	for _, m := range []*OTDA{NewOTDAEMD(), NewOTDASinkhorn()} {
		if err := fit(m, src, tgt, 2); err != nil {
			t.Fatal(err)
		}
		Xs, ys := dataset.Pool(src)
		n, _ := Xs.Dims()
		if r, _ := m.Mapped.Dims(); r != n {
			t.Fatalf("%s: %d mapped rows, want %d", m.Name(), r, n)
		}
		for i := range n {
			// Class c of the target sits around x = 3c + 4.5.
			if x := m.Mapped.At(i, 0); math.Abs(x-(3*float64(ys[i])+shift[0])) > 1.5 {
				t.Errorf("%s: row %d of class %d mapped to x = %.3f", m.Name(), i, ys[i], x)
			}
		}
		p, err := m.Predict(tgt)
		if err != nil {
			t.Fatal(err)
		}
		if acc := accuracy(p, truth); acc < 0.99 {
			t.Errorf("%s: accuracy %.4f", m.Name(), acc)
		}
	}
}

// The class term matters: with entropic transport alone (a negligible
// class term) a large RegE pulls every mapped source row towards the
// target mean, while the class-regularised plan keeps each class on its
// target cluster.
func TestOTDASinkhornClassTerm(t *testing.T) {
	shift := [2]float64{4.5, -1}
	src, tgt, truth := translatedProblem(3, 40, shift, 0)
	_, ys := dataset.Pool(src)
	dist := map[float64]float64{}
	for _, regCl := range []float64{1e-12, 1} {
		m := &OTDA{Sinkhorn: true, RegE: 1, RegCl: regCl}
		if err := fit(m, src, tgt, 2); err != nil {
			t.Fatal(err)
		}
		// Mean distance of the mapped rows to their class's target centre.
		var d float64
		for i, y := range ys {
			dx := m.Mapped.At(i, 0) - (3*float64(y) + shift[0])
			dy := m.Mapped.At(i, 1) - shift[1]
			d += math.Hypot(dx, dy)
		}
		dist[regCl] = d / float64(len(ys))
		p, err := m.Predict(tgt)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("RegE = 1, RegCl = %g: mean distance to the class centre %.3f, accuracy %.4f", regCl, dist[regCl], accuracy(p, truth))
	}
	if dist[1] > 0.5 || dist[1e-12] < 1 {
		t.Errorf("mean distances to the class centres %v", dist)
	}
}
