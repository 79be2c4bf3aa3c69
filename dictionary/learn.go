package dictionary

import (
	"errors"
	"math"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/par"
	"github.com/dadil/dadil/internal/plateau"
	"github.com/dadil/dadil/ot"
)

// errDiverged is returned when the parameters stop being finite.
var errDiverged = errors.New("dictionary: learning diverged (non-finite atoms or losses); lower the learning rate")

// run is paper Algorithm 2 from line 2 on, from the atoms in f.X and f.Z
// (initialised by initAtoms, line 1, or WBR's fixed sources); it then
// assembles f.dict (finish). Each of the algorithm's steps is one method:
//
//	 2     for it = 1, …, N_iter                  run, endEpoch
//	 3       for batch = 1, …, M = ⌈n/n_b⌉        step
//	 4–12      for ℓ = 1, …, N: sample Q̂_ℓ and     drawBatches
//	           every atom, y = softmax(p)
//	13           B̂_ℓ = B(α_ℓ; P)                   barycenters
//	15         L = (1/N) Σ_ℓ L(Q̂_ℓ, B̂_ℓ)           lossAndGradients
//	16–17      x ← x − η ∂L/∂x, p ← p − η ∂L/∂p   updateAtoms
//	18         α_ℓ ← proj_Δ_K(α_ℓ − η ∂L/∂α_ℓ)     updateAlpha
//
// with Adam steps in place of the plain gradient steps of lines 16–18, and
// N_iter = Settings.Epochs a cap: the plateau rule (stopRule) may end
// learning sooner.
func (f *fitter) run() error {
	if err := f.targetClasses(); err != nil {
		return err
	}
	f.setup()
	for epoch := 1; epoch <= f.set.Epochs; epoch++ {
		f.beginEpoch()
		for b := 0; b < f.batches; b++ {
			if err := f.step(); err != nil {
				return err
			}
		}
		if f.endEpoch(epoch) {
			break
		}
	}
	f.finish()
	return nil
}

// beginEpoch zeroes the epoch's losses.
func (f *fitter) beginEpoch() { f.epochLoss, f.domLoss = 0, make([]float64, f.N) }

// step performs one batch of Algorithm 2 (lines 4–18).
func (f *fitter) step() error {
	f.drawBatches()
	if err := f.barycenters(); err != nil {
		return err
	}
	if err := f.lossAndGradients(); err != nil {
		return err
	}
	f.updateAtoms()
	f.updateAlpha()
	return nil
}

// drawBatches draws the batch (Algorithm 2, lines 4–12), all from the
// fitter's generator in a fixed order: for every domain ℓ in turn, n_b rows
// of every atom P̂_k (lines 9–12; one draw per domain, or with
// Settings.SharedAtomBatch one for all, before the first domain), then n_b
// points of Q̂_ℓ with their labels (lines 5–8) and the points its
// barycenter starts from. It then fills the atom batches with the drawn
// rows' features x and labels y = softmax(p) (line 11).
func (f *fitter) drawBatches() {
	f.atomClasses()
	shared := len(f.abs) == 1
	if shared {
		f.drawAtomRows(&f.abs[0], nil)
	}
	var rows []int
	for l := range f.dbs {
		switch {
		case shared:
		case f.priors != nil && f.priors[l] != nil:
			f.drawAtomRowsShifted(&f.abs[l], f.priors[l])
		default:
			f.drawAtomRows(&f.abs[l], f.lacks[l])
		}
		rows = f.drawDomain(l, rows)
	}
	f.eachAtom(f.fillAtomBatches)
}

// atomClasses sets f.cls[k][i] to the class of row i of atom k, the argmax
// of its current soft label. No draw changes them: they are computed once
// per step.
func (f *fitter) atomClasses() {
	if f.cls == nil {
		f.cls = make([][]int, f.K)
	}
	for k, Z := range f.Z {
		rk, _ := Z.Dims()
		f.cls[k] = f.cls[k][:0]
		for i := 0; i < rk; i++ {
			f.cls[k] = append(f.cls[k], floats.MaxIdx(Z.RawRowView(i)))
		}
	}
}

// drawAtomRows draws into ab, for every atom k, n_b of its rows,
// class-balanced by f.cls[k] (Algorithm 2, line 10), among the classes a
// labeled domain has when lacks (the classes it lacks) is not nil: the
// domain's batch holds only those, in the same numbers
// (dataset.BalancedBatch shares a batch equally among the classes
// present), so that the domain is compared with a barycenter of its own
// classes and no atom mass of a class it lacks is transported onto its
// other classes. One atom batch shared by all domains
// (Settings.SharedAtomBatch) holds every class.
func (f *fitter) drawAtomRows(ab *atomBatch, lacks []bool) {
	for k := 0; k < f.K; k++ {
		cls := f.cls[k]
		if lacks != nil {
			f.masked = append(f.masked[:0], cls...)
			for i, y := range f.masked {
				if lacks[y] {
					f.masked[i] = -1 // BalancedBatch never draws it
				}
			}
			cls = f.masked
		}
		ab.idx[k] = dataset.BalancedBatch(f.rng, cls, f.classes, f.nb, ab.idx[k])
	}
}

