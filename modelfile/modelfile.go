// Package modelfile saves and loads fitted DaDiL and GMM-DaDiL models.
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
//	  "raw_features": D,          raw feature columns, when the model has
//	                              a missing-value imputer (absent otherwise)
//	  "domains": ["src1", …, "target"], "target": N−1,
//	  "feature_names": ["f1", …],  the names of the model's d features, from
//	                              the training files' columns (CSV only;
//	                              absent otherwise)
//	  "scaling": "minmax",        none | minmax | standard
//	  "classifier": "knn",        softmax | knn | mlp; absent: softmax
//	  "hidden_layers": {"r": [h1, …], "e0": […], …},
//	                              mlp only: the hidden widths of every
//	                              network
//	  "settings": {…},            dictionary.Settings of the fit
//	  "created": "2026-11-21T…Z", "dadil": "…"  (informative)
//	}
//
// and every array is a little-endian float64 .npy member:
//
//	alpha.npy                N×K barycentric coordinates, one row per domain
//	atom<k>_X.npy            n×d support of atom k (k = 0 … K−1)
//	atom<k>_logits.npy       n×c label logits of atom k (labels = softmax)
//	<p>_…                    the DaDiL-R classifier (p = r) and the DaDiL-E
//	                         classifier of every atom k (p = e<k>), below
//	scaler_offset.npy        d offsets and d scales of the feature scaling
//	scaler_scale.npy         x' = (x − offset)·scale
//	imputer_keep.npy         the d raw columns kept, increasing, from 0
//	imputer_fill.npy         the value of a missing entry of each kept column
//
// The classifiers are all of the manifest's kind:
//
//	softmax  <p>_W.npy  c×d weights      <p>_b.npy  c biases
//	knn      <p>_X.npy  m×d points       <p>_T.npy  m×c targets
//	         <p>_w.npy  m point weights (absent: uniform)
//	         <p>_k.npy  the number of neighbours, a scalar in [1, m]
//	mlp      <p>_mean.npy, <p>_scale.npy  d input means and scales
//	         <p>_W<l>.npy, <p>_b<l>.npy   layer l = 1 … L: weights
//	                                      h_l×h_{l−1} and h_l biases, with
//	                                      h_0 = d, h_1 … h_{L−1} the hidden
//	                                      widths and h_L = c
//
// (a network's arrays are those of an mlp network file, see package mlp,
// but its "mlp_version", prefixed by p; the points of a k-nearest-neighbour
// classifier are in the scaled feature space, as the atoms' are). A
// softmax model's manifest omits "classifier", so that its file is exactly
// what dadil wrote before other classifiers could be saved.
//
// The imputer (dataset.Imputer) is stored when the training files missed
// values: ReadData then reads D raw columns, keeps the columns
// imputer_keep in order and fills their missing values with imputer_fill,
// before scaling. Without "raw_features" and the imputer members a model
// reads its d features as they are. The names of dropped columns are not
// stored: ReadData checks the names a CSV file gives the kept columns, at
// their raw positions, against "feature_names".
//
// DaDiL models stay at version 1 with the imputer and the knn and mlp
// classifiers, which older readers cannot misread: they ignore the new
// manifest keys, and so refuse a knn or mlp model for its missing r_W.npy;
// they ignore the imputer, and so refuse new data with missing values (which
// they read without allowing them) or with the D raw columns of a model
// that dropped some (D ≠ d), and apply the model as it is to complete data
// of d columns when the imputer keeps every column, where it changes
// nothing.
//
// # GMM-DaDiL models
//
// A GMM-DaDiL model (File.GMM, adapt.GMMDaDiL) is written as format
// version 3, whose manifest adds
//
//	"model": "gmm-dadil",
//	"components": n,            components of every atom and reconstruction
//	"domains": ["source1", …, "target"], "target": N−1,
//	"settings": {"dictionary": {…}, "em": {…}, "target_components": …,
//	             "samples_per_class": …, "seed": …,
//	             "ensemble_transport": …, "transport": …,
//	             "transport_rows": …}       (GMMSettings; absent: defaults)
//
// and whose classifier members are GMM-DaDiL-R's (prefix r) and
// GMM-DaDiL-E's, one per atom (prefix e<k>), as a DaDiL model's. Version 2,
// which dadil wrote before GMM-DaDiL-E had classifiers, and still writes
// for a model without them, has GMM-DaDiL-R's alone (an mlp's
// "hidden_layers" has the one entry "r"); its GMM-DaDiL-E weighs the
// atoms' MAP rules, as the dadil that wrote it did, and readers of version
// 2 refuse version 3 as written by a newer dadil. Its arrays are
//
//	alpha.npy                N×K barycentric coordinates, the target's last
//	atom<k>_weights.npy      n component weights of atom k
//	atom<k>_means.npy        n×d component means
//	atom<k>_std.npy          n×d component standard deviations (diagonal)
//	atom<k>_labels.npy       n×c component labels, rows on the simplex
//	rec<l>_…                 the same four members for the reconstruction
//	                         B(α_l; P) of domain l = 0 … N−1 (the target's,
//	                         rec<N−1>, classifies by the MAP rule)
//	r_…                      GMM-DaDiL-R's classifier, trained on samples of
//	                         the target's reconstruction
//	e<k>_…                   GMM-DaDiL-E's classifier of atom k, trained on
//	                         samples of the atom (version 3)
//	scaler_…, imputer_…      as for DaDiL
//
// Version 4 is version 3 for a model whose mixtures and classifiers live
// on q principal directions of the d features (adapt.GMMDaDiL.Projection):
// its manifest adds "directions": q, its mixtures' means and deviations and
// its classifiers have q columns, and it adds
//
//	projection_mean.npy      d: the mean μ of the projection
//	projection_basis.npy     q×d: the principal directions, as rows
//
// Rows to classify are scaled, then projected: z = Vᵀ(x − μ). Models without
// a projection are still written as version 3 (or 2).
//
// Every mixture must be valid (gmm.Mixture.Validate: weights on the
// simplex, finite means, positive finite deviations) with labels on the
// simplex; the manifest fixes every shape, and the points of a
// k-nearest-neighbour classifier may not exceed the rows it trains on,
// samples_per_class (default 100) per class. DaDiL models are still
// written as version 1, without "model", so that older readers load them;
// those refuse a GMM-DaDiL model as written by a newer dadil.
//
// Settings without the key "SharedAtomBatch" were written before that
// setting existed, by a fit that shared one atom batch among all domains,
// and read as SharedAtomBatch = true. Settings without "HardLabels" were
// written by fits whose classifiers trained on soft labels, and read as
// HardLabels = false, its zero value.
//
// Load checks the format name, the version, the model's kind, every
// member's presence and shape, and that every number is finite; a file
// written by a newer dadil (a higher version, or an unknown model) is
// refused with a message saying so. It also checks
// that the imputer's kept columns increase within [0, D), that the
// neighbours' count k is an integer in [1, m] and their weights are not
// negative. The shapes are checked first, from the members' .npy headers,
// before the data of any member is decompressed: the manifest's sizes fix
// every shape but the number of points of each atom, which atom<k>_X.npy
// declares and which may not exceed the support size of the settings
// ("Samples"), and the number m of points of a k-nearest-neighbour
// classifier, which <p>_X.npy declares and which may not exceed the points
// of the largest atom (DaDiL's classifiers train on an atom or on a
// reconstruction the size of the atoms' support) or, when a transport step
// labels the target rows, the target rows the settings let it use. Each member must declare
// exactly its directory entry's size (see npy.ReadZipMember). A member
// that declares more than the manifest allows is refused, naming it, at
// the cost of reading its header.
//
// Errors returned by this package are prefixed with "modelfile: ".
package modelfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/clip"
)

