package modelfile_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/modelfile"
)

// A fitted model saved with its scaler and the user's label values, loaded
// back and applied to raw data.
func Example() {
	rng := rand.New(rand.NewPCG(3, 4))
	points := func(n int, shift float64) (*mat.Dense, []int) {
		X := mat.NewDense(n, 2, nil)
		y := make([]int, n)
		for i := range n {
			y[i] = i % 2
			X.Set(i, 0, 10*float64(y[i])+rng.NormFloat64())
			X.Set(i, 1, shift+rng.NormFloat64())
		}
		return X, y
	}
	Xa, ya := points(100, 0)
	Xb, yb := points(100, 4)
	Xt, _ := points(100, 2)
	sc, err := dataset.FitScaler(dataset.ScaleMinMax, &dataset.File{X: Xa}, &dataset.File{X: Xb}, &dataset.File{X: Xt})
	if err != nil {
		panic(err)
	}
	scaled := func(X *mat.Dense) *mat.Dense {
		var S mat.Dense
		S.CloneFrom(X)
		if err := sc.Transform(&S, &S); err != nil {
			panic(err)
		}
		return &S
	}
	d, err := dictionary.Fit([]dataset.Domain{{X: scaled(Xa), Y: ya}, {X: scaled(Xb), Y: yb}, {X: scaled(Xt)}}, 2, &dictionary.Settings{Seed: 1})
	if err != nil {
		panic(err)
	}
	m, err := dictionary.NewModel(d, 2, nil, 1)
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "modelfile-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.dadil")
	// Class indices 0 and 1 stand for the user's labels 7 and 9.
	if err := modelfile.Save(path, &modelfile.File{Model: m, Scaler: sc, Labels: []int{7, 9}}); err != nil {
		panic(err)
	}
	f, err := modelfile.Load(path)
	if err != nil {
		panic(err)
	}
	raw := mat.NewDense(2, 2, []float64{0, 2, 10, 2})
	pred, err := f.Model.PredictR(scaled(raw))
	if err != nil {
		panic(err)
	}
	var labels []int
	for _, k := range pred {
		labels = append(labels, f.Labels[k])
	}
	fmt.Println("labels of (0, 2) and (10, 2):", labels, "known labels:", slices.Clone(f.Labels))
	// Output:
	// labels of (0, 2) and (10, 2): [7 9] known labels: [7 9]
}
