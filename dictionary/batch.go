package dictionary

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/ot"
)

// atomBatch is the part of the atoms seen by one mini-batch: nb rows of each
// of the K atoms, stacked into A (K·nb × d) with their soft labels YA
// (K·nb × c), and the Gram matrix G = A Aᵀ of all their inner products.
// Row t = k·nb + l of A is row idx[k][l] of atom k.
type atomBatch struct {
	K, nb, d, c int
	idx         [][]int
	A, YA       *mat.Dense
	G           *mat.Dense
	norm        []float64 // ‖a_t‖² = G_tt
}

// gram computes G = A Aᵀ (symmetric, see linalg.Gram) and the norms.
func (ab *atomBatch) gram() {
	m := ab.K * ab.nb
	if ab.G == nil {
		ab.G = mat.NewDense(m, m, nil)
		ab.norm = make([]float64, m)
	}
	linalg.Gram(ab.G, ab.A)
	for i := range ab.norm {
		ab.norm[i] = ab.G.At(i, i)
	}
}

// domainBatch holds one domain's part of a mini-batch: its sample, the
// labeled barycenter of the atom batch at its α (Algorithm 1), the loss
// between the two and the gradients of that loss.
type domainBatch struct {
	// Inputs.
	XQ *mat.Dense // nb×d sample of the domain
	YQ *mat.Dense // nb×c one-hot labels, nil for an unlabeled domain
	// init[j] is the atom-batch row the barycenter point j starts from.
	init []int

	// Barycenter: support point j is Σ_t W[j][t] a_t over atom-batch rows
	// t, stored sparsely as terms. inv[k][j] is the row of atom batch k
	// sent to barycenter point j by the last plan π^(k) (a permutation).
	terms  [][]term
	inv    [][]int
	S      *mat.Dense // nb × K·nb: S[j][t] = ⟨x_B,j, a_t⟩
	bnorm  []float64  // ‖x_B,j‖²
	XB, YB *mat.Dense
	C      *mat.Dense // nb×nb cost scratch
	Cy     *mat.Dense
	assign ot.AssignmentSolver
	perm   ot.AssignmentResult
	iters  int
	J      []float64

	// Loss between the domain sample and the barycenter.
	rho  []int // rho[j]: sample row matched to barycenter point j
	beta float64
	Loss float64

	// Gradients (of this domain's loss alone, not yet divided by N):
	// gX[t], gY[t] for atom-batch row t, and gAlpha[k].
	gX, gY *mat.Dense
	gAlpha []float64
}

type term struct {
	t int     // atom-batch row
	w float64 // weight
}

// barycenter runs Algorithm 1 on the atom batch with weights alpha, from
// the support init, for at most maxIter iterations or until the weighted
// cost J changes by less than tol. beta ≤ 0 selects, per atom, the largest
// feature cost of the pair. The cost matrices come from the Gram matrix:
//
//	C^(k)_lj = ‖a_kl‖² + ‖x_B,j‖² − 2⟨a_kl, x_B,j⟩ + β‖y_kl − y_B,j‖².
func (db *domainBatch) barycenter(ab *atomBatch, alpha []float64, beta float64, maxIter int, tol float64) error {
	K, nb, c := ab.K, ab.nb, ab.c
	db.ensure(ab)
	for j := range db.terms {
		db.terms[j] = append(db.terms[j][:0], term{db.init[j], 1})
	}
	db.J = db.J[:0]
	prev := math.NaN()
	for it := 1; it <= maxIter; it++ {
		db.support(ab)
		// Labels of the current support.
		yb := db.YB.RawMatrix()
		for j := 0; j < nb; j++ {
			row := yb.Data[j*c : j*c+c]
			clear(row)
			for _, tm := range db.terms[j] {
				for q, v := range ab.YA.RawRowView(tm.t) {
					row[q] += tm.w * v
				}
			}
		}
		J := 0.0
		for k := 0; k < K; k++ {
			cost, err := db.pairCost(ab, k, beta)
			if err != nil {
				return err
			}
			J += alpha[k] * cost
		}
		db.J = append(db.J, J)
		db.iters = it
		// New support: x_B,j = Σ_k α_k a_{k, inv_k(j)}.
		for j := 0; j < nb; j++ {
			ts := db.terms[j][:0]
			for k := 0; k < K; k++ {
				if alpha[k] != 0 {
					ts = append(ts, term{k*nb + db.inv[k][j], alpha[k]})
				}
			}
			db.terms[j] = ts
		}
		if math.Abs(J-prev) < tol {
			break
		}
		prev = J
	}
	return nil
}

