package dictionary

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/barycenter"
	"github.com/dadil/dadil/internal/linalg"
)

// testBatch builds a random atom batch and one domain sample.
func testBatch(rng *rand.Rand, K, nb, d, c int, labeled bool) (*atomBatch, *mat.Dense, *domainBatch, []float64) {
	b := newAtomBatch(K, nb, d, c)
	ab := &b
	Z := mat.NewDense(K*nb, c, nil)
	for t := 0; t < K*nb; t++ {
		for q := 0; q < d; q++ {
			ab.A.Set(t, q, rng.NormFloat64()+float64(t/nb))
		}
		for q := 0; q < c; q++ {
			Z.Set(t, q, 2*rng.NormFloat64())
		}
		linalg.Softmax(ab.YA.RawRowView(t), Z.RawRowView(t))
	}
	ab.Prepare(1)
	db := &domainBatch{XQ: mat.NewDense(nb, d, nil), init: rng.Perm(K * nb)[:nb]}
	for i := 0; i < nb; i++ {
		for q := 0; q < d; q++ {
			db.XQ.Set(i, q, rng.NormFloat64()+1)
		}
	}
	if labeled {
		db.YQ = mat.NewDense(nb, c, nil)
		for i := 0; i < nb; i++ {
			db.YQ.Set(i, i%c, 1)
		}
	}
	alpha := make([]float64, K)
	var s float64
	for k := range alpha {
		alpha[k] = rng.Float64() + 0.1
		s += alpha[k]
	}
	for k := range alpha {
		alpha[k] /= s
	}
	return ab, Z, db, alpha
}

// fixedPlanLoss evaluates the batch loss of a domain for given atom rows,
// logits and α, with the plans (inv, rho) and β held fixed — written
// independently of the production code, straight from the definitions.
func fixedPlanLoss(A, Z *mat.Dense, alpha []float64, db *domainBatch, K, nb int) float64 {
	_, d := A.Dims()
	_, c := Z.Dims()
	var L float64
	y := make([]float64, c)
	for j := 0; j < nb; j++ {
		xb := make([]float64, d)
		yb := make([]float64, c)
		for k := 0; k < K; k++ {
			t := k*nb + db.bc.Match[k][j]
			for q := 0; q < d; q++ {
				xb[q] += alpha[k] * A.At(t, q)
			}
			linalg.Softmax(y, Z.RawRowView(t))
			for q := 0; q < c; q++ {
				yb[q] += alpha[k] * y[q]
			}
		}
		i := db.rho[j]
		for q := 0; q < d; q++ {
			e := xb[q] - db.XQ.At(i, q)
			L += e * e
		}
		if db.YQ != nil {
			for q := 0; q < c; q++ {
				e := yb[q] - db.YQ.At(i, q)
				L += db.beta * e * e
			}
		}
	}
	return L / float64(nb)
}

func relErr(a, b float64) float64 {
	return math.Abs(a-b) / math.Max(math.Max(math.Abs(a), math.Abs(b)), 1e-8)
}

