package mlp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
)

// Layer is one affine layer z = W h + b: W is out×in.
type Layer struct {
	W *mat.Dense
	B []float64
}

// Network is a trained multi-layer perceptron.
type Network struct {
	// Mean and Scale standardise the inputs: x̃ = (x − Mean)⊙Scale.
	Mean, Scale []float64
	// Layers holds the hidden layers followed by the output layer.
	Layers []Layer
}

// Inputs returns the input dimension.
func (n *Network) Inputs() int { return len(n.Mean) }

// Classes returns the number of outputs (0 for a network without layers).
func (n *Network) Classes() int {
	if len(n.Layers) == 0 {
		return 0
	}
	return len(n.Layers[len(n.Layers)-1].B)
}

// EmbedDim returns the width of the last hidden layer (the input dimension
// if the network has no hidden layer).
func (n *Network) EmbedDim() int {
	if len(n.Layers) < 2 {
		return n.Inputs()
	}
	return len(n.Layers[len(n.Layers)-2].B)
}

// check validates the network's shapes and X against them.
func (n *Network) check(X *mat.Dense) error {
	if err := n.shapes(); err != nil {
		return err
	}
	if X == nil {
		return fmt.Errorf("mlp: no data")
	}
	r, c := X.Dims()
	if r == 0 {
		return fmt.Errorf("mlp: no rows")
	}
	if c != n.Inputs() {
		return fmt.Errorf("mlp: data has %d features, the network %d", c, n.Inputs())
	}
	if i, j, ok := linalg.FirstNonFiniteEntry(X); !ok {
		return fmt.Errorf("mlp: row %d, column %d is %v (counting from 1)", i+1, j+1, X.At(i, j))
	}
	return nil
}

// forward returns the activations after the first `layers` layers
// (post-ReLU for hidden layers, the logits for the output layer), for rows
// processed in chunks to bound memory.
func (n *Network) forward(X *mat.Dense, layers int) *mat.Dense {
	rows, _ := X.Dims()
	outDim := n.Inputs()
	if layers > 0 {
		outDim = len(n.Layers[layers-1].B)
	}
	out := mat.NewDense(rows, outDim, nil)
	const chunk = 512
	for r0 := 0; r0 < rows; r0 += chunk {
		r1 := min(rows, r0+chunk)
		h := standardise(X.Slice(r0, r1, 0, n.Inputs()).(*mat.Dense), n.Mean, n.Scale)
		for l := 0; l < layers; l++ {
			L := n.Layers[l]
			z := mat.NewDense(r1-r0, len(L.B), nil)
			linalg.MulABT(z, h, L.W)
			addBias(z, L.B, l < len(n.Layers)-1)
			h = z
		}
		out.Slice(r0, r1, 0, outDim).(*mat.Dense).Copy(h)
	}
	return out
}

// Logits returns the output scores z, one row per row of X.
func (n *Network) Logits(X *mat.Dense) (*mat.Dense, error) {
	if err := n.check(X); err != nil {
		return nil, err
	}
	return n.forward(X, len(n.Layers)), nil
}

// Proba returns the class probabilities softmax(z), one row per row of X.
func (n *Network) Proba(X *mat.Dense) (*mat.Dense, error) {
	z, err := n.Logits(X)
	if err != nil {
		return nil, err
	}
	r, _ := z.Dims()
	for i := range r {
		softmaxRow(z.RawRowView(i))
	}
	return z, nil
}

// Predict returns argmax_k z_k for each row of X (the lowest index among
// ties).
func (n *Network) Predict(X *mat.Dense) ([]int, error) {
	z, err := n.Logits(X)
	if err != nil {
		return nil, err
	}
	r, _ := z.Dims()
	out := make([]int, r)
	for i := range out {
		out[i] = floats.MaxIdx(z.RawRowView(i))
	}
	return out, nil
}

// Embed returns the activations of the last hidden layer, h_{L−1}, one row
// per row of X: the features the network has learned.
func (n *Network) Embed(X *mat.Dense) (*mat.Dense, error) {
	if err := n.check(X); err != nil {
		return nil, err
	}
	return n.forward(X, len(n.Layers)-1), nil
}

// standardise returns (X − mean)⊙scale in a new matrix.
func standardise(X *mat.Dense, mean, scale []float64) *mat.Dense {
	r, c := X.Dims()
	out := mat.NewDense(r, c, nil)
	for i := range r {
		src, dst := X.RawRowView(i), out.RawRowView(i)
		for j := range dst {
			dst[j] = (src[j] - mean[j]) * scale[j]
		}
	}
	return out
}

// addBias adds b to every row of z and applies the ReLU if relu.
func addBias(z *mat.Dense, b []float64, relu bool) {
	r, _ := z.Dims()
	for i := range r {
		row := z.RawRowView(i)
		for j := range row {
			v := row[j] + b[j]
			if relu && v < 0 {
				v = 0
			}
			row[j] = v
		}
	}
}

// softmaxRow replaces z by softmax(z) and returns log Σ exp(z).
func softmaxRow(z []float64) float64 {
	m := z[0]
	for _, v := range z[1:] {
		m = max(m, v)
	}
	var s float64
	for j, v := range z {
		e := math.Exp(v - m)
		z[j] = e
		s += e
	}
	for j := range z {
		z[j] /= s
	}
	return m + math.Log(s)
}