// Format is the format name stored in every model file, and Version the
// highest format version this package reads: it writes DaDiL models as
// version 1 and GMM-DaDiL models as version 3 (version 2 for a model
// without GMM-DaDiL-E's classifiers, version 4 for one with a projection
// onto principal directions).
const (
	Format  = "dadil-model"
	Version = 4
)

// The kinds of model a model file holds (the manifest's "model"), and the
// format version each is written with.
const (
	modelDaDiL   = "dadil"
	modelGMM     = "gmm-dadil"
	versionDaDiL = 1
	versionGMM   = 2
	// versionGMMEnsemble adds GMM-DaDiL-E's classifiers to GMM-DaDiL
	// models.
	versionGMMEnsemble = 3
	// versionGMMProjection adds the projection onto principal directions
	// (adapt.GMMDaDiL.Projection) to GMM-DaDiL models that have one.
	versionGMMProjection = 4
	maxComponents        = 1 << 20
)

// The kinds of classifier a model file holds (the manifest's
// "classifier").
const (
	kindSoftmax = "softmax"
	kindKNN     = "knn"
	kindMLP     = "mlp"
)

// File is a fitted model with what is needed to apply it to raw data:
// a DaDiL model (Model) or a GMM-DaDiL model (GMM), never both.
type File struct {
	// Model holds the dictionary, the target's coordinates and the
	// DaDiL-R and DaDiL-E classifiers: all *classify.Softmax, all
	// *classify.Neighbours or all *mlp.Net.
	Model *dictionary.Model
	// GMM holds a fitted GMM-DaDiL model: its settings, its dictionary
	// (Dict: atoms, coordinates and every domain's reconstruction, the
	// target last), GMM-DaDiL-R's classifier R and GMM-DaDiL-E's E (one
	// per atom, or none: then GMM-DaDiL-E weighs the atoms' MAP rules),
	// all *classify.Softmax, all *classify.Neighbours or all *mlp.Net.
	// A loaded model has no Sources
	// and Target mixtures, which predicting does not need, and its
	// Dict's Loss, Epochs and Status are not stored.
	GMM *adapt.GMMDaDiL
	// Scaler maps the model's features to the space the model was
	// fitted in.
	Scaler *dataset.Scaler
	// Imputer completes raw rows before the scaler: it keeps some of the
	// raw columns, in order, and fills their missing values. It is nil
	// when the training files missed no value: the model's features are
	// then the raw columns.
	Imputer *dataset.Imputer
	// Labels maps class indices to the user's label values.
	Labels []int
	// Features names the model's features (the columns the imputer
	// keeps, when there is one), when the training files named them (CSV
	// headers); nil otherwise.
	Features []string
	// Path is the file Load read the model from ("" otherwise); messages
	// name the model by it.
	Path string `json:"-"`
}

