package bench

import (
	_ "embed"
	"fmt"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/npy"
)

// PythonReference is an independent PyTorch + POT implementation of DaDiL
// (paper setting), used by `dadil bench dadil` to time the Go
// implementation side by side with Python on the same split. Usage:
//
//	python3 dadil_reference.py SPLIT.npz K n nb lr epochs seed
//
// It prints one JSON object (fit_seconds, classifier_seconds,
// total_seconds, accuracy_r, accuracy_e, loss, …) on its last line.
//
//go:embed python/dadil_reference.py
var PythonReference string

// ExportSplit writes a split to an .npz file for the Python reference:
// n_sources, classes, Xs<k> and ys<k> for every source, Xt (target
// training rows), Xtest and ytest.
func ExportSplit(path string, p *dataset.Problem) error {
	if p == nil || len(p.Sources) == 0 || p.Target.X == nil || p.Test == nil {
		return fmt.Errorf("bench: %s: the split is empty (use OfficeCaltech.Split)", path)
	}
	classes := p.Classes
	arrays := map[string]*npy.Array{
		"n_sources": {Shape: []int{}, Data: []float64{float64(len(p.Sources))}},
		"classes":   {Shape: []int{}, Data: []float64{float64(classes)}},
	}
	add := func(name string, r, c int, data []float64) {
		arrays[name] = &npy.Array{Shape: []int{r, c}, Data: data}
	}
	vec := func(name string, y []int) {
		v := make([]float64, len(y))
		for i, x := range y {
			v[i] = float64(x)
		}
		arrays[name] = &npy.Array{Shape: []int{len(y)}, Data: v}
	}
	for k, src := range p.Sources {
		r, c := src.X.Dims()
		add(fmt.Sprintf("Xs%d", k), r, c, linalg.Rows(src.X, seq(r)).RawMatrix().Data)
		vec(fmt.Sprintf("ys%d", k), src.Y)
	}
	r, c := p.Target.X.Dims()
	add("Xt", r, c, p.Target.X.RawMatrix().Data)
	r, c = p.Test.X.Dims()
	add("Xtest", r, c, p.Test.X.RawMatrix().Data)
	vec("ytest", p.Test.Y)
	return npy.WriteNPZ(path, arrays)
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
