// Package ot solves discrete optimal-transport problems between weighted
// point sets.
//
// Given source weights a ∈ R^n, target weights b ∈ R^m with equal sums and a
// cost matrix C ∈ R^{n×m}, the Kantorovich problem (paper eq. 3) is
//
//	min_π ⟨C, π⟩_F  subject to  π 1_m = a,  πᵀ 1_n = b,  π ≥ 0.
//
// EMD solves it exactly with a network simplex specialised to the complete
// bipartite graph (block-search pivoting, strongly feasible spanning trees).
// Sinkhorn solves its entropic regularisation in the log domain. The package
// also builds cost matrices (SqEuclidean, Pairwise), maps points through a
// plan (BarycentricMap, paper eq. 5) and projects onto the probability
// simplex (ProjectSimplex).
//
// Errors returned by this package are prefixed with "ot: ".
package ot
