package federate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/ot"
)

// Aggregation is how the coordinator merges the sites' atoms into one
// candidate x̄ of the round (the server optimiser then steps towards it,
// see ServerOptimizer).
type Aggregation int

const (
	// Average takes the element-wise mean of the answering sites' atoms
	// (features and label logits), summed in site-id order:
	// x̄ = (1/m) Σ_i x_i; with Config.SourceLogits the logits' mean is
	// over the answering sources alone (x's logits if none answered).
	Average Aggregation = iota
	// Random keeps one answering site's atoms, chosen by the seeded
	// generator.
	Random
	// WBary averages the sites' atoms after matching their points: for
	// every site i and atom k it finds the permutation σ_ik of the n
	// points that solves the assignment problem
	//
	//	σ_ik = argmin_σ Σ_j ‖x⁰_kj − x_ik,σ(j)‖²
	//
	// against the round's atoms x⁰ (the previous round's result), exactly
	// (ot.AssignmentSolver), and averages the matched points, features
	// and logits together (a point's label follows it):
	// x̄_kj = (1/m) Σ_i x_ik,σ_ik(j). Each x̄_k is then the support of the
	// free-support Wasserstein barycenter step of the sites' atoms k
	// with uniform weights, with the couplings those of x⁰_k (an
	// assignment between n-point uniform measures is an optimal plan, by
	// Birkhoff's theorem). Atoms whose points a site has permuted are
	// averaged point by point as the same measure.
	WBary
)

// ParseAggregation returns the aggregation named "avg", "random" or
// "wbary".
func ParseAggregation(s string) (Aggregation, error) {
	switch s {
	case "avg":
		return Average, nil
	case "random":
		return Random, nil
	case "wbary":
		return WBary, nil
	}
	return 0, fmt.Errorf("federate: unknown aggregation %q (want avg, random or wbary)", s)
}

func (a Aggregation) String() string {
	switch a {
	case Random:
		return "random"
	case WBary:
		return "wbary"
	}
	return "avg"
}

// ServerOptimizer is the coordinator's step from the round's atoms x to
// the merged candidate x̄ (Aggregation). The pseudo-gradient of the round
// is Δ = x̄ − x, the mean move of the sites (Reddi et al., "Adaptive
// Federated Optimization", ICLR 2021, Algorithm 2), and the coordinator
// applies its own optimiser to it with the server learning rate η_s.
type ServerOptimizer int

const (
	// ServerSGD: x ← x + η_s Δ. With η_s = 1 (the default) the atoms
	// become the aggregate itself (FedAvg); η_s > 1 extrapolates the
	// sites' mean move.
	ServerSGD ServerOptimizer = iota
	// ServerMomentum (FedAvgM, Hsu et al. 2019): m ← β₁ m + Δ,
	// x ← x + η_s m, m starting at 0. With β₁ = 0.5 (the default) a
	// move the sites agree on from round to round is carried on at up to
	// twice its size, while one they reverse is damped.
	ServerMomentum
	// ServerAdam (FedAdam, Reddi et al. 2021): m ← β₁ m + (1 − β₁) Δ,
	// v ← β₂ v + (1 − β₂) Δ² and x ← x + η_s m / (√v + τ), element-wise,
	// m and v starting at 0 (no bias correction, as in the paper). The
	// step of every value is at most about η_s whatever the scale of Δ:
	// η_s is in the units of the atoms' values (features and logits
	// alike).
	ServerAdam
)

// ParseServerOptimizer returns the server optimiser named "sgd",
// "momentum" or "adam".
func ParseServerOptimizer(s string) (ServerOptimizer, error) {
	switch s {
	case "sgd":
		return ServerSGD, nil
	case "momentum":
		return ServerMomentum, nil
	case "adam":
		return ServerAdam, nil
	}
	return 0, fmt.Errorf("federate: unknown server optimiser %q (want sgd, momentum or adam)", s)
}

func (o ServerOptimizer) String() string {
	switch o {
	case ServerMomentum:
		return "momentum"
	case ServerAdam:
		return "adam"
	}
	return "sgd"
}

