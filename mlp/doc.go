// Package mlp trains multi-layer perceptrons: fully connected networks with
// ReLU hidden layers and a softmax output, trained with Adam on the mean
// cross-entropy over mini-batches. Its use in dadil is the encoder of the
// CWRU experiment of DaDiL (Montesuma, Ngolè Mboula & Souloumiac, ECAI 2023,
// Section 5 and appendix): a 2048 → 1024 → 512 → 256 → classes network
// trained on the source domains' spectra, whose 256 penultimate activations
// are the features every shallow domain-adaptation method works on.
//
// # Model
//
// With inputs standardised per feature, x̃ = (x − μ)⊙s (μ the mean and s the
// inverse standard deviation of each feature over the training rows, s = 1
// for a constant feature), the network computes
//
//	h_0 = x̃,   h_l = relu(W_l h_{l−1} + b_l)  (l = 1 … L−1),
//	z = W_L h_{L−1} + b_L,   p = softmax(z),
//
// with W_l ∈ R^{n_l × n_{l−1}}. Embed returns h_{L−1}, the activations of
// the last hidden layer; Predict returns argmax_k z_k.
//
// # Training
//
// Train minimises the mean cross-entropy −(1/B) Σ_i log p_{y_i}(x_i) over
// mini-batches of B rows drawn without replacement (a fresh permutation each
// epoch), plus (λ/2) Σ_l ‖W_l‖²_F when a weight decay λ is set, with Adam
// (Kingma & Ba, 2015: β₁ = 0.9, β₂ = 0.999, ε = 1e-8). Backpropagation:
// with δ_L = (p − e_y)/B for each row,
//
//	∂/∂W_l = δ_lᵀ h_{l−1},   ∂/∂b_l = Σ_rows δ_l,   δ_{l−1} = (δ_l W_l) ⊙ 1[h_{l−1} > 0].
//
// Weights start from He initialisation, N(0, 2/n_{l−1}), for the ReLU
// layers and N(0, 1/n_{L−1}) for the output layer, biases at zero, drawn
// from the seed. Every product is computed by the same deterministic kernel
// whatever the number of goroutines, so a network is a function of its data
// and Settings.
//
// # Files
//
// Save writes a network as a NumPy .npz archive (numpy.load opens it):
// "mlp_version" (the format version, 1), "mean" and "scale" (the input
// standardisation), and "W<l>", "b<l>" for l = 1 … L. Load checks every
// member, shape and value.
//
// Errors returned by this package are prefixed with "mlp: ".
package mlp
