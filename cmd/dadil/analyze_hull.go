package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/dadil/dadil/analyze"
	"github.com/dadil/dadil/internal/figure"
)

// hullReport is DIR/hull.json.
type hullReport struct {
	Analysis string `json:"analysis"`
	settingsReport
	analyze.HullResult
}

func runAnalyzeHull(args []string, e *env) error {
	a := newAnalyzeFlags("hull", e)
	steps := a.fs.Int("steps", 10, "grid step 1/`m` over the simplex Δ₃ ((m+1)(m+2)/2 points); 0 skips the grid")
	ks := a.fs.String("hull-atoms", "3,4,5,6,7,8", "values of `K` for the uniformly drawn coordinates ('' skips them)")
	draws := a.fs.Int("draws", 20, "coordinates drawn uniformly from Δ_K for every K")
	a.usage("Explores the Wasserstein hull of the atoms (paper Figures 4–6): for K = 3, the reconstruction loss\n" +
		"W₂(B(α; P), Q̂_T) and the accuracies of DaDiL-R and DaDiL-E at every α of a grid over Δ₃, with the\n" +
		"learned α_T marked, and their correlation; for every K, the accuracy of coordinates drawn uniformly\n" +
		"from Δ_K against the learned α_T. --atoms is ignored (the analysis sets K).")
	start := time.Now()
	ps, set, err := a.problems(args)
	if err != nil {
		return err
	}
	if err := inRange("--steps", *steps, 0, 200, "a grid of (m+1)(m+2)/2 points, one fit each; 0 skips it"); err != nil {
		return err
	}
	K, err := parseInts("hull-atoms", *ks)
	if err != nil {
		return err
	}
	if K == nil {
		K = []int{}
	}
	for _, k := range K {
		if k < 2 || k > 1000 {
			return usageError{fmt.Errorf("--hull-atoms: K = %d (want 2 … 1000)", k)}
		}
	}
	if len(K) > 0 {
		if err := inRange("--draws", *draws, 1, 100000, "one fit each"); err != nil {
			return err
		}
	}
	if *steps == 0 && len(K) == 0 {
		return usageError{fmt.Errorf("nothing to do: --steps 0 and no --hull-atoms")}
	}
	st := *steps
	if st == 0 {
		st = -1
	}
	res, err := analyze.Hull(ps, &analyze.HullSettings{
		Dictionary: set, Steps: st, Atoms: K, Draws: *draws, Workers: a.workers, Progress: a.progress(e),
	})
	if err != nil {
		return err
	}
	out := newOutput()
	if err := out.json("hull.json", hullReport{Analysis: "hull", settingsReport: a.report(ps, set, start), HullResult: *res}); err != nil {
		return err
	}
	var md markdown
	md.h(1, "The Wasserstein hull of the atoms")
	md.p("Problems: %s. W₂ is measured between B(α; P) and the target's unlabeled rows; accuracies (%%) on the scored target rows.", strings.Join(names(ps), ", "))
	if len(res.Grids) > 0 {
		md.h(2, "Grid over Δ₃ (paper Figures 4 and 5)")
		md.p("Grid step 1/%d (%d points). \"best\" is the best grid point; the correlations are Pearson's between W₂ and accuracy over the grid.", *steps, len(res.Grids[0].Points))
		var rows [][]string
		var scatter []*plot.Plot
		for _, g := range res.Grids {
			bestW, bestR, bestE := math.Inf(1), math.Inf(-1), math.Inf(-1)
			var w, ar, ae []float64
			for _, q := range g.Points {
				bestW = math.Min(bestW, q.W2)
				bestR = math.Max(bestR, float64(q.AccuracyR))
				bestE = math.Max(bestE, float64(q.AccuracyE))
				w = append(w, q.W2)
				ar = append(ar, float64(q.AccuracyR))
				ae = append(ae, float64(q.AccuracyE))
			}
			rows = append(rows, []string{
				g.Problem, fmtAlpha(g.Learned.Alpha),
				fmt.Sprintf("%.4g (best %.4g)", g.Learned.W2, bestW),
				fmt.Sprintf("%s (best %s)", pct(g.Learned.AccuracyR), pct(analyze.Score(bestR))),
				fmt.Sprintf("%s (best %s)", pct(g.Learned.AccuracyE), pct(analyze.Score(bestE))),
				corrText(g.CorrelationR), corrText(g.CorrelationE),
			})
			var alphaT [3]float64
			copy(alphaT[:], g.Learned.Alpha)
			var vals [3][]float64
			vals[0] = w
			vals[1], vals[2] = ae, ar
			titles := []string{"reconstruction loss W₂", "DaDiL-E accuracy", "DaDiL-R accuracy"}
			labels := []string{"W₂(B(α; P), Q̂_T)", "accuracy (%)", "accuracy (%)"}
			var row []*plot.Plot
			for i := range 3 {
				if i > 0 && ps[0].Test == nil {
					break
				}
				pl, err := figure.Ternary(figure.TernaryPlot{
					Title: g.Problem + ": " + titles[i], Corners: [3]string{"atom 1", "atom 2", "atom 3"},
					Steps: *steps, Values: vals[i], ValueLabel: labels[i], Reverse: i == 0,
					Mark: &alphaT, MarkLabel: "learned α_T",
				})
				if err != nil {
					return err
				}
				row = append(row, pl)
			}
			name := "hull_grid_" + fileSafe(g.Problem)
			out.figure(name, [][]*plot.Plot{row}, 12*vg.Centimeter, 11*vg.Centimeter)
			if ps[0].Test != nil {
				pl, err := figure.ScatterXY(fmt.Sprintf("%s: accuracy against W₂ (r = %s R, %s E)", g.Problem, corrText(g.CorrelationR), corrText(g.CorrelationE)),
					"W₂(B(α; P), Q̂_T)", "accuracy (%)", []string{"DaDiL-R", "DaDiL-E"}, [][]float64{w, w}, [][]float64{ar, ae})
				if err != nil {
					return err
				}
				scatter = append(scatter, pl)
			}
		}
		md.table([]string{"problem", "learned α_T", "W₂ at α_T", "DaDiL-R at α_T", "DaDiL-E at α_T", "corr(W₂, R)", "corr(W₂, E)"}, rows)
		for _, g := range res.Grids {
			md.image(g.Problem+": W₂ and accuracies over Δ₃", "hull_grid_"+fileSafe(g.Problem)+".png")
		}
		if len(scatter) > 0 {
			out.figure("hull_correlation", gridOf(scatter, 2), 12*vg.Centimeter, 9*vg.Centimeter)
			md.image("accuracy against reconstruction loss", "hull_correlation.png")
		}
	}
	if len(res.Draws) > 0 {
		md.h(2, "Uniformly drawn coordinates against the learned α_T (paper Figure 6)")
		md.p("%d draws from the flat Dirichlet distribution on Δ_K per K. Cells: DaDiL-R / DaDiL-E accuracy, mean ± std of the draws, then at α_T.", *draws)
		var rows [][]string
		var boxes [][]*plot.Plot
		for _, p := range ps {
			var groups []string
			var sampR, sampE [][]float64
			var markR, markE []float64
			for _, d := range res.Draws {
				if d.Problem != p.Name {
					continue
				}
				var r, e2, w []float64
				for _, q := range d.Draws {
					r = append(r, float64(q.AccuracyR))
					e2 = append(e2, float64(q.AccuracyE))
					w = append(w, q.W2)
				}
				mr, sr := stat.MeanStdDev(r, nil)
				me, se := stat.MeanStdDev(e2, nil)
				mw, _ := stat.MeanStdDev(w, nil)
				cell := fmt.Sprintf("%.2f ± %.2f / %.2f ± %.2f", mr, sr, me, se)
				if len(r) == 1 { // no spread from one draw
					cell = fmt.Sprintf("%.2f / %.2f", mr, me)
				}
				rows = append(rows, []string{p.Name, fmt.Sprint(d.Atoms), cell,
					pct(d.Learned.AccuracyR) + " / " + pct(d.Learned.AccuracyE),
					fmt.Sprintf("%.4g / %.4g", mw, d.Learned.W2),
				})
				groups = append(groups, fmt.Sprintf("K = %d", d.Atoms))
				sampR, sampE = append(sampR, r), append(sampE, e2)
				markR, markE = append(markR, float64(d.Learned.AccuracyR)), append(markE, float64(d.Learned.AccuracyE))
			}
			if p.Test == nil {
				continue
			}
			br, err := figure.Boxes(p.Name+": DaDiL-R, uniform α", "", "accuracy (%)", groups, sampR, markR, "learned α_T")
			if err != nil {
				return err
			}
			be, err := figure.Boxes(p.Name+": DaDiL-E, uniform α", "", "accuracy (%)", groups, sampE, markE, "learned α_T")
			if err != nil {
				return err
			}
			boxes = append(boxes, []*plot.Plot{br, be})
		}
		md.table([]string{"problem", "K", "uniform α (R / E)", "α_T (R / E)", "W₂ uniform mean / α_T"}, rows)
		if len(boxes) > 0 {
			out.figure("hull_draws", boxes, 13*vg.Centimeter, 9*vg.Centimeter)
			md.image("accuracy of uniformly drawn coordinates", "hull_draws.png")
		}
	}
	return a.finish(e, out, &md, start)
}

func fmtAlpha(a []float64) string {
	var s []string
	for _, v := range a {
		s = append(s, fmt.Sprintf("%.2f", v))
	}
	return "(" + strings.Join(s, ", ") + ")"
}

func corrText(s analyze.Score) string {
	f := float64(s)
	if f != f {
		return "–"
	}
	return fmt.Sprintf("%.2f", f)
}

// fileSafe turns a problem name into a file-name part.
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// gridOf lays plots out cols per row.
func gridOf(ps []*plot.Plot, cols int) [][]*plot.Plot {
	var g [][]*plot.Plot
	for i := 0; i < len(ps); i += cols {
		g = append(g, ps[i:min(i+cols, len(ps))])
	}
	return g
}
