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

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
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

// kinds returns the kind of the classifiers cs, of prefixes prefixes,
// which must all be of one kind, and for networks the widths of the hidden
// layers of each, by prefix.
func kinds(prefixes []string, cs []classify.Classifier) (string, map[string][]int, error) {
	var kind string
	var hidden map[string][]int
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
	man, err := newManifest(f)
	if err != nil {
		return err
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
	if f.GMM != nil {
		err = aw.gmmModel(f.GMM)
	} else {
		err = aw.dadilModel(f.Model)
	}
	if err != nil {
		return err
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

// newManifest returns the manifest of f, a DaDiL model written as version
// 1, as before other models existed, or a GMM-DaDiL model.
func newManifest(f *File) (*manifest, error) {
	man := &manifest{
		Format: Format, Version: versionDaDiL, Labels: f.Labels, Names: f.Features, Scaling: f.Scaler.Kind,
		Created: time.Now().UTC().Format(time.RFC3339),
	}
	if f.Imputer != nil {
		man.RawFeatures = f.Imputer.Features
	}
	var kind string
	var settings any
	var err error
	if g := f.GMM; g != nil {
		d := g.Dict
		man.Version, man.Model = versionGMM, modelGMM
		if len(g.E) > 0 {
			man.Version = versionGMMEnsemble
		}
		man.Atoms, man.Components, man.Features, man.Classes = len(d.Atoms), d.Atoms[0].Components(), d.Atoms[0].Dim(), d.Atoms[0].Classes()
		if g.Projection != nil {
			man.Version = versionGMMProjection
			man.Features, man.Directions = g.Projection.Dims()
		}
		man.Domains, man.Target = gmmDomains(len(d.Reconstructions)), len(d.Reconstructions)-1
		kind, man.Hidden, err = kinds(gmmClassifiers(g))
		settings = GMMSettingsOf(g)
	} else {
		d := f.Model.Dict
		_, man.Atoms = d.Alpha.Dims()
		_, man.Features = d.Atoms[0].X.Dims()
		man.Classes, man.Domains, man.Target = d.Classes, d.Names, f.Model.Target
		kind, man.Hidden, err = kinds(classifiers(f.Model))
		settings = d.Settings
	}
	if err != nil {
		return nil, err
	}
	// A softmax model's manifest is as it was before other kinds existed.
	if kind != kindSoftmax {
		man.Classifier = kind
	}
	if man.RawSettings, err = json.Marshal(settings); err != nil {
		return nil, err
	}
	return man, nil
}

// gmmDomains names the N domains of a GMM-DaDiL model, which its
// dictionary does not name: "source1" … "sourceS", then "target".
func gmmDomains(N int) []string {
	names := make([]string, N)
	for l := range N - 1 {
		names[l] = fmt.Sprintf("source%d", l+1)
	}
	names[N-1] = "target"
	return names
}

// dadilModel writes the members of a DaDiL model.
func (a *archiveWriter) dadilModel(m *dictionary.Model) error {
	a.matrix("alpha", m.Dict.Alpha)
	for k, at := range m.Dict.Atoms {
		a.matrix(fmt.Sprintf("atom%d_X", k), at.X)
		a.matrix(fmt.Sprintf("atom%d_logits", k), at.Logits)
	}
	prefixes, cs := classifiers(m)
	for i, c := range cs {
		if err := a.classifier(prefixes[i], c); err != nil {
			return err
		}
	}
	return nil
}

// gmmClassifiers returns the classifiers of a GMM-DaDiL model by their
// member prefixes: "r", then GMM-DaDiL-E's "e0", "e1", …, if it has them.
func gmmClassifiers(m *adapt.GMMDaDiL) ([]string, []classify.Classifier) {
	return append([]string{"r"}, eNames(len(m.E))...), append([]classify.Classifier{m.R}, m.E...)
}

// gmmModel writes the members of a GMM-DaDiL model: α, the atoms, the
// reconstructions and the classifiers of GMM-DaDiL-R and GMM-DaDiL-E.
func (a *archiveWriter) gmmModel(m *adapt.GMMDaDiL) error {
	a.matrix("alpha", m.Dict.Alpha)
	for k, at := range m.Dict.Atoms {
		a.mixture(fmt.Sprintf("atom%d", k), at)
	}
	for l, r := range m.Dict.Reconstructions {
		a.mixture(fmt.Sprintf("rec%d", l), r)
	}
	if p := m.Projection; p != nil {
		a.vector("projection_mean", p.Mean)
		a.matrix("projection_basis", p.Basis)
	}
	prefixes, cs := gmmClassifiers(m)
	for i, c := range cs {
		if err := a.classifier(prefixes[i], c); err != nil {
			return err
		}
	}
	return nil
}

// mixture writes the members <p>_weights, <p>_means, <p>_std and
// <p>_labels of a labeled mixture.
func (a *archiveWriter) mixture(p string, m *gmm.Mixture) {
	if m == nil || m.Labels == nil {
		if a.err == nil {
			a.err = fmt.Errorf("mixture %s: missing, or without labels", p)
		}
		return
	}
	a.vector(p+"_weights", m.Weights)
	a.matrix(p+"_means", m.Means)
	a.matrix(p+"_std", m.Std)
	a.matrix(p+"_labels", m.Labels)
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
