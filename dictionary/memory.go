package dictionary

import (
	"fmt"
	"math"
	"runtime"
	"strings"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/sysmem"
)

// Sizes are the sizes of the data of a fit that its memory (EstimateMemory)
// and its scale (CheckScale) depend on.
type Sizes struct {
	// Domains is N, the number of domains, of which Labeled carry labels.
	Domains, Labeled int
	// Rows is the number of rows of all domains, LabeledRows of the
	// labeled ones.
	Rows, LabeledRows int
	// LargestRows is the number of rows of the largest domain, labeled or
	// not (0 when not known). TargetRows is that of the largest unlabeled
	// domain: the target rows of FitModel's transport step.
	LargestRows, TargetRows int
	// Features is d, Classes is c.
	Features, Classes int
}

// atLeastOne returns z with at least one labeled domain and one class,
// so that the defaults of a fit can be estimated from partial sizes.
func (z Sizes) atLeastOne() Sizes {
	z.Labeled, z.Classes = max(z.Labeled, 1), max(z.Classes, 1)
	return z
}

// SizesOf returns the sizes of the domains, with classes classes.
func SizesOf(domains []dataset.Domain, classes int) Sizes {
	z := Sizes{Domains: len(domains), Classes: classes}
	for _, dm := range domains {
		if dm.X == nil {
			continue
		}
		r, d := dm.X.Dims()
		z.Rows += r
		z.LargestRows = max(z.LargestRows, r)
		z.Features = d
		if dm.Labeled() {
			z.Labeled++
			z.LabeledRows += r
		} else {
			z.TargetRows = max(z.TargetRows, r)
		}
	}
	return z
}

// MemoryEstimate is the estimated peak memory of a fit, in bytes, by part.
// EstimateMemory documents how each part is counted.
type MemoryEstimate struct {
	// Data holds the domains, Atoms the atoms with their optimiser states,
	// gradients and history, Step the buffers of one learning step.
	Data, Atoms, Step int64
	// Model is the peak of the training of FitModel's classifiers after
	// learning (NewModel), of which Reconstruction, Transport and
	// Classifiers are the parts (not all held at once).
	Model                                  int64
	Reconstruction, Transport, Classifiers int64
}

// Learning returns the peak of Fit: Data + Atoms + Step.
func (m MemoryEstimate) Learning() int64 { return add(m.Data, m.Atoms, m.Step) }

// Peak returns the peak of FitModel: Data + Atoms + max(Step, Model),
// since the step's buffers are free once learning ends.
func (m MemoryEstimate) Peak() int64 { return add(m.Data, m.Atoms, max(m.Step, m.Model)) }

// Largest names the largest part of the estimate: "data", "atoms",
// "step", "reconstruction", "transport" or "classifiers".
func (m MemoryEstimate) Largest() string {
	parts := m.parts()
	best := 0
	for i, p := range parts {
		if p.bytes > parts[best].bytes {
			best = i
		}
	}
	return parts[best].name
}

type memoryPart struct {
	name  string
	bytes int64
}

func (m MemoryEstimate) parts() []memoryPart {
	return []memoryPart{
		{"data", m.Data}, {"atoms", m.Atoms}, {"step", m.Step},
		{"reconstruction", m.Reconstruction}, {"transport", m.Transport}, {"classifiers", m.Classifiers},
	}
}

// String lists the non-zero parts, largest first: "atoms 2.1 GiB, step
// 36.0 MiB, data 1.2 MiB".
func (m MemoryEstimate) String() string {
	ps := m.parts()
	var out []string
	for len(ps) > 0 {
		b := 0
		for i, p := range ps {
			if p.bytes > ps[b].bytes {
				b = i
			}
		}
		if ps[b].bytes > 0 {
			out = append(out, ps[b].name+" "+sysmem.Size(ps[b].bytes))
		}
		ps = append(ps[:b], ps[b+1:]...)
	}
	return strings.Join(out, ", ")
}

// add sums byte counts, saturating at math.MaxInt64.
func add(v ...int64) int64 {
	var s int64
	for _, x := range v {
		if x > math.MaxInt64-s {
			return math.MaxInt64
		}
		s += x
	}
	return s
}

