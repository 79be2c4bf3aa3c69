package adapt

import (
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/clip"
)

// names are the methods of New, in the order of the paper's Tables 2 and 3,
// then the Gaussian-mixture methods.
var names = []string{
	"source-only", "sa", "tca", "otda-emd", "otda-sinkhorn", "jcpot", "wb",
	"wbt-reg", "wjdot", "wbr-r", "wbr-e", "dadil-r", "dadil-e",
	"gmm-otda", "gmm-wbt", "gmm-dadil", "gmm-dadil-e",
}

// Names returns the names of the methods New builds, in the order of the
// paper's Tables 2 and 3, then the Gaussian-mixture methods.
func Names() []string { return append([]string(nil), names...) }

// New returns the method called name (one of Names), with the settings
// documented on its type and its random choices seeded by seed:
//
//   - source-only, sa, tca (linear kernel), otda-emd and otda-sinkhorn
//     (NewOTDAEMD, NewOTDASinkhorn) as their types' defaults;
//   - jcpot classifies with the transport rule (JCPOT.Map: the sources
//     mapped onto the target through its couplings, the classifier trained
//     on the mapped sources) at ε = 0.1 of the largest cost (JCPOT.Reg),
//     the usual way its couplings serve classification;
//   - wb, wbt-reg and wjdot with seed;
//   - wbr-r, wbr-e, dadil-r and dadil-e with the default dictionary
//     settings and seed; set their Settings field to change them;
//   - gmm-otda (GMMOTDA) and gmm-wbt (GMMWBT) with seed;
//   - gmm-dadil (GMM-DaDiL-R: the classifier trained on samples of the
//     reconstructed mixture) and gmm-dadil-e (GMM-DaDiL-E: the α_T-weighted
//     classifiers of the atoms moved onto it) with gmm's default
//     dictionary settings and seed; GMMDaDiL.MAP selects MAP rules
//     instead.
//
// The methods are new and unfitted at every call.
func New(name string, seed uint64) (Method, error) {
	dict := func() *dictionary.Settings { return &dictionary.Settings{Seed: seed} }
	switch name {
	case "source-only":
		return &SourceOnly{}, nil
	case "sa":
		return &SA{}, nil
	case "tca":
		return &TCA{}, nil
	case "otda-emd":
		return NewOTDAEMD(), nil
	case "otda-sinkhorn":
		return NewOTDASinkhorn(), nil
	case "jcpot":
		return &JCPOT{Map: true, Reg: 0.1}, nil
	case "wb":
		return &WB{Bary: BarycenterSettings{Seed: seed}}, nil
	case "wbt-reg":
		return &WBT{Bary: BarycenterSettings{Seed: seed}}, nil
	case "wjdot":
		return &WJDOT{Seed: seed}, nil
	case "wbr-r":
		return &WBR{Settings: dict()}, nil
	case "wbr-e":
		return &WBR{Ensemble: true, Settings: dict()}, nil
	case "dadil-r":
		return NewDaDiLR(dict()), nil
	case "dadil-e":
		return NewDaDiLE(dict()), nil
	case "gmm-otda":
		return &GMMOTDA{Seed: seed}, nil
	case "gmm-wbt":
		return &GMMWBT{Seed: seed}, nil
	case "gmm-dadil":
		return &GMMDaDiL{Settings: &gmm.DictionarySettings{Seed: seed}, Seed: seed}, nil
	case "gmm-dadil-e":
		return &GMMDaDiL{Ensemble: true, Settings: &gmm.DictionarySettings{Seed: seed}, Seed: seed}, nil
	}
	return nil, fmt.Errorf("adapt: unknown method %s (known: %s)", clip.Quote(name), strings.Join(names, ", "))
}

// DenseTransport reports whether the method called name solves transport
// problems between whole domains with dense or iterated plans (otda-sinkhorn,
// jcpot, wb, wbt-reg, wjdot, wbr-r, wbr-e), so that its time and memory grow
// with the product of the domains' sizes: the methods worth wrapping in
// Subsampled on large domains. Exact OTDA is not among them: the CWRU
// benchmark fits it on every row (7200 per source) within its time.
func DenseTransport(name string) bool {
	switch name {
	case "otda-sinkhorn", "jcpot", "wb", "wbt-reg", "wjdot", "wbr-r", "wbr-e":
		return true
	}
	return false
}

