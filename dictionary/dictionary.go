package dictionary

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/linalg"
)

// Init selects how atoms are initialised.
type Init int

const (
	// InitData draws atom k's support from labeled domain k mod N_S
	// (class-balanced, see dataset.BalancedBatch) and sets its
	// label logits so that each point starts 90% on its class. Atoms start
	// on the data, at the data's scale, whatever that scale is.
	InitData Init = iota
	// InitGaussian is the paper's initialisation (Algorithm 2, line 1):
	// x ~ N(0, I_d), label logits one-hot of balanced classes, α uniform.
	InitGaussian
)

// MarshalText implements encoding.TextMarshaler ("data" or "gaussian").
func (i Init) MarshalText() ([]byte, error) {
	if i != InitData && i != InitGaussian {
		return nil, fmt.Errorf("dictionary: unknown initialisation %d", int(i))
	}
	return []byte(i.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (i *Init) UnmarshalText(b []byte) error {
	switch string(b) {
	case "data":
		*i = InitData
	case "gaussian":
		*i = InitGaussian
	default:
		return fmt.Errorf("dictionary: unknown initialisation %s (want data or gaussian)", clip.Bytes(b))
	}
	return nil
}

// String returns "data" or "gaussian".
func (i Init) String() string {
	switch i {
	case InitData:
		return "data"
	case InitGaussian:
		return "gaussian"
	}
	return fmt.Sprintf("Init(%d)", int(i))
}

// Settings are the hyper-parameters of Fit. Zero fields take the defaults
// given in each field's comment.
type Settings struct {
	// Atoms is K, the number of atoms. The default is the number of
	// labeled domains: with InitData every atom then starts as one of
	// them, and no atom can end up serving the unlabeled target alone.
	// Such an atom's labels would be supervised by no labeled domain, and
	// only the label-free W_2 loss would pull it onto the target: an
	// unsupervised alignment, which fails on features whose classes do not
	// line up across domains. The paper uses K = 8 for Caltech-Office
	// (Paper); see docs/defaults.md for the comparison.
	Atoms int
	// ExtraAtoms, with Atoms 0, asks for that many atoms beyond the number
	// of labeled domains: K = labeled domains + ExtraAtoms, whatever the
	// problem's number of sources (so that a held-out source's refit, one
	// source short, keeps as many extra atoms). The extra atoms start, as
	// the others, on the labeled domains (the first ones again), and may
	// end up serving the target alone (see Atoms). Fit resolves it into
	// Atoms. Negative, or given with Atoms, it is an error.
	ExtraAtoms int `json:",omitempty"`
	// Samples is n, the support size of every atom. Default
	// DefaultSamples: 100 per class, more where the features and the
	// labeled domains' rows per class both exceed 100, up to
	// MaxDefaultSamples points in all, fewer where every domain holds at
	// most 50 rows per class (the paper searches {50, 100, 200}·n_c and
	// uses 1000 for 10 classes).
	Samples int
	// Batch is n_b, the mini-batch size. Default 20 per class (the paper
	// searches {5, 10, 20}·n_c and uses 200 for 10 classes); at least the
	// number of classes and at most Samples.
	Batch int
	// LearningRate is η of Adam. Default 0.1 for the label logits and the
	// barycentric coordinates; see FeatureScale for the atom features.
	LearningRate float64
	// FeatureScale multiplies LearningRate for the atom features, whose
	// Adam steps are in data units. The default, ScaleAuto, uses the
	// root-mean-square standard deviation of the features over all domains,
	// so that steps are comparable on data of any scale; ScaleNone (1) is
	// the paper's setting, where features in [0, 1] take steps of η = 0.1.
	FeatureScale float64
	// Epochs is N_iter, the cap on the number of epochs (n/n_b batches
	// each). Default 100.
	Epochs int
	// PlateauTol defines a plateau: the mean loss of the last Window
	// epochs is no more than PlateauTol (relative) below the mean of the
	// Window epochs before. The paper runs DaDiL "until reconstruction
	// loss hits a plateau"; here the first plateau divides the learning
	// rate by 10 and the second one (at least 2·Window epochs later) stops
	// learning, which removes most of the mini-batch noise from the result.
	// Zero selects the default 0.01; a negative value disables the rule, so
	// exactly Epochs epochs run at the full learning rate (the paper's
	// fixed N_iter setting).
	PlateauTol float64
	// Window is the number of epochs averaged by the plateau rule. Default 5.
	Window int
	// BarycenterIter is N_itb, the iteration cap of Algorithm 1. Default 10.
	BarycenterIter int
	// BarycenterTol is τ of Algorithm 1. Default 1e-9; it must be
	// positive.
	BarycenterTol float64
	// Beta is β of the label-aware cost (eq. 9). Zero selects, for every
	// pair of distributions, the largest feature cost of the pair.
	Beta float64
	// Init selects the atom initialisation; the default is InitData.
	Init Init
	// RawAlphaGradient gives Adam the raw gradient of every α_ℓ, as the
	// authors' implementation does, instead of its component tangent to
	// the simplex. Adam then moves all coordinates by nearly the same step
	// whenever their gradients share a sign, the projection cancels the
	// move, and α stays close to uniform; it reproduces the paper's
	// setting, not a better one.
	RawAlphaGradient bool
	// SharedAtomBatch draws one atom batch per step for all domains
	// instead of one per domain, the default, as in paper Algorithm 2
	// (lines 10–13) and the authors' implementation. The barycenters then
	// share the inner products of the batch's points (one Gram matrix),
	// which makes a step cheaper in that part, but every atom row receives
	// gradients about N times less often, which costs accuracy (see
	// docs/defaults.md).
	SharedAtomBatch bool
	// HardLabels makes NewModel train the DaDiL-R and DaDiL-E classifiers
	// on the argmax of the labels (the reconstruction's propagated labels,
	// every atom's softmax labels) instead of on the soft labels
	// themselves. It does not change learning. The authors' demonstration
	// of DaDiL fits both classifiers this way; the paper's presets
	// (Paper, PaperCWRU, dadil fit --paper) set it.
	HardLabels bool
	// ChoosePenalty makes FitModel choose the penalty λ of the DaDiL-R
	// and DaDiL-E classifiers, which must then be a penalised softmax
	// regression (a nil trainer, or a classify.SoftmaxTrainer without
	// NoPenalty): DaDiL-R's keeps the trainer's penalty λ₀
	// (classify.DefaultL2 for a nil trainer or Settings) unless another λ
	// of classify.DefaultL2Grid makes it classify the labeled sources
	// consistently better, source by source (classify.ChoosePenalty), and
	// DaDiL-E's classifiers take the same λ. No λ is best for every data
	// set, and this choice is not the default because it did not win on
	// every benchmark (docs/defaults.md). It does not change learning.
	ChoosePenalty bool `json:",omitempty"`
	// BalancedTarget draws the atom batches of every unlabeled domain
	// class-balanced, as paper Algorithm 2 does, instead of in the class
	// proportions the labeled domains share, the default when they share
	// any (SharedProportions: the pooled proportions of their rows, shrunk
	// towards equal proportions by how much the domains disagree; equal
	// proportions when they are balanced or disagree more than that). A
	// domain whose classes are unequal, compared with a class-balanced
	// barycenter, has its W_2 loss move the mass of the rarer classes onto
	// the commoner ones. Atoms and the reconstruction stay class-balanced.
	// The paper's presets set it.
	BalancedTarget bool `json:",omitempty"`
	// EstimateShift estimates the class proportions of every unlabeled
	// domain (label shift: its classes not in the proportions the labeled
	// domains share) and draws that domain's atom batches in those
	// proportions. The proportions are the EM estimate of
	// classify.EstimatePrior under a softmax regression of the labeled
	// domains pooled, every class weighed equally, shrunk towards the
	// shared proportions (equal ones without them) by the estimate's
	// error, measured on the labeled domains held out in turn and by the
	// spread of the estimates without each of them (estimatePriors).
	// Not the default: on a target farther from the sources than they are
	// from one another, the error can exceed both measures
	// (docs/defaults.md).
	EstimateShift bool `json:",omitempty"`
	// ReconstructionBlock is the largest support of one barycenter in
	// Reconstruct (DaDiL-R's training set): larger atoms are reconstructed
	// in blocks of at most this many points (see Reconstruct). Zero
	// selects DefaultReconstructionBlock (2048); a negative value
	// reconstructs every size in one barycenter. It does not change
	// learning.
	ReconstructionBlock int `json:",omitempty"`
	// Transport and EnsembleTransport select a last step of the DaDiL-R
	// and DaDiL-E classifiers towards the target (FitModel): none (the
	// paper's), the labeled points mapped onto the target rows, the target
	// rows labeled through the plan, every atom moved onto the
	// reconstruction (DaDiL-E) or the sources' rows moved along the
	// dictionary (DaDiL-R). TransportAuto selects sources for DaDiL-R and
	// barycenter for DaDiL-E (see TransportAuto). They do not change
	// learning.
	Transport         Transport `json:",omitempty"`
	EnsembleTransport Transport `json:",omitempty"`
	// TransportRows bounds the target rows of the transport step: larger
	// targets are subsampled (seeded by Seed). Zero selects
	// DefaultTransportRows (4000); a negative value uses every row.
	TransportRows int `json:",omitempty"`
	// Seed seeds every random choice; equal seeds give equal results
	// whatever the number of goroutines.
	Seed uint64
	// Workers bounds the number of domains processed at once; 0 means
	// runtime.GOMAXPROCS(0), and it must not be negative.
	Workers int
	// MaxMemory bounds, in bytes, the estimated peak memory of a fit
	// (EstimateMemory): Fit, FitModel and WBR refuse a larger one with a
	// *MemoryError before any work. Zero selects the memory of the
	// machine (the smallest of the available memory, the control group's
	// limit and the address-space limit; 8 GiB where unknown); a negative
	// value disables the check. It does not change learning.
	MaxMemory int64 `json:",omitempty"`
	// Progress, if not nil, is called after every epoch, with Status
	// optimize.NotTerminated but after the last one, whose Status is
	// History.Stopped.
	Progress func(EpochStats) `json:"-"`
}

// Special values of Settings.FeatureScale.
const (
	ScaleAuto = 0
	ScaleNone = 1
)

// EpochStats describes one finished epoch.
type EpochStats struct {
	Epoch, Epochs int // 1-based epoch and the cap
	Loss          float64
	Elapsed       time.Duration
	// Status is optimize.NotTerminated while learning goes on, and the
	// reason it stops (History.Stopped) after its last epoch.
	Status optimize.Status
}

// Atom is one learned labeled distribution: n support points and the
// logits of their soft labels.
type Atom struct {
	X      *mat.Dense // n×d support
	Logits *mat.Dense // n×c label logits
}

// Labels returns the soft labels softmax(Logits) of the atom (n×c).
func (a *Atom) Labels() *mat.Dense { return labelsInto(nil, a.Logits) }

// labelsInto writes softmax of every row of the logits Z into dst,
// allocating it when nil, and returns it.
func labelsInto(dst, Z *mat.Dense) *mat.Dense {
	r, c := Z.Dims()
	if dst == nil {
		dst = mat.NewDense(r, c, nil)
	}
	for i := 0; i < r; i++ {
		linalg.Softmax(dst.RawRowView(i), Z.RawRowView(i))
	}
	return dst
}

// Dictionary is a learned dataset dictionary: K labeled atoms and one
// vector of barycentric coordinates per domain (paper eq. 11).
type Dictionary struct {
	Atoms   []Atom
	Alpha   *mat.Dense // N×K, row ℓ is α_ℓ ∈ Δ_K, in the order of the domains
	Names   []string   // domain names, in order
	Classes int
	History History
	// Settings holds the settings used, defaults filled in.
	Settings Settings
}

// History records the course of learning.
type History struct {
	// Loss[e] is the mean batch loss (1/N) Σ_ℓ L_ℓ of epoch e, and
	// DomainLoss[e][ℓ] the mean loss of domain ℓ.
	Loss       []float64
	DomainLoss [][]float64
	// Alpha[e] is the N×K matrix of barycentric coordinates after epoch e.
	Alpha []*mat.Dense
	// DeltaX, DeltaY and DeltaA are the update magnitudes of paper eq. 13
	// after every batch: (1/K) Σ_k ‖X_k,it − X_k,it−1‖²_F, the same for the
	// soft labels, and ‖A_it − A_it−1‖²_F.
	DeltaX, DeltaY, DeltaA []float64
	// Stopped tells why learning ended: optimize.FunctionConvergence when
	// the plateau rule stopped it (Settings.PlateauTol),
	// optimize.IterationLimit after Settings.Epochs epochs. StopReason
	// names it.
	Stopped optimize.Status
	Elapsed time.Duration
	// TargetClasses holds, for every domain in order, the class
	// proportions its atom batches were drawn in and where they came from
	// (the zero value for a labeled domain); nil when every batch was
	// class-balanced.
	TargetClasses []TargetClasses `json:",omitempty"`
}

// Fit learns a dictionary for the domains (paper Algorithm 2). Labeled
// domains must carry class indices in [0, classes); unlabeled domains
// (typically the single target) are reconstructed with the plain W_2 loss.
//
// Every batch draws, for every domain ℓ in turn, a class-balanced
// (by the argmax of the current soft labels) batch of n_b points from every
// atom (Algorithm 2, lines 10–13; Settings.SharedAtomBatch draws one for all
// domains) and a sample of n_b points from the domain, class-balanced if it
// is labeled and uniform otherwise. For each domain ℓ the labeled
// barycenter B_ℓ of its atom batches at α_ℓ is computed
// with Algorithm 1 (support initialised from atom-batch points), and the
// loss is L = (1/N) Σ_ℓ W(Q̂_ℓ, B̂_ℓ), W_c with the label term (eq. 9) for
// labeled domains and W_2² for the others. Gradients follow the envelope
// theorem (all plans held fixed); atom features, label logits (labels are
// softmax(logits)) and coordinates take one Adam step per batch, and every
// α_ℓ is projected back onto the simplex.
func Fit(domains []dataset.Domain, classes int, s *Settings) (*Dictionary, error) {
	return fit(domains, classes, s, MemoryEstimate.Learning)
}

// fit is Fit, refusing a fit whose part need of the memory estimate
// exceeds the limit (Settings.MaxMemory).
func fit(domains []dataset.Domain, classes int, s *Settings, need func(MemoryEstimate) int64) (*Dictionary, error) {
	set, err := validate(domains, classes, s)
	if err != nil {
		return nil, err
	}
	z := SizesOf(domains, classes)
	if err := CheckScale(z, &set); err != nil {
		return nil, err
	}
	if err := checkMemory(z, &set, need); err != nil {
		return nil, err
	}
	f := newFitter(domains, classes, set)
	f.initAtoms()
	if err := f.run(); err != nil {
		return nil, err
	}
	return f.dict, nil
}

// WBR regresses the barycentric coordinates of the unlabeled target on the
// labeled sources (paper appendix C, Algorithm 3, after Bonneel et al.
// 2016): the atoms are the sources themselves, held fixed, and only
// α_T ∈ Δ_{N_S} is learned, minimising W_2(Q̂_T, B(α_T; Q_S)) by the same
// mini-batch, envelope-gradient and Adam steps as Fit. The returned
// dictionary has one atom per source (its points and one-hot labels) and a
// single row of coordinates, the target's. Settings.Atoms, Samples and Init
// are ignored; an epoch has ⌈n_T/n_b⌉ batches.
func WBR(p *dataset.Problem, s *Settings) (*Dictionary, error) {
	sources, classes := p.Sources, p.Classes
	for i := range sources {
		if !sources[i].Labeled() {
			return nil, fmt.Errorf("dictionary: WBR: source %s is unlabeled", clip.Quote(sources[i].Name))
		}
	}
	all := p.Domains()
	target := all[p.TargetIndex()]
	var ss Settings
	if s != nil {
		ss = *s
	}
	ss.Atoms, ss.ExtraAtoms = len(sources), 0
	ss.Init = InitData
	if ss.Samples == 0 {
		// Only used to bound the batch size by default.
		ss.Samples = 1 << 30
	}
	set, err := validate(all, classes, &ss)
	if err != nil {
		return nil, err
	}
	if err := checkWBRMemory(all, target, classes, &set); err != nil {
		return nil, err
	}
	nt, _ := target.X.Dims()
	set.Samples = nt
	f := newFitter([]dataset.Domain{target}, classes, set)
	f.fixed = true
	// Logits of 40 make softmax one-hot to within e^-40 ≈ 4e-18.
	for _, src := range sources {
		r, _ := src.X.Dims()
		Z := mat.NewDense(r, classes, nil)
		for i, y := range src.Y {
			Z.Set(i, y, 40)
		}
		f.X = append(f.X, src.X)
		f.Z = append(f.Z, Z)
	}
	if err := f.run(); err != nil {
		return nil, err
	}
	for k := range f.dict.Atoms {
		f.dict.Atoms[k].X = mat.DenseCopyOf(sources[k].X)
	}
	return f.dict, nil
}

// StopReason names a stop status of learning as reports do: "plateau"
// (optimize.FunctionConvergence), "epochs" (optimize.IterationLimit), else
// the status's own name.
func StopReason(s optimize.Status) string {
	switch s {
	case optimize.FunctionConvergence:
		return "plateau"
	case optimize.IterationLimit:
		return "epochs"
	}
	return s.String()
}

// logitGrad writes the gradient with respect to the logits z of a function
// whose gradient with respect to y = softmax(z) is g: y ⊙ (g − ⟨g, y⟩).
func logitGrad(dst, y, g []float64) {
	var dot float64
	for q, v := range y {
		dot += v * g[q]
	}
	for q, v := range y {
		dst[q] = v * (g[q] - dot)
	}
}

// validate checks the inputs and fills in the defaults.
func validate(domains []dataset.Domain, classes int, s *Settings) (Settings, error) {
	return validateDomains(domains, classes, s, true)
}

// validateDomains is validate, requiring a labeled domain if needLabeled.
func validateDomains(domains []dataset.Domain, classes int, s *Settings, needLabeled bool) (Settings, error) {
	var set Settings
	if s != nil {
		set = *s
	}
	if len(domains) == 0 {
		return set, fmt.Errorf("dictionary: no domains")
	}
	if classes < 1 {
		return set, fmt.Errorf("dictionary: %d classes", classes)
	}
	var d int
	for l, dm := range domains {
		name := dm.Name
		if name == "" {
			name = fmt.Sprintf("domain %d", l)
		}
		if dm.X == nil || dm.X.IsEmpty() {
			return set, fmt.Errorf("dictionary: %s is empty", name)
		}
		n, dd := dm.X.Dims()
		if l == 0 {
			d = dd
		} else if dd != d {
			return set, fmt.Errorf("dictionary: %s has %d features, %s has %d", name, dd, domains[0].Name, d)
		}
		for i := 0; i < n; i++ {
			for q, v := range dm.X.RawRowView(i) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return set, fmt.Errorf("dictionary: %s: feature (%d, %d) is %g", name, i, q, v)
				}
			}
		}
		if dm.Y == nil {
			continue
		}
		if len(dm.Y) != n {
			return set, fmt.Errorf("dictionary: %s has %d rows but %d labels", name, n, len(dm.Y))
		}
		seen := map[int]bool{}
		for i, y := range dm.Y {
			if y < 0 || y >= classes {
				return set, fmt.Errorf("dictionary: %s: label %d of row %d is outside [0, %d)", name, y, i, classes)
			}
			seen[y] = true
		}
		if len(seen) < 2 {
			return set, fmt.Errorf("dictionary: %s has a single class; labeled domains need at least two", name)
		}
	}
	z := SizesOf(domains, classes)
	if z.Labeled == 0 && needLabeled {
		return set, fmt.Errorf("dictionary: no labeled domain")
	}
	if set.ExtraAtoms < 0 || (set.ExtraAtoms > 0 && set.Atoms != 0) {
		return set, fmt.Errorf("dictionary: %d extra atoms with K = %d; want K, or a non-negative number of atoms beyond the labeled domains", set.ExtraAtoms, set.Atoms)
	}
	set.fillDefaults(z)
	return set, checkSettings(&set, classes)
}

