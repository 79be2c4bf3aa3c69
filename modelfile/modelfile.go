// Package modelfile saves and loads fitted DaDiL models.
//
// # Format
//
// A model file is a ZIP archive that numpy.load can open as an .npz file.
// Its member "manifest.json" describes the model:
//
//	{
//	  "format": "dadil-model", "version": 1,
//	  "labels": [1, 2, …],        class index → the user's label value
//	  "features": d, "atoms": K, "classes": c,
//	  "domains": ["src1", …, "target"], "target": N−1,
//	  "feature_names": ["f1", …],  the training files' column names (CSV
//	                              only; absent otherwise)
//	  "scaling": "minmax",        none | minmax | standard
//	  "settings": {…},            dictionary.Settings of the fit
//	  "created": "2026-11-21T…Z", "dadil": "…"  (informative)
//	}
//
// and every array is a little-endian float64 .npy member:
//
//	alpha.npy                N×K barycentric coordinates, one row per domain
//	atom<k>_X.npy            n×d support of atom k (k = 0 … K−1)
//	atom<k>_logits.npy       n×c label logits of atom k (labels = softmax)
//	r_W.npy, r_b.npy         DaDiL-R classifier: c×d weights, c biases
//	e<k>_W.npy, e<k>_b.npy   DaDiL-E classifier of atom k
//	scaler_offset.npy        d offsets and d scales of the feature scaling
//	scaler_scale.npy         x' = (x − offset)·scale
//
// Settings without the key "SharedAtomBatch" were written before that
// setting existed, by a fit that shared one atom batch among all domains,
// and read as SharedAtomBatch = true. Settings without "HardLabels" were
// written by fits whose classifiers trained on soft labels, and read as
// HardLabels = false, its zero value.
//
// Load checks the format name, the version, every member's presence and
// shape, and that every number is finite; a file written by a newer dadil
// (a higher version) is refused with a message saying so. The shapes are
// checked first, from the members' .npy headers, before the data of any
// member is decompressed: the manifest's sizes fix every shape but the
// number of points of each atom, which atom<k>_X.npy declares and which
// may not exceed the support size of the settings ("Samples"), and each
// member must declare exactly its directory entry's size (see
// npy.ReadZipMember). A member that declares more than the manifest
// allows is refused, naming it, at the cost of reading its header.
//
// Errors returned by this package are prefixed with "modelfile: ".
package modelfile

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/npy"
)

// Format is the format name stored in every model file, and Version the
// format version this package writes and reads.
const (
	Format  = "dadil-model"
	Version = 1
)

// File is a fitted model with what is needed to apply it to raw data.
type File struct {
	// Model holds the dictionary, the target's coordinates and the
	// DaDiL-R and DaDiL-E classifiers.
	Model *dictionary.Model
	// Scaler maps raw features to the space the model was fitted in.
	Scaler *dataset.Scaler
	// Labels maps class indices to the user's label values.
	Labels []int
	// Features names the feature columns the model was fitted on, when
	// the training files named them (CSV headers); nil otherwise.
	Features []string
	// Path is the file Load read the model from ("" otherwise); messages
	// name the model by it.
	Path string `json:"-"`
}

type manifest struct {
	Format   string              `json:"format"`
	Version  int                 `json:"version"`
	Labels   []int               `json:"labels"`
	Features int                 `json:"features"`
	Atoms    int                 `json:"atoms"`
	Classes  int                 `json:"classes"`
	Domains  []string            `json:"domains"`
	Target   int                 `json:"target"`
	Names    []string            `json:"feature_names,omitempty"`
	Scaling  dataset.Scaling     `json:"scaling"`
	Settings dictionary.Settings `json:"settings"`
	Created  string              `json:"created,omitempty"`
}

// Save writes f to path atomically: the file appears complete or not at
// all.
func Save(path string, f *File) error {
	if err := check(f); err != nil {
		return fmt.Errorf("modelfile: %s: %w", path, err)
	}
	var buf bytes.Buffer
	if err := write(&buf, f); err != nil {
		return fmt.Errorf("modelfile: %s: %w", path, err)
	}
	// What Load would refuse is not written.
	if _, err := Read(buf.Bytes()); err != nil {
		return fmt.Errorf("modelfile: %s: the model would not load back: %w", path, err)
	}
	if err := atomicfile.Write(path, buf.Bytes()); err != nil {
		return fmt.Errorf("modelfile: %w", err)
	}
	return nil
}

