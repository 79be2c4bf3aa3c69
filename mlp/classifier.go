package mlp

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/par"
)

// DefaultDecays is the grid of weight decays Classifier chooses from.
var DefaultDecays = []float64{1e-4, 1e-3, 1e-2}

// Classifier trains one-hidden-layer networks as a classify.Trainer, on
// soft targets and sample weights (TrainSoft), with the weight decay chosen
// by stratified k-fold cross-validation on the training points (the decay
// with the best mean held-out accuracy against the argmax of the targets,
// ties to the larger decay), then refitted on every row. Zero fields take
// the defaults given in their comments. Deterministic for Seed, whatever
// the number of goroutines.
type Classifier struct {
	// Hidden is the width of the hidden layer; default 128.
	Hidden int
	// Decays is the grid of weight decays; nil: DefaultDecays.
	Decays []float64
	// Folds is k; default classify.DefaultFolds.
	Folds int
	// Epochs, Batch and LearningRate of every fit; defaults 50, 64, 1e-3.
	Epochs, Batch int
	LearningRate  float64
	// Seed seeds the folds, the initial weights and the batches.
	Seed uint64
}

// Name returns "mlp".
func (c *Classifier) Name() string { return "mlp" }

// settings returns the network settings with weight decay decay.
func (c *Classifier) settings(decay float64) *Settings {
	s := &Settings{Hidden: []int{128}, Epochs: 50, Batch: 64, LearningRate: 1e-3, WeightDecay: decay, Seed: c.Seed}
	if c.Hidden > 0 {
		s.Hidden = []int{c.Hidden}
	}
	if c.Epochs > 0 {
		s.Epochs = c.Epochs
	}
	if c.Batch > 0 {
		s.Batch = c.Batch
	}
	if c.LearningRate > 0 {
		s.LearningRate = c.LearningRate
	}
	return s
}

// Train chooses the weight decay and fits the network on every row.
func (c *Classifier) Train(X, T *mat.Dense, w []float64) (classify.Classifier, error) {
	decay, err := c.selectDecay(X, T, w)
	if err != nil {
		return nil, err
	}
	net, err := TrainSoft(X, T, w, c.settings(decay))
	if err != nil {
		return nil, err
	}
	return &Net{net}, nil
}

// selectDecay returns the decay of the grid with the best mean held-out
// accuracy.
func (c *Classifier) selectDecay(X, T *mat.Dense, w []float64) (float64, error) {
	grid := c.Decays
	if grid == nil {
		grid = DefaultDecays
	}
	if len(grid) == 0 {
		return 0, fmt.Errorf("mlp: Classifier: an empty grid of weight decays")
	}
	k := c.Folds
	if k == 0 {
		k = classify.DefaultFolds
	}
	if X == nil || T == nil || X.IsEmpty() {
		return 0, fmt.Errorf("mlp: no data")
	}
	n, _ := X.Dims()
	if len(grid) == 1 || n < 2*k {
		return grid[0], nil
	}
	folds := classify.StratifiedFolds(classify.Argmax(T), k, c.Seed)
	acc := make([][]float64, len(grid)) // [decay][fold]
	for j := range acc {
		acc[j] = make([]float64, k)
	}
	err := par.Run(len(grid)*k, 0, func(i int) error {
		j, f := i/k, i%k
		train := classify.Complement(folds[f], n)
		net, err := TrainSoft(linalg.Rows(X, train), linalg.Rows(T, train), classify.Pick(w, train), c.settings(grid[j]))
		if err != nil {
			return err
		}
		acc[j][f], err = heldOut(net, linalg.Rows(X, folds[f]), classify.Argmax(linalg.Rows(T, folds[f])), classify.Pick(w, folds[f]))
		return err
	}, nil)
	if err != nil {
		return 0, err
	}
	best, bestAcc := 0, -1.0
	for j := range grid {
		var m float64
		for _, a := range acc[j] {
			m += a / float64(k)
		}
		if m > bestAcc || (m == bestAcc && grid[j] > grid[best]) {
			best, bestAcc = j, m
		}
	}
	return grid[best], nil
}

// heldOut returns the weighted accuracy of net on the rows X with the
// classes truth.
func heldOut(net *Network, X *mat.Dense, truth []int, w []float64) (float64, error) {
	pred, err := net.Predict(X)
	if err != nil {
		return 0, err
	}
	return classify.WeightedAccuracy(pred, truth, w), nil
}

// Net is a Network as a classify.Classifier.
type Net struct{ *Network }

// Proba stores the class probabilities of the rows of X in dst.
func (n *Net) Proba(dst, X *mat.Dense) error {
	P, err := n.Network.Proba(X)
	if err != nil {
		return err
	}
	if dst.IsEmpty() {
		r, c := P.Dims()
		dst.ReuseAs(r, c)
	}
	dst.Copy(P)
	return nil
}
