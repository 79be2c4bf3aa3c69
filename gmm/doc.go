// Package gmm holds Gaussian mixtures with diagonal covariances,
//
//	P = Σ_k w_k N(m_k, diag(σ_k²)),
//
// fitted to data by expectation–maximisation (Fit), or one mixture per
// class for a labeled domain (FitLabeled), the building blocks of the
// Gaussian-mixture methods of Montesuma, Ngolè Mboula & Souloumiac:
// "Optimal Transport for Domain Adaptation through Gaussian Mixture
// Models" (TMLR 2024, arXiv 2403.13847) and "Lighter, Better, Faster
// Multi-Source Domain Adaptation with Gaussian Mixture Models and Optimal
// Transport" (ECML-PKDD 2024, arXiv 2404.10261).
//
// Errors returned by this package are prefixed with "gmm: ".
package gmm