type manifest struct {
	Format      string           `json:"format"`
	Version     int              `json:"version"`
	Labels      []int            `json:"labels"`
	Features    int              `json:"features"`
	RawFeatures int              `json:"raw_features,omitempty"`
	Atoms       int              `json:"atoms"`
	Classes     int              `json:"classes"`
	Domains     []string         `json:"domains"`
	Target      int              `json:"target"`
	Names       []string         `json:"feature_names,omitempty"`
	Scaling     dataset.Scaling  `json:"scaling"`
	Classifier  string           `json:"classifier,omitempty"`
	Hidden      map[string][]int `json:"hidden_layers,omitempty"`
	RawSettings json.RawMessage  `json:"settings"`
	Created     string           `json:"created,omitempty"`
	// Model is the kind of model, absent for DaDiL; Components the
	// number of components of every mixture of a GMM-DaDiL model.
	Model      string `json:"model,omitempty"`
	Components int    `json:"components,omitempty"`
	// Directions is the number of principal directions a GMM-DaDiL
	// model's mixtures and classifiers live on (version 4), absent when
	// they use the features as they are.
	Directions int `json:"directions,omitempty"`

	// The settings, decoded by the model's kind.
	Settings dictionary.Settings `json:"-"`
	GMM      GMMSettings         `json:"-"`
}

// GMMSettings are the settings of a GMM-DaDiL fit (adapt.GMMDaDiL) as a
// model file's manifest and dadil fit's report.json record them.
type GMMSettings struct {
	// Dictionary are gmm.LearnDictionary's settings, defaults resolved.
	Dictionary gmm.DictionarySettings `json:"dictionary"`
	// EM are the domains' EM settings (adapt.GMMDaDiL.EM).
	EM gmm.Settings `json:"em"`
	// TargetComponents, SamplesPerClass and Seed are those of
	// adapt.GMMDaDiL (0: its defaults).
	TargetComponents int    `json:"target_components"`
	SamplesPerClass  int    `json:"samples_per_class"`
	Seed             uint64 `json:"seed"`
	// EnsembleTransport is adapt.GMMDaDiL.EnsembleTransport, absent for
	// its default (auto).
	EnsembleTransport dictionary.Transport `json:"ensemble_transport,omitempty"`
	// Transport and TransportRows are adapt.GMMDaDiL's, absent for their
	// defaults (auto, 0).
	Transport     dictionary.Transport `json:"transport,omitempty"`
	TransportRows int                  `json:"transport_rows,omitempty"`
	// Dims is adapt.GMMDaDiL.Dims, absent for its default.
	Dims int `json:"dims,omitempty"`
}

// GMMSettingsOf returns the settings of the fitted model m.
func GMMSettingsOf(m *adapt.GMMDaDiL) GMMSettings {
	s := GMMSettings{TargetComponents: m.TargetComponents, SamplesPerClass: m.SamplesPerClass, Seed: m.Seed, EnsembleTransport: m.EnsembleTransport,
		Transport: m.Transport, TransportRows: m.TransportRows, Dims: m.Dims}
	switch {
	case m.Dict != nil:
		s.Dictionary = m.Dict.Settings
	case m.Settings != nil:
		s.Dictionary = *m.Settings
	}
	if m.EM != nil {
		s.EM = *m.EM
	}
	return s
}

