package npy_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/npy"
)

func Example() {
	dir, err := os.MkdirTemp("", "npy-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// Write a 2×3 matrix atomically and read it back.
	path := filepath.Join(dir, "x.npy")
	m := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	if err := npy.WriteMatrix(path, m); err != nil {
		log.Fatal(err)
	}
	a, err := npy.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Shape, a.DType)
	x, err := a.Matrix()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%v\n", mat.Formatted(x))

	// The array is not a vector.
	if _, err := a.Vector(); err != nil {
		fmt.Println(err)
	}

	// Malformed input gives a descriptive error.
	_, err = npy.Read(bytes.NewReader([]byte("\x93NUMPY\x01\x00\x10\x00{'descr'")))
	fmt.Println(err)

	// Output:
	// [2 3] <f8
	// ⎡1  2  3⎤
	// ⎣4  5  6⎦
	// npy: want a 1-D array for a vector, got shape (2, 3) (2 dimensions)
	// npy: truncated header: the header length field says 16 bytes, the file has 8
}

func ExampleReadNPZ() {
	dir, err := os.MkdirTemp("", "npy-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	path := filepath.Join(dir, "data.npz")
	err = npy.WriteNPZ(path, map[string]*npy.Array{
		"labels":  {Shape: []int{4}, Data: []float64{0, 1, 1, 2}},
		"weights": {Shape: []int{2, 2}, Data: []float64{0.25, 0.25, 0.5, 0}},
	})
	if err != nil {
		log.Fatal(err)
	}
	arrays, err := npy.ReadNPZ(path)
	if err != nil {
		log.Fatal(err)
	}
	labels, err := arrays["labels"].Ints()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(labels, arrays["weights"].Shape)
	// Output:
	// [0 1 1 2] [2 2]
}
