package mlp

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/npy"
)

// FormatVersion is the version of the network file format Save writes and
// Load reads.
const FormatVersion = 1

// Save writes the network to path as a .npz archive (see the package
// documentation), atomically: the file appears complete or not at all.
func (n *Network) Save(path string) error {
	if err := n.validate(); err != nil {
		return err
	}
	arrays := map[string]*npy.Array{
		"mlp_version": {Shape: []int{}, Data: []float64{FormatVersion}},
		"mean":        {Shape: []int{len(n.Mean)}, Data: n.Mean},
		"scale":       {Shape: []int{len(n.Scale)}, Data: n.Scale},
	}
	for l, layer := range n.Layers {
		r, c := layer.W.Dims()
		w := make([]float64, 0, r*c)
		for i := range r {
			w = append(w, layer.W.RawRowView(i)...)
		}
		arrays[fmt.Sprintf("W%d", l+1)] = &npy.Array{Shape: []int{r, c}, Data: w}
		arrays[fmt.Sprintf("b%d", l+1)] = &npy.Array{Shape: []int{len(layer.B)}, Data: layer.B}
	}
	if err := npy.WriteNPZ(path, arrays); err != nil {
		return fmt.Errorf("mlp: %w", err)
	}
	return nil
}

// Load reads a network written by Save. Errors name the file and the member
// at fault.
func Load(path string) (*Network, error) {
	arrays, err := npy.ReadNPZ(path)
	if err != nil {
		return nil, fmt.Errorf("mlp: %w", err)
	}
	n, err := fromArrays(arrays)
	if err != nil {
		return nil, fmt.Errorf("mlp: %s: %w", path, err)
	}
	return n, nil
}

// fromArrays builds a network from the members of a network file.
func fromArrays(arrays map[string]*npy.Array) (*Network, error) {
	if err := checkVersion(arrays); err != nil {
		return nil, err
	}
	n := &Network{}
	var err error
	if n.Mean, err = vectorMember(arrays, "mean"); err != nil {
		return nil, err
	}
	if n.Scale, err = vectorMember(arrays, "scale"); err != nil {
		return nil, err
	}
	// Layers are W1, b1, W2, b2, … with no gaps.
	layers, err := layerNumbers(arrays)
	if err != nil {
		return nil, err
	}
	for i, l := range layers {
		if l != i+1 {
			return nil, fmt.Errorf("member W%d is missing", i+1)
		}
		a := arrays[fmt.Sprintf("W%d", l)]
		if len(a.Shape) != 2 {
			return nil, fmt.Errorf("member W%d has shape %v, want 2 dimensions", l, a.Shape)
		}
		W, err := a.Matrix()
		if err != nil {
			return nil, fmt.Errorf("member W%d: %w", l, err)
		}
		b, err := vectorMember(arrays, fmt.Sprintf("b%d", l))
		if err != nil {
			return nil, err
		}
		n.Layers = append(n.Layers, Layer{W: W, B: b})
	}
	if err := checkMembers(arrays, layers); err != nil {
		return nil, err
	}
	if err := n.validate(); err != nil {
		return nil, err
	}
	return n, nil
}

// checkVersion checks that the member mlp_version holds FormatVersion.
func checkVersion(arrays map[string]*npy.Array) error {
	v, ok := arrays["mlp_version"]
	if !ok {
		return fmt.Errorf("no mlp_version member: not a network file written by mlp.Save")
	}
	if len(v.Data) != 1 || v.Data[0] != math.Trunc(v.Data[0]) {
		return fmt.Errorf("mlp_version: want one integer, have %v", v.Data)
	}
	if ver := int(v.Data[0]); ver != FormatVersion {
		if ver > FormatVersion {
			return fmt.Errorf("format version %d was written by a newer dadil (this one reads version %d)", ver, FormatVersion)
		}
		return fmt.Errorf("unknown format version %d", ver)
	}
	return nil
}

// vectorMember returns the member name, a 1-D array.
func vectorMember(arrays map[string]*npy.Array, name string) ([]float64, error) {
	a, ok := arrays[name]
	if !ok {
		return nil, fmt.Errorf("member %s is missing", name)
	}
	x, err := a.Vector()
	if err != nil {
		return nil, fmt.Errorf("member %s: %w", name, err)
	}
	return x, nil
}

// layerNumbers returns the sorted numbers l of the members Wl, at least
// one; fromArrays checks that they are 1, 2, … with no gaps.
func layerNumbers(arrays map[string]*npy.Array) ([]int, error) {
	var layers []int
	for name := range arrays {
		if rest, ok := strings.CutPrefix(name, "W"); ok {
			l, err := strconv.Atoi(rest)
			if err != nil || l < 1 {
				return nil, fmt.Errorf("unexpected member %s", name)
			}
			layers = append(layers, l)
		}
	}
	sort.Ints(layers)
	if len(layers) == 0 {
		return nil, fmt.Errorf("no layers (members W1, b1, …)")
	}
	return layers, nil
}

// checkMembers checks that arrays holds no member but mlp_version, mean,
// scale and the Wl, bl of layers.
func checkMembers(arrays map[string]*npy.Array, layers []int) error {
	if len(arrays) == 3+2*len(layers) {
		return nil
	}
	known := map[string]bool{"mlp_version": true, "mean": true, "scale": true}
	for _, l := range layers {
		known[fmt.Sprintf("W%d", l)], known[fmt.Sprintf("b%d", l)] = true, true
	}
	for name := range arrays {
		if !known[name] {
			return fmt.Errorf("unexpected member %s", name)
		}
	}
	return nil
}

// validate checks that the layer shapes chain and every number is finite.
func (n *Network) validate() error {
	if err := n.shapes(); err != nil {
		return err
	}
	for _, x := range [][]float64{n.Mean, n.Scale} {
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("mlp: input standardisation holds %v", v)
			}
		}
	}
	for l, layer := range n.Layers {
		if i, j, ok := linalg.FirstNonFiniteEntry(layer.W); !ok {
			return fmt.Errorf("mlp: W%d[%d, %d] is %v", l+1, i+1, j+1, layer.W.At(i, j))
		}
		for k, v := range layer.B {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("mlp: b%d[%d] is %v", l+1, k+1, v)
			}
		}
	}
	return nil
}

// shapes checks that the standardisation and the layer shapes chain.
func (n *Network) shapes() error {
	if n == nil {
		return fmt.Errorf("mlp: no network")
	}
	if len(n.Mean) == 0 || len(n.Scale) != len(n.Mean) {
		return fmt.Errorf("mlp: input standardisation of %d means and %d scales", len(n.Mean), len(n.Scale))
	}
	if len(n.Layers) == 0 {
		return fmt.Errorf("mlp: network without layers")
	}
	in := len(n.Mean)
	for l, layer := range n.Layers {
		if layer.W == nil {
			return fmt.Errorf("mlp: layer %d has no weights", l+1)
		}
		r, c := layer.W.Dims()
		if c != in {
			return fmt.Errorf("mlp: W%d is %d×%d, want %d columns (the width of the layer below)", l+1, r, c, in)
		}
		if len(layer.B) != r {
			return fmt.Errorf("mlp: b%d has %d entries, W%d %d rows", l+1, len(layer.B), l+1, r)
		}
		in = r
	}
	if in < 2 {
		return fmt.Errorf("mlp: output layer of %d classes", in)
	}
	return nil
}
