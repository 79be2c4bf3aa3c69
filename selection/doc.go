// Package selection chooses between fitted domain-adaptation methods, or
// between settings of one method, without target labels: it scores every
// candidate with a Scorer, higher being better, and the candidate of the
// highest score is chosen (Best). It is model selection in the sense of
// skada's scorers and of the unsupervised-validation literature; the name
// says what the scores are for.
//
// Ten scorers, in four families:
//
//   - held-out sources (HeldOutSources): leave-one-domain-out validation,
//     accuracy (or balanced accuracy) on each source held out as the
//     target of the others;
//   - source validation under covariate shift: a stratified part of every
//     source is held out, the method refitted without it, and its loss on
//     the held-out rows weighted by the density ratio p_T(x)/p_S(x)
//     (importance-weighted validation, IWV, Sugiyama et al. 2007; deep
//     embedded validation, DEV, You et al. 2019); and circular validation
//     (Circular, Bruzzone & Marconcini 2010), which adapts back from the
//     pseudo-labeled target to the sources;
//   - target-only criteria of the fitted predictions: prediction entropy
//     (Entropy, Morerio et al. 2018), soft neighbourhood density (SND,
//     Saito et al. 2021) and mixup consistency (MixVal, Hu et al. 2023);
//   - agreement between methods: ensemble-based validation (EnsV, Hu et
//     al. 2024, and its balanced, trimmed variant, the closest of these
//     scorers to the best method on the development suite) scores every
//     method by its agreement with the ensemble of the methods scored
//     together. It is a PooledScorer: Values leaves its values pending
//     and Pool fills them in once every method is fitted.
//
// ExtraAtoms uses held-out sources to choose between settings of one
// method: DaDiL's number of atoms beyond the sources (dadil fit --atoms
// auto).
//
// Each scorer's doc comment gives its formula, its cost in extra fits
// (Scorer.Refits) and its assumptions. None reads Problem.Test: the target
// labels only serve to judge the choices afterwards (dadil bench suite
// --select measures the gap between a scorer's choice and the best
// method).
//
// A Candidate is one fitted method with a builder of new ones for the
// scorers that refit. It is scored on one problem; scorers that refit the
// same way (IWV and DEV share their refit) share the fits through it.
// Scores cover every predictor of the method's one fit
// (adapt.Predictors): DaDiL-R and DaDiL-E are scored together.
//
// Every scorer is deterministic for its seed, whatever the number of
// cores, when the methods it refits are.
//
// Errors returned by this package are prefixed with "selection: ".
package selection
