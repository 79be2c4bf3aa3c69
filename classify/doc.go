// Package classify trains multinomial softmax regression with an L2
// penalty: the "single-layer perceptron" that DaDiL (Montesuma et al.,
// ECAI 2023) and its baselines train on labeled, possibly soft-labeled,
// point clouds.
//
// # Model
//
// For c classes and d features, a model holds weights W ∈ R^{c×d} and
// biases b ∈ R^c and predicts
//
//	p(y = k | x) = softmax(W x + b)_k = exp(z_k) / Σ_l exp(z_l),  z = W x + b.
//
// Predict returns argmax_k z_k (the lowest index among ties); Proba returns
// the probabilities, computed with the usual shift by max_k z_k.
//
// # Objective
//
// Given samples x_i ∈ R^d, targets t_i on the probability simplex (one-hot
// for hard labels, any probability vector for soft labels) and sample
// weights s_i ≥ 0, Fit and FitLabels minimise
//
//	L(W, b) = (1/S) Σ_i s_i CE(t_i, softmax(W x_i + b)) + λ‖W‖²_F,
//	CE(t, p) = −Σ_k t_k log p_k,  S = Σ_i s_i,
//
// with λ = 1e-3 by default (DefaultL2) and the bias not penalised. With
// uniform weights the first term is the mean cross-entropy, so λ has the
// meaning of a Keras kernel_regularizer=l2(λ) on a Dense softmax layer, the
// classifier of the DaDiL reference implementation. Only the ratios of the
// weights matter.
//
// Writing lse_i = log Σ_k exp(z_ik), the loss of sample i is
// CE_i = Σ_k t_ik (lse_i − z_ik), evaluated stably as
// lse_i = m + log Σ_k exp(z_ik − m) with m = max_k z_ik. Its gradient is
//
//	∂L/∂W = (1/S) Σ_i s_i (p_i τ_i − t_i) x_iᵀ + 2λW,
//	∂L/∂b = (1/S) Σ_i s_i (p_i τ_i − t_i),
//
// where p_i = softmax(z_i) and τ_i = Σ_k t_ik, which is 1 up to the 1e-6
// tolerance accepted on target rows (the gradient is that of L as written,
// not of the normalised targets).
//
// L is convex. It is invariant under b → b + β1 (softmax ignores a common
// shift of the logits) and its gradient is orthogonal to 1, so the
// optimiser, started at W = 0, b = 0, stays on Σ_k b_k = 0, where for λ > 0
// L is strictly convex and its minimiser unique when it exists. It does
// not exist when a class has no target mass (a class absent from the
// data): that class's bias decreases without bound, and training stops
// once its probabilities, and with them the gradient, fall below GradTol.
// Without a penalty (Settings.NoPenalty) it does not exist either when the
// data are separable.
//
// # Optimisation
//
// The minimiser is L-BFGS with 10 correction pairs (Nocedal and Wright,
// Numerical Optimization, 2nd ed., Algorithm 7.4) and a line search for the
// strong Wolfe conditions (c₁ = 1e-4, c₂ = 0.9; ibid., Algorithms 3.5 and
// 3.6). Once the change of L along a line falls to the level of its
// rounding error, steps are judged by the slope alone, with the
// approximate Wolfe conditions of Hager and Zhang, so that small GradTol
// can be met. Training starts at W = 0, b = 0 and stops once
// ‖∇L‖_∞ < GradTol (default 1e-6) or after MaxIter iterations (default
// 1000), or earlier when the line search finds no point with a lower loss
// (the loss flat to rounding). Result.Status tells which, as the
// optimize.Status of gonum that package dictionary also reports:
// optimize.GradientThreshold, optimize.IterationLimit or
// optimize.MethodConverge respectively.
//
// The optimiser works in the shifted coordinates (W, b̃), b̃ = b + Wμ,
// where μ = (1/S) Σ_i s_i x_i is the weighted mean of the samples, so that
// z_i = W (x_i − μ) + b̃. This is a linear change of variables: L, its
// minimiser and the returned (W, b) are those defined above, and the
// stopping test uses ∇L in the original coordinates. It only changes the
// path: for features far from zero on average, such as counts or values
// in [0, 1], it decouples the biases from the weights, and L-BFGS needs
// tens to hundreds of iterations where it would otherwise need thousands.
// The data are neither copied nor rescaled: callers choose the scaling of
// the features, which is part of the model (through the penalty).
//
// FitFrom (SoftmaxTrainer.TrainFrom, the WarmTrainer interface) starts
// L-BFGS from a given model instead of zero: a warm start for data close to
// those the model was trained on. For λ > 0 the minimiser is Fit's, up to
// where GradTol stops, and to a common shift of the biases when the start
// has Σ_k b_k ≠ 0, which changes no probability.
//
// One evaluation of L costs one pass over the data (c dot products of
// length d per sample); its gradient costs another (c scaled additions of
// x_i per sample). Samples are split into fixed blocks of 256 rows whose
// partial sums are added in block order, so the passes run on
// Settings.Workers goroutines and give bit-identical results for any
// number of workers.
//
// Errors returned by this package are prefixed with "classify: ".
package classify