// drawAtomRowsShifted draws into ab, for every atom k, n_b of its rows
// with the classes in the proportions h (targetClasses), among
// the classes the atom holds; it keeps drawAtomRows' batch for an atom
// whose classes h gives no weight, balanced.
func (f *fitter) drawAtomRowsShifted(ab *atomBatch, h []float64) {
	present := make([]bool, f.classes)
	for k := 0; k < f.K; k++ {
		clear(present)
		for _, y := range f.cls[k] {
			present[y] = true
		}
		if q := quotas(h, present, f.nb); q != nil {
			ab.idx[k] = dataset.QuotaBatch(f.rng, f.cls[k], q, ab.idx[k])
		} else {
			ab.idx[k] = dataset.BalancedBatch(f.rng, f.cls[k], f.classes, f.nb, ab.idx[k])
		}
	}
}

// drawDomain draws domain l's sample (Algorithm 2, lines 5–8): n_b points,
// class-balanced with their one-hot labels if the domain is labeled,
// uniform otherwise; then the n_b distinct atom-batch rows its barycenter
// starts from. rows is scratch space, returned for reuse.
func (f *fitter) drawDomain(l int, rows []int) []int {
	db := &f.dbs[l]
	dm := &f.domains[l]
	nq, _ := dm.X.Dims()
	if dm.Labeled() {
		rows = dataset.BalancedBatch(f.rng, dm.Y, f.classes, f.nb, rows)
		db.YQ.Zero()
		for i, r := range rows {
			db.YQ.Set(i, dm.Y[r], 1)
		}
	} else {
		rows = dataset.UniformBatch(f.rng, nq, f.nb, rows)
	}
	for i, r := range rows {
		copy(db.XQ.RawRowView(i), dm.X.RawRowView(r))
	}
	perm := f.rng.Perm(f.K * f.nb)
	copy(db.init, perm[:f.nb])
	return rows
}

// fillAtomBatches copies atom k's drawn rows into the atom batches: the
// features x, brought up to date first (lazyAdam), and the labels
// y = softmax(p) (Algorithm 2, line 11).
func (f *fitter) fillAtomBatches(k int) {
	X, Z := f.X[k], f.Z[k]
	for i := range f.abs {
		ab := &f.abs[i]
		for l, r := range ab.idx[k] {
			if !f.fixed {
				f.optX[k].catchUp(X.RawMatrix().Data, r, f.optX[k].t)
			}
			t := k*f.nb + l
			copy(ab.A.RawRowView(t), X.RawRowView(r))
			linalg.Softmax(ab.YA.RawRowView(t), Z.RawRowView(r))
		}
	}
}

// barycenters computes, for every domain ℓ in parallel, the labeled
// barycenter B̂_ℓ = B(α_ℓ; P) of its atom batches (Algorithm 2, line 13):
// Algorithm 1 with the cost of eq. 9 (Settings.Beta), at most N_itb
// iterations and tolerance τ (Settings.BarycenterIter, BarycenterTol),
// from the points drawDomain drew.
func (f *fitter) barycenters() error {
	runs := 1
	if len(f.abs) == 1 {
		runs = f.N
	}
	for i := range f.abs {
		f.abs[i].Prepare(runs)
	}
	return par.Run(f.N, f.workers, func(l int) error {
		return f.dbs[l].barycenter(f.atomBatch(l), f.alpha.RawRowView(l), f.set.Beta, f.set.BarycenterIter, f.set.BarycenterTol)
	}, nil)
}

// lossAndGradients computes the batch loss (Algorithm 2, line 15)
//
//	L = (1/N) Σ_ℓ L(Q̂_ℓ, B̂_ℓ),
//
// L being W_c with the label term of eq. 9 for a labeled domain and W_2²
// otherwise, and the gradients of every domain's term with its transport
// plans held fixed (the envelope theorem; see domainBatch.lossAndGradients),
// domains in parallel. It sets gA to ∂L/∂α and adds L/M and every L_ℓ/M to
// the epoch's losses; updateAtoms gathers the atoms' gradients.
func (f *fitter) lossAndGradients() error {
	err := par.Run(f.N, f.workers, func(l int) error {
		return f.dbs[l].lossAndGradients(f.atomBatch(l), f.alpha.RawRowView(l), f.set.Beta)
	}, nil)
	if err != nil {
		return err
	}
	f.gA.Zero()
	var loss float64
	inv := 1 / float64(f.N)
	for l := range f.dbs {
		db := &f.dbs[l]
		loss += db.Loss * inv
		f.domLoss[l] += db.Loss / float64(f.batches)
		for k := 0; k < f.K; k++ {
			f.gA.Set(l, k, db.gAlpha[k]*inv)
		}
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return errDiverged
	}
	f.epochLoss += loss / float64(f.batches)
	return nil
}