// Server configures the coordinator's optimiser. Zero fields take the
// defaults given in each field's comment.
type Server struct {
	Optimizer ServerOptimizer
	// LR is η_s. Default 1 for ServerSGD and ServerMomentum,
	// DefaultServerAdamLR for ServerAdam.
	LR float64
	// Beta1 is β₁ (default 0.5 for ServerMomentum, 0.9 for ServerAdam),
	// Beta2 β₂ (default 0.99) and Tau τ (default 1e-3), both of
	// ServerAdam only.
	Beta1, Beta2, Tau float64
}

// DefaultServerAdamLR is the default η_s of ServerAdam.
const DefaultServerAdamLR = 0.01

// resolved returns s with its defaults filled in.
func (s Server) resolved() Server {
	if s.LR == 0 {
		s.LR = 1
		if s.Optimizer == ServerAdam {
			s.LR = DefaultServerAdamLR
		}
	}
	if s.Beta1 == 0 {
		s.Beta1 = 0.9
		if s.Optimizer == ServerMomentum {
			s.Beta1 = 0.5
		}
	}
	if s.Beta2 == 0 {
		s.Beta2 = 0.99
	}
	if s.Tau == 0 {
		s.Tau = 1e-3
	}
	return s
}

// check verifies resolved settings.
func (s Server) check() error {
	ok := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch {
	case s.Optimizer < ServerSGD || s.Optimizer > ServerAdam:
		return protocolErr("server optimiser %d", int(s.Optimizer))
	case !ok(s.LR):
		return protocolErr("server learning rate %g (want a positive number)", s.LR)
	case !(s.Beta1 >= 0 && s.Beta1 < 1) || !(s.Beta2 >= 0 && s.Beta2 < 1):
		return protocolErr("server β₁ %g, β₂ %g (want 0 ≤ β < 1)", s.Beta1, s.Beta2)
	case !ok(s.Tau):
		return protocolErr("server τ %g (want a positive number)", s.Tau)
	}
	return nil
}

// describe names the optimiser and its settings, as a saved state keeps
// them: "" for the default (the aggregate taken as it is).
func (s Server) describe() string {
	if s.Optimizer == ServerSGD && s.LR == 1 {
		return ""
	}
	return fmt.Sprintf("%v lr=%g beta1=%g beta2=%g tau=%g", s.Optimizer, s.LR, s.Beta1, s.Beta2, s.Tau)
}

// moments returns how many state vectors the optimiser keeps (m, v).
func (s Server) moments() int {
	switch s.Optimizer {
	case ServerMomentum:
		return 1
	case ServerAdam:
		return 2
	}
	return 0
}

// aggregator merges the sites' updates and steps the atoms; it keeps the
// server optimiser's state from round to round.
type aggregator struct {
	agg   Aggregation
	srv   Server // resolved
	shape Shape
	// sourceLogits averages the label logits over the labeled sites'
	// updates alone (Config.SourceLogits).
	sourceLogits bool
	merged       []float64   // x̄, the round's aggregate
	mom          [][]float64 // the optimiser's state: m, then v
	// WBary's buffers.
	aligned   []float64
	cost      mat.Dense
	solver    ot.AssignmentSolver
	assignRes ot.AssignmentResult
}

func newAggregator(a Aggregation, srv Server, sh Shape, sourceLogits bool) (*aggregator, error) {
	srv = srv.resolved()
	if err := srv.check(); err != nil {
		return nil, err
	}
	if a < Average || a > WBary {
		return nil, protocolErr("aggregation %d", int(a))
	}
	v, err := sh.Values()
	if err != nil {
		return nil, err
	}
	g := &aggregator{agg: a, srv: srv, shape: sh, sourceLogits: sourceLogits, merged: make([]float64, v)}
	for range srv.moments() {
		g.mom = append(g.mom, make([]float64, v))
	}
	return g, nil
}

// apply merges the updates, given in site-id order, into the round's
// candidate x̄ and steps x towards it with the server optimiser. labeled
// tells which updates come from labeled sites (sources), whose loss moves
// the label logits; nil: all of them. rng draws Random's site.
func (g *aggregator) apply(x []float64, updates [][]float64, labeled []bool, rng *rand.Rand) error {
	if len(updates) == 0 {
		return errors.New("federate: no update to aggregate")
	}
	if labeled != nil && len(labeled) != len(updates) {
		return fmt.Errorf("federate: %d labeled flags for %d updates", len(labeled), len(updates))
	}
	for _, u := range updates {
		if len(u) != len(x) || len(x) != len(g.merged) {
			return fmt.Errorf("federate: an update of %d values for atoms of %d", len(u), len(x))
		}
	}
	if g.agg == Random {
		copy(g.merged, updates[rng.IntN(len(updates))])
	} else if err := g.mean(x, updates, labeled); err != nil {
		return err
	}
	g.step(x)
	return nil
}

