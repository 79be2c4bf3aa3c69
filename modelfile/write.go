package modelfile

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/mlp"
	"github.com/dadil/dadil/npy"
)

// classifiers returns the model's classifiers by their member prefixes:
// "r", then "e0", "e1", ….
func classifiers(m *dictionary.Model) ([]string, []classify.Classifier) {
	return append([]string{"r"}, eNames(len(m.E))...), append([]classify.Classifier{m.R}, m.E...)
}

// kindOf returns the kind of the classifier c, and for a network the
// widths of its hidden layers.
func kindOf(c classify.Classifier) (string, []int, error) {
	switch c := c.(type) {
	case *classify.Softmax:
		return kindSoftmax, nil, nil
	case *classify.Neighbours:
		return kindKNN, nil, nil
	case *mlp.Net:
		if c == nil || c.Network == nil {
			return "", nil, errors.New("an mlp.Net without a network")
		}
		hidden := []int{}
		for _, l := range c.Layers[:max(len(c.Layers)-1, 0)] {
			hidden = append(hidden, len(l.B))
		}
		return kindMLP, hidden, nil
	}
	return "", nil, fmt.Errorf("a %T classifier cannot be saved: model files hold softmax regressions (*classify.Softmax), k nearest neighbours (*classify.Neighbours) and networks (*mlp.Net)", c)
}

// kinds returns the kind of the model's classifiers, which must all be of
// one kind, and for networks the widths of the hidden layers of each, by
// prefix.
func kinds(m *dictionary.Model) (string, map[string][]int, error) {
	var kind string
	var hidden map[string][]int
	prefixes, cs := classifiers(m)
	for i, c := range cs {
		k, h, err := kindOf(c)
		if err != nil {
			return "", nil, fmt.Errorf("classifier %s: %w", prefixes[i], err)
		}
		if i == 0 {
			kind = k
		} else if k != kind {
			return "", nil, fmt.Errorf("classifier %s is a %s classifier and r a %s one: a model file holds classifiers of one kind", prefixes[i], k, kind)
		}
		if h != nil {
			if hidden == nil {
				hidden = map[string][]int{}
			}
			hidden[prefixes[i]] = h
		}
	}
	return kind, hidden, nil
}

func write(w io.Writer, f *File) error {
	d := f.Model.Dict
	_, K := d.Alpha.Dims()
	_, dim := d.Atoms[0].X.Dims()
	kind, hidden, err := kinds(f.Model)
	if err != nil {
		return err
	}
	man := manifest{
		Format: Format, Version: Version,
		Labels: f.Labels, Features: dim, Atoms: K, Classes: d.Classes,
		Domains: d.Names, Target: f.Model.Target, Names: f.Features,
		Scaling: f.Scaler.Kind, Hidden: hidden,
		Settings: d.Settings,
		Created:  time.Now().UTC().Format(time.RFC3339),
	}
	// A softmax model's manifest is as it was before other kinds existed.
	if kind != kindSoftmax {
		man.Classifier = kind
	}
	if f.Imputer != nil {
		man.RawFeatures = f.Imputer.Features
	}
	zw := zip.NewWriter(w)
	mj, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return err
	}
	if err := addMember(zw, "manifest.json", mj); err != nil {
		return err
	}
	aw := &archiveWriter{zw: zw}
	aw.matrix("alpha", d.Alpha)
	for k, a := range d.Atoms {
		aw.matrix(fmt.Sprintf("atom%d_X", k), a.X)
		aw.matrix(fmt.Sprintf("atom%d_logits", k), a.Logits)
	}
	prefixes, cs := classifiers(f.Model)
	for i, c := range cs {
		if err := aw.classifier(prefixes[i], c); err != nil {
			return err
		}
	}
	aw.vector("scaler_offset", f.Scaler.Offset)
	aw.vector("scaler_scale", f.Scaler.Scale)
	if im := f.Imputer; im != nil {
		keep := make([]float64, len(im.Keep))
		for k, j := range im.Keep {
			keep[k] = float64(j)
		}
		aw.vector("imputer_keep", keep)
		aw.vector("imputer_fill", im.Fill)
	}
	if aw.err != nil {
		return aw.err
	}
	return zw.Close()
}

// archiveWriter writes .npy members; its first error sticks and makes the
// later writes do nothing.
type archiveWriter struct {
	zw  *zip.Writer
	err error
}

// array writes the member name.npy.
func (a *archiveWriter) array(name string, shape []int, data []float64) {
	if a.err != nil {
		return
	}
	var b bytes.Buffer
	if a.err = npy.Write(&b, shape, data); a.err == nil {
		a.err = addMember(a.zw, name+".npy", b.Bytes())
	}
	if a.err != nil {
		a.err = fmt.Errorf("%s.npy: %w", name, a.err)
	}
}

func (a *archiveWriter) vector(name string, x []float64) { a.array(name, []int{len(x)}, x) }

func (a *archiveWriter) matrix(name string, m *mat.Dense) {
	if m == nil || m.IsEmpty() {
		if a.err == nil {
			a.err = fmt.Errorf("%s.npy: an empty matrix", name)
		}
		return
	}
	r, c := m.Dims()
	a.array(name, []int{r, c}, mat.DenseCopyOf(m).RawMatrix().Data)
}

// classifier writes the members of the classifier c under prefix p.
func (a *archiveWriter) classifier(p string, c classify.Classifier) error {
	incomplete := fmt.Errorf("classifier %s: an incomplete %T", p, c)
	switch c := c.(type) {
	case *classify.Softmax:
		if c == nil || c.W == nil {
			return incomplete
		}
		a.matrix(p+"_W", c.W)
		a.vector(p+"_b", c.B)
	case *classify.Neighbours:
		if c == nil || c.X == nil || c.T == nil {
			return incomplete
		}
		a.matrix(p+"_X", c.X)
		a.matrix(p+"_T", c.T)
		if c.W != nil {
			a.vector(p+"_w", c.W)
		}
		a.array(p+"_k", []int{}, []float64{float64(c.K)})
	case *mlp.Net:
		a.vector(p+"_mean", c.Mean)
		a.vector(p+"_scale", c.Scale)
		for l, layer := range c.Layers {
			if layer.W == nil {
				return incomplete
			}
			a.matrix(fmt.Sprintf("%s_W%d", p, l+1), layer.W)
			a.vector(fmt.Sprintf("%s_b%d", p, l+1), layer.B)
		}
	}
	return nil
}

func addMember(zw *zip.Writer, name string, data []byte) error {
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