// updateAtoms moves every atom (Algorithm 2, lines 16–17) by one Adam step
// on L in place of the plain gradient step: the features x with learning
// rate η·s (Settings.FeatureScale), the label logits p with η, both times
// the plateau rule's factor. WBR's fixed atoms do not move. It appends
// (1/K) Σ_k ‖Y_k,it − Y_k,it−1‖²_F (eq. 13) to History.DeltaY.
func (f *fitter) updateAtoms() {
	var dy float64
	if !f.fixed {
		f.eachAtom(func(k int) { f.dys[k] = f.updateAtom(k) })
		for k := 0; k < f.K; k++ {
			dy += f.dys[k]
		}
	}
	f.h.DeltaY = append(f.h.DeltaY, dy/float64(f.K))
}

// updateAtom steps atom k (see updateAtoms) and returns ‖Y_k,it −
// Y_k,it−1‖²_F. Atoms are independent, each stepped by one goroutine that
// gathers the domains' gradients in domain order (so the sums do not
// depend on the number of goroutines). Only the batch's rows carry
// gradients; the other rows' feature steps are applied when they are next
// drawn (lazyAdam). The gradient of the logits is
// ∂L/∂p = y ⊙ (∂L/∂y − ⟨∂L/∂y, y⟩).
func (f *fitter) updateAtom(k int) float64 {
	gX, gZ := f.gX[k], f.gZ[k]
	f.gather(k, gX, gZ, f.live[k], 1/float64(f.N))
	ox := &f.optX[k]
	ox.advance(f.lrScale * f.lrX)
	xk := f.X[k].RawMatrix().Data
	for i := range f.abs {
		for _, r := range f.abs[i].idx[k] {
			ox.stepRow(xk, gX.RawRowView(r), r)
		}
	}
	// The labels after a step are those before the next one: they are
	// computed once per step.
	if f.prevY[k] == nil {
		f.prevY[k] = labelsInto(nil, f.Z[k])
	}
	f.optZ[k].stepRows(f.Z[k].RawMatrix().Data, gZ.RawMatrix().Data, f.classes, f.live[k], f.lrScale*f.set.LearningRate)
	f.curY[k] = labelsInto(f.curY[k], f.Z[k])
	dy := sqDiff(f.curY[k], f.prevY[k])
	f.prevY[k], f.curY[k] = f.curY[k], f.prevY[k]
	return dy
}

// gather writes into the rows of gX and gZ drawn into some domain's batch
// (marked in live) the gradients of the batch loss with respect to atom k's
// features and logits: the sum over the domains, in domain order, of scale ×
// each domain's gradients. A row drawn by several domains sums them all.
func (f *fitter) gather(k int, gX, gZ *mat.Dense, live []bool, scale float64) {
	clear(live)
	for i := range f.abs {
		for _, r := range f.abs[i].idx[k] {
			live[r] = true
			clear(gX.RawRowView(r))
			clear(gZ.RawRowView(r))
		}
	}
	for l := range f.dbs {
		f.scatter(k, f.atomBatch(l), &f.dbs[l], gX, gZ, scale)
	}
}

// scatter adds scale × domain db's gradients of atom k's batch rows to the
// atom's full gradients gX and gZ, converting label gradients to logit
// gradients through the softmax Jacobian: ∂L/∂z = y ⊙ (g − ⟨g, y⟩).
func (f *fitter) scatter(k int, ab *atomBatch, db *domainBatch, gX, gZ *mat.Dense, scale float64) {
	nb, c := f.nb, f.classes
	gz := make([]float64, c)
	for l, r := range ab.idx[k] {
		t := k*nb + l
		dst := gX.RawRowView(r)
		for q, v := range db.gX.RawRowView(t) {
			dst[q] += scale * v
		}
		if db.YQ == nil {
			continue
		}
		logitGrad(gz, ab.YA.RawRowView(t), db.gY.RawRowView(t))
		dz := gZ.RawRowView(r)
		for q, v := range gz {
			dz[q] += scale * v
		}
	}
}

