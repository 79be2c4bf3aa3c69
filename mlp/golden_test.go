package mlp

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/golden"
	"github.com/dadil/dadil/npy"
)

// TestFromArraysGolden pins the network fromArrays builds from the members
// of a network file, and its error for each kind of bad member set, to
// testdata/fromarrays.golden.
func TestFromArraysGolden(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	arr := func(shape ...int) *npy.Array {
		n := 1
		for _, s := range shape {
			n *= s
		}
		a := &npy.Array{Shape: shape, Data: make([]float64, n)}
		for i := range a.Data {
			a.Data[i] = rng.NormFloat64()
		}
		return a
	}
	good := func() map[string]*npy.Array {
		return map[string]*npy.Array{
			"mlp_version": {Shape: []int{1}, Data: []float64{FormatVersion}},
			"mean":        arr(3), "scale": arr(3),
			"W1": arr(4, 3), "b1": arr(4), "W2": arr(2, 4), "b2": arr(2),
		}
	}
	var b strings.Builder
	for _, tc := range []struct {
		name   string
		change func(m map[string]*npy.Array)
	}{
		{"good", func(m map[string]*npy.Array) {}},
		{"no version", func(m map[string]*npy.Array) { delete(m, "mlp_version") }},
		{"two versions", func(m map[string]*npy.Array) { m["mlp_version"] = &npy.Array{Shape: []int{2}, Data: []float64{1, 1}} }},
		{"fractional version", func(m map[string]*npy.Array) { m["mlp_version"].Data[0] = 1.5 }},
		{"newer", func(m map[string]*npy.Array) { m["mlp_version"].Data[0] = FormatVersion + 1 }},
		{"older", func(m map[string]*npy.Array) { m["mlp_version"].Data[0] = FormatVersion - 1 }},
		{"no mean", func(m map[string]*npy.Array) { delete(m, "mean") }},
		{"matrix mean", func(m map[string]*npy.Array) { m["mean"] = arr(2, 3) }},
		{"no scale", func(m map[string]*npy.Array) { delete(m, "scale") }},
		{"W0", func(m map[string]*npy.Array) { m["W0"] = arr(2) }},
		{"Wx", func(m map[string]*npy.Array) { m["Wx"] = arr(2) }},
		{"no layers", func(m map[string]*npy.Array) { delete(m, "W1"); delete(m, "W2") }},
		{"gap", func(m map[string]*npy.Array) { m["W3"] = m["W2"]; m["b3"] = m["b2"]; delete(m, "W2") }},
		{"vector W", func(m map[string]*npy.Array) { m["W2"] = arr(8) }},
		{"cube W", func(m map[string]*npy.Array) { m["W1"] = arr(4, 3, 1) }},
		{"no bias", func(m map[string]*npy.Array) { delete(m, "b2") }},
		{"matrix bias", func(m map[string]*npy.Array) { m["b1"] = arr(2, 2) }},
		{"extra", func(m map[string]*npy.Array) { m["junk"] = arr(1) }},
		{"extra bias", func(m map[string]*npy.Array) { m["b7"] = arr(1) }},
		{"chain", func(m map[string]*npy.Array) { m["W2"] = arr(2, 5) }},
	} {
		m := good()
		tc.change(m)
		n, err := fromArrays(m)
		fmt.Fprintf(&b, "%s: %v\n", tc.name, err)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "mean %v scale %v\n", n.Mean, n.Scale)
		for l, L := range n.Layers {
			fmt.Fprintf(&b, "layer %d: W %v b %v\n", l+1, L.W.RawMatrix().Data, L.B)
		}
	}
	golden.Check(t, "fromarrays.golden", b.String())
}
