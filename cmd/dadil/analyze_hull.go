package main

import (
	"fmt"
	"math"
	"slices"
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

// hullReport is DIR/hull.json.
type hullReport struct {
	Analysis string `json:"analysis"`
	settingsReport
	analyze.HullResult
}

// hullCommand holds the flags of dadil analyze hull.
type hullCommand struct {
	*analyzeFlags
	steps, draws int
	hullAtoms    string
	atoms        []int // the K of the uniformly drawn coordinates, from --hull-atoms
}

// newHullCommand registers the flags of dadil analyze hull.
func newHullCommand(e *env) *hullCommand {
	c := &hullCommand{analyzeFlags: newAnalyzeFlags("hull", e)}
	c.fs.IntVar(&c.steps, "steps", 10, "grid step 1/`m` over the simplex Δ₃ ((m+1)(m+2)/2 points); 0 skips the grid")
	c.fs.StringVar(&c.hullAtoms, "hull-atoms", "3,4,5,6,7,8", "values of `K` for the uniformly drawn coordinates ('' skips them)")
	c.fs.IntVar(&c.draws, "draws", 20, "coordinates drawn uniformly from Δ_K for every K")
	c.usage("Explores the Wasserstein hull of the atoms (paper Figures 4–6): for K = 3, the reconstruction loss\n" +
		"W₂(B(α; P), Q̂_T) and the accuracies of DaDiL-R and DaDiL-E at every α of a grid over Δ₃, with the\n" +
		"learned α_T marked, and their correlation; for every K, the accuracy of coordinates drawn uniformly\n" +
		"from Δ_K against the learned α_T. --atoms is ignored (the analysis sets K).")
	return c
}

// check checks the flags of the hull study, once the problems are loaded.
func (c *hullCommand) check() error {
	if err := inRange("--steps", c.steps, 0, 200, "a grid of (m+1)(m+2)/2 points, one fit each; 0 skips it"); err != nil {
		return err
	}
	K, err := parseInts("hull-atoms", c.hullAtoms)
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
		if err := inRange("--draws", c.draws, 1, 100000, "one fit each"); err != nil {
			return err
		}
	}
	if c.steps == 0 && len(K) == 0 {
		return usageError{fmt.Errorf("nothing to do: --steps 0 and no --hull-atoms")}
	}
	c.atoms = K
	return nil
}

// settings are the settings of analyze.Hull: --steps 0 skips the grid,
// which analyze.Hull asks as a negative Steps.
func (c *hullCommand) settings(set dictionary.Settings, e *env) *analyze.HullSettings {
	st := c.steps
	if st == 0 {
		st = -1
	}
	return &analyze.HullSettings{
		Dictionary: set, Steps: st, Atoms: c.atoms, Draws: c.draws, Classifier: c.trainer, Workers: c.workers, Progress: c.progress(e),
	}
}

// hullSettings returns the settings of the hull's fits, without a
// transport step as analyze.Hull fits them: base with every K of
// --hull-atoms and, for the grid, K = 3.
func (c *hullCommand) hullSettings(base dictionary.Settings) []dictionary.Settings {
	base.Transport, base.EnsembleTransport = dictionary.TransportNone, dictionary.TransportNone
	Ks := slices.Clone(c.atoms)
	if c.steps > 0 && !slices.Contains(Ks, 3) {
		Ks = append(Ks, 3)
	}
	var sets []dictionary.Settings
	for _, K := range Ks {
		s := base
		s.Atoms, s.ExtraAtoms = K, 0
		sets = append(sets, s)
	}
	return sets
}

func runAnalyzeHull(args []string, e *env) error {
	c := newHullCommand(e)
	start := time.Now()
	ps, set, err := c.problems(args)
	if err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	sets := c.hullSettings(set)
	c.dict.swept = map[string]string{"atoms": "hull-atoms"}
	if err := c.checkFits(ps, sets, len(ps)*len(sets), true); err != nil {
		return err
	}
	defer useMemoryLimit(memoryLimit(c.dict.maxBytes))()
	res, err := analyze.Hull(ps, c.settings(set, e))
	if err != nil {
		return err
	}
	out := newOutput()
	if err := out.json("hull.json", hullReport{Analysis: "hull", settingsReport: c.report(ps, set, start), HullResult: *res}); err != nil {
		return err
	}
	var md markdown
	md.h(1, "The Wasserstein hull of the atoms")
	md.p("Problems: %s. W₂ is measured between B(α; P) and the target's unlabeled rows; accuracies (%%) on the scored target rows.", strings.Join(names(ps), ", "))
	if len(res.Grids) > 0 {
		if err := c.renderGrids(&md, out, res.Grids, ps[0].Test != nil); err != nil {
			return err
		}
	}
	if len(res.Draws) > 0 {
		if err := c.renderDraws(&md, out, ps, res.Draws); err != nil {
			return err
		}
	}
	return c.finish(e, out, &md, start)
}

