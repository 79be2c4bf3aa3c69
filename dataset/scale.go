package dataset

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/linalg"
)

// Scaling is a kind of per-feature scaling.
type Scaling int

const (
	// ScaleNone leaves features unchanged.
	ScaleNone Scaling = iota

	// ScaleMinMax maps each feature's range over the fitted data to
	// [0, 1].
	ScaleMinMax

	// ScaleStandard maps each feature to zero mean and unit variance over
	// the fitted data (population variance, dividing by n).
	ScaleStandard
)

// scalingNames holds the names of the kinds, as ParseScaling accepts them.
var scalingNames = [...]string{ScaleNone: "none", ScaleMinMax: "minmax", ScaleStandard: "standard"}

// String returns the name of s: "none", "minmax" or "standard", or
// "Scaling(N)" for other values.
func (s Scaling) String() string {
	if s >= 0 && int(s) < len(scalingNames) {
		return scalingNames[s]
	}
	return fmt.Sprintf("Scaling(%d)", int(s))
}

// ParseScaling returns the kind of scaling named s: "none", "minmax" or
// "standard", ignoring case and surrounding spaces.
func ParseScaling(s string) (Scaling, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for k, name := range scalingNames {
		if t == name {
			return Scaling(k), nil
		}
	}
	return 0, fmt.Errorf("dataset: unknown scaling %s (want none, minmax or standard)", clip.Quote(s))
}

