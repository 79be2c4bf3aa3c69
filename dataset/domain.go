package dataset

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
)

// Domain is one domain ready for learning: features and, for a labeled
// domain, the class index of every row. Every package of the module that
// learns from domains takes this type.
type Domain struct {
	// Name identifies the domain in messages and reports.
	Name string
	// X holds the n×d features, one row per sample.
	X *mat.Dense
	// Y holds the class index (0 … classes−1) of every row of X; it is
	// nil for an unlabeled domain.
	Y []int
}

// Labeled reports whether the domain carries labels.
func (d *Domain) Labeled() bool { return d.Y != nil }

// Rows returns the number of rows of X, 0 when X is nil.
func (d *Domain) Rows() int {
	if d.X == nil {
		return 0
	}
	r, _ := d.X.Dims()
	return r
}

// nameOr returns the domain's name, or def when it has none.
func (d *Domain) nameOr(def string) string {
	if d.Name != "" {
		return d.Name
	}
	return def
}

// Problem is a multi-source domain-adaptation problem: labeled source
// domains, the unlabeled rows of one target domain, and optionally labeled
// target rows that only score predictions. Methods learn from Sources and
// Target; nothing that fits a model ever reads Test.
type Problem struct {
	// Name identifies the problem in messages, for example "W fold 1".
	Name string
	// Classes is the number of classes c: labels are class indices in
	// [0, c).
	Classes int
	// Sources are the labeled source domains.
	Sources []Domain
	// Target holds the target rows that methods adapt to. Its Y must be
	// nil: target labels belong in Test.
	Target Domain
	// Test holds target rows with their labels, used only to score
	// predictions: a benchmark's test fold, or the target rows themselves
	// when the user's target file carries labels. A label of −1 marks a
	// class the sources do not have; such a row counts as an error. Test
	// is nil when no target labels are known.
	Test *Domain
}

// Domains returns the domains a dictionary learns from: the sources, in
// order, then the target without labels. The target is at TargetIndex.
func (p *Problem) Domains() []Domain {
	ds := make([]Domain, 0, len(p.Sources)+1)
	ds = append(ds, p.Sources...)
	t := p.Target
	t.Y = nil
	t.Name = t.nameOr("target")
	return append(ds, t)
}

// TargetIndex returns the index of the target among Domains.
func (p *Problem) TargetIndex() int { return len(p.Sources) }

// Check returns an error unless p is a problem methods can fit: at least
// one source and two classes, every source labeled with indices in
// [0, Classes) and as many labels as rows, the target non-empty and
// unlabeled, every domain with the target's number of features and
// finite features, and Test, when present, consistent with the target.
// Errors name the domain at fault (by Name, else "source k").
func (p *Problem) Check() error {
	if p == nil {
		return errors.New("dataset: no problem")
	}
	if len(p.Sources) == 0 {
		return errors.New("dataset: no source domain")
	}
	if p.Classes < 2 {
		return fmt.Errorf("dataset: %d classes; need at least 2", p.Classes)
	}
	if p.Target.X == nil || p.Target.X.IsEmpty() {
		return errors.New("dataset: the target has no rows")
	}
	if p.Target.Y != nil {
		return errors.New("dataset: the target carries labels: they belong in Problem.Test, which only scores")
	}
	_, d := p.Target.X.Dims()
	if err := finite("target", p.Target.X); err != nil {
		return err
	}
	for k := range p.Sources {
		if err := p.checkSource(k, d); err != nil {
			return err
		}
	}
	return p.checkTest(d)
}

// checkSource checks source k for Check, d being the target's number of
// features.
func (p *Problem) checkSource(k, d int) error {
	s := &p.Sources[k]
	name := s.nameOr(fmt.Sprintf("source %d", k))
	if s.X == nil || s.X.IsEmpty() {
		return fmt.Errorf("dataset: %s has no rows", name)
	}
	n, ds := s.X.Dims()
	if ds != d {
		return fmt.Errorf("dataset: %s has %d features, the target %d", name, ds, d)
	}
	if len(s.Y) != n {
		return fmt.Errorf("dataset: %s has %d rows but %d labels", name, n, len(s.Y))
	}
	for i, y := range s.Y {
		if y < 0 || y >= p.Classes {
			return fmt.Errorf("dataset: %s: label %d of row %d is outside [0, %d)", name, y, i, p.Classes)
		}
	}
	return finite(name, s.X)
}

