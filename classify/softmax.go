package classify

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Softmax is a trained multinomial softmax regression,
//
//	p(y = k | x) = softmax(W x + b)_k,  k = 0, …, Classes−1.
//
// The fields are exported so that other packages can save and load models;
// a Softmax built by hand must have W of shape Classes×Dim and
// len(B) == Classes, or its methods return an error. The methods do not
// modify the model and may be called concurrently.
type Softmax struct {
	// W holds the weights, one row per class (Classes×Dim).
	W *mat.Dense
	// B holds the biases, one per class.
	B []float64
	// Classes is the number of classes c and Dim the number of features d.
	Classes, Dim int
}

// check reports an error when m is not a well-formed model.
func (m *Softmax) check() error {
	switch {
	case m == nil:
		return errors.New("classify: nil model")
	case m.Classes < 1 || m.Dim < 1:
		return fmt.Errorf("classify: malformed model: %d classes, %d features", m.Classes, m.Dim)
	case m.W == nil || m.W.IsEmpty():
		return errors.New("classify: malformed model: W is empty")
	case len(m.B) != m.Classes:
		return fmt.Errorf("classify: malformed model: len(B) = %d but there are %d classes", len(m.B), m.Classes)
	}
	if r, c := m.W.Dims(); r != m.Classes || c != m.Dim {
		return fmt.Errorf("classify: malformed model: W is %d×%d, want %d×%d", r, c, m.Classes, m.Dim)
	}
	return nil
}

// input checks the model and X and returns the raw matrix of X.
func (m *Softmax) input(X *mat.Dense) (blas64.General, error) {
	if err := m.check(); err != nil {
		return blas64.General{}, err
	}
	xr, err := checkFeatures(X)
	if err != nil {
		return xr, err
	}
	if xr.Cols != m.Dim {
		return xr, fmt.Errorf("classify: shape mismatch: X has %d columns but the model has %d features", xr.Cols, m.Dim)
	}
	return xr, nil
}

// logits calls fn(i, z) with the logits z = W x_i + b of every row of the
// checked features xr. z is reused between calls.
func (m *Softmax) logits(xr blas64.General, fn func(i int, z []float64)) {
	wr := m.W.RawMatrix()
	c, d := m.Classes, m.Dim
	z := make([]float64, c)
	for i := range xr.Rows {
		xi := xr.Data[i*xr.Stride : i*xr.Stride+d]
		for k := range c {
			z[k] = m.B[k] + floats.Dot(xi, wr.Data[k*wr.Stride:k*wr.Stride+d])
		}
		fn(i, z)
	}
}

// Proba stores in dst the n×c matrix of class probabilities
// p(y = k | x_i) of the n rows of X. An empty dst is resized; otherwise it
// must be n×c. dst must not share memory with X.
func (m *Softmax) Proba(dst, X *mat.Dense) error {
	xr, err := m.input(X)
	if err != nil {
		return err
	}
	if dst == nil {
		return errors.New("classify: nil destination")
	}
	if dst.IsEmpty() {
		dst.ReuseAs(xr.Rows, m.Classes)
	} else if r, c := dst.Dims(); r != xr.Rows || c != m.Classes {
		return fmt.Errorf("classify: shape mismatch: dst is %d×%d, want %d×%d", r, c, xr.Rows, m.Classes)
	}
	dr := dst.RawMatrix()
	m.logits(xr, func(i int, z []float64) {
		p := dr.Data[i*dr.Stride : i*dr.Stride+len(z)]
		zmax := floats.Max(z)
		var se float64
		for k, v := range z {
			p[k] = math.Exp(v - zmax)
			se += p[k]
		}
		floats.Scale(1/se, p)
	})
	return nil
}

// Predict returns the most probable class of every row of X, the lowest
// index among ties.
func (m *Softmax) Predict(X *mat.Dense) ([]int, error) {
	xr, err := m.input(X)
	if err != nil {
		return nil, err
	}
	pred := make([]int, xr.Rows)
	m.logits(xr, func(i int, z []float64) {
		best := 0
		for k, v := range z {
			if v > z[best] {
				best = k
			}
		}
		pred[i] = best
	})
	return pred, nil
}

// Accuracy returns the fraction of indices i with pred[i] == truth[i]. The
// slices must have the same, non-zero, length.
func Accuracy(pred, truth []int) (float64, error) {
	if len(pred) != len(truth) {
		return 0, fmt.Errorf("classify: %d predictions but %d true labels", len(pred), len(truth))
	}
	if len(pred) == 0 {
		return 0, errors.New("classify: no predictions")
	}
	var hit int
	for i, p := range pred {
		if p == truth[i] {
			hit++
		}
	}
	return float64(hit) / float64(len(pred)), nil
}