// bytesOf converts a count of float64 numbers to bytes, saturating.
func bytesOf(numbers float64) int64 {
	b := 8 * numbers
	if !(b < math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(math.Ceil(b))
}

// EstimateMemory estimates the peak memory of FitModel on data of sizes z
// with settings s (nil: the defaults), zero fields of s taking their
// defaults. It counts float64 numbers (8 bytes; an int or a bool counts
// as one number, an upper bound) of the allocations that grow with the
// sizes, with N domains of R rows in all, d features, c classes, K atoms
// of n points, batches of n_b, E epochs and m = min(TargetRows,
// TransportRows) target rows:
//
//	Data           = R·(d + 1)                        features and labels
//	Atoms          = K·n·(4d + 6c + 3) + 3(K + 1)·S   S = E·⌈n/n_b⌉ steps
//	Step           = A·(K·n_b·(d + c + 2) + g_A·(K·n_b)²)
//	               + N·((2K + 1 + (1 − g_A)·K)·n_b² + (2K + 5)·n_b·(d + c))
//	Reconstruction = K·n·(c + 3) + n·(d + c) + K·b·(2d + 2c + 1)
//	               + (2K + g_1·K² + (1 − g_1)·K)·b²
//	Transport      = m·d + T_R + K·T_E,  T = 2·n·m for an exact plan
//	               + M·d + (K + 2L)·n·d + 2·M·n/c  with TransportSources
//	Classifiers    = (p_R + K·p_E)·(2d + 3c)
//
// Atoms holds per atom its points and logits, the Adam moments of both,
// their gradients and two copies of the labels, and per step the lazy
// Adam constants and the history. Step holds the A atom batches (one per
// domain, or one with SharedAtomBatch), each with its Gram matrix of
// (K·n_b)² when the barycenter uses one (g_A = 1 when 9·runs > 2K, runs
// being 1 per domain or N shared; see barycenter.Stack.Prepare), and per
// domain the barycenter solver's K·n_b² inner products, its K cost
// matrices of n_b² (and, without a Gram matrix, K·n_b² inner products of
// the changed points), the sample's cost matrix and the gradients.
// Reconstruction is the barycenter B(α_T; P) of the atoms in blocks of b
// points (b = n, or ⌈n/B⌉ when n exceeds ReconstructionBlock and the
// atoms are split into B blocks; g_1 = 1 when K ≤ 4), with the atoms'
// labels, the result and its plans. Transport
// holds the target rows and, for DaDiL-R (T_R) and every atom of DaDiL-E
// (T_E) whose transport is TransportMap or TransportLabels, an exact plan
// to the target rows: a cost matrix and the network simplex's arrays,
// about 2 numbers per cell (T_E = n·d, the moved atom, with
// TransportBarycenter; 0 with TransportNone). Classifiers holds about two
// copies of the points and three of the labels of each classifier, trained
// on p = n points (m with TransportLabels, n + M with TransportSources).
// With TransportSources the L labeled domains' rows, M in all (at most
// TransportRows per domain), are copied and moved (movedSources): K images
// of the reconstruction, two n×d matrices and class plans per domain.
//
// The model's peak (MemoryEstimate.Model) follows NewModel's order: with
// TransportBarycenter, DaDiL-R first (Reconstruction + m·d + T_R + its
// classifier), then the K atoms at once on the reconstruction's result
// (n·(d + c) + K·n·(c + 3) + K·(T_E + their classifiers)), the larger of
// the two; otherwise all K + 1 at once, the sum of the three parts; with
// TransportSources, at least DaDiL-R's moving of the sources and training
// beside them (sourcesNumbers). The peak of FitModel is Data + Atoms +
// max(Step, Model) (MemoryEstimate.Peak), the learning step's buffers
// being released before the model's are allocated; Fit alone needs Data +
// Atoms + Step (MemoryEstimate.Learning).
//
// Memory that does not grow with the sizes (the program, the Go runtime)
// is not counted. On sizes from the benchmarks' to a few GB, the estimate
// is between 0.95 and 1.6 times the largest live heap measured
// (TestEstimateMemoryMeasured); the heap itself may grow beyond the live
// data between two collections unless a memory limit is set
// (runtime/debug.SetMemoryLimit, which dadil's commands set to the same
// limit).
func EstimateMemory(z Sizes, s *Settings) MemoryEstimate {
	var set Settings
	if s != nil {
		set = *s
	}
	set.fillDefaults(z.atLeastOne())
	f := func(v int) float64 { return float64(max(v, 0)) }
	N, R, d, c := f(z.Domains), f(z.Rows), f(z.Features), f(z.Classes)
	K, n, nb, E := f(set.Atoms), f(set.Samples), f(max(set.Batch, 1)), f(set.Epochs)
	var m MemoryEstimate
	m.Data = bytesOf(R * (d + 1))
	steps := E * math.Ceil(n/nb)
	m.Atoms = bytesOf(K*n*(4*d+6*c+3) + 3*(K+1)*steps)
	m.Step = bytesOf(stepNumbers(N, K, nb, d, c, set.SharedAtomBatch))
	rows := f(min(z.TargetRows, set.transportLimit()))
	rec, tr, cls, peak := modelNumbers(&set, K, n, d, c, rows, set.ReconstructionBlock)
	if set.Transport == TransportSources {
		t, c2, p := sourcesNumbers(z, &set, K, n, d, c)
		tr, cls, peak = tr+t, cls+c2, max(peak, p)
	}
	m.Reconstruction, m.Transport, m.Classifiers, m.Model = bytesOf(rec), bytesOf(tr), bytesOf(cls), bytesOf(peak)
	return m
}

// stepNumbers is the Step part of EstimateMemory for N domains.
func stepNumbers(N, K, nb, d, c float64, shared bool) float64 {
	A, runs := N, 1.0
	if shared {
		A, runs = 1, N
	}
	batch := K * nb * (d + c + 2)
	changed := K // rows of inner products recomputed without a Gram matrix
	if 9*runs > 2*K {
		batch += (K * nb) * (K * nb)
		changed = 0
	}
	return A*batch + N*((2*K+1+changed)*nb*nb+(2*K+5)*nb*(d+c))
}

// reconstructionNumbers is the Reconstruction part of EstimateMemory.
func reconstructionNumbers(K, n, d, c float64, block int) float64 {
	b := n
	if block == 0 {
		block = DefaultReconstructionBlock
	}
	if block > 0 && n > float64(block) {
		b = math.Ceil(n / math.Ceil(n/float64(block))) // ⌈n/B⌉, B = ⌈n/block⌉ blocks
	}
	extra := K // rows of inner products recomputed, or the Gram matrix
	if 9 > 2*K {
		extra = K * K
	}
	return K*n*(c+3) + n*(d+c) + K*b*(2*d+2*c+1) + (2*K+extra)*b*b
}

// sourcesNumbers returns what TransportSources adds to the Transport and
// Classifiers parts of EstimateMemory and the peak of DaDiL-R's part of the
// model with it, in numbers. After the reconstruction (its result of
// n·(d + c) + K·n·(c + 3) kept), the sources' M rows (at most
// TransportRows per source) are copied and moved, all sources at once:
// the K images of the reconstruction (K·n·d), two n×d matrices per source,
// the rows and their class plans of about (M/c)·(n/c) cells; then DaDiL-R's
// classifier trains on the n + M points stacked.
func sourcesNumbers(z Sizes, set *Settings, K, n, d, c float64) (tr, cls, peak float64) {
	f := func(v int) float64 { return float64(max(v, 0)) }
	M := min(f(z.LabeledRows), f(z.Labeled)*f(set.transportLimit()))
	c = max(c, 1)
	result := n*(d+c) + K*n*(c+3)
	tr = K*n*d + 2*f(z.Labeled)*n*d + M*d + 2*M*n/c
	cls = M * (2*d + 3*c)
	train := (n+M)*(d+c) + (n+M)*(2*d+3*c)
	return tr, cls, result + max(tr, train)
}

// modelNumbers returns the Reconstruction, Transport and Classifiers parts
// of EstimateMemory for m target rows, and the model's peak, in numbers.
// With TransportBarycenter DaDiL-R (reconstruction, transport, classifier)
// comes first and the K atoms' maps and classifiers follow at once, on the
// reconstruction's result; otherwise all K + 1 run at once.
func modelNumbers(set *Settings, K, n, d, c, m float64, block int) (rec, tr, cls, peak float64) {
	exact := func(t Transport) float64 {
		if toTarget(t) {
			return 1
		}
		return 0
	}
	points := func(t Transport) float64 {
		if t == TransportLabels {
			return max(n, m)
		}
		return n
	}
	rec = reconstructionNumbers(K, n, d, c, block)
	rows := 0.0 // the target rows, copied once for all plans
	if exact(set.Transport)+exact(set.EnsembleTransport) > 0 {
		rows = m * d
	}
	trR, trE := 2*n*m*exact(set.Transport), 2*n*m*exact(set.EnsembleTransport)
	onB := set.EnsembleTransport == TransportBarycenter
	if onB {
		trE = n * d
	}
	clsR, clsE := points(set.Transport)*(2*d+3*c), points(set.EnsembleTransport)*(2*d+3*c)
	tr, cls = rows+trR+K*trE, clsR+K*clsE
	if onB {
		result := n*(d+c) + K*n*(c+3)
		return rec, tr, cls, max(rec+rows+trR+clsR, result+K*(trE+clsE))
	}
	return rec, tr, cls, rec + tr + cls
}

// MemoryError reports a fit whose estimated memory exceeds the limit
// (Settings.MaxMemory, or the machine's).
type MemoryError struct {
	// Need is the estimated peak in bytes (MemoryEstimate.Peak, or
	// Learning for Fit alone), of which Estimate holds the parts.
	Need     int64
	Estimate MemoryEstimate
	Limit    sysmem.Limit
	// Settings (defaults filled in) and Sizes are those of the fit.
	Settings Settings
	Sizes    Sizes
}

// Error describes the fit, the estimate and the limit.
func (e *MemoryError) Error() string {
	s, z := &e.Settings, &e.Sizes
	return fmt.Sprintf("dictionary: a fit of K = %d atoms of n = %d points (batches of n_b = %d) on N = %d domains of R = %d rows (d = %d, c = %d) would need about %s (%s), more than the limit of %s",
		s.Atoms, s.Samples, s.Batch, z.Domains, z.Rows, z.Features, z.Classes, sysmem.Size(e.Need), e.Estimate, e.Limit)
}

// Resolved returns s with its zero fields set to their defaults for data
// of sizes z, as Fit sets them.
func (s Settings) Resolved(z Sizes) Settings {
	s.fillDefaults(z.atLeastOne())
	return s
}

// MemoryLimit returns the limit of Settings.MaxMemory: itself when
// positive, the machine's (sysmem) when zero, and no limit (ok false)
// when negative.
func (s *Settings) MemoryLimit() (lim sysmem.Limit, ok bool) {
	switch {
	case s.MaxMemory > 0:
		return sysmem.Limit{Bytes: s.MaxMemory, Source: "Settings.MaxMemory"}, true
	case s.MaxMemory < 0:
		return sysmem.Limit{}, false
	}
	return sysmem.Machine(), true
}

// CheckMemory returns a *MemoryError when the estimated peak memory of
// FitModel on data of sizes z with settings s (EstimateMemory,
// MemoryEstimate.Peak) exceeds the limit of s (Settings.MemoryLimit).
func CheckMemory(z Sizes, s *Settings) error {
	return checkMemory(z, s, MemoryEstimate.Peak)
}

// checkMemory is CheckMemory for the part need of the estimate.
func checkMemory(z Sizes, s *Settings, need func(MemoryEstimate) int64) error {
	var set Settings
	if s != nil {
		set = *s
	}
	lim, ok := set.MemoryLimit()
	if !ok {
		return nil
	}
	est := EstimateMemory(z, &set)
	if v := need(est); v > lim.Bytes {
		set.fillDefaults(z.atLeastOne())
		set.Progress = nil
		return &MemoryError{Need: v, Estimate: est, Limit: lim, Settings: set, Sizes: z}
	}
	return nil
}

// releaseThreshold is the size of a learning step's buffers above which
// FitModel collects them before the model is trained (releaseStep).
const releaseThreshold = 64 << 20

// releaseStep runs the garbage collector when the buffers of the learning
// step just finished (EstimateMemory's Step) are large: the model's first
// allocations (the reconstruction's matrices) are as large, and the
// collector, which runs when the heap has grown by a fraction of the live
// heap, would otherwise let both be held at once, beyond the peak that
// EstimateMemory assumes.
func releaseStep(z Sizes, s *Settings) {
	if EstimateMemory(z, s).Step > releaseThreshold {
		runtime.GC()
	}
}