// model returns the GMM-DaDiL model of the settings s, the dictionary d,
// GMM-DaDiL-R's classifier r and GMM-DaDiL-E's e (nil: the atoms' MAP
// rules).
func (s GMMSettings) model(d *gmm.Dictionary, r classify.Classifier, e []classify.Classifier) *adapt.GMMDaDiL {
	set, em := s.Dictionary, s.EM
	return &adapt.GMMDaDiL{Settings: &set, EM: &em, TargetComponents: s.TargetComponents,
		SamplesPerClass: s.SamplesPerClass, Seed: s.Seed, EnsembleTransport: s.EnsembleTransport, Transport: s.Transport,
		TransportRows: s.TransportRows, Dims: s.Dims, Dict: d, R: r, E: e}
}

// Bounds of the manifest's sizes beyond which it is not believed.
const (
	maxAtoms, maxClasses, maxFeatures = 1 << 16, 1 << 20, 1 << 26
	maxHiddenLayers                   = 1 << 10
)

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
	case f == nil || (f.Model == nil && f.GMM == nil):
		return errors.New("no model")
	case f.Model != nil && f.GMM != nil:
		return errors.New("both a DaDiL and a GMM-DaDiL model: a file holds one")
	case f.Scaler == nil:
		return errors.New("no feature scaling")
	case f.Imputer != nil && f.Imputer.Features < 1:
		return fmt.Errorf("the imputer reads %d raw features", f.Imputer.Features)
	case f.GMM != nil:
		return checkGMM(f.GMM, len(f.Labels))
	case f.Model.Dict == nil:
		return errors.New("no model")
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
// number of raw features (Imputer.Features when the model has an imputer)
// and, when both name their columns, the model's feature names in the
// columns the model uses, in the same order; it completes the rows with
// the imputer, if any, scales the features as the training domains were,
// and maps the file's labels, if any, to class indices (−1 for label
// values the model does not know, which it also returns, sorted). Missing
// feature values are read (ReadOptions.AllowMissing) and filled when the
// model has an imputer, and are errors otherwise, whatever opt says.
func (f *File) ReadData(path string, opt *dataset.ReadOptions) (*dataset.Domain, []int, error) {
	var o dataset.ReadOptions
	if opt != nil {
		o = *opt
	}
	o.LabelsOptional = true
	o.AllowMissing = f.Imputer != nil
	d := len(f.Scaler.Offset)
	want, keep := d, []int(nil) // raw columns, and the model's among them
	if f.Imputer != nil {
		if err := checkImputer(f.Imputer, d); err != nil {
			return nil, nil, fmt.Errorf("modelfile: the model %s: %w", f.Path, err)
		}
		want, keep = f.Imputer.Features, f.Imputer.Keep
	}
	raw, err := dataset.Read(path, &o)
	if err != nil {
		return nil, nil, err
	}
	if _, dim := raw.X.Dims(); dim != want {
		note := ""
		if want != d {
			note = fmt.Sprintf(" (and keeps %d of them: features that missed values in training were dropped)", d)
		}
		return nil, nil, fmt.Errorf("modelfile: %s has %d features but the model %s was fitted on %d%s", path, dim, f.Path, want, note)
	}
	// The names of the columns the model uses, in the file: the file's
	// names of the dropped columns are not the model's to check.
	names := raw.Features
	if keep != nil {
		names = nil
		if len(raw.Features) == want {
			names = make([]string, len(keep))
			for k, j := range keep {
				names[k] = raw.Features[j]
			}
		}
	}
	if k := dataset.FeatureMismatch(f.Features, names); k >= 0 {
		j := k
		if keep != nil {
			j = keep[k]
		}
		return nil, nil, fmt.Errorf("modelfile: %s: column %d is %s, but the model %s was fitted with %s there (features are matched by position: put the columns in the same order)", path, j+1, clip.Quote(raw.Features[j]), f.Path, clip.Quote(f.Features[k]))
	}
	if f.Imputer != nil {
		X, err := f.Imputer.Apply(raw.X)
		if err != nil {
			return nil, nil, fmt.Errorf("modelfile: %s: %w", path, err)
		}
		completed := *raw
		completed.X, completed.Features = X, names
		raw = &completed
	}
	scaled, err := f.Scaler.TransformFile(raw)
	if err != nil {
		return nil, nil, err
	}
	dom := &dataset.Domain{Name: path, X: scaled.X}
	if raw.Labels == nil {
		return dom, nil, nil
	}
	var unknown []int
	dom.Y = make([]int, len(raw.Labels))
	for i, y := range raw.Labels {
		if dom.Y[i] = slices.Index(f.Labels, y); dom.Y[i] < 0 && !slices.Contains(unknown, y) {
			unknown = append(unknown, y)
		}
	}
	slices.Sort(unknown)
	return dom, unknown, nil
}
