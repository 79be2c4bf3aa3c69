package gmm

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randMixture returns a mixture of K components in d dimensions with
// random weights (uniform when uniform), means spread over [−spread,
// spread], deviations in [0.5, 1.5] and, when c > 0, random soft labels.
func randMixture(rng *rand.Rand, K, d, c int, spread float64, uniform bool) *Mixture {
	m := &Mixture{Weights: make([]float64, K), Means: mat.NewDense(K, d, nil), Std: mat.NewDense(K, d, nil)}
	var s float64
	for k := range K {
		m.Weights[k] = 1
		if !uniform {
			m.Weights[k] = 0.2 + rng.Float64()
		}
		s += m.Weights[k]
		for j := range d {
			m.Means.Set(k, j, spread*(2*rng.Float64()-1))
			m.Std.Set(k, j, 0.5+rng.Float64())
		}
	}
	for k := range K {
		m.Weights[k] /= s
	}
	if c > 0 {
		m.Labels = mat.NewDense(K, c, nil)
		for k := range K {
			var t float64
			for j := range c {
				v := rng.Float64()
				m.Labels.Set(k, j, v)
				t += v
			}
			for j := range c {
				m.Labels.Set(k, j, m.Labels.At(k, j)/t)
			}
		}
	}
	return m
}

// separated returns K components in d dimensions whose means are 20 apart
// along the first axis (and the second, alternately), unit deviations and
// equal weights.
func separated(K, d int) *Mixture {
	m := &Mixture{Weights: make([]float64, K), Means: mat.NewDense(K, d, nil), Std: mat.NewDense(K, d, nil)}
	for k := range K {
		m.Weights[k] = 1 / float64(K)
		m.Means.Set(k, 0, 20*float64(k))
		if d > 1 {
			m.Means.Set(k, 1, 20*float64(k%2))
		}
		for j := range d {
			m.Std.Set(k, j, 1+0.25*float64(j%3))
		}
	}
	return m
}

// draw returns n rows drawn from m and their components.
func draw(t testing.TB, m *Mixture, n int, seed uint64) (*mat.Dense, []int) {
	t.Helper()
	X := mat.NewDense(n, m.Dim(), nil)
	comp, err := m.Sample(X, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return X, comp
}

// wantErr fails unless err is a "gmm: " error containing every fragment.
func wantErr(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", fragments)
	}
	if !strings.HasPrefix(err.Error(), "gmm: ") {
		t.Errorf("error %q lacks the prefix gmm: ", err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not contain %q", err, f)
		}
	}
}

// near reports whether |a − b| ≤ tol·max(1, |a|, |b|).
func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// sameBits reports whether two matrices hold the same float64 bits.
func sameBits(a, b *mat.Dense) bool {
	ra, ca := a.Dims()
	rb, cb := b.Dims()
	if ra != rb || ca != cb {
		return false
	}
	for i := range ra {
		for j := range ca {
			if math.Float64bits(a.At(i, j)) != math.Float64bits(b.At(i, j)) {
				return false
			}
		}
	}
	return true
}

// matchComponents returns, for every component of a, the component of b
// with the nearest mean.
func matchComponents(a, b *Mixture) []int {
	out := make([]int, a.Components())
	for k := range out {
		best := math.Inf(1)
		for l := range b.Components() {
			var s float64
			for j := range a.Dim() {
				u := a.Means.At(k, j) - b.Means.At(l, j)
				s += u * u
			}
			if s < best {
				best, out[k] = s, l
			}
		}
	}
	return out
}