// Bounds of the default atom support (Settings.Samples).
const (
	// DefaultSamplesPerClass is the default number of atom points per
	// class, where the data neither ask for more nor hold fewer.
	DefaultSamplesPerClass = 100
	// MaxDefaultSamples bounds the default support where it grows beyond
	// DefaultSamplesPerClass per class: at most this many points in all.
	MaxDefaultSamples = 2000
)

// DefaultSamples returns the default atom support n for data of sizes z:
// c·m points, with m = DefaultSamplesPerClass (100), or, where the
// features outnumber it and the labeled domains hold more rows per class
// on average, the least of the features, those rows per class and
// MaxDefaultSamples/c; and, where even the largest domain, labeled or not,
// holds at most half that many rows per class (r = z.LargestRows/c, when
// known), r per class.
//
// DaDiL-R's classifier trains on the reconstruction B(α_T; P), which has n
// points. A linear classifier of d features needs on the order of d
// labeled points per class; with 100 per class in thousands of dimensions
// (bags of words, spectra) it loses what the adaptation gained, where the
// sources hold many more labeled rows. The other way round, where every
// domain holds far fewer rows than the atoms hold points (small domains of
// many classes), atoms started on the data (InitData) are their source's
// rows several times over, every barycenter of them holds more points
// than the domain it is matched with, and DaDiL-R classifies the target
// less well than with atoms of the domains' size (docs/defaults.md).
func DefaultSamples(z Sizes) int {
	c := max(z.Classes, 1)
	per := DefaultSamplesPerClass
	if z.Labeled > 0 {
		rows := z.LabeledRows / (z.Labeled * c)
		per = max(per, min(z.Features, rows, MaxDefaultSamples/c))
	}
	if r := z.LargestRows / c; r > 0 && 2*r <= per {
		per = r
	}
	return per * c
}

