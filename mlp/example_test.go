package mlp_test

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/mlp"
)

// Train a small encoder on two noisy classes, then use its last hidden
// layer as features.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	X := mat.NewDense(200, 5, nil)
	y := make([]int, 200)
	for i := range 200 {
		y[i] = i % 2
		for j := range 5 {
			X.Set(i, j, rng.NormFloat64()+3*float64(y[i]*(j%2)))
		}
	}
	net, err := mlp.Train(X, y, 2, &mlp.Settings{Hidden: []int{16, 8}, Epochs: 20, Batch: 20, Seed: 1})
	if err != nil {
		panic(err)
	}
	pred, _ := net.Predict(X)
	ok := 0
	for i := range pred {
		if pred[i] == y[i] {
			ok++
		}
	}
	F, _ := net.Embed(X)
	r, c := F.Dims()
	fmt.Printf("training accuracy %.2f, features %d×%d\n", float64(ok)/200, r, c)
	// Output:
	// training accuracy 0.99, features 200×8
}