// renderGrids adds the grid study over Δ₃ to the report: a table row and a
// figure per problem and, when the target is labeled, the accuracies
// against W₂.
func (c *hullCommand) renderGrids(md *markdown, out *output, grids []analyze.HullGrid, labeled bool) error {
	md.h(2, "Grid over Δ₃ (paper Figures 4 and 5)")
	md.p("Grid step 1/%d (%d points). \"best\" is the best grid point; the correlations are Pearson's between W₂ and accuracy over the grid.", c.steps, len(grids[0].Points))
	var rows [][]string
	var scatter []*plot.Plot
	for _, g := range grids {
		rows = append(rows, gridRow(g))
		row, err := c.gridTernaries(g, labeled)
		if err != nil {
			return err
		}
		out.figure("hull_grid_"+fileSafe(g.Problem), [][]*plot.Plot{row}, 12*vg.Centimeter, 11*vg.Centimeter)
		if labeled {
			w, ar, ae := gridSeries(g)
			pl, err := figure.ScatterXY(fmt.Sprintf("%s: accuracy against W₂ (r = %s R, %s E)", g.Problem, corrText(g.CorrelationR), corrText(g.CorrelationE)),
				"W₂(B(α; P), Q̂_T)", "accuracy (%)", []string{"DaDiL-R", "DaDiL-E"}, [][]float64{w, w}, [][]float64{ar, ae})
			if err != nil {
				return err
			}
			scatter = append(scatter, pl)
		}
	}
	md.table([]string{"problem", "learned α_T", "W₂ at α_T", "DaDiL-R at α_T", "DaDiL-E at α_T", "corr(W₂, R)", "corr(W₂, E)"}, rows)
	for _, g := range grids {
		md.image(g.Problem+": W₂ and accuracies over Δ₃", "hull_grid_"+fileSafe(g.Problem)+".png")
	}
	if len(scatter) > 0 {
		out.figure("hull_correlation", gridOf(scatter, 2), 12*vg.Centimeter, 9*vg.Centimeter)
		md.image("accuracy against reconstruction loss", "hull_correlation.png")
	}
	return nil
}

// gridSeries returns W₂ and the accuracies of DaDiL-R and DaDiL-E at the
// points of a grid.
func gridSeries(g analyze.HullGrid) (w, ar, ae []float64) {
	for _, q := range g.Points {
		w = append(w, q.W2)
		ar = append(ar, float64(q.AccuracyR))
		ae = append(ae, float64(q.AccuracyE))
	}
	return w, ar, ae
}

// gridRow is a grid's row of the table: the scores at the learned α_T
// against the best of the grid, and the correlations.
func gridRow(g analyze.HullGrid) []string {
	bestW, bestR, bestE := math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, q := range g.Points {
		bestW = math.Min(bestW, q.W2)
		bestR = math.Max(bestR, float64(q.AccuracyR))
		bestE = math.Max(bestE, float64(q.AccuracyE))
	}
	return []string{
		g.Problem, fmtAlpha(g.Learned.Alpha),
		fmt.Sprintf("%.4g (best %.4g)", g.Learned.W2, bestW),
		fmt.Sprintf("%s (best %s)", pct(g.Learned.AccuracyR), pct(analyze.Score(bestR))),
		fmt.Sprintf("%s (best %s)", pct(g.Learned.AccuracyE), pct(analyze.Score(bestE))),
		corrText(g.CorrelationR), corrText(g.CorrelationE),
	}
}

// gridTernaries draws W₂ over Δ₃ and, when the target is labeled, the
// accuracies of DaDiL-E and DaDiL-R, with the learned α_T marked.
func (c *hullCommand) gridTernaries(g analyze.HullGrid, labeled bool) ([]*plot.Plot, error) {
	w, ar, ae := gridSeries(g)
	var alphaT [3]float64
	copy(alphaT[:], g.Learned.Alpha)
	vals := [3][]float64{w, ae, ar}
	titles := []string{"reconstruction loss W₂", "DaDiL-E accuracy", "DaDiL-R accuracy"}
	labels := []string{"W₂(B(α; P), Q̂_T)", "accuracy (%)", "accuracy (%)"}
	var row []*plot.Plot
	for i := range 3 {
		if i > 0 && !labeled {
			break
		}
		pl, err := figure.Ternary(figure.TernaryPlot{
			Title: g.Problem + ": " + titles[i], Corners: [3]string{"atom 1", "atom 2", "atom 3"},
			Steps: c.steps, Values: vals[i], ValueLabel: labels[i], Reverse: i == 0,
			Mark: &alphaT, MarkLabel: "learned α_T",
		})
		if err != nil {
			return nil, err
		}
		row = append(row, pl)
	}
	return row, nil
}