// fillDefaults sets the zero fields of s to their defaults for data of
// sizes z.
func (s *Settings) fillDefaults(z Sizes) {
	if s.Atoms == 0 {
		s.Atoms = z.Labeled + max(s.ExtraAtoms, 0)
	}
	s.ExtraAtoms = 0
	if s.Samples == 0 {
		s.Samples = DefaultSamples(z)
	}
	if s.Batch == 0 {
		s.Batch = min(20*z.Classes, s.Samples)
	}
	if s.LearningRate == 0 {
		s.LearningRate = 0.1
	}
	if s.Epochs == 0 {
		s.Epochs = 100
	}
	if s.PlateauTol == 0 {
		s.PlateauTol = 0.01
	}
	if s.Window == 0 {
		s.Window = 5
	}
	if s.BarycenterIter == 0 {
		s.BarycenterIter = 10
	}
	if s.BarycenterTol == 0 {
		s.BarycenterTol = 1e-9
	}
	if s.Transport == TransportAuto {
		s.Transport = TransportSources
	}
	if s.EnsembleTransport == TransportAuto {
		s.EnsembleTransport = TransportBarycenter
	}
}

// checkSettings checks settings whose defaults are filled in, for
// classes classes.
func checkSettings(set *Settings, classes int) error {
	switch {
	case set.Atoms < 1:
		return fmt.Errorf("dictionary: K = %d atoms; need at least 1", set.Atoms)
	case set.Samples < 1 || set.Batch < 1:
		return fmt.Errorf("dictionary: n = %d and n_b = %d must be positive", set.Samples, set.Batch)
	case set.Batch > set.Samples:
		return fmt.Errorf("dictionary: batch size n_b = %d is larger than the atoms' support n = %d", set.Batch, set.Samples)
	case set.Batch < classes:
		// Balanced batches give the remainder to the first classes, so
		// the others would never be drawn.
		left := fmt.Sprintf("classes %d to %d", set.Batch, classes-1)
		if set.Batch == classes-1 {
			left = fmt.Sprintf("class %d", set.Batch)
		}
		return fmt.Errorf("dictionary: batch size n_b = %d is smaller than the %d classes: class-balanced batches would never hold %s", set.Batch, classes, left)
	case !(set.LearningRate > 0) || math.IsInf(set.LearningRate, 0):
		return fmt.Errorf("dictionary: learning rate %g must be positive", set.LearningRate)
	case set.FeatureScale < 0 || math.IsNaN(set.FeatureScale):
		return fmt.Errorf("dictionary: feature scale %g must be non-negative", set.FeatureScale)
	case set.Epochs < 1 || set.Window < 1 || set.BarycenterIter < 1:
		return fmt.Errorf("dictionary: epochs (%d), window (%d) and barycenter iterations (%d) must be positive", set.Epochs, set.Window, set.BarycenterIter)
	case set.Beta < 0 || math.IsNaN(set.Beta):
		return fmt.Errorf("dictionary: β = %g must be non-negative", set.Beta)
	case !(set.BarycenterTol > 0) || math.IsInf(set.BarycenterTol, 0):
		return fmt.Errorf("dictionary: barycenter tolerance τ = %g must be positive and finite", set.BarycenterTol)
	case math.IsNaN(set.PlateauTol) || math.IsInf(set.PlateauTol, 0):
		return fmt.Errorf("dictionary: plateau tolerance %g must be a number (negative disables the rule)", set.PlateauTol)
	case set.Workers < 0:
		return fmt.Errorf("dictionary: Workers = %d must not be negative", set.Workers)
	case set.Init != InitData && set.Init != InitGaussian:
		return fmt.Errorf("dictionary: unknown initialisation %v", set.Init)
	case set.Transport < TransportAuto || set.Transport > TransportSources || set.Transport == TransportBarycenter:
		return fmt.Errorf("dictionary: transport %v is not one of DaDiL-R's", set.Transport)
	case set.EnsembleTransport < TransportAuto || set.EnsembleTransport > TransportBarycenter:
		return fmt.Errorf("dictionary: unknown transport %v", set.EnsembleTransport)
	}
	return nil
}
