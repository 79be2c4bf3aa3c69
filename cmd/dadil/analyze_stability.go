package main

import (
	"fmt"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/dadil/dadil/analyze"
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

func runAnalyzeStability(args []string, e *env) error {
	a := newAnalyzeFlags("stability", e)
	seeds := a.fs.Int("seeds", 5, "independent runs (seeds --seed, --seed+1, …)")
	a.usage("Learning stability (paper Figures 7 and 8): the loss curves of independent runs, mean ± 2σ over\n" +
		"seeds, and the update magnitudes Δ_X, Δ_Y, Δ_A of eq. 13 after every batch.")
	start := time.Now()
	ps, set, err := a.problems(args)
	if err != nil {
		return err
	}
	if err := inRange("--seeds", *seeds, 2, 10000, "a band needs at least 2 runs"); err != nil {
		return err
	}
	runs, err := analyze.Stability(ps, &analyze.StabilitySettings{Dictionary: set, Seeds: *seeds, Workers: a.workers, Progress: a.progress(e)})
	if err != nil {
		return err
	}
	rep := stabilityReport{Analysis: "stability", settingsReport: a.report(ps, set, start), Runs: runs, Bands: map[string]map[string]analyze.Band{}}
	var md markdown
	md.h(1, "Learning stability")
	md.p("Problems: %s; %d runs each (seeds %d … %d). The loss band is mean ± 2σ, the update bands mean and min–max, over the runs that reached an epoch or batch (runs stopped by the plateau rule end at different epochs); the drops of the updates are the plateau rule's ×0.1 learning-rate steps.",
		strings.Join(names(ps), ", "), *seeds, set.Seed, set.Seed+uint64(*seeds)-1)
	var rows [][]string
	var lossPlots []*plot.Plot
	var deltaPlots [][]*plot.Plot
	for _, p := range ps {
		var loss, dx, dy, da [][]float64
		var accR, accE, final, epochs []float64
		for _, r := range runs {
			if r.Problem != p.Name {
				continue
			}
			loss = append(loss, r.Loss)
			dx, dy, da = append(dx, r.DeltaX), append(dy, r.DeltaY), append(da, r.DeltaA)
			accR, accE = append(accR, float64(r.AccuracyR)), append(accE, float64(r.AccuracyE))
			final = append(final, r.Loss[len(r.Loss)-1])
			epochs = append(epochs, float64(len(r.Loss)))
		}
		bands := map[string]analyze.Band{
			"loss": analyze.NewBand(loss, 2), "delta_x": analyze.NewRangeBand(dx),
			"delta_y": analyze.NewRangeBand(dy), "delta_a": analyze.NewRangeBand(da),
		}
		rep.Bands[p.Name] = bands
		mr, sr := stat.MeanStdDev(accR, nil)
		me, se := stat.MeanStdDev(accE, nil)
		mf, sf := stat.MeanStdDev(final, nil)
		lo, hi := minMax(epochs)
		acc := fmt.Sprintf("%.2f ± %.2f", mr, sr)
		accEText := fmt.Sprintf("%.2f ± %.2f", me, se)
		if p.Test == nil {
			acc, accEText = "–", "–"
		}
		rows = append(rows, []string{p.Name, acc, accEText, fmt.Sprintf("%.4g ± %.2g", mf, sf), fmt.Sprintf("%.0f–%.0f", lo, hi)})

		b := bands["loss"]
		pl, err := figure.Band(p.Name+": loss, mean ± 2σ", "epoch", "mean batch loss", []string{""}, index(len(b.Mean)), [][]float64{b.Mean}, [][]float64{b.Lo}, [][]float64{b.Hi}, false)
		if err != nil {
			return err
		}
		lossPlots = append(lossPlots, pl)
		var row []*plot.Plot
		for _, d := range []struct{ key, name string }{{"delta_x", "Δ_X (atom features)"}, {"delta_y", "Δ_Y (atom labels)"}, {"delta_a", "Δ_A (coordinates)"}} {
			b := bands[d.key]
			pl, err := figure.Band(p.Name+": "+d.name, "batch", "squared update (mean, min–max)", []string{""}, index(len(b.Mean)), [][]float64{b.Mean}, [][]float64{b.Lo}, [][]float64{b.Hi}, true)
			if err != nil {
				return err
			}
			row = append(row, pl)
		}
		deltaPlots = append(deltaPlots, row)
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
	return a.finish(e, out, &md, start)
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