// ensure allocates the buffers for the atom batch's shape.
func (db *domainBatch) ensure(ab *atomBatch) {
	K, nb, d, c := ab.K, ab.nb, ab.d, ab.c
	if db.S != nil {
		if r, cc := db.S.Dims(); r == nb && cc == K*nb {
			if _, dd := db.XB.Dims(); dd == d {
				return
			}
		}
	}
	db.terms = make([][]term, nb)
	db.inv = make([][]int, K)
	for k := range db.inv {
		db.inv[k] = make([]int, nb)
	}
	db.S = mat.NewDense(nb, K*nb, nil)
	db.bnorm = make([]float64, nb)
	db.XB = mat.NewDense(nb, d, nil)
	db.YB = mat.NewDense(nb, c, nil)
	db.C = mat.NewDense(nb, nb, nil)
	db.Cy = mat.NewDense(nb, nb, nil)
	db.rho = make([]int, nb)
	db.gX = mat.NewDense(K*nb, d, nil)
	db.gY = mat.NewDense(K*nb, c, nil)
	db.gAlpha = make([]float64, K)
}

// support computes S = W G (the inner products of the support with every
// atom-batch row) and the support norms ‖x_B,j‖² = Σ_t W_jt S_jt.
func (db *domainBatch) support(ab *atomBatch) {
	s := db.S.RawMatrix()
	m := ab.K * ab.nb
	for j := range db.terms {
		row := s.Data[j*s.Stride : j*s.Stride+m]
		clear(row)
		for _, tm := range db.terms[j] {
			g := ab.G.RawRowView(tm.t)
			w := tm.w
			for q, v := range g {
				row[q] += w * v
			}
		}
		var nrm float64
		for _, tm := range db.terms[j] {
			nrm += tm.w * row[tm.t]
		}
		db.bnorm[j] = nrm
	}
}

// pairCost assembles C^(k) for the current support, solves the assignment
// between atom batch k and the support, stores the inverse permutation in
// inv[k] and returns the transport cost ⟨C^(k), π^(k)⟩. It fails only on
// non-finite costs, that is when learning has diverged.
func (db *domainBatch) pairCost(ab *atomBatch, k int, beta float64) (float64, error) {
	nb, c := ab.nb, ab.c
	C := db.C.RawMatrix()
	s := db.S.RawMatrix()
	maxF := 0.0
	for l := 0; l < nb; l++ {
		t := k*nb + l
		an := ab.norm[t]
		row := C.Data[l*C.Stride : l*C.Stride+nb]
		for j := 0; j < nb; j++ {
			v := an + db.bnorm[j] - 2*s.Data[j*s.Stride+t]
			if v < 0 {
				v = 0
			}
			row[j] = v
			if v > maxF {
				maxF = v
			}
		}
	}
	b := beta
	if b <= 0 {
		b = maxF
	}
	yb := db.YB.RawMatrix()
	for l := 0; l < nb; l++ {
		ya := ab.YA.RawRowView(k*nb + l)
		row := C.Data[l*C.Stride : l*C.Stride+nb]
		for j := 0; j < nb; j++ {
			y := yb.Data[j*c : j*c+c]
			var d2 float64
			for q, v := range ya {
				e := v - y[q]
				d2 += e * e
			}
			row[j] += b * d2
		}
	}
	if err := db.assign.Solve(&db.perm, db.C); err != nil {
		return 0, errDiverged
	}
	for l, j := range db.perm.Perm {
		db.inv[k][j] = l
	}
	return db.perm.Cost / float64(nb), nil
}

// materialize writes the support X_B = W A and its labels Y_B = W Y_A.
func (db *domainBatch) materialize(ab *atomBatch) {
	xb := db.XB.RawMatrix()
	yb := db.YB.RawMatrix()
	d, c := ab.d, ab.c
	for j, ts := range db.terms {
		xr := xb.Data[j*xb.Stride : j*xb.Stride+d]
		yr := yb.Data[j*yb.Stride : j*yb.Stride+c]
		clear(xr)
		clear(yr)
		for _, tm := range ts {
			for q, v := range ab.A.RawRowView(tm.t) {
				xr[q] += tm.w * v
			}
			for q, v := range ab.YA.RawRowView(tm.t) {
				yr[q] += tm.w * v
			}
		}
	}
}

