// Package dictionary implements Dataset Dictionary Learning (DaDiL;
// Montesuma, Ngolè Mboula & Souloumiac, ECAI 2023) for multi-source domain
// adaptation, and its Wasserstein barycentric regression baseline (WBR).
//
// Every domain ℓ = 1 … N (labeled sources and the unlabeled target) is an
// empirical distribution Q̂_ℓ. A dictionary is a set of K labeled atoms
// P̂_k, each n points x_j^(P_k) with soft labels y_j^(P_k) ∈ Δ_c, and one
// vector of barycentric coordinates α_ℓ ∈ Δ_K per domain, learned together
// so that every domain is close to the labeled Wasserstein barycenter of
// the atoms at its coordinates (paper eq. 11):
//
//	min_{P, A} (1/N) Σ_ℓ W_c(Q̂_ℓ, B(α_ℓ; P))
//
// where B is the labeled barycenter of package barycenter (Algorithm 1)
// and W_c is optimal transport with the label-aware cost
// ‖x − x'‖² + β ‖y − y'‖² (eq. 9) for a labeled domain and the plain W_2²
// for an unlabeled one.
//
// Fit runs the learning loop (Algorithm 2) on mini-batches with Adam, the
// labels parametrised as softmax(logits) and every α_ℓ projected onto the
// simplex. WBR fixes the atoms to the sources and learns only the target's
// coordinates (Algorithm 3). NewModel turns a dictionary into the paper's
// two classifiers of the target (Section 4.2): DaDiL-R, trained on the
// reconstruction B(α_T; P), and DaDiL-E, the α_T-weighted ensemble of one
// classifier per atom; Model.PredictR and Model.PredictE apply them to new
// rows. FitModel does both from a problem, and by default trains DaDiL-R
// beside the sources' rows moved along the dictionary towards the target
// (TransportSources).
//
// The zero Settings are the project's defaults (K = number of labeled
// domains, or that plus Settings.ExtraAtoms; atoms initialised on the
// data, plateau stopping, α moved along the simplex); Paper and PaperCWRU
// give the paper's settings. Results depend only on Settings.Seed, not on the number of
// goroutines.
//
// Fit, FitModel and WBR estimate their peak memory from the sizes of the
// data and the settings (EstimateMemory) and refuse, before any work, a
// fit beyond Settings.MaxMemory or the machine's memory (*MemoryError);
// they refuse more atoms than labeled rows, and ScaleWarning tells of
// atoms far larger than the data.
package dictionary