// checkTest checks Test for Check: d features and a label in [−1, Classes)
// for every row.
func (p *Problem) checkTest(d int) error {
	t := p.Test
	if t == nil {
		return nil
	}
	if t.X == nil || t.X.IsEmpty() {
		return errors.New("dataset: the test rows are empty")
	}
	n, dt := t.X.Dims()
	if dt != d {
		return fmt.Errorf("dataset: the test rows have %d features, the target %d", dt, d)
	}
	if len(t.Y) != n {
		return fmt.Errorf("dataset: %d test rows but %d test labels", n, len(t.Y))
	}
	for i, y := range t.Y {
		if y < -1 || y >= p.Classes {
			return fmt.Errorf("dataset: test label %d of row %d is outside [−1, %d)", y, i, p.Classes)
		}
	}
	return nil
}

func finite(name string, X *mat.Dense) error {
	if i, j, ok := linalg.FirstNonFiniteEntry(X); !ok {
		return fmt.Errorf("dataset: %s: feature (%d, %d) is %g", name, i, j, X.At(i, j))
	}
	return nil
}

// HoldOut returns the problem of held-out-source validation that holds
// source k out: the other sources stay labeled, and source k's rows are
// both the unlabeled target and, with their labels, the test rows. The
// target of p is not used. The result shares the domains' matrices with p.
// k must index p.Sources: HoldOut panics otherwise, as an index out of
// range does.
func (p *Problem) HoldOut(k int) *Problem {
	src := p.Sources[k]
	name := src.nameOr(fmt.Sprintf("source %d", k))
	q := &Problem{Name: name + " held out", Classes: p.Classes}
	if p.Name != "" {
		q.Name = p.Name + ", " + q.Name
	}
	q.Sources = make([]Domain, 0, len(p.Sources)-1)
	q.Sources = append(q.Sources, p.Sources[:k]...)
	q.Sources = append(q.Sources, p.Sources[k+1:]...)
	q.Target = Domain{Name: name, X: src.X}
	q.Test = &Domain{Name: name, X: src.X, Y: src.Y}
	return q
}

// PoolSources stacks the sources into one matrix and one label vector, in
// order (Pool). The sources must be valid (see Check).
func (p *Problem) PoolSources() (*mat.Dense, []int) { return Pool(p.Sources) }

// Pool stacks the domains into one matrix and one label vector (nil when
// no domain is labeled), in order. The domains must have features of the
// same dimension and be all labeled or all unlabeled: Pool panics on an
// empty list or domains without features, as slices of a wrong length do.
func Pool(domains []Domain) (*mat.Dense, []int) {
	n := 0
	_, d := domains[0].X.Dims()
	for _, s := range domains {
		n += s.Rows()
	}
	X := mat.NewDense(n, d, nil)
	var y []int
	if domains[0].Y != nil {
		y = make([]int, 0, n)
	}
	at := 0
	for _, s := range domains {
		r := s.Rows()
		X.Slice(at, at+r, 0, d).(*mat.Dense).Copy(s.X)
		y = append(y, s.Y...)
		at += r
	}
	return X, y
}

// Subsample returns p with every source and the target reduced to at most
// n rows each, drawn uniformly without replacement and kept in their order,
// by a random stream seeded by seed (the sources first, in order, then the
// target), and whether it drew any rows. Domains of at most n rows are kept
// as they are; the others are copies. Test is kept whole. n must be
// positive and p valid (see Check): Subsample panics otherwise.
func (p *Problem) Subsample(n int, seed uint64) (*Problem, bool) {
	rng := rand.New(rand.NewPCG(seed, 0x636170))
	q := *p
	q.Sources = make([]Domain, len(p.Sources))
	drew := false
	for k, s := range p.Sources {
		q.Sources[k] = s
		idx := drawRows(rng, s.Rows(), n)
		if idx == nil {
			continue
		}
		drew = true
		d := Domain{Name: s.Name, X: linalg.Rows(s.X, idx), Y: make([]int, len(idx))}
		for i, r := range idx {
			d.Y[i] = s.Y[r]
		}
		q.Sources[k] = d
	}
	if idx := drawRows(rng, p.Target.Rows(), n); idx != nil {
		drew = true
		q.Target.X = linalg.Rows(p.Target.X, idx)
	}
	return &q, drew
}

// drawRows returns n distinct indices below rows in increasing order, or
// nil when rows ≤ n (keep them all).
func drawRows(rng *rand.Rand, rows, n int) []int {
	if rows <= n {
		return nil
	}
	idx := rng.Perm(rows)[:n]
	slices.Sort(idx)
	return idx
}
