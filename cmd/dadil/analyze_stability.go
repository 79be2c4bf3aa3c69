package main

import (
	"fmt"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/dadil/dadil/analyze"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/figure"
)

// stabilityReport is DIR/stability.json.
type stabilityReport struct {
	Analysis string `json:"analysis"`
	settingsReport
	Runs []analyze.StabilityRun `json:"runs"`
	// Bands summarise the runs of every problem: the loss as mean ± 2σ,
	// the update magnitudes as mean and min–max.
	Bands map[string]map[string]analyze.Band `json:"bands"`
}

// stabilityCommand holds the flags of dadil analyze stability.
type stabilityCommand struct {
	*analyzeFlags
	seeds int
}

// newStabilityCommand registers the flags of dadil analyze stability.
func newStabilityCommand(e *env) *stabilityCommand {
	c := &stabilityCommand{analyzeFlags: newAnalyzeFlags("stability", e)}
	c.fs.IntVar(&c.seeds, "seeds", 5, "independent runs (seeds --seed, --seed+1, …)")
	c.usage("Learning stability (paper Figures 7 and 8): the loss curves of independent runs, mean ± 2σ over\n" +
		"seeds, and the update magnitudes Δ_X, Δ_Y, Δ_A of eq. 13 after every batch.")
	return c
}

func runAnalyzeStability(args []string, e *env) error {
	c := newStabilityCommand(e)
	start := time.Now()
	ps, set, err := c.problems(args)
	if err != nil {
		return err
	}
	if err := inRange("--seeds", c.seeds, 2, 10000, "a band needs at least 2 runs"); err != nil {
		return err
	}
	if err := c.checkFits(ps, []dictionary.Settings{set}, len(ps)*c.seeds, false); err != nil {
		return err
	}
	defer useMemoryLimit(memoryLimit(c.dict.maxBytes))()
	runs, err := analyze.Stability(ps, &analyze.StabilitySettings{Dictionary: set, Classifier: c.trainer, Seeds: c.seeds, Workers: c.workers, Progress: c.progress(e)})
	if err != nil {
		return err
	}
	rep := stabilityReport{Analysis: "stability", settingsReport: c.report(ps, set, start), Runs: runs, Bands: map[string]map[string]analyze.Band{}}
	var md markdown
	md.h(1, "Learning stability")
	md.p("Problems: %s; %d runs each (seeds %d … %d). The loss band is mean ± 2σ, the update bands mean and min–max, over the runs that reached an epoch or batch (runs stopped by the plateau rule end at different epochs); the drops of the updates are the plateau rule's ×0.1 learning-rate steps.",
		strings.Join(names(ps), ", "), c.seeds, set.Seed, set.Seed+uint64(c.seeds)-1)
	var rows [][]string
	var lossPlots []*plot.Plot
	var deltaPlots [][]*plot.Plot
	for _, p := range ps {
		b := analyze.NewStabilityBands(runs, p.Name)
		rep.Bands[p.Name] = map[string]analyze.Band{"loss": b.Loss, "delta_x": b.DeltaX, "delta_y": b.DeltaY, "delta_a": b.DeltaA}
		rows = append(rows, stabilityRow(p, runs))
		loss, deltas, err := stabilityPlots(p.Name, b)
		if err != nil {
			return err
		}
		lossPlots, deltaPlots = append(lossPlots, loss), append(deltaPlots, deltas)
	}
	md.table([]string{"problem", "DaDiL-R (%)", "DaDiL-E (%)", "final loss", "epochs"}, rows)
	out := newOutput()
	if err := out.json("stability.json", rep); err != nil {
		return err
	}
	out.figure("stability_loss", gridOf(lossPlots, 2), 12*vg.Centimeter, 8*vg.Centimeter)
	out.figure("stability_updates", deltaPlots, 11*vg.Centimeter, 8*vg.Centimeter)
	md.image("loss curves over seeds", "stability_loss.png")
	md.image("update magnitudes", "stability_updates.png")
	return c.finish(e, out, &md, start)
}

// stabilityRow is the table row of one problem: the accuracies and the
// final loss over its runs, mean ± std, and the range of their epochs.
func stabilityRow(p *dataset.Problem, runs []analyze.StabilityRun) []string {
	var accR, accE, final, epochs []float64
	for _, r := range runs {
		if r.Problem != p.Name {
			continue
		}
		accR, accE = append(accR, float64(r.AccuracyR)), append(accE, float64(r.AccuracyE))
		final = append(final, r.Loss[len(r.Loss)-1])
		epochs = append(epochs, float64(len(r.Loss)))
	}
	mr, sr := stat.MeanStdDev(accR, nil)
	me, se := stat.MeanStdDev(accE, nil)
	mf, sf := stat.MeanStdDev(final, nil)
	lo, hi := minMax(epochs)
	acc := fmt.Sprintf("%.2f ± %.2f", mr, sr)
	accEText := fmt.Sprintf("%.2f ± %.2f", me, se)
	if p.Test == nil {
		acc, accEText = "–", "–"
	}
	return []string{p.Name, acc, accEText, fmt.Sprintf("%.4g ± %.2g", mf, sf), fmt.Sprintf("%.0f–%.0f", lo, hi)}
}

// stabilityPlots draws the loss band of one problem, and its update bands
// in a row.
func stabilityPlots(problem string, b analyze.StabilityBands) (*plot.Plot, []*plot.Plot, error) {
	loss, err := figure.Band(problem+": loss, mean ± 2σ", "epoch", "mean batch loss", []string{""}, index(len(b.Loss.Mean)), [][]float64{b.Loss.Mean}, [][]float64{b.Loss.Lo}, [][]float64{b.Loss.Hi}, false)
	if err != nil {
		return nil, nil, err
	}
	var row []*plot.Plot
	for _, d := range []struct {
		band analyze.Band
		name string
	}{{b.DeltaX, "Δ_X (atom features)"}, {b.DeltaY, "Δ_Y (atom labels)"}, {b.DeltaA, "Δ_A (coordinates)"}} {
		pl, err := figure.Band(problem+": "+d.name, "batch", "squared update (mean, min–max)", []string{""}, index(len(d.band.Mean)), [][]float64{d.band.Mean}, [][]float64{d.band.Lo}, [][]float64{d.band.Hi}, true)
		if err != nil {
			return nil, nil, err
		}
		row = append(row, pl)
	}
	return loss, row, nil
}

// index returns 1, 2, …, n.
func index(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i + 1)
	}
	return x
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}
