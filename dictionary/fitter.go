package dictionary

import (
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/par"
)

// fitter holds the state of one Fit or WBR call.
type fitter struct {
	domains []dataset.Domain
	classes int
	set     Settings
	rng     *rand.Rand
	dict    *Dictionary

	K, N, n, nb, d int
	// fixed atoms (WBR) are not learned; only α is.
	fixed bool
	// Parameters and their Adam states.
	X, Z  []*mat.Dense // atoms' features and logits
	alpha *mat.Dense
	optX  []lazyAdam
	optZ  []adam
	optA  adam
	lrX   float64
	// alpha0, if not nil, is the first domain's starting α (FitLocal);
	// the coordinates start uniform otherwise.
	alpha0 []float64
	// carry, if not nil, holds the optimisers' state to continue and
	// receives it at the end (FitLocal's LocalStart.State); t0 is the
	// step count of the features' optimisers when the call began.
	carry *LocalState
	t0    int

	// Batch buffers: one atom batch per domain, or one shared by all
	// (Settings.SharedAtomBatch).
	abs []atomBatch
	dbs []domainBatch
	cls [][]int // scratch: class of every row of every atom
	// lacks[l] marks the classes labeled domain l has no row of, nil when
	// it has them all (or is unlabeled); masked is scratch for the atoms'
	// classes restricted to a domain's (drawAtomRows).
	lacks  [][]bool
	masked []int
	// priors[l] holds the class proportions of unlabeled domain l's atom
	// batches (targetClasses), nil for class-balanced batches.
	priors [][]float64

	loop
}

// loop is the state the learning loop (see run) carries from batch to
// batch and from epoch to epoch.
type loop struct {
	workers int // goroutines for the domains' and the atoms' work
	batches int // M = ⌈n/n_b⌉, the batches of an epoch
	start   time.Time
	h       History

	// Gradients of the batch loss L: gX[k] and gZ[k] with respect to atom
	// k's features and logits, on the rows marked in live[k] (those drawn
	// into the batch), and gA with respect to the coordinates.
	gX, gZ []*mat.Dense
	live   [][]bool
	gA     *mat.Dense

	// For the update magnitudes (eq. 13): every atom's labels before and
	// after its step, ‖Y_k,it − Y_k,it−1‖²_F of every atom, and α before
	// its step.
	prevY, curY []*mat.Dense
	dys         []float64
	prevA       *mat.Dense

	// The epoch's mean batch loss and mean loss of every domain, summed
	// over its batches so far.
	epochLoss float64
	domLoss   []float64

	// The plateau rule's state: lrScale multiplies every learning rate (1,
	// then 0.1 once annealed by the first plateau), and since is the
	// number of epochs before the current phase.
	annealed bool
	since    int
	lrScale  float64
}

// newFitter returns the fitter of the domains with the settings set
// (defaults filled in), its generator seeded by Settings.Seed and the
// features' learning rate η·s (Settings.FeatureScale) resolved.
func newFitter(domains []dataset.Domain, classes int, set Settings) *fitter {
	f := &fitter{
		domains: domains,
		classes: classes,
		set:     set,
		rng:     rand.New(rand.NewPCG(set.Seed, 0xdad1)),
		K:       set.Atoms,
		N:       len(domains),
		n:       set.Samples,
		nb:      set.Batch,
	}
	_, f.d = domains[0].X.Dims()
	f.lacks = lackedClasses(domains, classes)
	f.lrX = set.LearningRate
	if set.FeatureScale == ScaleAuto {
		f.lrX *= featureRMS(domains)
	} else {
		f.lrX *= set.FeatureScale
	}
	return f
}