// check verifies that f is complete before it is written; Save then reads
// the encoded file back with Read, which checks the rest (finite numbers,
// shapes, labels, coordinates).
func check(f *File) error {
	switch {
	case f == nil || f.Model == nil || f.Model.Dict == nil:
		return errors.New("no model")
	case f.Scaler == nil:
		return errors.New("no feature scaling")
	case f.Model.R == nil || len(f.Model.E) != len(f.Model.Dict.Atoms):
		return errors.New("model has no classifiers")
	case len(f.Model.Dict.Atoms) == 0 || f.Model.Dict.Alpha == nil:
		return errors.New("the dictionary has no atoms or no coordinates")
	case len(f.Labels) != f.Model.Dict.Classes:
		return fmt.Errorf("%d label values for %d classes", len(f.Labels), f.Model.Dict.Classes)
	}
	for k, e := range f.Model.E {
		if e == nil {
			return fmt.Errorf("model has no classifier for atom %d", k)
		}
	}
	for k, a := range f.Model.Dict.Atoms {
		if a.X == nil || a.Logits == nil {
			return fmt.Errorf("atom %d has no points or no label logits", k)
		}
	}
	// The file stores α once, in the dictionary; the model's α_T is its
	// row Target.
	d := f.Model.Dict
	if N, _ := d.Alpha.Dims(); f.Model.Target < 0 || f.Model.Target >= N {
		return fmt.Errorf("target %d outside the %d domains", f.Model.Target, N)
	}
	if want := mat.Row(nil, f.Model.Target, d.Alpha); !slices.Equal(f.Model.Alpha, want) {
		return fmt.Errorf("the model's α_T %v is not row %d of the dictionary's α, %v", f.Model.Alpha, f.Model.Target, want)
	}
	return nil
}

func write(w io.Writer, f *File) error {
	d := f.Model.Dict
	_, K := d.Alpha.Dims()
	_, dim := d.Atoms[0].X.Dims()
	man := manifest{
		Format: Format, Version: Version,
		Labels: f.Labels, Features: dim, Atoms: K, Classes: d.Classes,
		Domains: d.Names, Target: f.Model.Target, Names: f.Features,
		Scaling:  f.Scaler.Kind,
		Settings: d.Settings,
		Created:  time.Now().UTC().Format(time.RFC3339),
	}
	zw := zip.NewWriter(w)
	mj, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return err
	}
	if err := addMember(zw, "manifest.json", mj); err != nil {
		return err
	}
	put := func(name string, shape []int, data []float64) error {
		var b bytes.Buffer
		if err := npy.Write(&b, shape, data); err != nil {
			return err
		}
		return addMember(zw, name+".npy", b.Bytes())
	}
	putM := func(name string, m *mat.Dense) error {
		r, c := m.Dims()
		return put(name, []int{r, c}, mat.DenseCopyOf(m).RawMatrix().Data)
	}
	if err := putM("alpha", d.Alpha); err != nil {
		return err
	}
	for k, a := range d.Atoms {
		if err := putM(fmt.Sprintf("atom%d_X", k), a.X); err != nil {
			return err
		}
		if err := putM(fmt.Sprintf("atom%d_logits", k), a.Logits); err != nil {
			return err
		}
	}
	putSoftmax := func(prefix string, c classify.Classifier) error {
		s, ok := c.(*classify.Softmax)
		if !ok {
			return fmt.Errorf("a %T classifier cannot be saved: model files hold softmax regressions", c)
		}
		if err := putM(prefix+"_W", s.W); err != nil {
			return err
		}
		return put(prefix+"_b", []int{len(s.B)}, s.B)
	}
	if err := putSoftmax("r", f.Model.R); err != nil {
		return err
	}
	for k, e := range f.Model.E {
		if err := putSoftmax(fmt.Sprintf("e%d", k), e); err != nil {
			return err
		}
	}
	if err := put("scaler_offset", []int{len(f.Scaler.Offset)}, f.Scaler.Offset); err != nil {
		return err
	}
	if err := put("scaler_scale", []int{len(f.Scaler.Scale)}, f.Scaler.Scale); err != nil {
		return err
	}
	return zw.Close()
}