// A Predictor is one named way of classifying target-domain data with a
// fitted method.
type Predictor struct {
	Name    string
	Predict func(X *mat.Dense) ([]int, error)
	// Proba returns the n×c class probabilities of the rows of X, each
	// row on the simplex, whose largest entry (the lowest index among
	// ties) is the class Predict returns. It is nil for a method that
	// gives no probabilities (one that is not a Prober); every method of
	// New gives them.
	Proba func(X *mat.Dense) (*mat.Dense, error)
}

// A Prober gives class probabilities. Every method of New is one: each
// classifies through a classify.Classifier (DaDiL and WBR through
// dictionary.Model.ProbaR or ProbaE; JCPOT's label propagation through
// its normalised scores), and Subsampled through the method it wraps.
type Prober interface {
	// Proba returns the n×c class probabilities of the rows of X.
	Proba(X *mat.Dense) (*mat.Dense, error)
}

// predictor returns m's own predictor: its name, Predict and, for a
// Prober, Proba.
func predictor(m Method) Predictor {
	p := Predictor{Name: m.Name(), Predict: m.Predict}
	if pr, ok := m.(Prober); ok {
		p.Proba = pr.Proba
	}
	return p
}

// probaOf returns the class probabilities of the classifier c for the
// rows of X, its error prefixed with "adapt: " and the method's name.
func probaOf(name string, c classify.Classifier, X *mat.Dense) (*mat.Dense, error) {
	var P mat.Dense
	if err := c.Proba(&P, X); err != nil {
		return nil, fmt.Errorf("adapt: %s: %w", name, err)
	}
	return &P, nil
}

// A MultiPredictor is a method whose one fit gives several predictors:
// one dictionary serves both the reconstruction (-R) and the ensemble (-E)
// predictors of DaDiL and of WBR.
type MultiPredictor interface {
	Method
	// Predictors returns the method's own predictor first, then the
	// siblings that share its fit.
	Predictors() []Predictor
}

// Predictors returns the predictors of a fitted method: those of a
// MultiPredictor (DaDiL-R and DaDiL-E for either; through Subsampled, those
// of the wrapped method), else the method itself alone. A caller that wants
// both -R and -E fits once.
func Predictors(m Method) []Predictor {
	if mp, ok := m.(MultiPredictor); ok {
		return mp.Predictors()
	}
	return []Predictor{predictor(m)}
}

// Group splits the named methods (names of New) into fits, in the order of
// Names: a method alone, or a method followed by the siblings among names
// that share its fit (Predictors).
func Group(names []string) [][]string {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var fits [][]string
	seen := map[string]bool{}
	for _, name := range Names() {
		if !want[name] || seen[name] {
			continue
		}
		m, _ := New(name, 0)
		fit := []string{name}
		for _, p := range Predictors(m)[1:] {
			if want[p.Name] {
				fit = append(fit, p.Name)
				seen[p.Name] = true
			}
		}
		fits = append(fits, fit)
	}
	return fits
}

// dictionaryPredictors returns the predictors of a dictionary method m:
// m itself, then the sibling that shares its fit (DaDiL-R for DaDiL-E and
// the reverse), which fails with ErrNotFitted before Fit.
func dictionaryPredictors(m Method, model *dictionary.Model, ensemble bool) []Predictor {
	own := predictor(m)
	sib := siblingName(m.Name())
	switch {
	case model == nil:
		return []Predictor{own, {
			Name:    sib,
			Predict: func(*mat.Dense) ([]int, error) { return nil, ErrNotFitted },
			Proba:   func(*mat.Dense) (*mat.Dense, error) { return nil, ErrNotFitted },
		}}
	case ensemble:
		return []Predictor{own, {Name: sib, Predict: model.PredictR, Proba: model.ProbaR}}
	}
	return []Predictor{own, {Name: sib, Predict: model.PredictE, Proba: model.ProbaE}}
}

// dictionaryProba returns the class probabilities of a dictionary method m
// for the rows of X: model.ProbaE when ensemble, else model.ProbaR.
func dictionaryProba(m Method, model *dictionary.Model, ensemble bool, X *mat.Dense) (*mat.Dense, error) {
	if model == nil {
		return nil, ErrNotFitted
	}
	proba := model.ProbaR
	if ensemble {
		proba = model.ProbaE
	}
	P, err := proba(X)
	if err != nil {
		return nil, fmt.Errorf("adapt: %s: %w", m.Name(), err)
	}
	return P, nil
}

// siblingName swaps the -r and -e suffixes of a dictionary method's name.
func siblingName(name string) string {
	if base, ok := strings.CutSuffix(name, "-r"); ok {
		return base + "-e"
	}
	return strings.TrimSuffix(name, "-e") + "-r"
}
