package modelfile

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/sysmem"
	"github.com/dadil/dadil/mlp"
	"github.com/dadil/dadil/npy"
)

// Read decodes a model file held in memory. Its errors carry no prefix;
// Load adds the package and the file name.
func Read(b []byte) (*File, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("not a dadil model file, or a truncated one (not a readable ZIP archive: %v)", err)
	}
	a := &archive{members: map[string]*zip.File{}, shapes: map[string][]int{}}
	for _, m := range zr.File {
		a.members[m.Name] = m
	}
	mf, ok := a.members["manifest.json"]
	if !ok {
		return nil, errors.New("not a dadil model file (no manifest.json)")
	}
	mb, err := readMember(mf, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	var man manifest
	if err := json.Unmarshal(mb, &man); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	if err := checkManifest(&man); err != nil {
		return nil, err
	}
	// Every member's header is read and checked against the manifest
	// before the data of any member is decompressed: a member that
	// declares more than the manifest allows costs its header only.
	headers := checkHeaders
	if man.Model == modelGMM {
		headers = gmmHeaders
	}
	if err := headers(a, &man); err != nil {
		return nil, err
	}
	if err := a.scalerHeaders(&man); err != nil {
		return nil, err
	}
	if err := a.checkDeclared(); err != nil {
		return nil, err
	}
	f := &File{Labels: man.Labels, Features: man.Names}
	if man.Model == modelGMM {
		f.GMM, err = readGMM(a, &man)
	} else {
		f.Model, err = readDaDiL(a, &man)
	}
	if err != nil {
		return nil, err
	}
	off, err := a.vector("scaler_offset")
	if err != nil {
		return nil, err
	}
	sc, err := a.vector("scaler_scale")
	if err != nil {
		return nil, err
	}
	f.Scaler = &dataset.Scaler{Kind: man.Scaling, Offset: off, Scale: sc}
	if man.RawFeatures > 0 {
		if f.Imputer, err = a.imputer(man.RawFeatures); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// readDaDiL reads the DaDiL model of a model file whose headers were
// checked.
func readDaDiL(a *archive, man *manifest) (*dictionary.Model, error) {
	K, c, N := man.Atoms, man.Classes, len(man.Domains)
	alpha, err := a.alpha(N)
	if err != nil {
		return nil, err
	}
	dict := &dictionary.Dictionary{Alpha: alpha, Names: man.Domains, Classes: c, Settings: man.Settings}
	for k := 0; k < K; k++ {
		X, err := a.matrix(fmt.Sprintf("atom%d_X", k))
		if err != nil {
			return nil, err
		}
		Z, err := a.matrix(fmt.Sprintf("atom%d_logits", k))
		if err != nil {
			return nil, err
		}
		dict.Atoms = append(dict.Atoms, dictionary.Atom{X: X, Logits: Z})
	}
	m := &dictionary.Model{Dict: dict, Target: man.Target, Alpha: mat.Row(nil, man.Target, alpha)}
	for i, p := range man.classifierPrefixes() {
		h, err := a.classifier(man, p)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			m.R = h
		} else {
			m.E = append(m.E, h)
		}
	}
	return m, nil
}

// alpha reads alpha.npy, whose N rows must lie on the simplex.
func (a *archive) alpha(N int) (*mat.Dense, error) {
	alpha, err := a.matrix("alpha")
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
	return alpha, nil
}

// classifierPrefixes returns the member prefixes of the model's
// classifiers: "r", then "e0", "e1", … (for DaDiL, and for GMM-DaDiL from
// version 3 on).
func (man *manifest) classifierPrefixes() []string {
	if man.Model == modelGMM && man.Version < versionGMMEnsemble {
		return []string{"r"}
	}
	return append([]string{"r"}, eNames(man.Atoms)...)
}

// decodeSettings decodes the manifest's settings by the model's kind.
// DaDiL settings written before SharedAtomBatch existed lack the key and
// describe fits that drew one atom batch for all domains: json leaves the
// preset value where the key is absent.
func (man *manifest) decodeSettings() error {
	if man.Model == modelGMM {
		if len(man.RawSettings) == 0 {
			return errors.New("manifest: no settings")
		}
		if err := json.Unmarshal(man.RawSettings, &man.GMM); err != nil {
			return fmt.Errorf("manifest: settings: %w", err)
		}
		if g := man.GMM; g.TargetComponents < 0 || g.SamplesPerClass < 0 {
			return fmt.Errorf("manifest: settings: negative target_components %d or samples_per_class %d", g.TargetComponents, g.SamplesPerClass)
		}
		return nil
	}
	man.Settings = dictionary.Settings{SharedAtomBatch: true}
	if len(man.RawSettings) == 0 {
		return nil
	}
	if err := json.Unmarshal(man.RawSettings, &man.Settings); err != nil {
		return fmt.Errorf("manifest.json: %w", err)
	}
	return nil
}

// checkManifest checks the manifest's format, version and sizes, and that
// they agree with one another; it sets an absent classifier to softmax.
func checkManifest(man *manifest) error {
	if err := man.checkFormat(); err != nil {
		return err
	}
	if err := man.checkModel(); err != nil {
		return err
	}
	if err := man.decodeSettings(); err != nil {
		return err
	}
	if err := man.checkSizes(); err != nil {
		return err
	}
	return man.checkClassifier()
}

// checkFormat checks the format name and that the version is one this
// package reads, 1 to Version.
func (man *manifest) checkFormat() error {
	if man.Format != Format {
		return fmt.Errorf("not a dadil model file (format %s)", clip.Quote(man.Format))
	}
	switch {
	case man.Version > Version:
		return fmt.Errorf("model file version %d was written by a newer dadil; this one reads versions 1 to %d", man.Version, Version)
	case man.Version < versionDaDiL:
		return fmt.Errorf("unknown model file version %d (this dadil reads versions 1 to %d)", man.Version, Version)
	}
	return nil
}

// checkModel checks the kind of model, setting an absent one to DaDiL,
// and what depends on it: the version it needs, its components per
// mixture, and for GMM-DaDiL a target that is the last of at least two
// domains.
func (man *manifest) checkModel() error {
	switch man.Model {
	case "", modelDaDiL:
		man.Model = modelDaDiL
		if man.Components != 0 {
			return fmt.Errorf("manifest: components %d in a DaDiL model", man.Components)
		}
	case modelGMM:
		if man.Version < versionGMM {
			return fmt.Errorf("manifest: a %s model in a version %d file (it needs version %d)", modelGMM, man.Version, versionGMM)
		}
		if man.Components < 1 || man.Components > maxComponents {
			return fmt.Errorf("manifest: %d components per mixture, want 1 to %d", man.Components, maxComponents)
		}
		if man.Target != len(man.Domains)-1 || man.Target < 1 {
			return fmt.Errorf("manifest: target %d of a %s model of %d domains, want the last of at least 2", man.Target, modelGMM, len(man.Domains))
		}
	default:
		return fmt.Errorf("manifest: unknown model %s (this dadil reads %s and %s models: the file may come from a newer dadil)", clip.Quote(man.Model), modelDaDiL, modelGMM)
	}
	switch q := man.Directions; {
	case q == 0:
	case man.Model != modelGMM || man.Version < versionGMMProjection:
		return fmt.Errorf("manifest: directions %d in a version %d %s model (only %s models of version %d have them)", q, man.Version, man.Model, modelGMM, versionGMMProjection)
	case q < 1 || q >= man.Features:
		return fmt.Errorf("manifest: %d principal directions of %d features, want 1 to %d", q, man.Features, man.Features-1)
	}
	return nil
}

// inner returns the number of columns of the model's mixtures and
// classifiers: its principal directions when it has a projection, its
// features otherwise.
func (man *manifest) inner() int {
	if man.Directions > 0 {
		return man.Directions
	}
	return man.Features
}

// checkSizes checks the numbers of atoms, classes, features and domains,
// the target's index, that the label values and feature names match them,
// and that no label value appears twice.
func (man *manifest) checkSizes() error {
	K, c, d := man.Atoms, man.Classes, man.Features
	N := len(man.Domains)
	switch {
	case K < 1 || c < 1 || d < 1 || N < 1:
		return fmt.Errorf("manifest: bad sizes (atoms %d, classes %d, features %d, domains %d)", K, c, d, N)
	case man.Target < 0 || man.Target >= N:
		return fmt.Errorf("manifest: target %d outside the %d domains", man.Target, N)
	case len(man.Labels) != c:
		return fmt.Errorf("manifest: %d label values for %d classes", len(man.Labels), c)
	case man.Names != nil && len(man.Names) != d:
		return fmt.Errorf("manifest: %d feature names for %d features", len(man.Names), d)
	case K > maxAtoms || c > maxClasses || d > maxFeatures:
		return fmt.Errorf("manifest: implausible sizes (atoms %d, classes %d, features %d)", K, c, d)
	case man.RawFeatures != 0 && (man.RawFeatures < d || man.RawFeatures > maxFeatures):
		return fmt.Errorf("manifest: %d raw features for %d features", man.RawFeatures, d)
	}
	seen := make(map[int]bool, c)
	for _, l := range man.Labels {
		if seen[l] {
			return fmt.Errorf("manifest: label value %d appears twice", l)
		}
		seen[l] = true
	}
	return nil
}

// checkClassifier checks the kind of classifier, setting an absent one to
// softmax, and that hidden layers are given for MLP classifiers only (see
// checkHidden).
func (man *manifest) checkClassifier() error {
	switch man.Classifier {
	case "":
		man.Classifier = kindSoftmax
	case kindSoftmax, kindKNN, kindMLP:
	default:
		return fmt.Errorf("manifest: unknown classifier %s (this dadil reads %s, %s and %s models: the file may come from a newer dadil)", clip.Quote(man.Classifier), kindSoftmax, kindKNN, kindMLP)
	}
	if man.Classifier != kindMLP {
		if man.Hidden != nil {
			return fmt.Errorf("manifest: hidden_layers for %s classifiers", man.Classifier)
		}
		return nil
	}
	if man.Classes < 2 {
		return fmt.Errorf("manifest: mlp classifiers of %d class", man.Classes)
	}
	return man.checkHidden()
}

// checkHidden checks the hidden layers of MLP classifiers: one entry per
// classifier prefix, at most maxHiddenLayers layers each, of widths 1 to
// maxFeatures.
func (man *manifest) checkHidden() error {
	prefixes := man.classifierPrefixes()
	if len(man.Hidden) != len(prefixes) {
		want := "r, e0, …"
		if len(prefixes) == 1 {
			want = "r"
		}
		return fmt.Errorf("manifest: hidden_layers for %d networks, want %d (%s)", len(man.Hidden), len(prefixes), want)
	}
	for _, p := range prefixes {
		h, ok := man.Hidden[p]
		switch {
		case !ok:
			return fmt.Errorf("manifest: hidden_layers has no entry %s", clip.Quote(p))
		case len(h) > maxHiddenLayers:
			return fmt.Errorf("manifest: hidden_layers %s: %d layers, more than %d", clip.Quote(p), len(h), maxHiddenLayers)
		}
		for _, w := range h {
			if w < 1 || w > maxFeatures {
				return fmt.Errorf("manifest: hidden_layers %s: width %d outside [1, %d]", clip.Quote(p), w, maxFeatures)
			}
		}
	}
	return nil
}

// archive holds the members of a model file, by name, and the shapes
// their headers declare, by name without ".npy", once checked.
type archive struct {
	members map[string]*zip.File
	shapes  map[string][]int
}

// header reads the header of name.npy, which must have the shape want,
// where a negative length accepts any positive one, and records it.
func (a *archive) header(name string, want ...int) error {
	m, ok := a.members[name+".npy"]
	if !ok {
		return fmt.Errorf("member %s.npy is missing", name)
	}
	h, err := npy.ReadZipHeader(m)
	if err != nil {
		return fmt.Errorf("%s.npy: %w", name, err)
	}
	s := h.Shape
	ok = len(s) == len(want)
	for i := 0; ok && i < len(s); i++ {
		ok = s[i] == want[i] || (want[i] < 0 && s[i] >= 1)
	}
	if !ok {
		return fmt.Errorf("%s.npy has shape %v, want %s", name, s, formatShape(want))
	}
	a.shapes[name] = s
	return nil
}

// formatShape formats a shape as numpy does, with n for a negative
// length: (n, 3), (3,), ().
func formatShape(shape []int) string {
	var dims []string
	for _, n := range shape {
		if n < 0 {
			dims = append(dims, "n")
		} else {
			dims = append(dims, fmt.Sprint(n))
		}
	}
	if len(dims) == 1 {
		return "(" + dims[0] + ",)"
	}
	return "(" + strings.Join(dims, ", ") + ")"
}

// array reads member name.npy, whose header was checked, and checks that
// its numbers are finite.
func (a *archive) array(name string) ([]float64, error) {
	arr, err := npy.ReadZipMember(a.members[name+".npy"])
	if err != nil {
		return nil, fmt.Errorf("%s.npy: %w", name, err)
	}
	if !slices.Equal(arr.Shape, a.shapes[name]) {
		return nil, fmt.Errorf("%s.npy has shape %v, its header said %v", name, arr.Shape, a.shapes[name])
	}
	for i, v := range arr.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s.npy: entry %d is %g", name, i, v)
		}
	}
	return arr.Data, nil
}