func addMember(zw *zip.Writer, name string, data []byte) error {
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// Load reads a model file written by Save.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	f, err := Read(b)
	if err != nil {
		return nil, fmt.Errorf("modelfile: %s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// ReadData reads the file at path (dataset.Read, labels optional) as data
// to classify with the model: it checks that the file has the model's
// number of features and, when both name their columns, the same names in
// the same order; it scales the features as the training domains were, and
// maps the file's labels, if any, to class indices (−1 for label values
// the model does not know, which it also returns, sorted).
func (f *File) ReadData(path string, opt *dataset.ReadOptions) (*dataset.Domain, []int, error) {
	var o dataset.ReadOptions
	if opt != nil {
		o = *opt
	}
	o.LabelsOptional = true
	raw, err := dataset.Read(path, &o)
	if err != nil {
		return nil, nil, err
	}
	if _, dim := raw.X.Dims(); dim != len(f.Scaler.Offset) {
		return nil, nil, fmt.Errorf("modelfile: %s has %d features but the model %s was fitted on %d", path, dim, f.Path, len(f.Scaler.Offset))
	}
	if j := dataset.FeatureMismatch(f.Features, raw.Features); j >= 0 {
		return nil, nil, fmt.Errorf("modelfile: %s: column %d is %q, but the model %s was fitted with %q there (features are matched by position: put the columns in the same order)", path, j+1, raw.Features[j], f.Path, f.Features[j])
	}
	scaled, err := f.Scaler.TransformFile(raw)
	if err != nil {
		return nil, nil, err
	}
	d := &dataset.Domain{Name: path, X: scaled.X}
	if raw.Labels == nil {
		return d, nil, nil
	}
	var unknown []int
	d.Y = make([]int, len(raw.Labels))
	for i, y := range raw.Labels {
		if d.Y[i] = slices.Index(f.Labels, y); d.Y[i] < 0 && !slices.Contains(unknown, y) {
			unknown = append(unknown, y)
		}
	}
	slices.Sort(unknown)
	return d, unknown, nil
}

// Read decodes a model file held in memory. Its errors carry no prefix;
// Load adds the package and the file name.
func Read(b []byte) (*File, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("not a dadil model file, or a truncated one (not a readable ZIP archive: %v)", err)
	}
	members := map[string]*zip.File{}
	for _, m := range zr.File {
		members[m.Name] = m
	}
	mf, ok := members["manifest.json"]
	if !ok {
		return nil, errors.New("not a dadil model file (no manifest.json)")
	}
	mb, err := readMember(mf, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	// Settings written before SharedAtomBatch existed lack the key and
	// describe fits that drew one atom batch for all domains: json leaves
	// the preset value where the key is absent.
	var man manifest
	man.Settings.SharedAtomBatch = true
	if err := json.Unmarshal(mb, &man); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	if man.Format != Format {
		return nil, fmt.Errorf("not a dadil model file (format %q)", man.Format)
	}
	if man.Version != Version {
		if man.Version > Version {
			return nil, fmt.Errorf("model file version %d was written by a newer dadil; this one reads version %d", man.Version, Version)
		}
		return nil, fmt.Errorf("unknown model file version %d (this dadil reads version %d)", man.Version, Version)
	}
	K, c, d := man.Atoms, man.Classes, man.Features
	N := len(man.Domains)
	switch {
	case K < 1 || c < 1 || d < 1 || N < 1:
		return nil, fmt.Errorf("manifest: bad sizes (atoms %d, classes %d, features %d, domains %d)", K, c, d, N)
	case man.Target < 0 || man.Target >= N:
		return nil, fmt.Errorf("manifest: target %d outside the %d domains", man.Target, N)
	case len(man.Labels) != c:
		return nil, fmt.Errorf("manifest: %d label values for %d classes", len(man.Labels), c)
	case man.Names != nil && len(man.Names) != d:
		return nil, fmt.Errorf("manifest: %d feature names for %d features", len(man.Names), d)

	case K > 1<<16 || c > 1<<20 || d > 1<<26:
		return nil, fmt.Errorf("manifest: implausible sizes (atoms %d, classes %d, features %d)", K, c, d)
	}
	seen := make(map[int]bool, c)
	for _, l := range man.Labels {
		if seen[l] {
			return nil, fmt.Errorf("manifest: label value %d appears twice", l)
		}
		seen[l] = true
	}

	// Every member's header is read and checked against the manifest
	// before the data of any member is decompressed: a member that
	// declares more than the manifest allows costs its header only.
	shapes, err := checkHeaders(members, &man)
	if err != nil {
		return nil, err
	}
	// array reads member name.npy, whose header was checked, and checks
	// that its numbers are finite.
	array := func(name string) ([]float64, error) {
		a, err := npy.ReadZipMember(members[name+".npy"])
		if err != nil {
			return nil, fmt.Errorf("%s.npy: %w", name, err)
		}
		if !slices.Equal(a.Shape, shapes[name]) {
			return nil, fmt.Errorf("%s.npy has shape %v, its header said %v", name, a.Shape, shapes[name])
		}
		for i, v := range a.Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s.npy: entry %d is %g", name, i, v)
			}
		}
		return a.Data, nil
	}
	matrix := func(name string) (*mat.Dense, error) {
		x, err := array(name)
		if err != nil {
			return nil, err
		}
		return mat.NewDense(shapes[name][0], shapes[name][1], x), nil
	}
	vector := array
	alpha, err := matrix("alpha")
	if err != nil {
		return nil, err
	}
	for l := 0; l < N; l++ {
		row := alpha.RawRowView(l)
		if ok, k, sum := linalg.OnSimplex(row, linalg.SimplexTol); k >= 0 {
			return nil, fmt.Errorf("alpha.npy: row %d has a negative coordinate %g", l, row[k])
		} else if !ok {
			return nil, fmt.Errorf("alpha.npy: row %d sums to %.17g, not 1", l, sum)
		}
	}
	dict := &dictionary.Dictionary{Alpha: alpha, Names: man.Domains, Classes: c, Settings: man.Settings}
	for k := 0; k < K; k++ {
		X, err := matrix(fmt.Sprintf("atom%d_X", k))
		if err != nil {
			return nil, err
		}
		Z, err := matrix(fmt.Sprintf("atom%d_logits", k))
		if err != nil {
			return nil, err
		}
		dict.Atoms = append(dict.Atoms, dictionary.Atom{X: X, Logits: Z})
	}
	softmax := func(prefix string) (*classify.Softmax, error) {
		W, err := matrix(prefix + "_W")
		if err != nil {
			return nil, err
		}
		b, err := vector(prefix + "_b")
		if err != nil {
			return nil, err
		}
		return &classify.Softmax{W: W, B: b, Classes: c, Dim: d}, nil
	}
	m := &dictionary.Model{Dict: dict, Target: man.Target, Alpha: mat.Row(nil, man.Target, alpha)}
	if m.R, err = softmax("r"); err != nil {
		return nil, err
	}
	for k := 0; k < K; k++ {
		e, err := softmax(fmt.Sprintf("e%d", k))
		if err != nil {
			return nil, err
		}
		m.E = append(m.E, e)
	}
	off, err := vector("scaler_offset")
	if err != nil {
		return nil, err
	}
	sc, err := vector("scaler_scale")
	if err != nil {
		return nil, err
	}
	return &File{Model: m, Scaler: &dataset.Scaler{Kind: man.Scaling, Offset: off, Scale: sc}, Labels: man.Labels, Features: man.Names}, nil
}

// checkHeaders reads the header of every array member of a model file and
// checks its shape against the manifest: the sizes of the manifest
// (domains N, atoms K, classes c, features d) fix every shape but the
// number of points n_k of atom k, which atom<k>_X.npy declares and which
// must be at least 1 and, when the settings record the support size, at
// most Settings.Samples. It returns the shape of every member, by name
// without ".npy".
func checkHeaders(members map[string]*zip.File, man *manifest) (map[string][]int, error) {
	K, c, d, N := man.Atoms, man.Classes, man.Features, len(man.Domains)
	shapes := make(map[string][]int)
	// check reads the header of name.npy, which must have the shape
	// rows×cols, or (rows,) if cols == 0; rows < 0 accepts any positive
	// number of rows.
	check := func(name string, rows, cols int) error {
		m, ok := members[name+".npy"]
		if !ok {
			return fmt.Errorf("member %s.npy is missing", name)
		}
		h, err := npy.ReadZipHeader(m)
		if err != nil {
			return fmt.Errorf("%s.npy: %w", name, err)
		}
		s := h.Shape
		switch {
		case cols == 0 && (len(s) != 1 || s[0] != rows):
			return fmt.Errorf("%s.npy has shape %v, want (%d,)", name, s, rows)
		case cols > 0 && (len(s) != 2 || s[1] != cols || s[0] < 1 || (rows >= 0 && s[0] != rows)):
			want := fmt.Sprintf("(%d, %d)", rows, cols)
			if rows < 0 {
				want = fmt.Sprintf("(n, %d)", cols)
			}
			return fmt.Errorf("%s.npy has shape %v, want %s", name, s, want)
		}
		shapes[name] = s
		return nil
	}
	if err := check("alpha", N, K); err != nil {
		return nil, err
	}
	for k := range K {
		x := fmt.Sprintf("atom%d_X", k)
		if err := check(x, -1, d); err != nil {
			return nil, err
		}
		n := shapes[x][0]
		if limit := man.Settings.Samples; limit > 0 && n > limit {
			return nil, fmt.Errorf("%s.npy declares %d points, more than the support size %d of the manifest's settings (Samples)", x, n, limit)
		}
		if err := check(fmt.Sprintf("atom%d_logits", k), n, c); err != nil {
			return nil, err
		}
	}
	for _, p := range append([]string{"r"}, eNames(K)...) {
		if err := check(p+"_W", c, d); err != nil {
			return nil, err
		}
		if err := check(p+"_b", c, 0); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{"scaler_offset", "scaler_scale"} {
		if err := check(name, d, 0); err != nil {
			return nil, err
		}
	}
	return shapes, nil
}

// eNames returns the prefixes of the DaDiL-E classifiers of K atoms:
// "e0", "e1", …
func eNames(K int) []string {
	names := make([]string, K)
	for k := range names {
		names[k] = fmt.Sprintf("e%d", k)
	}
	return names
}

// readMember reads a ZIP member, refusing more than limit bytes.
func readMember(m *zip.File, limit int64) ([]byte, error) {
	rc, err := m.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("member larger than %d bytes", limit)
	}
	return b, nil
}
