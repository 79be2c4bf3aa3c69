// Package gmm holds Gaussian mixtures with diagonal covariances and
// optimal transport between them: the building blocks of the
// Gaussian-mixture domain adaptation of Montesuma, Ngolè Mboula &
// Souloumiac, "Optimal Transport for Domain Adaptation through Gaussian
// Mixture Models" (TMLR 2024, arXiv 2403.13847; GMM-OTDA) and "Lighter,
// Better, Faster Multi-Source Domain Adaptation with Gaussian Mixture
// Models and Optimal Transport" (ECML-PKDD 2024, arXiv 2404.10261;
// GMM-WBT and GMM-DaDiL).
//
// # Mixtures
//
// A Mixture is
//
//	P = Σ_k w_k N(m_k, diag(σ_k²)),   k = 1 … K,  w ∈ Δ_K,
//
// optionally labeled: component k carries a soft label y_k ∈ R^c. Fit
// estimates one from the rows of a matrix by expectation–maximisation
// (k-means++ start, log-domain responsibilities, a variance floor, K given
// or chosen by BIC); FitLabeled fits one mixture per class of a labeled
// domain, the class as the components' one-hot label and every class of
// mass 1/c. Posterior gives the responsibilities γ_k(x) = w_k N(x; m_k,
// σ_k²) / P(x), and for a labeled mixture Proba and Predict classify by
// the posterior over components times the components' labels,
// p(y | x) = Σ_k γ_k(x) y_k.
//
// # Distances
//
// The squared 2-Wasserstein distance between two Gaussians with diagonal
// covariances is ‖m − m'‖² + ‖σ − σ'‖². Restricting the transport between
// two mixtures to couplings that are themselves Gaussian mixtures (Delon &
// Desolneux, SIAM J. Imaging Sci. 2020) turns it into a discrete problem
// between components, the GMM-OT problem of GMM-OTDA:
//
//	MW₂²(P, Q) = min_{ω ∈ Π(w, w')} Σ_kl ω_kl C_kl,
//	C_kl = ‖m_k − m'_l‖² + ‖σ_k − σ'_l‖² + β‖y_k − y'_l‖²,
//
// with β = 0, and with β > 0 the supervised MW₂ of GMM-DaDiL, in which
// components of different classes are far apart. MW2 solves it exactly
// with ot.EMD (K×K' instead of n×n', whatever the number of rows), and
// Coupling.Gradient gives its derivatives with respect to every mixture
// parameter by the envelope theorem (the optimal plan held fixed).
//
// # Barycenters
//
// Barycenter computes argmin_B Σ_p λ_p MW₂²(B, P_p) over mixtures of K
// equally weighted components by the fixed-point iteration of GMM-DaDiL:
// plans ω^(p) between B and every P_p, then every component of B moved to
// the λ-weighted barycentric projection of its images (means, deviations
// and labels alike).
//
// # Mapping
//
// Map is the GMM-OTDA map from a source mixture to a target mixture
// through a plan between components: per pair of components the affine
// map T_kl(x) = m'_l + (σ'_l/σ_k) ⊙ (x − m_k) of diagonal Gaussians,
// mixed with the weights γ_k(x) ω_kl / w_k (Map.Mean) or drawn with those
// probabilities (Map.Random).
//
// # Dictionary learning
//
// LearnDictionary learns the GMM-DaDiL dictionary of labeled source
// mixtures and an unlabeled target mixture: K labeled mixture atoms P_k
// (means, log deviations and label logits, equal component weights) and
// coordinates α_ℓ on the simplex for every domain, minimising
//
//	Σ_ℓ<S SMW₂²(B(α_ℓ; P), Q_ℓ) + MW₂²(B(α_T; P), Q_T)
//
// by full-batch Adam, B the labeled barycenter, with gradients through the
// barycenter's fixed-point plans held fixed. Dictionary.Target is the
// target's reconstruction, a labeled mixture that classifies (GMM-DaDiL-R);
// Dictionary.AtomsOnto moves the atoms onto a reconstruction, each keeping
// its labels, for GMM-DaDiL-E's classifiers (package adapt), and
// Dictionary.EnsembleProba weighs the atoms' own MAP rules by α_T.
//
// # Determinism
//
// Work over rows runs in parallel in fixed blocks of rows whose sums are
// added in block order, and the random draws come from PCG streams of a
// seed (math/rand/v2): results are bit-identical for any number of
// goroutines or GOMAXPROCS.
//
// Errors returned by this package are prefixed with "gmm: ".
package gmm