func (a *archive) vector(name string) ([]float64, error) { return a.array(name) }

func (a *archive) matrix(name string) (*mat.Dense, error) {
	x, err := a.array(name)
	if err != nil {
		return nil, err
	}
	return mat.NewDense(a.shapes[name][0], a.shapes[name][1], x), nil
}

// integers reads the member name.npy, whose entries must be integers in
// [lo, hi].
func (a *archive) integers(name string, lo, hi int) ([]int, error) {
	x, err := a.array(name)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(x))
	for i, v := range x {
		if v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
			return nil, fmt.Errorf("%s.npy: entry %d is %g, not an integer in [%d, %d]", name, i, v, lo, hi)
		}
		out[i] = int(v)
	}
	return out, nil
}

// classifier reads the classifier of prefix p, of the manifest's kind.
func (a *archive) classifier(man *manifest, p string) (classify.Classifier, error) {
	c, d := man.Classes, man.inner()
	switch man.Classifier {
	case kindKNN:
		X, err := a.matrix(p + "_X")
		if err != nil {
			return nil, err
		}
		T, err := a.matrix(p + "_T")
		if err != nil {
			return nil, err
		}
		n, _ := X.Dims()
		h := &classify.Neighbours{X: X, T: T}
		if _, ok := a.shapes[p+"_w"]; ok {
			if h.W, err = a.vector(p + "_w"); err != nil {
				return nil, err
			}
			for i, w := range h.W {
				if w < 0 {
					return nil, fmt.Errorf("%s_w.npy: weight %d is negative, %g", p, i, w)
				}
			}
		}
		k, err := a.integers(p+"_k", 1, n)
		if err != nil {
			return nil, err
		}
		h.K = k[0]
		return h, nil
	case kindMLP:
		net := &mlp.Network{}
		var err error
		if net.Mean, err = a.vector(p + "_mean"); err != nil {
			return nil, err
		}
		if net.Scale, err = a.vector(p + "_scale"); err != nil {
			return nil, err
		}
		for l := range len(man.Hidden[p]) + 1 {
			W, err := a.matrix(fmt.Sprintf("%s_W%d", p, l+1))
			if err != nil {
				return nil, err
			}
			b, err := a.vector(fmt.Sprintf("%s_b%d", p, l+1))
			if err != nil {
				return nil, err
			}
			net.Layers = append(net.Layers, mlp.Layer{W: W, B: b})
		}
		return &mlp.Net{Network: net}, nil
	}
	W, err := a.matrix(p + "_W")
	if err != nil {
		return nil, err
	}
	b, err := a.vector(p + "_b")
	if err != nil {
		return nil, err
	}
	return &classify.Softmax{W: W, B: b, Classes: c, Dim: d}, nil
}