// lackedClasses returns, for every labeled domain that has no row of some
// of the classes, which ones it lacks; nil for the other domains.
func lackedClasses(domains []dataset.Domain, classes int) [][]bool {
	lacks := make([][]bool, len(domains))
	for l, dm := range domains {
		if !dm.Labeled() {
			continue
		}
		has := make([]bool, classes)
		for _, y := range dm.Y {
			if y >= 0 && y < classes {
				has[y] = true
			}
		}
		for y, h := range has {
			if !h {
				if lacks[l] == nil {
					lacks[l] = make([]bool, classes)
				}
				lacks[l][y] = true
			}
		}
	}
	return lacks
}

// featureRMS returns sqrt(mean over features of the variance), over all
// rows of all domains; 1 if the data are constant.
func featureRMS(domains []dataset.Domain) float64 {
	_, d := domains[0].X.Dims()
	mean := make([]float64, d)
	sq := make([]float64, d)
	var cnt float64
	for _, dm := range domains {
		r, _ := dm.X.Dims()
		for i := 0; i < r; i++ {
			for q, v := range dm.X.RawRowView(i) {
				mean[q] += v
				sq[q] += v * v
			}
		}
		cnt += float64(r)
	}
	var tot float64
	for q := range mean {
		m := mean[q] / cnt
		tot += math.Max(sq[q]/cnt-m*m, 0)
	}
	s := math.Sqrt(tot / float64(d))
	if s == 0 || math.IsNaN(s) {
		return 1
	}
	return s
}

// initAtoms draws the initial atoms (Algorithm 2, line 1, or the data with
// Settings.Init = InitData). The coordinates α start uniform (setup).
func (f *fitter) initAtoms() {
	K, n, d, c := f.K, f.n, f.d, f.classes
	f.X = make([]*mat.Dense, K)
	f.Z = make([]*mat.Dense, K)
	// Balanced classes: point i of an atom belongs to class i mod c.
	switch f.set.Init {
	case InitGaussian:
		for k := 0; k < K; k++ {
			X := mat.NewDense(n, d, nil)
			raw := X.RawMatrix().Data
			for i := range raw {
				raw[i] = f.rng.NormFloat64()
			}
			Z := mat.NewDense(n, c, nil)
			for i := 0; i < n; i++ {
				Z.Set(i, i%c, 1)
			}
			f.X[k], f.Z[k] = X, Z
		}
	default:
		var labeled []int
		for l, dm := range f.domains {
			if dm.Labeled() {
				labeled = append(labeled, l)
			}
		}
		// Logit s makes softmax put 0.9 on the class: e^s/(e^s+c−1) = 0.9.
		s := math.Log(9 * float64(c-1))
		if c == 1 {
			s = 0
		}
		for k := 0; k < K; k++ {
			l := labeled[k%len(labeled)]
			X := mat.NewDense(n, d, nil)
			Z := mat.NewDense(n, c, nil)
			for i, pt := range f.initPoints(l, labeled) {
				dm := &f.domains[pt.domain]
				copy(X.RawRowView(i), dm.X.RawRowView(pt.row))
				Z.Set(i, dm.Y[pt.row], s)
			}
			f.X[k], f.Z[k] = X, Z
		}
	}
}

// sourceRow is row row of domain domain.
type sourceRow struct{ domain, row int }

// initPoints draws the n points an atom started on labeled domain l starts
// from: class-balanced rows of l; when l lacks some classes, ⌊n/c⌋ rows
// of each class it lacks, drawn from the other labeled domains pooled (of
// the classes some labeled domain has), and the other points
// class-balanced among the classes l has, so that every atom holds every
// class.
func (f *fitter) initPoints(l int, labeled []int) []sourceRow {
	n, c := f.n, f.classes
	if f.lacks[l] == nil {
		var pts []sourceRow
		for _, r := range dataset.BalancedBatch(f.rng, f.domains[l].Y, c, n, nil) {
			pts = append(pts, sourceRow{l, r})
		}
		return pts
	}
	q := n / c
	pools := make(map[int][]sourceRow) // a lacked class's rows in the other labeled domains
	for _, o := range labeled {
		for r, y := range f.domains[o].Y {
			if f.lacks[l][y] {
				pools[y] = append(pools[y], sourceRow{o, r})
			}
		}
	}
	var pts []sourceRow
	for _, r := range dataset.BalancedBatch(f.rng, f.domains[l].Y, c, n-q*len(pools), nil) {
		pts = append(pts, sourceRow{l, r})
	}
	for y := range c { // in class order
		pool, ok := pools[y]
		if !ok {
			continue
		}
		idx := make([]int, len(pool)) // one class: all 0
		for _, i := range dataset.BalancedBatch(f.rng, idx, 1, q, nil) {
			pts = append(pts, pool[i])
		}
	}
	return pts
}

