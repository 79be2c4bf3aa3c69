package dataset_test

import (
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
)

func Example() {
	dir, err := os.MkdirTemp("", "dataset-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// A labeled source domain and an unlabeled target domain.
	src := filepath.Join(dir, "source.csv")
	tgt := filepath.Join(dir, "target.csv")
	if err := os.WriteFile(src, []byte("f1,f2,label\n0,10,3\n2,30,7\n4,20,3\n6,40,7\n"), 0o600); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(tgt, []byte("f1,f2\n8,0\n1,50\n"), 0o600); err != nil {
		log.Fatal(err)
	}
	s, err := dataset.Read(src, nil)
	if err != nil {
		log.Fatal(err)
	}
	t, err := dataset.Read(tgt, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := dataset.CheckCompatible(s, t); err != nil {
		log.Fatal(err)
	}

	// Labels 3 and 7 become class indices 0 and 1.
	classes, err := dataset.NewClasses(s, t)
	if err != nil {
		log.Fatal(err)
	}
	idx, err := classes.Encode(s.Labels)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Name, s.Labels, "->", idx, "classes", classes.Values)

	// Min-max scaling fitted over both domains together.
	scaler, err := dataset.FitScaler(dataset.ScaleMinMax, s, t)
	if err != nil {
		log.Fatal(err)
	}
	ts, err := scaler.TransformFile(t)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s scaled:\n%v\n", t.Name, mat.Formatted(ts.X))

	// A class-balanced mini-batch of 4 source rows.
	rng := rand.New(rand.NewPCG(1, 2))
	batch := dataset.BalancedBatch(rng, idx, classes.Len(), 4, nil)
	var drawn []int
	for _, i := range batch {
		drawn = append(drawn, s.Labels[i])
	}
	fmt.Println("batch rows", batch, "labels", drawn)

	_, err = dataset.Read("notes.doc", nil)
	fmt.Println(err)

	// Output:
	// source [3 7 3 7] -> [0 1 0 1] classes [3 7]
	// target scaled:
	// ⎡    1      0⎤
	// ⎣0.125      1⎦
	// batch rows [0 2 1 3] labels [3 3 7 7]
	// dataset: notes.doc: unknown file type ".doc" (want .csv, .txt, .data, .npy, .npz or .mat)
}