// imputer reads the imputer of raw raw features.
func (a *archive) imputer(raw int) (*dataset.Imputer, error) {
	keep, err := a.integers("imputer_keep", 0, raw-1)
	if err != nil {
		return nil, err
	}
	fill, err := a.vector("imputer_fill")
	if err != nil {
		return nil, err
	}
	im := &dataset.Imputer{Features: raw, Keep: keep, Fill: fill}
	if err := checkImputer(im, len(keep)); err != nil {
		return nil, fmt.Errorf("imputer_keep.npy: %w", err)
	}
	return im, nil
}

// checkImputer checks that im keeps d columns, in increasing order, of its
// raw features, and fills them with finite values.
func checkImputer(im *dataset.Imputer, d int) error {
	if len(im.Keep) != d || len(im.Fill) != d {
		return fmt.Errorf("the imputer keeps %d columns and has %d fill values for %d features", len(im.Keep), len(im.Fill), d)
	}
	for k, j := range im.Keep {
		switch {
		case j < 0 || j >= im.Features:
			return fmt.Errorf("the imputer keeps column %d, outside [0, %d)", j, im.Features)
		case k > 0 && j <= im.Keep[k-1]:
			return fmt.Errorf("the kept columns do not increase: %d after %d", j, im.Keep[k-1])
		case math.IsNaN(im.Fill[k]) || math.IsInf(im.Fill[k], 0):
			return fmt.Errorf("the fill value of column %d is %g", j, im.Fill[k])
		}
	}
	return nil
}