// updateAlpha moves the barycentric coordinates (Algorithm 2, line 18):
// one Adam step on ∂L/∂α with learning rate η times the plateau rule's
// factor, then every α_ℓ ← proj_Δ_K(α_ℓ). Unless Settings.RawAlphaGradient
// is set, the step takes the gradient's component tangent to the simplex,
// ∂L/∂α_ℓ − (1/K) Σ_k ∂L/∂α_ℓk, since only that component matters: Adam's
// per-coordinate normalisation would turn a common offset into equal steps
// that the projection then cancels, and α would not move. It appends
// ‖A_it − A_it−1‖²_F (eq. 13) to History.DeltaA.
func (f *fitter) updateAlpha() {
	f.prevA.Copy(f.alpha)
	for l := 0; l < f.N && !f.set.RawAlphaGradient; l++ {
		linalg.Centre(f.gA.RawRowView(l))
	}
	f.optA.step(f.alpha.RawMatrix().Data, f.gA.RawMatrix().Data, f.lrScale*f.set.LearningRate)
	for l := 0; l < f.N; l++ {
		row := f.alpha.RawRowView(l)
		ot.ProjectSimplex(row, row)
	}
	f.h.DeltaA = append(f.h.DeltaA, sqDiff(f.alpha, f.prevA))
}

// endEpoch closes epoch (1-based) of Algorithm 2's loop (line 2): it
// records the epoch's losses and α in the history, applies the stopping
// rule (stopRule) and reports the epoch to Settings.Progress, whose
// Status is optimize.NotTerminated on every epoch but the last. It
// returns true after the last epoch, with History.Stopped set.
func (f *fitter) endEpoch(epoch int) bool {
	h := &f.h
	h.Loss = append(h.Loss, f.epochLoss)
	h.DomainLoss = append(h.DomainLoss, f.domLoss)
	h.Alpha = append(h.Alpha, mat.DenseCopyOf(f.alpha))
	status := f.stopRule(epoch)
	if f.set.Progress != nil {
		f.set.Progress(EpochStats{Epoch: epoch, Epochs: f.set.Epochs, Loss: f.epochLoss, Elapsed: time.Since(f.start), Status: status})
	}
	if status == optimize.NotTerminated {
		return false
	}
	h.Stopped = status
	return true
}

// stopRule decides, after epoch, whether learning goes on. The paper runs
// a fixed N_iter epochs, or "until reconstruction loss hits a plateau";
// here the first plateau of the epoch losses (see plateau) divides every
// learning rate by 10, which removes most of the mini-batch noise from the
// final atoms and coordinates, and the second one, counted from the first,
// stops learning (optimize.FunctionConvergence). Epoch Settings.Epochs is
// the last in any case (optimize.IterationLimit).
func (f *fitter) stopRule(epoch int) optimize.Status {
	if plateau.Reached(f.h.Loss[f.since:], f.set.Window, f.set.PlateauTol) {
		if f.annealed {
			return optimize.FunctionConvergence
		}
		f.annealed = true
		f.lrScale = 0.1
		f.since = len(f.h.Loss)
	}
	if epoch == f.set.Epochs {
		return optimize.IterationLimit
	}
	return optimize.NotTerminated
}

// finish assembles f.dict, the output of Algorithm 2 (atoms P* and
// coordinates A*): it first applies the feature steps the rows outside
// the last batches missed, and sets History.DeltaX, the features' update
// magnitudes (1/K) Σ_k ‖X_k,it − X_k,it−1‖²_F (eq. 13).
func (f *fitter) finish() {
	h := &f.h
	if !f.fixed {
		f.eachAtom(func(k int) { f.optX[k].sync(f.X[k].RawMatrix().Data) })
		h.DeltaX = make([]float64, len(h.DeltaY))
		for u := range h.DeltaX {
			for k := 0; k < f.K; k++ {
				h.DeltaX[u] += f.optX[k].sq[f.t0+u]
			}
			h.DeltaX[u] /= float64(f.K)
		}
	}
	if f.carry != nil && !f.fixed {
		f.carry.optX, f.carry.optZ, f.carry.optA = f.optX, f.optZ, f.optA
	}
	h.Elapsed = time.Since(f.start)
	atoms := make([]Atom, f.K)
	for k := range atoms {
		atoms[k] = Atom{X: f.X[k], Logits: f.Z[k]}
	}
	names := make([]string, f.N)
	for l, dm := range f.domains {
		names[l] = dm.Name
	}
	f.dict = &Dictionary{Atoms: atoms, Alpha: f.alpha, Names: names, Classes: f.classes, History: *h, Settings: f.set}
}

// sqDiff returns ‖A − B‖²_F.
func sqDiff(A, B *mat.Dense) float64 {
	a, b := A.RawMatrix().Data, B.RawMatrix().Data
	var s float64
	for i, v := range a {
		e := v - b[i]
		s += e * e
	}
	return s
}