// lossAndGradients computes the loss between the domain sample and the
// barycenter (W_c with the label term for a labeled domain, W_2² otherwise),
// the matching rho, and the gradients with every plan held fixed (the
// envelope theorem, paper appendix). With γ the optimal plan (a permutation
// divided by nb, ρ(j) the sample row matched to support point j) the loss is
//
//	L = (1/nb) Σ_j ‖x_B,j − x_Q,ρ(j)‖² + β‖y_B,j − y_Q,ρ(j)‖²,
//
// with x_B,j = Σ_k α_k a_{k,inv_k(j)} and y_B,j likewise, so that, with
// g^X_j = (2/nb)(x_B,j − x_Q,ρ(j)) and g^Y_j = (2β/nb)(y_B,j − y_Q,ρ(j)),
//
//	∂L/∂a_{k,inv_k(j)} += α_k g^X_j,   ∂L/∂y_{k,inv_k(j)} += α_k g^Y_j,
//	∂L/∂α_k = Σ_j ⟨g^X_j, a_{k,inv_k(j)}⟩ + ⟨g^Y_j, y_{k,inv_k(j)}⟩.
func (db *domainBatch) lossAndGradients(ab *atomBatch, alpha []float64, beta float64) error {
	K, nb, d, c := ab.K, ab.nb, ab.d, ab.c
	db.materialize(ab)
	// Feature costs through one product X_Q X_Bᵀ.
	C := db.C
	linalg.MulABT(C, db.XQ, db.XB)
	cr := C.RawMatrix()
	qn := make([]float64, nb)
	for i := 0; i < nb; i++ {
		qn[i] = sqNorm(db.XQ.RawRowView(i))
	}
	for j := 0; j < nb; j++ {
		db.bnorm[j] = sqNorm(db.XB.RawRowView(j))
	}
	maxF := 0.0
	for i := 0; i < nb; i++ {
		row := cr.Data[i*cr.Stride : i*cr.Stride+nb]
		for j := range row {
			v := qn[i] + db.bnorm[j] - 2*row[j]
			if v < 0 {
				v = 0
			}
			row[j] = v
			maxF = math.Max(maxF, v)
		}
	}
	b := 0.0
	if db.YQ != nil {
		b = beta
		if b <= 0 {
			b = maxF
		}
		for i := 0; i < nb; i++ {
			yq := db.YQ.RawRowView(i)
			row := cr.Data[i*cr.Stride : i*cr.Stride+nb]
			for j := range row {
				yb := db.YB.RawRowView(j)
				var d2 float64
				for q, v := range yq {
					e := v - yb[q]
					d2 += e * e
				}
				row[j] += b * d2
			}
		}
	}
	db.beta = b
	if err := db.assign.Solve(&db.perm, C); err != nil {
		return errDiverged
	}
	db.Loss = db.perm.Cost / float64(nb)
	for i, j := range db.perm.Perm {
		db.rho[j] = i
	}

	// Gradients.
	db.gX.Zero()
	db.gY.Zero()
	clear(db.gAlpha)
	gx := make([]float64, d)
	gy := make([]float64, c)
	fx := 2 / float64(nb)
	fy := 2 * b / float64(nb)
	for j := 0; j < nb; j++ {
		xq := db.XQ.RawRowView(db.rho[j])
		for q, v := range db.XB.RawRowView(j) {
			gx[q] = fx * (v - xq[q])
		}
		if db.YQ != nil {
			yq := db.YQ.RawRowView(db.rho[j])
			for q, v := range db.YB.RawRowView(j) {
				gy[q] = fy * (v - yq[q])
			}
		}
		for k := 0; k < K; k++ {
			t := k*nb + db.inv[k][j]
			a := alpha[k]
			ga := db.gX.RawRowView(t)
			var dot float64
			for q, v := range ab.A.RawRowView(t) {
				ga[q] += a * gx[q]
				dot += gx[q] * v
			}
			if db.YQ != nil {
				gya := db.gY.RawRowView(t)
				for q, v := range ab.YA.RawRowView(t) {
					gya[q] += a * gy[q]
					dot += gy[q] * v
				}
			}
			db.gAlpha[k] += dot
		}
	}
	return nil
}

func sqNorm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return s
}