// TestGradientsFiniteDifferences checks the hand-derived gradients with
// respect to atom features, label logits and α against central differences
// of the loss with the plans held fixed.
func TestGradientsFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, labeled := range []bool{true, false} {
		K, nb, d, c := 3, 9, 4, 3
		ab, Z, db, alpha := testBatch(rng, K, nb, d, c, labeled)
		if err := db.barycenter(ab, alpha, 0, 10, 1e-12); err != nil {
			t.Fatal(err)
		}
		if err := db.lossAndGradients(ab, alpha, 0); err != nil {
			t.Fatal(err)
		}
		A := mat.DenseCopyOf(ab.A)
		if L := fixedPlanLoss(A, Z, alpha, db, K, nb); relErr(L, db.Loss) > 1e-12 {
			t.Fatalf("labeled=%v: loss %.17g, direct evaluation %.17g", labeled, db.Loss, L)
		}
		// Fourth-order central differences: truncation O(h⁴), round-off
		// about 1e-12 here. Errors are relative to the entry, floored at
		// 1e-4 of the group's largest gradient entry.
		const h = 1e-4
		fd4 := func(set func(float64), v float64) float64 {
			set(v + 2*h)
			f2 := fixedPlanLoss(A, Z, alpha, db, K, nb)
			set(v + h)
			f1 := fixedPlanLoss(A, Z, alpha, db, K, nb)
			set(v - h)
			m1 := fixedPlanLoss(A, Z, alpha, db, K, nb)
			set(v - 2*h)
			m2 := fixedPlanLoss(A, Z, alpha, db, K, nb)
			set(v)
			return (-f2 + 8*f1 - 8*m1 + m2) / (12 * h)
		}
		check := func(what string, got, fd, groupMax float64) {
			t.Helper()
			den := math.Max(math.Max(math.Abs(got), math.Abs(fd)), 1e-4*groupMax)
			if math.Abs(got-fd)/den > 1e-6 {
				t.Errorf("labeled=%v: %s = %.12g, finite difference %.12g", labeled, what, got, fd)
			}
		}
		maxAbs := func(v []float64) float64 {
			m := 0.0
			for _, x := range v {
				m = math.Max(m, math.Abs(x))
			}
			return m
		}
		// Atom features.
		gxMax := maxAbs(db.gX.RawMatrix().Data)
		for trial := 0; trial < 40; trial++ {
			tt, q := rng.IntN(K*nb), rng.IntN(d)
			fd := fd4(func(x float64) { A.Set(tt, q, x) }, A.At(tt, q))
			check(fmt.Sprintf("∂L/∂x[%d][%d]", tt, q), db.gX.At(tt, q), fd, gxMax)
		}
		// Label logits.
		gZ := mat.NewDense(K*nb, c, nil)
		for tt := 0; tt < K*nb; tt++ {
			logitGrad(gZ.RawRowView(tt), ab.YA.RawRowView(tt), db.gY.RawRowView(tt))
		}
		gzMax := maxAbs(gZ.RawMatrix().Data)
		for trial := 0; trial < 40 && labeled; trial++ {
			tt, q := rng.IntN(K*nb), rng.IntN(c)
			fd := fd4(func(x float64) { Z.Set(tt, q, x) }, Z.At(tt, q))
			check(fmt.Sprintf("∂L/∂z[%d][%d]", tt, q), gZ.At(tt, q), fd, gzMax)
		}
		// Barycentric coordinates.
		gaMax := maxAbs(db.gAlpha)
		for k := 0; k < K; k++ {
			fd := fd4(func(x float64) { alpha[k] = x }, alpha[k])
			check(fmt.Sprintf("∂L/∂α[%d]", k), db.gAlpha[k], fd, gaMax)
		}
	}
}

