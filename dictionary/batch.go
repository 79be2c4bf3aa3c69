package dictionary

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/barycenter"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/ot"
)

// atomBatch is the part of the atoms seen by one domain's barycenter in a
// mini-batch (or by all of them, with Settings.SharedAtomBatch): nb rows of
// each of the K atoms, stacked (with their soft labels) in a
// barycenter.Stack. Row t = k·nb + l of the stack is row idx[k][l] of atom k.
type atomBatch struct {
	*barycenter.Stack
	idx [][]int
}

func newAtomBatch(K, nb, d, c int) atomBatch {
	return atomBatch{Stack: barycenter.NewStack(K, nb, d, c), idx: make([][]int, K)}
}

// domainBatch holds one domain's part of a mini-batch: its sample, the
// labeled barycenter of the atom batch at its α (Algorithm 1, in bc), the
// loss between the two and the gradients of that loss.
type domainBatch struct {
	// Inputs.
	XQ *mat.Dense // nb×d sample of the domain
	YQ *mat.Dense // nb×c one-hot labels, nil for an unlabeled domain
	// init[j] is the atom-batch row the barycenter point j starts from.
	init []int

	solver barycenter.UniformSolver
	bc     barycenter.UniformResult // the barycenter
	cost   *mat.Dense               // nb×nb: costs between the sample and bc
	bnorm  []float64                // ‖x_B,j‖²

	// Loss between the domain sample and the barycenter.
	rho  []int // rho[j]: sample row matched to barycenter point j
	beta float64
	Loss float64

	// Gradients (of this domain's loss alone, not yet divided by N):
	// gX[t], gY[t] for atom-batch row t, and gAlpha[k].
	gX, gY *mat.Dense
	gAlpha []float64

	bcAssign ot.AssignmentSolver
	bcPerm   ot.AssignmentResult
}

// barycenter runs Algorithm 1 on the atom batch with weights alpha from
// the support init, into bc (see barycenter.UniformSolver).
func (db *domainBatch) barycenter(ab *atomBatch, alpha []float64, beta float64, maxIter int, tol float64) error {
	db.solver.Beta, db.solver.MaxIter, db.solver.Tol = beta, maxIter, tol
	if err := db.solver.Solve(&db.bc, ab.Stack, alpha, db.init); err != nil {
		return errDiverged
	}
	if db.rho == nil {
		K, nb, d, c := ab.Dims()
		db.rho = make([]int, nb)
		db.cost = mat.NewDense(nb, nb, nil)
		db.bnorm = make([]float64, nb)
		db.gX = mat.NewDense(K*nb, d, nil)
		db.gY = mat.NewDense(K*nb, c, nil)
		db.gAlpha = make([]float64, K)
	}
	return nil
}

// lossAndGradients computes the loss between the domain sample and the
// barycenter (W_c with the label term for a labeled domain, W_2² otherwise),
// the matching rho, and the gradients with every plan held fixed (the
// envelope theorem, paper appendix). With γ the optimal plan (a permutation
// divided by nb, ρ(j) the sample row matched to support point j) the loss is
//
//	L = (1/nb) Σ_j ‖x_B,j − x_Q,ρ(j)‖² + β‖y_B,j − y_Q,ρ(j)‖²,
//
// with x_B,j = Σ_k α_k a_{k,inv_k(j)} and y_B,j likewise (inv_k =
// bc.Match[k]), so that, with g^X_j = (2/nb)(x_B,j − x_Q,ρ(j)) and
// g^Y_j = (2β/nb)(y_B,j − y_Q,ρ(j)),
//
//	∂L/∂a_{k,inv_k(j)} += α_k g^X_j,   ∂L/∂y_{k,inv_k(j)} += α_k g^Y_j,
//	∂L/∂α_k = Σ_j ⟨g^X_j, a_{k,inv_k(j)}⟩ + ⟨g^Y_j, y_{k,inv_k(j)}⟩.
func (db *domainBatch) lossAndGradients(ab *atomBatch, alpha []float64, beta float64) error {
	db.beta = db.costs(beta)
	perm := &db.bcPerm
	if err := db.bcAssign.Solve(perm, db.cost); err != nil {
		return errDiverged
	}
	db.Loss = perm.Cost / float64(len(perm.Perm))
	for i, j := range perm.Perm {
		db.rho[j] = i
	}
	db.gradients(ab, alpha)
	return nil
}

// costs writes into db.cost the ground costs between the sample (rows) and
// the barycenter (columns), with the label term for a labeled domain, and
// returns the β of that term (0 for an unlabeled domain; beta ≤ 0 selects
// the largest feature cost).
func (db *domainBatch) costs(beta float64) float64 {
	maxF := db.featureCosts()
	if db.YQ == nil {
		return 0
	}
	b := beta
	if b <= 0 {
		b = maxF
	}
	cr := db.cost.RawMatrix()
	nb := cr.Rows
	for i := 0; i < nb; i++ {
		yq := db.YQ.RawRowView(i)
		row := cr.Data[i*cr.Stride : i*cr.Stride+nb]
		for j := range row {
			yb := db.bc.Y.RawRowView(j)
			var d2 float64
			for q, v := range yq {
				e := v - yb[q]
				d2 += e * e
			}
			row[j] += b * d2
		}
	}
	return b
}

// featureCosts writes into db.cost the squared distances between the
// sample and the barycenter, through one product X_Q X_Bᵀ, and returns the
// largest.
func (db *domainBatch) featureCosts() float64 {
	XB := db.bc.X
	C := db.cost
	linalg.MulABT(C, db.XQ, XB)
	cr := C.RawMatrix()
	nb := cr.Rows
	qn := make([]float64, nb)
	for i := 0; i < nb; i++ {
		qn[i] = sqNorm(db.XQ.RawRowView(i))
	}
	bnorm := db.bnorm
	for j := 0; j < nb; j++ {
		bnorm[j] = sqNorm(XB.RawRowView(j))
	}
	maxF := 0.0
	for i := 0; i < nb; i++ {
		row := cr.Data[i*cr.Stride : i*cr.Stride+nb]
		for j := range row {
			v := qn[i] + bnorm[j] - 2*row[j]
			if v < 0 {
				v = 0
			}
			row[j] = v
			maxF = math.Max(maxF, v)
		}
	}
	return maxF
}

// gradients computes gX, gY and gAlpha from the matching rho (see
// lossAndGradients).
func (db *domainBatch) gradients(ab *atomBatch, alpha []float64) {
	K, nb, d, c := ab.Dims()
	XB, YB := db.bc.X, db.bc.Y
	db.gX.Zero()
	db.gY.Zero()
	clear(db.gAlpha)
	gx := make([]float64, d)
	gy := make([]float64, c)
	fx := 2 / float64(nb)
	fy := 2 * db.beta / float64(nb)
	for j := 0; j < nb; j++ {
		xq := db.XQ.RawRowView(db.rho[j])
		for q, v := range XB.RawRowView(j) {
			gx[q] = fx * (v - xq[q])
		}
		if db.YQ != nil {
			yq := db.YQ.RawRowView(db.rho[j])
			for q, v := range YB.RawRowView(j) {
				gy[q] = fy * (v - yq[q])
			}
		}
		for k := 0; k < K; k++ {
			t := k*nb + db.bc.Match[k][j]
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
}

func sqNorm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return s
}
