package analyze

import (
	"fmt"
	"math"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/par"
)

// StabilitySettings configure Stability.
type StabilitySettings struct {
	// Dictionary holds the settings of every fit; run r uses seed
	// Dictionary.Seed + r.
	Dictionary dictionary.Settings
	// Classifier trains DaDiL-R and DaDiL-E (nil: a softmax regression
	// with the default penalty).
	Classifier classify.Trainer
	// Seeds is the number of independent runs per problem; 0 means 5 (the
	// paper's).
	Seeds int
	// Workers bounds the fits run at once; 0 means GOMAXPROCS.
	Workers int
	// Progress, if not nil, is called after every fit.
	Progress func(done, total int, what string)
}

// StabilityRun is one independent fit.
type StabilityRun struct {
	Problem string `json:"problem"`
	Seed    uint64 `json:"seed"`
	// Loss[e] is the mean batch loss of epoch e and DomainLoss[ℓ][e] the
	// loss of domain ℓ (named in Domains).
	Loss       []float64   `json:"loss"`
	Domains    []string    `json:"domains"`
	DomainLoss [][]float64 `json:"domain_loss"`
	// DeltaX, DeltaY and DeltaA are the update magnitudes of paper eq. 13
	// after every batch.
	DeltaX  []float64 `json:"delta_x"`
	DeltaY  []float64 `json:"delta_y"`
	DeltaA  []float64 `json:"delta_a"`
	Stopped string    `json:"stopped"`
	// AccuracyR and AccuracyE are the accuracies of the run's DaDiL-R and
	// DaDiL-E on the problem's test rows.
	AccuracyR Score   `json:"accuracy_r"`
	AccuracyE Score   `json:"accuracy_e"`
	Seconds   float64 `json:"seconds"`
}

// Stability fits s.Seeds independent dictionaries per problem (paper
// appendix, "learning stability", Figures 7 and 8) and returns their loss
// curves and update magnitudes; NewStabilityBands summarises them. Runs are
// ordered by problem, then seed; they run in parallel and do not depend on
// Workers.
func Stability(problems []*dataset.Problem, s *StabilitySettings) ([]StabilityRun, error) {
	if s == nil {
		return nil, fmt.Errorf("analyze: stability without settings")
	}
	seeds := s.Seeds
	if seeds == 0 {
		seeds = 5
	}
	if seeds < 1 {
		return nil, fmt.Errorf("analyze: stability: %d seeds", seeds)
	}
	for i := range problems {
		if err := check(problems[i]); err != nil {
			return nil, err
		}
	}
	n := len(problems) * seeds
	if n == 0 {
		return nil, fmt.Errorf("analyze: stability: no problem")
	}
	runs := make([]StabilityRun, n)
	done := 0
	err := par.Run(n, s.Workers, func(i int) error {
		p := problems[i/seeds]
		set := inner(s.Dictionary, n, s.Workers)
		set.Seed = s.Dictionary.Seed + uint64(i%seeds)
		d, m, err := fit(p, set, s.Classifier)
		if err != nil {
			return err
		}
		h := d.History
		r := StabilityRun{
			Problem: p.Name, Seed: set.Seed, Loss: h.Loss, Domains: d.Names,
			DeltaX: h.DeltaX, DeltaY: h.DeltaY, DeltaA: h.DeltaA, Stopped: dictionary.StopReason(h.Stopped),
			Seconds: h.Elapsed.Seconds(),
		}
		for l := range d.Names {
			series := make([]float64, len(h.DomainLoss))
			for e := range h.DomainLoss {
				series[e] = h.DomainLoss[e][l]
			}
			r.DomainLoss = append(r.DomainLoss, series)
		}
		if r.AccuracyR, err = accuracy(p, m.PredictR); err != nil {
			return err
		}
		if r.AccuracyE, err = accuracy(p, m.PredictE); err != nil {
			return err
		}
		runs[i] = r
		return nil
	}, func(i int) {
		done++
		if s.Progress != nil {
			s.Progress(done, n, fmt.Sprintf("%s, seed %d", problems[i/seeds].Name, s.Dictionary.Seed+uint64(i%seeds)))
		}
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// Band summarises series of possibly different lengths (runs stopped at
// different epochs): at every index i, the mean of the series that reach
// i and mean ± k standard deviations (the sample standard deviation,
// zero when only one series reaches i). Count[i] is the number of series.
type Band struct {
	Mean  []float64 `json:"mean"`
	Lo    []float64 `json:"lo"`
	Hi    []float64 `json:"hi"`
	Count []int     `json:"count"`
}

// NewBand returns the band mean ± k σ of series.
func NewBand(series [][]float64, k float64) Band {
	n := 0
	for _, s := range series {
		n = max(n, len(s))
	}
	b := Band{Mean: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n), Count: make([]int, n)}
	for i := range n {
		var sum, sq float64
		c := 0
		for _, s := range series {
			if i < len(s) {
				sum += s[i]
				c++
			}
		}
		mean := sum / float64(c)
		for _, s := range series {
			if i < len(s) {
				sq += (s[i] - mean) * (s[i] - mean)
			}
		}
		sd := 0.0
		if c > 1 {
			sd = math.Sqrt(sq / float64(c-1))
		}
		b.Mean[i], b.Lo[i], b.Hi[i], b.Count[i] = mean, mean-k*sd, mean+k*sd, c
	}
	return b
}

// NewRangeBand returns the mean of series with the band between their
// smallest and largest values at every index — for quantities spanning
// orders of magnitude, such as the update magnitudes, whose mean − 2σ is
// often negative.
func NewRangeBand(series [][]float64) Band {
	b := NewBand(series, 0)
	for i := range b.Mean {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range series {
			if i < len(s) {
				lo, hi = math.Min(lo, s[i]), math.Max(hi, s[i])
			}
		}
		b.Lo[i], b.Hi[i] = lo, hi
	}
	return b
}

// StabilityBands summarise the runs of one problem as paper Figures 7 and
// 8 draw them: the loss curves as mean ± 2σ (NewBand with k = 2), the
// update magnitudes Δ_X, Δ_Y and Δ_A as mean and min–max (NewRangeBand),
// over the runs that reach every epoch or batch.
type StabilityBands struct {
	Loss   Band `json:"loss"`
	DeltaX Band `json:"delta_x"`
	DeltaY Band `json:"delta_y"`
	DeltaA Band `json:"delta_a"`
}

// NewStabilityBands returns the bands of the runs of problem among runs
// (those of Stability, for instance); they are empty when no run is of
// problem.
func NewStabilityBands(runs []StabilityRun, problem string) StabilityBands {
	var loss, dx, dy, da [][]float64
	for _, r := range runs {
		if r.Problem != problem {
			continue
		}
		loss = append(loss, r.Loss)
		dx, dy, da = append(dx, r.DeltaX), append(dy, r.DeltaY), append(da, r.DeltaA)
	}
	return StabilityBands{
		Loss: NewBand(loss, 2), DeltaX: NewRangeBand(dx), DeltaY: NewRangeBand(dy), DeltaA: NewRangeBand(da),
	}
}