// checkHeaders reads the header of every array member of a model file and
// checks its shape against the manifest, which checkManifest checked: the
// sizes of the manifest (domains N, atoms K, classes c, features d, the
// hidden widths of networks) fix every shape but the number of points n_k
// of atom k, which atom<k>_X.npy declares and which must be at least 1
// and, when the settings record the support size, at most
// Settings.Samples, and the number of points of a k-nearest-neighbour
// classifier, at most the largest n_k or, when a transport step labels the
// target rows, the target rows it may use (labeledRows), or, when DaDiL-R
// trains beside the sources' rows, n_k and those rows (sourceRows).
func checkHeaders(a *archive, man *manifest) error {
	K, c, d, N := man.Atoms, man.Classes, man.Features, len(man.Domains)
	if err := a.header("alpha", N, K); err != nil {
		return err
	}
	largest := 0
	for k := range K {
		x := fmt.Sprintf("atom%d_X", k)
		if err := a.header(x, -1, d); err != nil {
			return err
		}
		n := a.shapes[x][0]
		if limit := man.Settings.Samples; limit > 0 && n > limit {
			return fmt.Errorf("%s.npy declares %d points, more than the support size %d of the manifest's settings (Samples)", x, n, limit)
		}
		if err := a.header(fmt.Sprintf("atom%d_logits", k), n, c); err != nil {
			return err
		}
		largest = max(largest, n)
	}
	limit := max(largest, labeledRows(man.Settings), largest+sourceRows(man.Settings, N-1))
	for _, p := range man.classifierPrefixes() {
		if err := a.classifierHeaders(man, p, limit); err != nil {
			return err
		}
	}
	return nil
}

