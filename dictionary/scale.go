package dictionary

import (
	"fmt"

	"github.com/dadil/dadil/dataset"
)

// The ratios of the atoms' points K·n to the rows of the data beyond which
// ScaleWarning warns and CheckScale refuses.
const (
	ScaleRatio    = 20
	MaxScaleRatio = 1000
)

// CheckScale refuses, as Fit does, a fit on data of sizes z with settings s
// (nil: the defaults) whose time is out of scale with the data:
//
//   - more atoms than labeled rows: every atom is a labeled distribution
//     that the labeled rows must determine (with InitData each starts as a
//     draw of them), so beyond one atom per labeled row the dictionary only
//     repeats the data, at the cost of K barycenter problems per domain
//     and step;
//   - atoms holding more than MaxScaleRatio times as many points as the
//     data have rows (K·n > 1000·R): learning takes time proportional to
//     K·n (every epoch draws ⌈n/n_b⌉ batches, each solving K barycenter
//     problems per domain) while the information stays that of the R
//     rows, so such a fit runs hundreds of times longer than one of
//     comparable quality.
//
// The defaults and the paper's presets stay below 8 times the rows on the
// benchmarks (Caltech-Office: K = 8, n = 1000 on 2533 rows), with K ≤ 8
// on hundreds to thousands of labeled rows.
func CheckScale(z Sizes, s *Settings) error {
	set := resolved(z, s)
	switch {
	case z.LabeledRows > 0 && set.Atoms > z.LabeledRows:
		return fmt.Errorf("dictionary: K = %d atoms for %d labeled rows: a dictionary cannot have more atoms than labeled rows to learn them from (the benchmarks use K ≤ 8 on hundreds of rows)", set.Atoms, z.LabeledRows)
	case z.Rows > 0 && scale(z, &set) > MaxScaleRatio:
		return fmt.Errorf("dictionary: the K = %d atoms of n = %d points hold %.0f times the %d rows of the data, more than %d times: learning takes time proportional to K·n for no more information", set.Atoms, set.Samples, scale(z, &set), z.Rows, MaxScaleRatio)
	}
	return nil
}

// resolved returns s (nil: the zero settings) with its defaults for data
// of sizes z.
func resolved(z Sizes, s *Settings) Settings {
	var set Settings
	if s != nil {
		set = *s
	}
	return set.Resolved(z)
}

// scale returns K·n/R.
func scale(z Sizes, s *Settings) float64 {
	return float64(s.Atoms) * float64(s.Samples) / float64(z.Rows)
}

// ScaleWarning returns a warning, or "", about a fit on data of sizes z
// with settings s (nil: the defaults) whose atoms hold more than
// ScaleRatio times as many points as the data have rows: it takes far
// longer than a fit of comparable quality (see CheckScale).
func ScaleWarning(z Sizes, s *Settings) string {
	set := resolved(z, s)
	if z.Rows <= 0 || scale(z, &set) <= ScaleRatio {
		return ""
	}
	return fmt.Sprintf("the %d atoms of %d points hold %.0f times the %d rows of the data: learning takes time proportional to K·n for no more information; fewer atoms or points fit as well, faster", set.Atoms, set.Samples, scale(z, &set), z.Rows)
}

// checkWBRMemory refuses a WBR fit whose data and step (EstimateMemory's
// Data and Step with the sources as the K atoms and the target as the
// only domain) exceed the limit of set.
func checkWBRMemory(all []dataset.Domain, target dataset.Domain, classes int, set *Settings) error {
	lim, ok := set.MemoryLimit()
	if !ok {
		return nil
	}
	z := SizesOf(all, classes)
	K, d := float64(len(all)-1), float64(z.Features)
	est := MemoryEstimate{
		Data: bytesOf(float64(z.Rows) * (d + 1)),
		Step: bytesOf(stepNumbers(1, K, float64(set.Batch), d, float64(classes), false)),
	}
	if v := est.Learning(); v > lim.Bytes {
		s := *set
		s.Samples, _ = target.X.Dims()
		s.Progress = nil
		return &MemoryError{Need: v, Estimate: est, Limit: lim, Settings: s, Sizes: z}
	}
	return nil
}