// mean writes into g.merged the element-wise mean of the updates, summed
// in order (Average), or of the updates with every atom's points matched
// to those of x (WBary). With sourceLogits the label logits are the mean
// of the labeled updates' alone, and x's when none is labeled: an
// unlabeled site's loss gives them no gradient, so its update holds them
// as they were and would only slow their learning.
func (g *aggregator) mean(x []float64, updates [][]float64, labeled []bool) error {
	if g.agg == WBary && g.aligned == nil {
		g.aligned = make([]float64, len(x))
	}
	clear(g.merged)
	nl := 0 // updates counted in the logits' mean
	for i, u := range updates {
		if g.agg == WBary {
			if err := g.align(g.aligned, x, u); err != nil {
				return err
			}
			u = g.aligned
		}
		logits := !g.sourceLogits || labeled == nil || labeled[i]
		if logits {
			nl++
		}
		g.forParts(func(lo, hi int, isLogits bool) {
			if logits || !isLogits {
				floats.Add(g.merged[lo:hi], u[lo:hi])
			}
		})
	}
	inv, invl := 1/float64(len(updates)), 1/float64(max(nl, 1))
	g.forParts(func(lo, hi int, isLogits bool) {
		switch {
		case !isLogits:
			floats.Scale(inv, g.merged[lo:hi])
		case nl == 0:
			copy(g.merged[lo:hi], x[lo:hi])
		default:
			floats.Scale(invl, g.merged[lo:hi])
		}
	})
	return nil
}

// forParts calls f on the value range of every atom's features, then of
// its label logits, atom by atom.
func (g *aggregator) forParts(f func(lo, hi int, isLogits bool)) {
	n, d, c := g.shape.N, g.shape.D, g.shape.C
	for k := range g.shape.K {
		off := k * n * (d + c)
		f(off, off+n*d, false)
		f(off+n*d, off+n*(d+c), true)
	}
}

// align writes into dst the values of u with the points of every atom k
// permuted to match those of ref's atom k: dst's point j is u's point
// σ(j), features and logits, for the optimal assignment σ of the squared
// Euclidean distances between the features.
func (g *aggregator) align(dst, ref, u []float64) error {
	sh := g.shape
	n, d, c := sh.N, sh.D, sh.C
	for k := range sh.K {
		off := k * n * (d + c)
		rx := mat.NewDense(n, d, ref[off:off+n*d])
		ux := mat.NewDense(n, d, u[off:off+n*d])
		g.cost.Reset()
		if err := ot.SqEuclidean(&g.cost, rx, ux); err != nil {
			return fmt.Errorf("federate: wbary: %w", err)
		}
		if err := g.solver.Solve(&g.assignRes, &g.cost); err != nil {
			return fmt.Errorf("federate: wbary: %w", err)
		}
		zo := off + n*d
		for j, s := range g.assignRes.Perm {
			copy(dst[off+j*d:off+(j+1)*d], u[off+s*d:off+(s+1)*d])
			copy(dst[zo+j*c:zo+(j+1)*c], u[zo+s*c:zo+(s+1)*c])
		}
	}
	return nil
}

// step moves x towards g.merged with the server optimiser (see
// ServerOptimizer), Δ = x̄ − x.
func (g *aggregator) step(x []float64) {
	s := g.srv
	switch s.Optimizer {
	case ServerMomentum:
		m := g.mom[0]
		for i, xb := range g.merged {
			m[i] = s.Beta1*m[i] + (xb - x[i])
			x[i] += s.LR * m[i]
		}
	case ServerAdam:
		m, v := g.mom[0], g.mom[1]
		for i, xb := range g.merged {
			delta := xb - x[i]
			m[i] = s.Beta1*m[i] + (1-s.Beta1)*delta
			v[i] = s.Beta2*v[i] + (1-s.Beta2)*delta*delta
			x[i] += s.LR * m[i] / (math.Sqrt(v[i]) + s.Tau)
		}
	default:
		if s.LR == 1 {
			copy(x, g.merged)
			return
		}
		for i, xb := range g.merged {
			x[i] += s.LR * (xb - x[i])
		}
	}
}