// renderDraws adds the study of uniformly drawn coordinates to the report:
// a table row per problem and K and, for the labeled problems, box plots
// of the accuracies.
func (c *hullCommand) renderDraws(md *markdown, out *output, ps []*dataset.Problem, draws []analyze.HullDraws) error {
	md.h(2, "Uniformly drawn coordinates against the learned α_T (paper Figure 6)")
	md.p("%d draws from the flat Dirichlet distribution on Δ_K per K. Cells: DaDiL-R / DaDiL-E accuracy, mean ± std of the draws, then at α_T.", c.draws)
	var rows [][]string
	var boxes [][]*plot.Plot
	for _, p := range ps {
		var b drawBoxes
		for _, d := range draws {
			if d.Problem != p.Name {
				continue
			}
			r, e, w := drawSeries(d)
			rows = append(rows, drawRow(d, r, e, w))
			b.add(d, r, e)
		}
		if p.Test == nil {
			continue
		}
		row, err := b.plots(p.Name)
		if err != nil {
			return err
		}
		boxes = append(boxes, row)
	}
	md.table([]string{"problem", "K", "uniform α (R / E)", "α_T (R / E)", "W₂ uniform mean / α_T"}, rows)
	if len(boxes) > 0 {
		out.figure("hull_draws", boxes, 13*vg.Centimeter, 9*vg.Centimeter)
		md.image("accuracy of uniformly drawn coordinates", "hull_draws.png")
	}
	return nil
}

// drawSeries returns the accuracies of DaDiL-R and DaDiL-E and W₂ at the
// drawn coordinates.
func drawSeries(d analyze.HullDraws) (r, e, w []float64) {
	for _, q := range d.Draws {
		r = append(r, float64(q.AccuracyR))
		e = append(e, float64(q.AccuracyE))
		w = append(w, q.W2)
	}
	return r, e, w
}

// drawRow is the table row of one problem and K: the accuracies (r, e)
// and W₂ (w) of the draws, mean ± std, against those at α_T.
func drawRow(d analyze.HullDraws, r, e, w []float64) []string {
	mr, sr := stat.MeanStdDev(r, nil)
	me, se := stat.MeanStdDev(e, nil)
	mw, _ := stat.MeanStdDev(w, nil)
	cell := fmt.Sprintf("%.2f ± %.2f / %.2f ± %.2f", mr, sr, me, se)
	if len(r) == 1 { // no spread from one draw
		cell = fmt.Sprintf("%.2f / %.2f", mr, me)
	}
	return []string{d.Problem, fmt.Sprint(d.Atoms), cell,
		pct(d.Learned.AccuracyR) + " / " + pct(d.Learned.AccuracyE),
		fmt.Sprintf("%.4g / %.4g", mw, d.Learned.W2),
	}
}

// drawBoxes collects the draws of one problem, a group per K, for its box
// plots.
type drawBoxes struct {
	groups       []string
	sampR, sampE [][]float64
	markR, markE []float64
}

// add adds the draws of one K with their accuracies r and e.
func (b *drawBoxes) add(d analyze.HullDraws, r, e []float64) {
	b.groups = append(b.groups, fmt.Sprintf("K = %d", d.Atoms))
	b.sampR, b.sampE = append(b.sampR, r), append(b.sampE, e)
	b.markR, b.markE = append(b.markR, float64(d.Learned.AccuracyR)), append(b.markE, float64(d.Learned.AccuracyE))
}

// plots draws the accuracies of DaDiL-R and DaDiL-E per K, α_T marked.
func (b *drawBoxes) plots(problem string) ([]*plot.Plot, error) {
	br, err := figure.Boxes(problem+": DaDiL-R, uniform α", "", "accuracy (%)", b.groups, b.sampR, b.markR, "learned α_T")
	if err != nil {
		return nil, err
	}
	be, err := figure.Boxes(problem+": DaDiL-E, uniform α", "", "accuracy (%)", b.groups, b.sampE, b.markE, "learned α_T")
	if err != nil {
		return nil, err
	}
	return []*plot.Plot{br, be}, nil
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
