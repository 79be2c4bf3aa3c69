package dictionary

import (
	"fmt"

	"github.com/dadil/dadil/dataset"
)

// checkScale refuses more atoms than labeled rows. Every atom is a labeled
// distribution that the labeled rows must determine (with InitData each
// starts as a draw of them), and the time of a step grows with K: beyond
// one atom per labeled row the dictionary only repeats the data, at a
// cost of K barycenter problems a step. The benchmarks use K ≤ 8 on
// hundreds to thousands of labeled rows.
func checkScale(z Sizes, s *Settings) error {
	if z.LabeledRows > 0 && s.Atoms > z.LabeledRows {
		return fmt.Errorf("dictionary: K = %d atoms for %d labeled rows: a dictionary cannot have more atoms than labeled rows to learn them from (the benchmarks use K ≤ 8 on hundreds of rows)", s.Atoms, z.LabeledRows)
	}
	return nil
}

// ScaleRatio is the ratio of the atoms' points K·n to the rows of the
// data beyond which ScaleWarning warns.
const ScaleRatio = 20

// ScaleWarning returns a warning, or "", about a fit on data of sizes z
// with settings s (nil: the defaults) whose atoms hold more than
// ScaleRatio times as many points as the data have rows. Learning takes
// time proportional to K·n (every epoch draws ⌈n/n_b⌉ batches, each
// solving K barycenter problems per domain), while the information stays
// that of the rows: such a fit takes far longer for no better
// dictionary. The defaults and the paper's presets stay below 8 times the
// rows on the benchmarks (Caltech-Office: K = 8, n = 1000 on 2533 rows).
func ScaleWarning(z Sizes, s *Settings) string {
	var set Settings
	if s != nil {
		set = *s
	}
	set.fillDefaults(max(z.Labeled, 1), max(z.Classes, 1))
	pts := float64(set.Atoms) * float64(set.Samples)
	if z.Rows <= 0 || pts <= ScaleRatio*float64(z.Rows) {
		return ""
	}
	return fmt.Sprintf("the %d atoms of %d points hold %.0f times the %d rows of the data: learning takes time proportional to K·n for no more information; fewer atoms or points fit as well, faster", set.Atoms, set.Samples, pts/float64(z.Rows), z.Rows)
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