// TestBatchBarycenterMatchesLabeled: the Gram-matrix implementation of
// Algorithm 1 used inside the learning loop gives the same iterations as
// barycenter.Labeled started from the same support.
func TestBatchBarycenterMatchesLabeled(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	K, nb, d, c := 4, 15, 6, 3
	ab, _, db, alpha := testBatch(rng, K, nb, d, c, true)
	alpha[1] = 0 // a zero coordinate must be handled too
	var s float64
	for _, a := range alpha {
		s += a
	}
	for k := range alpha {
		alpha[k] /= s
	}
	if err := db.barycenter(ab, alpha, 0, 10, 1e-12); err != nil {
		t.Fatal(err)
	}

	ms := make([]barycenter.Measure, K)
	for k := range ms {
		ms[k] = barycenter.Measure{
			X: mat.DenseCopyOf(ab.A.Slice(k*nb, (k+1)*nb, 0, d)),
			Y: mat.DenseCopyOf(ab.YA.Slice(k*nb, (k+1)*nb, 0, c)),
		}
	}
	init := barycenter.Measure{X: mat.NewDense(nb, d, nil), Y: mat.NewDense(nb, c, nil)}
	for j, tt := range db.init {
		copy(init.X.RawRowView(j), ab.A.RawRowView(tt))
		copy(init.Y.RawRowView(j), ab.YA.RawRowView(tt))
	}
	r, err := barycenter.Labeled(ms, alpha, &barycenter.Settings{Init: &init, MaxIter: 10, Tol: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.History) != len(db.bc.History) {
		t.Fatalf("iterations: %v vs %v", db.bc.History, r.History)
	}
	for i := range db.bc.History {
		if relErr(db.bc.History[i], r.History[i]) > 1e-10 {
			t.Fatalf("iteration %d: J %.15g vs %.15g", i, db.bc.History[i], r.History[i])
		}
	}
	if !mat.EqualApprox(db.bc.X, r.X, 1e-10) || !mat.EqualApprox(db.bc.Y, r.Y, 1e-10) {
		t.Errorf("supports differ")
	}
}

// TestBatchGradientsSumOverDomains checks the gradients of one whole step,
// L = (1/N) Σ_ℓ L_ℓ, with respect to the atoms' features and logits against
// central differences, the plans held fixed. Each domain draws its own atom
// batch (Algorithm 2, lines 10–13), so a row drawn by several domains must
// collect all their gradients; with SharedAtomBatch one batch serves all.
func TestBatchGradientsSumOverDomains(t *testing.T) {
	ds, _ := synthDomains(3)
	const c = 3
	for _, shared := range []bool{false, true} {
		set, err := validate(ds, c, &Settings{Atoms: 2, Samples: 12, Batch: 6, SharedAtomBatch: shared, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		f := newFitter(ds, c, set)
		f.initAtoms()
		f.setup()
		f.workers = 1
		f.drawBatches()
		N, K, nb := f.N, f.K, f.nb
		if want := map[bool]int{false: N, true: 1}[shared]; len(f.abs) != want {
			t.Fatalf("shared=%v: %d atom batches, want %d", shared, len(f.abs), want)
		}
		f.beginEpoch()
		if err := f.barycenters(); err != nil {
			t.Fatal(err)
		}
		if err := f.lossAndGradients(); err != nil {
			t.Fatal(err)
		}
		var mean float64
		for l := range f.dbs {
			mean += f.dbs[l].Loss / float64(N)
		}
		inv := 1 / float64(N)
		// total evaluates L from the atoms' current rows, independently of
		// the stacks the production code filled.
		total := func() float64 {
			var L float64
			for l := range f.dbs {
				ab := f.atomBatch(l)
				A := mat.NewDense(K*nb, f.d, nil)
				Z := mat.NewDense(K*nb, c, nil)
				for k := 0; k < K; k++ {
					for j, r := range ab.idx[k] {
						copy(A.RawRowView(k*nb+j), f.X[k].RawRowView(r))
						copy(Z.RawRowView(k*nb+j), f.Z[k].RawRowView(r))
					}
				}
				L += inv * fixedPlanLoss(A, Z, f.alpha.RawRowView(l), &f.dbs[l], K, nb)
			}
			return L
		}
		if L := total(); relErr(L, mean) > 1e-12 {
			t.Fatalf("shared=%v: batch loss %.17g, direct evaluation %.17g", shared, mean, L)
		}
		const h = 1e-4
		fd := func(m *mat.Dense, r, q int) float64 {
			v := m.At(r, q)
			var f4 [4]float64
			for i, s := range []float64{2, 1, -1, -2} {
				m.Set(r, q, v+s*h)
				f4[i] = total()
			}
			m.Set(r, q, v)
			return (-f4[0] + 8*f4[1] - 8*f4[2] + f4[3]) / (12 * h)
		}
		multi := 0
		for k := 0; k < K; k++ {
			rows, _ := f.X[k].Dims()
			gX := mat.NewDense(rows, f.d, nil)
			gZ := mat.NewDense(rows, c, nil)
			live := make([]bool, rows)
			f.gather(k, gX, gZ, live, inv)
			for r := 0; r < rows; r++ {
				drawn := 0
				for i := range f.abs {
					if slices.Contains(f.abs[i].idx[k], r) {
						drawn++
					}
				}
				if drawn > 1 {
					multi++
				}
				if live[r] != (drawn > 0) {
					t.Fatalf("shared=%v: atom %d row %d live=%v, drawn by %d batches", shared, k, r, live[r], drawn)
				}
				if drawn == 0 {
					continue
				}
				for _, g := range []struct {
					name string
					grad *mat.Dense
					par  *mat.Dense
				}{{"x", gX, f.X[k]}, {"z", gZ, f.Z[k]}} {
					_, w := g.par.Dims()
					for q := 0; q < w; q++ {
						got, want := g.grad.At(r, q), fd(g.par, r, q)
						if math.Abs(got-want) > 1e-6*math.Max(math.Abs(want), 1e-3) {
							t.Errorf("shared=%v: ∂L/∂%s[%d][%d][%d] = %.10g, finite difference %.10g", shared, g.name, k, r, q, got, want)
						}
					}
				}
			}
		}
		if !shared && multi == 0 {
			t.Fatalf("no atom row was drawn by two domains; the test does not exercise the sum")
		}
	}
}