// MarshalText implements encoding.TextMarshaler, so that a Scaler
// serialises with the name of its kind.
func (s Scaling) MarshalText() ([]byte, error) {
	if s < 0 || int(s) >= len(scalingNames) {
		return nil, fmt.Errorf("dataset: invalid scaling %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, as ParseScaling.
func (s *Scaling) UnmarshalText(text []byte) error {
	k, err := ParseScaling(string(text))
	if err != nil {
		return err
	}
	*s = k
	return nil
}

// Scaler is a per-feature affine map x' = (x − Offset[j])·Scale[j] for
// feature j. Its fields are exported so that it can be saved and
// restored, for example as JSON.
type Scaler struct {
	// Kind is the kind of scaling the scaler was fitted for.
	Kind Scaling

	// Offset and Scale hold one value per feature.
	Offset, Scale []float64
}

// FitScaler fits a scaler of the given kind over all rows of all the
// domains together, which must be compatible (see CheckCompatible) and
// hold finite features.
//
// For ScaleMinMax, Offset is the minimum of each feature and Scale the
// inverse of its range, so the fitted data map into [0, 1]. For
// ScaleStandard, Offset is the mean and Scale the inverse of the
// population standard deviation. For ScaleNone, Offset is 0 and Scale 1.
// A constant feature, or one whose range or deviation is so small that
// its inverse overflows, gets Scale 1: it maps to 0 on the fitted data and
// is shifted, not blown up, elsewhere. It is an error if a feature's
// range does not fit in a float64.
func FitScaler(kind Scaling, domains ...*File) (*Scaler, error) {
	if kind < 0 || int(kind) >= len(scalingNames) {
		return nil, fmt.Errorf("dataset: invalid scaling %d", int(kind))
	}
	if err := CheckCompatible(domains...); err != nil {
		return nil, err
	}
	_, d := domains[0].X.Dims()
	s := &Scaler{Kind: kind, Offset: make([]float64, d), Scale: make([]float64, d)}
	for j := range s.Scale {
		s.Scale[j] = 1
	}
	for i, dom := range domains {
		if err := checkFeatures(dom.X); err != nil {
			return nil, fmt.Errorf("dataset: %s: features: %w", dom.label(i), err)
		}
	}
	var err error
	switch kind {
	case ScaleMinMax:
		err = s.fitMinMax(domains)
	case ScaleStandard:
		err = s.fitStandard(domains)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// fitMinMax sets Offset[j] to min_i x_ij over the domains' rows and
// Scale[j] to 1/(max_i x_ij − Offset[j]) where that is positive and
// finite, leaving Scale[j] = 1 elsewhere.
func (s *Scaler) fitMinMax(domains []*File) error {
	d := len(s.Offset)
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range lo {
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
	}
	eachRow(domains, func(row []float64) {
		for j, v := range row {
			lo[j] = min(lo[j], v)
			hi[j] = max(hi[j], v)
		}
	})
	for j := range lo {
		r := hi[j] - lo[j]
		if math.IsInf(r, 0) {
			return fmt.Errorf("dataset: feature %d: range [%v, %v] does not fit in a float64", j+1, lo[j], hi[j])
		}
		s.Offset[j] = lo[j]
		if inv := 1 / r; r > 0 && !math.IsInf(inv, 0) {
			s.Scale[j] = inv
		}
	}
	return nil
}

// fitStandard sets Offset to the features' means μ_j over the domains' n
// rows (see featureMeans) and Scale[j] to 1/σ_j, σ_j the population
// standard deviation, where that is positive and finite, leaving Scale[j]
// = 1 elsewhere. σ_j is computed as b_j·√(Σ_i ((x_ij − μ_j)/b_j)² / n) with
// b_j = max_i |x_ij − μ_j|, so that squaring cannot overflow.
func (s *Scaler) fitStandard(domains []*File) error {
	d := len(s.Offset)
	mean := s.Offset
	n := featureMeans(domains, mean)
	big := make([]float64, d)
	eachRow(domains, func(row []float64) {
		for j, v := range row {
			big[j] = max(big[j], math.Abs(v-mean[j]))
		}
	})
	if j := linalg.FirstNonFinite(big); j >= 0 {
		return fmt.Errorf("dataset: feature %d: deviations from the mean do not fit in a float64", j+1)
	}
	ss := make([]float64, d)
	eachRow(domains, func(row []float64) {
		for j, v := range row {
			if big[j] > 0 {
				t := (v - mean[j]) / big[j]
				ss[j] += t * t
			}
		}
	})
	for j := range ss {
		std := big[j] * math.Sqrt(ss[j]/float64(n))
		if inv := 1 / std; std > 0 && !math.IsInf(inv, 0) {
			s.Scale[j] = inv
		}
	}
	return nil
}

// featureMeans sets mean[j] to Σ_i x_ij / n over the domains' n rows and
// returns n. If a sum overflows, every mean is recomputed as Σ_i (x_ij / n)
// instead.
func featureMeans(domains []*File, mean []float64) int {
	n := 0
	sum := make([]float64, len(mean))
	eachRow(domains, func(row []float64) {
		n++
		for j, v := range row {
			sum[j] += v
		}
	})
	for j := range mean {
		mean[j] = sum[j] / float64(n)
	}
	if linalg.FirstNonFinite(mean) >= 0 {
		for j := range mean {
			mean[j] = 0
		}
		eachRow(domains, func(row []float64) {
			for j, v := range row {
				mean[j] += v / float64(n)
			}
		})
	}
	return n
}

// eachRow calls fn with every row of every domain's features.
func eachRow(domains []*File, fn func(row []float64)) {
	for _, dom := range domains {
		raw := dom.X.RawMatrix()
		for i := range raw.Rows {
			fn(raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols])
		}
	}
}

// check returns an error unless s is consistent and fits d features.
func (s *Scaler) check(d int) error {
	if s == nil {
		return errors.New("dataset: nil Scaler")
	}
	if len(s.Offset) != len(s.Scale) {
		return fmt.Errorf("dataset: invalid Scaler: %d offsets and %d scales", len(s.Offset), len(s.Scale))
	}
	if len(s.Offset) != d {
		return fmt.Errorf("dataset: the scaler was fitted for %d features, the data have %d", len(s.Offset), d)
	}
	return nil
}

// Transform stores the scaled features of X in dst. dst must be X, an
// empty matrix (which Transform resizes, as gonum's methods do) or a
// matrix of the same shape as X that does not share storage with it. It is
// an error if X does not have one column per feature of s.
func (s *Scaler) Transform(dst, X *mat.Dense) error {
	if X == nil || X.IsEmpty() {
		return errors.New("dataset: Transform: no data")
	}
	if dst == nil {
		return errors.New("dataset: Transform: nil destination")
	}
	r, c := X.Dims()
	if err := s.check(c); err != nil {
		return err
	}
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
	} else if dr, dc := dst.Dims(); dr != r || dc != c {
		return fmt.Errorf("dataset: Transform: destination is %d×%d, the data %d×%d", dr, dc, r, c)
	}
	src, out := X.RawMatrix(), dst.RawMatrix()
	for i := range r {
		in := src.Data[i*src.Stride : i*src.Stride+c]
		o := out.Data[i*out.Stride : i*out.Stride+c]
		for j, v := range in {
			o[j] = (v - s.Offset[j]) * s.Scale[j]
		}
	}
	return nil
}

// TransformFile returns a copy of d with scaled features. The copy
// shares nothing with d; d is unchanged.
func (s *Scaler) TransformFile(d *File) (*File, error) {
	if d == nil {
		return nil, errors.New("dataset: TransformFile: nil domain")
	}
	if d.X == nil || d.X.IsEmpty() {
		return nil, fmt.Errorf("dataset: %s: no data", d.label(0))
	}
	var x mat.Dense
	if err := s.Transform(&x, d.X); err != nil {
		return nil, fmt.Errorf("%w (domain %s)", err, d.label(0))
	}
	out := *d
	out.X = &x
	if d.Labels != nil {
		out.Labels = append([]int(nil), d.Labels...)
	}
	return &out, nil
}

// Inverse stores in dst the features whose scaled values are the rows of
// Xs: x = x'/Scale + Offset, the inverse of Transform. dst follows
// Transform's rules.
func (s *Scaler) Inverse(dst, Xs *mat.Dense) error {
	return s.mapValues("Inverse", dst, Xs, func(j int, v float64) float64 { return v/s.Scale[j] + s.Offset[j] })
}

// InverseSpread stores in dst the spreads (standard deviations, or any
// lengths along the features) whose scaled values are the rows of Ss:
// s = s'/|Scale|, the inverse of Transform for differences, which the
// offsets do not move. dst follows Transform's rules.
func (s *Scaler) InverseSpread(dst, Ss *mat.Dense) error {
	return s.mapValues("InverseSpread", dst, Ss, func(j int, v float64) float64 { return v / math.Abs(s.Scale[j]) })
}

// mapValues sets dst_ij = f(j, X_ij) for the method called name, after
// checking X against s and dst as Transform does.
func (s *Scaler) mapValues(name string, dst, X *mat.Dense, f func(j int, v float64) float64) error {
	if X == nil || X.IsEmpty() {
		return fmt.Errorf("dataset: %s: no data", name)
	}
	if dst == nil {
		return fmt.Errorf("dataset: %s: nil destination", name)
	}
	r, c := X.Dims()
	if err := s.check(c); err != nil {
		return err
	}
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
	} else if dr, dc := dst.Dims(); dr != r || dc != c {
		return fmt.Errorf("dataset: %s: destination is %d×%d, the data %d×%d", name, dr, dc, r, c)
	}
	for i := range r {
		in, o := X.RawRowView(i), dst.RawRowView(i)
		for j, v := range in {
			o[j] = f(j, v)
		}
	}
	return nil
}