// scalerHeaders checks the headers of the scaler's and the imputer's
// members, which every kind of model has.
func (a *archive) scalerHeaders(man *manifest) error {
	d := man.Features
	for _, name := range []string{"scaler_offset", "scaler_scale"} {
		if err := a.header(name, d); err != nil {
			return err
		}
	}
	if man.RawFeatures == 0 {
		for _, name := range []string{"imputer_keep", "imputer_fill"} {
			if _, ok := a.members[name+".npy"]; ok {
				return fmt.Errorf("member %s.npy, but the manifest has no raw_features", name)
			}
		}
		return nil
	}
	for _, name := range []string{"imputer_keep", "imputer_fill"} {
		if err := a.header(name, d); err != nil {
			return err
		}
	}
	return nil
}

// classifierHeaders checks the headers of the members of the classifier of
// prefix p, whose points, if it keeps any, may not outnumber largest.
func (a *archive) classifierHeaders(man *manifest, p string, largest int) error {
	c, d := man.Classes, man.inner()
	switch man.Classifier {
	case kindKNN:
		x := p + "_X"
		if err := a.header(x, -1, d); err != nil {
			return err
		}
		n := a.shapes[x][0]
		if n > largest {
			return fmt.Errorf("%s.npy declares %d points, more than the %d a classifier of this model trains on", x, n, largest)
		}
		if err := a.header(p+"_T", n, c); err != nil {
			return err
		}
		if _, ok := a.members[p+"_w.npy"]; ok {
			if err := a.header(p+"_w", n); err != nil {
				return err
			}
		}
		return a.header(p + "_k")
	case kindMLP:
		if err := a.header(p+"_mean", d); err != nil {
			return err
		}
		if err := a.header(p+"_scale", d); err != nil {
			return err
		}
		in := d
		for l, h := range append(slices.Clone(man.Hidden[p]), c) {
			if err := a.header(fmt.Sprintf("%s_W%d", p, l+1), h, in); err != nil {
				return err
			}
			if err := a.header(fmt.Sprintf("%s_b%d", p, l+1), h); err != nil {
				return err
			}
			in = h
		}
		return nil
	}
	if err := a.header(p+"_W", c, d); err != nil {
		return err
	}
	return a.header(p+"_b", c)
}