// setup allocates the optimiser states, the coordinates α (uniform), the
// batch buffers and the loop's state for the atoms in f.X, f.Z.
func (f *fitter) setup() {
	K, d, c := f.K, f.d, f.classes
	f.optX = make([]lazyAdam, K)
	f.optZ = make([]adam, K)
	if !f.fixed {
		for k := 0; k < K; k++ {
			r, _ := f.X[k].Dims()
			f.optX[k].init(r, d)
			f.optZ[k].init(r * c)
		}
	}
	f.alpha = mat.NewDense(f.N, K, nil)
	for l := 0; l < f.N; l++ {
		for k := 0; k < K; k++ {
			f.alpha.Set(l, k, 1/float64(K))
		}
	}
	if f.alpha0 != nil {
		copy(f.alpha.RawRowView(0), f.alpha0)
	}
	f.optA.init(f.N * K)
	if f.carry != nil && !f.fixed && f.carry.fits(K, f.n, d, c) {
		f.optX, f.optZ, f.optA = f.carry.optX, f.carry.optZ, f.carry.optA
		f.t0 = f.optX[0].t
	}

	f.abs = make([]atomBatch, f.N)
	if f.set.SharedAtomBatch {
		f.abs = make([]atomBatch, 1)
	}
	for i := range f.abs {
		f.abs[i] = newAtomBatch(K, f.nb, d, c)
	}
	f.dbs = make([]domainBatch, f.N)
	for l := range f.dbs {
		f.dbs[l].XQ = mat.NewDense(f.nb, d, nil)
		if f.domains[l].Labeled() {
			f.dbs[l].YQ = mat.NewDense(f.nb, c, nil)
		}
		f.dbs[l].init = make([]int, f.nb)
	}
	f.setupLoop()
}

// setupLoop allocates the loop's gradients and update-magnitude buffers
// and resolves its number of goroutines (Settings.Workers).
func (f *fitter) setupLoop() {
	K := f.K
	f.workers = f.set.Workers
	if f.workers <= 0 {
		f.workers = runtime.GOMAXPROCS(0)
	}
	f.batches = (f.n + f.nb - 1) / f.nb
	f.gX = make([]*mat.Dense, K)
	f.gZ = make([]*mat.Dense, K)
	f.live = make([][]bool, K)
	for k := 0; k < K; k++ {
		r, _ := f.X[k].Dims()
		f.gX[k] = mat.NewDense(r, f.d, nil)
		f.gZ[k] = mat.NewDense(r, f.classes, nil)
		f.live[k] = make([]bool, r)
	}
	f.gA = mat.NewDense(f.N, K, nil)
	f.prevY = make([]*mat.Dense, K)
	f.curY = make([]*mat.Dense, K)
	f.dys = make([]float64, K)
	f.prevA = mat.NewDense(f.N, K, nil)
	f.lrScale = 1
	f.start = time.Now()
}

// atomBatch returns the atom batch of domain l.
func (f *fitter) atomBatch(l int) *atomBatch {
	if len(f.abs) > 1 {
		return &f.abs[l]
	}
	return &f.abs[0]
}

// eachAtom runs fn(k) for every atom on at most f.workers goroutines.
func (f *fitter) eachAtom(fn func(k int)) { par.ForEach(f.K, f.workers, fn, nil) }