// memoryLimit returns the memory the arrays of a model file may take (a
// variable for the tests).
var memoryLimit = sysmem.Machine

// checkDeclared refuses a model file whose arrays, as their checked
// headers declare them, would take more memory as float64 than the
// machine has (sysmem.Machine): the manifest's sizes bound every shape
// but the atoms' support, which a consistent but hostile manifest can
// declare huge, and a member may be a small stream that inflates to all
// it declares. It runs before any member's data is decompressed.
func (a *archive) checkDeclared() error {
	var total float64
	for _, s := range a.shapes {
		n := 8.0
		for _, v := range s {
			n *= float64(v)
		}
		total += n
	}
	if lim := memoryLimit(); total > float64(lim.Bytes) {
		return fmt.Errorf("the arrays of the model file declare %s in all, more than the limit of %s", sysmem.Size(int64(min(total, math.MaxInt64))), lim)
	}
	return nil
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

// maxLabeledRows bounds the target rows a transport step labels, and the
// rows of every source DaDiL-R trains on, when the settings let it use
// every row.
const maxLabeledRows = 1 << 20

// sourceRows returns the most rows of the sources, of which there are
// at most n, that DaDiL-R's classifier trains on beside the
// reconstruction: 0 unless dictionary.TransportSources, else n times
// Settings.TransportRows (as in labeledRows).
func sourceRows(s dictionary.Settings, n int) int {
	if s.Transport != dictionary.TransportSources {
		return 0
	}
	return max(n, 0) * transportRows(s)
}

// transportRows returns Settings.TransportRows, with
// dictionary.DefaultTransportRows for 0 and maxLabeledRows for all.
func transportRows(s dictionary.Settings) int {
	switch {
	case s.TransportRows > 0:
		return s.TransportRows
	case s.TransportRows == 0:
		return dictionary.DefaultTransportRows
	}
	return maxLabeledRows
}

// labeledRows returns the most target rows the classifiers of a model
// with settings s train on: 0 without a transport step that labels them
// (dictionary.TransportLabels), else Settings.TransportRows
// (dictionary.DefaultTransportRows for 0, maxLabeledRows for all).
func labeledRows(s dictionary.Settings) int {
	if s.Transport != dictionary.TransportLabels && s.EnsembleTransport != dictionary.TransportLabels {
		return 0
	}
	return transportRows(s)
}
