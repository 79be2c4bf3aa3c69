package figure

// Figure primitives for the analysis figures of the DaDiL paper
// (Figures 4–8): ternary heat maps over the 2-simplex of barycentric
// weights, curves with uncertainty bands, multi-series scatter plots and box
// plots with highlighted markers.

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dadil/dadil/internal/clip"
)

// sqrt3_2 is the height of the unit equilateral triangle.
var sqrt3_2 = math.Sqrt(3) / 2

// TernaryPlot describes a heat map over the 2-simplex
// {α ∈ ℝ³ : α ≥ 0, α₁+α₂+α₃ = 1}, sampled on the regular grid TernaryGrid(Steps).
type TernaryPlot struct {
	// Title is the title of the plot.
	Title string

	// Corners are the labels of the simplex corners α = e₁, e₂, e₃,
	// drawn at the bottom left, bottom right and top of the triangle.
	// Empty labels default to "atom 1", "atom 2" and "atom 3".
	Corners [3]string

	// Steps is the grid resolution m ≥ 1: the grid points are
	// α = (i, j, m−i−j)/m with i, j ≥ 0 and i+j ≤ m.
	Steps int

	// Values holds one value per grid point, in the order of
	// TernaryGrid(Steps). NaN marks a missing value: the cells touching it
	// are drawn grey and it is excluded from the colour range. ±Inf is an
	// error.
	Values []float64

	// ValueLabel is the label of the colour bar, e.g. "W₂ to target".
	ValueLabel string

	// Reverse reverses the colour map. By default high values are bright
	// (yellow) and low values dark (purple); with Reverse low values are
	// bright. Use it so that "good" has the same colour across figures
	// whether low or high values are good.
	Reverse bool

	// Mark is an optional point of the simplex to highlight (e.g. the
	// learned α_T), drawn as a red star. Its coordinates must be finite,
	// non-negative and sum to 1 within 1e-3; it is renormalised to sum to 1.
	Mark *[3]float64

	// MarkLabel is the legend entry of Mark; empty means no legend entry.
	MarkLabel string
}

// TernaryGrid returns the (m+1)(m+2)/2 points α = (i, j, m−i−j)/m,
// i, j ≥ 0, i+j ≤ m, of the regular grid of resolution m on the 2-simplex,
// with i in the outer loop and j in the inner loop:
// (0,0,1), (0,1/m,(m−1)/m), …, (0,1,0), (1/m,0,(m−1)/m), …, (1,0,0).
// The point (i, j) has index i(m+1) − i(i−1)/2 + j. It returns nil for m < 1.
func TernaryGrid(m int) [][3]float64 {
	if m < 1 {
		return nil
	}
	g := make([][3]float64, 0, (m+1)*(m+2)/2)
	fm := float64(m)
	for i := 0; i <= m; i++ {
		for j := 0; j <= m-i; j++ {
			g = append(g, [3]float64{float64(i) / fm, float64(j) / fm, float64(m-i-j) / fm})
		}
	}
	return g
}

// ternaryIndex is the index of grid point (i, j) in TernaryGrid(m).
func ternaryIndex(m, i, j int) int { return i*(m+1) - i*(i-1)/2 + j }

// TernaryXY maps barycentric coordinates a to Cartesian coordinates in the
// equilateral triangle with side 1 whose corners are (0, 0) for a = e₁
// (bottom left), (1, 0) for a = e₂ (bottom right) and (0.5, √3/2) for
// a = e₃ (top). The map is linear, x = a₂ + a₃/2, y = a₃·√3/2, so a should
// sum to 1.
func TernaryXY(a [3]float64) (x, y float64) {
	return a[1] + a[2]/2, a[2] * sqrt3_2
}

// viridis returns a perceptually uniform colour map close to matplotlib's
// viridis, on the range [0, 1].
func viridis() palette.ColorMap {
	hex := []uint32{0x440154, 0x482878, 0x3E4A89, 0x31688E, 0x26828E, 0x1F9E89, 0x35B779, 0x6DCD59, 0xB4DE2C, 0xFDE725}
	cs := make([]color.Color, len(hex))
	for i, h := range hex {
		cs[i] = color.NRGBA{R: uint8(h >> 16), G: uint8(h >> 8), B: uint8(h), A: 255}
	}
	cm, err := moreland.NewLuminance(cs)
	if err != nil { // Cannot happen: the control points have increasing luminance.
		cm = moreland.Kindlmann()
	}
	cm.SetMin(0)
	cm.SetMax(1)
	return cm
}

// missingColor is the colour of cells with a NaN value.
var missingColor = color.Gray{Y: 190}

// markColor is the colour of highlighted markers.
var markColor = color.RGBA{R: 228, G: 26, B: 28, A: 255}

// Ternary draws the heat map t over the 2-simplex: the triangle is split
// into its Steps² small triangles, each filled with the colour of the mean
// of its three vertices' values (grey if any is NaN), with the corner
// labels, an optional marked point and a colour bar labelled ValueLabel to
// the right of the triangle. The Cartesian axes are hidden; the triangle
// keeps its aspect ratio at any plot size. The result can be placed in a
// SaveGrid like any other plot, but should not be passed to ShareAxes.
func Ternary(t TernaryPlot) (*plot.Plot, error) {
	m := t.Steps
	if m < 1 {
		return nil, fmt.Errorf("figure: ternary: Steps = %d, want ≥ 1", m)
	}
	if n := (m + 1) * (m + 2) / 2; len(t.Values) != n {
		return nil, fmt.Errorf("figure: ternary: %d values for Steps = %d, want %d", len(t.Values), m, n)
	}
	lo, hi, missing, err := ternaryRange(t.Values)
	if err != nil {
		return nil, err
	}
	mark, err := ternaryMark(t.Mark)
	if err != nil {
		return nil, err
	}

	p := plot.New()
	p.Title.Text = t.Title
	p.HideAxes()
	p.X.Min, p.X.Max = 0, 1
	p.Y.Min, p.Y.Max = 0, 1
	p.X.Padding, p.Y.Padding = 0, 0
	p.Add(newTernaryPlotter(p, t, lo, hi, mark))
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.Padding = vg.Points(2)
	if mark != nil && t.MarkLabel != "" {
		p.Legend.Add(t.MarkLabel, glyphThumb(markStyle(4.5)))
	}
	if missing {
		p.Legend.Add("no value", boxThumb{missingColor})
	}
	return p, nil
}

// ternaryRange returns the range [lo, hi] of the colour scale of values,
// NaN values left out (missing says whether there are any), widened by 5%
// of |lo| on either side (0.5 if lo = 0) when all values are equal. It is
// an error if a value is infinite or all are NaN.
func ternaryRange(values []float64) (lo, hi float64, missing bool, err error) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i, v := range values {
		switch {
		case math.IsNaN(v):
			missing = true
		case math.IsInf(v, 0):
			return 0, 0, false, fmt.Errorf("figure: ternary: value %d is %v", i, v)
		default:
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if lo > hi {
		return 0, 0, false, fmt.Errorf("figure: ternary: all %d values are NaN", len(values))
	}
	if lo == hi {
		d := 0.05 * math.Abs(lo)
		if d == 0 {
			d = 0.5
		}
		lo, hi = lo-d, hi+d
	}
	return lo, hi, missing, nil
}

// ternaryMark returns a copy of the marked point (nil: none) projected on
// the simplex, max(a_k, 0)/Σa: its coordinates must be finite and ≥ −1e-9
// and sum to 1 within 1e-3.
func ternaryMark(m *[3]float64) (*[3]float64, error) {
	if m == nil {
		return nil, nil
	}
	a := *m
	s := 0.0
	for _, v := range a {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < -1e-9 {
			return nil, fmt.Errorf("figure: ternary: mark %v is not in the simplex", a)
		}
		s += v
	}
	if math.Abs(s-1) > 1e-3 {
		return nil, fmt.Errorf("figure: ternary: mark %v sums to %g, want 1", a, s)
	}
	for k := range a {
		a[k] = math.Max(a[k], 0) / s
	}
	return &a, nil
}

// newTernaryPlotter returns the plotter of t on p, with the colour scale
// [lo, hi], the checked mark and the corners' labels ("atom k" where t
// gives none), in p's text styles at 11 points for the corners and the
// colour bar's label.
func newTernaryPlotter(p *plot.Plot, t TernaryPlot, lo, hi float64, mark *[3]float64) *ternaryPlotter {
	tp := &ternaryPlotter{
		m: t.Steps, values: t.Values, lo: lo, hi: hi, cmap: viridis(), reverse: t.Reverse,
		label: t.ValueLabel, mark: mark,
		cornerStyle: p.X.Label.TextStyle, tickStyle: p.Y.Tick.Label, labelStyle: p.Y.Label.TextStyle,
	}
	tp.cornerStyle.Font.Size = vg.Points(11)
	tp.labelStyle.Font.Size = vg.Points(11)
	for k, c := range t.Corners {
		if c == "" {
			c = fmt.Sprintf("atom %d", k+1)
		}
		tp.corners[k] = c
	}
	return tp
}

// ternaryPlotter is the plot.Plotter drawing a TernaryPlot. It lays the
// triangle and the colour bar out in canvas coordinates, so that the
// triangle stays equilateral whatever the size of the data area.
type ternaryPlotter struct {
	m                                  int
	values                             []float64
	lo, hi                             float64 // colour range
	cmap                               palette.ColorMap
	reverse                            bool
	corners                            [3]string
	label                              string
	mark                               *[3]float64
	cornerStyle, tickStyle, labelStyle draw.TextStyle
}

// color returns the colour of value v.
func (tp *ternaryPlotter) color(v float64) color.Color {
	if math.IsNaN(v) {
		return missingColor
	}
	u := (v - tp.lo) / (tp.hi - tp.lo)
	u = math.Min(math.Max(u, 0), 1)
	if tp.reverse {
		u = 1 - u
	}
	c, err := tp.cmap.At(u)
	if err != nil {
		return missingColor
	}
	return c
}

// ticks returns the colour bar ticks: the range ends and the round values
// of DefaultTicks not too close to them.
func (tp *ternaryPlotter) ticks() []plot.Tick {
	format := func(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
	ts := []plot.Tick{{Value: tp.lo, Label: format(tp.lo)}}
	gap := 0.12 * (tp.hi - tp.lo)
	for _, t := range (plot.DefaultTicks{}).Ticks(tp.lo, tp.hi) {
		if t.Label == "" || t.Value-tp.lo < gap || tp.hi-t.Value < gap {
			continue
		}
		// Round values print with at most 6 significant digits: 0.3, not 0.30000000000000004 or 0.30.
		ts = append(ts, plot.Tick{Value: t.Value, Label: strconv.FormatFloat(t.Value, 'g', 6, 64)})
	}
	return append(ts, plot.Tick{Value: tp.hi, Label: format(tp.hi)})
}

// Plot implements plot.Plotter.
func (tp *ternaryPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	ticks := tp.ticks()
	lay, ok := tp.layout(c, p, ticks)
	if !ok {
		return
	}
	tp.drawCells(c, &lay)
	tp.drawTriangle(c, &lay)
	tp.drawBar(c, &lay, ticks)
}

// ternaryLayout places a ternary plot on the canvas: the triangle of side
// L and height H with its bottom-left corner at (x0, y0), and the colour
// bar right of it.
type ternaryLayout struct {
	x0, y0, L, H vg.Length
	right        vg.Length // room right of the triangle for its corner label
	tickW        vg.Length // width of the widest tick label of the bar
}

// Spacing of ternary plots, in points: padding, width of the colour bar,
// length of its ticks.
const (
	ternaryPad     vg.Length = 4
	ternaryBarW    vg.Length = 10
	ternaryTickLen vg.Length = 4
)

// at returns the canvas point of barycentric coordinates a.
func (lay *ternaryLayout) at(a [3]float64) vg.Point {
	x, y := TernaryXY(a)
	return vg.Point{X: lay.x0 + lay.L*vg.Length(x), Y: lay.y0 + lay.L*vg.Length(y)}
}

// layout fits the triangle, its corner labels and the colour bar with
// ticks and label into c: the triangle as large as fits, the triangle and
// bar block centred horizontally, the triangle at the top (below a legend
// at the top), so that a legend at the top left stays next to it. It
// reports false if there is no room.
func (tp *ternaryPlotter) layout(c draw.Canvas, p *plot.Plot, ticks []plot.Tick) (ternaryLayout, bool) {
	pad := ternaryPad
	var lay ternaryLayout
	for _, t := range ticks {
		lay.tickW = max(lay.tickW, tp.tickStyle.Width(t.Label))
	}
	labelH := vg.Length(0)
	if tp.label != "" {
		labelH = tp.labelStyle.Height(tp.label) + pad
	}
	barBlock := 3*pad + ternaryBarW + ternaryTickLen + pad + lay.tickW + labelH // right of the triangle

	top := tp.cornerStyle.Height(tp.corners[2]) + pad
	bottom := max(tp.cornerStyle.Height(tp.corners[0]), tp.cornerStyle.Height(tp.corners[1])) + pad
	left := tp.cornerStyle.Width(tp.corners[0])/2 + pad
	lay.right = tp.cornerStyle.Width(tp.corners[1])/2 + pad
	availW := c.Max.X - c.Min.X - left - max(lay.right, barBlock)
	availH := c.Max.Y - c.Min.Y - top - bottom
	lay.L = min(availW, availH/vg.Length(sqrt3_2))
	if lay.L <= 0 {
		return lay, false
	}
	lay.H = lay.L * vg.Length(sqrt3_2)
	blockW := left + lay.L + max(lay.right, barBlock)
	lay.x0 = c.Min.X + (c.Max.X-c.Min.X-blockW)/2 + left
	legendH := vg.Length(0)
	if p.Legend.Top {
		legendH = p.Legend.Rectangle(c).Size().Y + pad
	}
	lay.y0 = c.Max.Y - top - lay.H - min(availH-lay.H, legendH)
	return lay, true
}

// drawCells draws the cells of the grid: upward triangles (i,j), (i+1,j),
// (i,j+1) and downward triangles (i+1,j), (i,j+1), (i+1,j+1), each in the
// colour of the mean of its corners' values. Each is also stroked in its
// own colour to hide the anti-aliasing seams between cells.
func (tp *ternaryPlotter) drawCells(c draw.Canvas, lay *ternaryLayout) {
	m := tp.m
	fm := float64(m)
	pt := func(i, j int) vg.Point {
		return lay.at([3]float64{float64(i) / fm, float64(j) / fm, float64(m-i-j) / fm})
	}
	val := func(i, j int) float64 { return tp.values[ternaryIndex(m, i, j)] }
	cell := func(v float64, ps ...vg.Point) {
		col := tp.color(v)
		c.FillPolygon(col, ps)
		c.StrokeLines(draw.LineStyle{Color: col, Width: vg.Points(0.4)}, append(ps, ps[0]))
	}
	for i := 0; i < m; i++ {
		for j := 0; i+j < m; j++ {
			cell((val(i, j)+val(i+1, j)+val(i, j+1))/3, pt(i, j), pt(i+1, j), pt(i, j+1))
			if i+j < m-1 {
				cell((val(i+1, j)+val(i, j+1)+val(i+1, j+1))/3, pt(i+1, j), pt(i, j+1), pt(i+1, j+1))
			}
		}
	}
}

// drawTriangle draws the outline of the triangle, the labels of its
// corners and the marked point.
func (tp *ternaryPlotter) drawTriangle(c draw.Canvas, lay *ternaryLayout) {
	pad := ternaryPad
	outline := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	c1, c2, c3 := lay.at([3]float64{1, 0, 0}), lay.at([3]float64{0, 1, 0}), lay.at([3]float64{0, 0, 1})
	c.StrokeLines(outline, []vg.Point{c1, c2, c3, c1})

	below := tp.cornerStyle
	below.XAlign, below.YAlign = draw.XCenter, draw.YTop
	c.FillText(below, vg.Point{X: c1.X, Y: c1.Y - pad}, tp.corners[0])
	c.FillText(below, vg.Point{X: c2.X, Y: c2.Y - pad}, tp.corners[1])
	above := tp.cornerStyle
	above.XAlign, above.YAlign = draw.XCenter, draw.YBottom
	c.FillText(above, vg.Point{X: c3.X, Y: c3.Y + pad}, tp.corners[2])

	if tp.mark != nil {
		c.DrawGlyph(markStyle(6), lay.at(*tp.mark))
	}
}

// drawBar draws the colour bar, as tall as the triangle and right of it,
// with its ticks and label.
func (tp *ternaryPlotter) drawBar(c draw.Canvas, lay *ternaryLayout, ticks []plot.Tick) {
	pad, tickLen := ternaryPad, ternaryTickLen
	bx0 := lay.x0 + lay.L + max(lay.right, 3*pad)
	bx1 := bx0 + ternaryBarW
	by0, by1 := lay.y0, lay.y0+lay.H
	const strips = 128
	for k := 0; k < strips; k++ {
		ya := by0 + (by1-by0)*vg.Length(k)/strips
		yb := by0 + (by1-by0)*vg.Length(k+1)/strips
		col := tp.color(tp.lo + (tp.hi-tp.lo)*(float64(k)+0.5)/strips)
		r := []vg.Point{{X: bx0, Y: ya}, {X: bx1, Y: ya}, {X: bx1, Y: yb}, {X: bx0, Y: yb}}
		c.FillPolygon(col, r)
		c.StrokeLines(draw.LineStyle{Color: col, Width: vg.Points(0.4)}, append(r, r[0]))
	}
	thin := draw.LineStyle{Color: color.Black, Width: vg.Points(0.5)}
	c.StrokeLines(thin, []vg.Point{{X: bx0, Y: by0}, {X: bx1, Y: by0}, {X: bx1, Y: by1}, {X: bx0, Y: by1}, {X: bx0, Y: by0}})
	ts := tp.tickStyle
	ts.XAlign, ts.YAlign = draw.XLeft, draw.YCenter
	descent := ts.FontExtents().Descent
	for _, t := range ticks {
		y := by0 + (by1-by0)*vg.Length((t.Value-tp.lo)/(tp.hi-tp.lo))
		c.StrokeLine2(thin, bx1, y, bx1+tickLen, y)
		c.FillText(ts, vg.Point{X: bx1 + tickLen + pad, Y: y + descent}, t.Label)
	}
	if tp.label != "" {
		ls := tp.labelStyle
		if w := ls.Width(tp.label); w > 1.1*lay.H { // shrink a label longer than the bar
			ls.Font.Size *= 1.1 * lay.H / w
		}
		ls.Rotation = math.Pi / 2
		ls.XAlign, ls.YAlign = draw.XCenter, draw.YBottom
		lx := bx1 + tickLen + pad + lay.tickW + pad + ls.Height(tp.label)
		c.FillText(ls, vg.Point{X: lx - ls.FontExtents().Descent, Y: (by0 + by1) / 2}, tp.label)
	}
}

// starGlyph is a five-pointed star with a thin black outline.
type starGlyph struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (starGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	var p vg.Path
	for k := 0; k < 10; k++ {
		r := sty.Radius
		if k%2 == 1 {
			r *= 0.45
		}
		th := math.Pi/2 + float64(k)*math.Pi/5
		q := vg.Point{X: pt.X + r*vg.Length(math.Cos(th)), Y: pt.Y + r*vg.Length(math.Sin(th))}
		if k == 0 {
			p.Move(q)
		} else {
			p.Line(q)
		}
	}
	p.Close()
	c.SetColor(sty.Color)
	c.Fill(p)
	c.SetLineStyle(draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)})
	c.Stroke(p)
}

// markStyle is the style of highlighted markers, of the given radius in points.
func markStyle(r float64) draw.GlyphStyle {
	return draw.GlyphStyle{Color: markColor, Radius: vg.Points(r), Shape: starGlyph{}}
}

// glyphThumb is a legend thumbnail showing one glyph.
type glyphThumb draw.GlyphStyle

// Thumbnail implements plot.Thumbnailer.
func (g glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(draw.GlyphStyle(g), c.Center()) }

// boxThumb is a legend thumbnail showing a filled box.
type boxThumb struct{ color color.Color }

// Thumbnail implements plot.Thumbnailer.
func (b boxThumb) Thumbnail(c *draw.Canvas) {
	dy := (c.Max.Y - c.Min.Y) * 0.15
	x0, x1, y0, y1 := c.Min.X, c.Max.X, c.Min.Y+dy, c.Max.Y-dy
	c.FillPolygon(b.color, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
}

// legendRoom raises the top of the y axis of p, after its data have been
// added, so that a legend of the given number of rows drawn at the top of
// the plot does not hide the highest data.
func legendRoom(p *plot.Plot, rows int) {
	if rows == 0 || math.IsInf(p.Y.Min, 0) || math.IsInf(p.Y.Max, 0) {
		return
	}
	r := p.Y.Max - p.Y.Min
	if r <= 0 {
		r = math.Max(math.Abs(p.Y.Max), 1)
	}
	p.Y.Max += (0.04 + 0.07*float64(rows)) * r
}

// shapes are the glyph shapes of the series of ScatterXY, filled first.
var shapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
	draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

// checkFinite returns an error naming what if v holds a NaN or ±Inf.
func checkFinite(what string, v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("figure: %s[%d] is %v", what, i, x)
		}
	}
	return nil
}

// Band plots one line per series, mean[s] against x, with a translucent
// band of the same colour between lo[s] and hi[s] (e.g. mean ± 2σ over
// seeds) and a legend with names. All series have len(x) ≥ 1 finite
// values; lo and hi may both be nil for lines without bands.
//
// With logY the y axis is logarithmic with ticks at the powers of ten; if
// the data span fewer than two powers of ten, the range is widened to whole
// decades so that at least two ticks are labelled. Non-positive values cannot be drawn on it: every value ≤ 0 of
// mean, lo or hi is clamped to the smallest positive value among all of
// them (so a band mean − 2σ < 0 extends to the bottom of the data); it is
// an error if there is no positive value at all. Without logY the top of
// the y axis is raised to leave room for the legend.
func Band(title, xlabel, ylabel string, names []string, x []float64, mean, lo, hi [][]float64, logY bool) (*plot.Plot, error) {
	floor, err := checkBand(names, x, mean, lo, hi)
	if err != nil {
		return nil, err
	}
	if logY && math.IsInf(floor, 1) {
		return nil, fmt.Errorf("figure: band: log scale with no positive value")
	}
	pts := bandPoints{x: x, floor: floor, logY: logY}

	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	var lines []plot.Plotter
	for s, name := range names {
		var thumbs []plot.Thumbnailer
		if lo != nil {
			band, err := pts.band(lo[s], hi[s], plotutil.Color(s))
			if err != nil {
				return nil, err
			}
			p.Add(band)
			thumbs = append(thumbs, band)
		}
		l, sc, err := pts.line(mean[s], s)
		if err != nil {
			return nil, err
		}
		lines = append(lines, l)
		if sc != nil {
			lines = append(lines, sc)
			thumbs = append(thumbs, sc)
		}
		if name != "" {
			p.Legend.Add(name, append(thumbs, l)...)
		}
	}
	p.Add(lines...) // lines above all bands
	p.Legend.Top = true
	p.X.Tick.Marker = shortTicks{plot.DefaultTicks{}}
	if logY {
		logAxis(&p.Y)
	} else {
		p.Y.Tick.Marker = shortTicks{plot.DefaultTicks{}}
		legendRoom(p, len(names))
	}
	return p, nil
}

// checkBand validates the arguments of Band and returns the smallest
// positive value of mean, lo and hi (+Inf if there is none).
func checkBand(names []string, x []float64, mean, lo, hi [][]float64) (floor float64, err error) {
	if len(names) == 0 {
		return 0, fmt.Errorf("figure: band: no series")
	}
	if len(x) == 0 {
		return 0, fmt.Errorf("figure: band: empty x")
	}
	if len(mean) != len(names) {
		return 0, fmt.Errorf("figure: band: %d mean series for %d names", len(mean), len(names))
	}
	if (lo == nil) != (hi == nil) {
		return 0, fmt.Errorf("figure: band: lo and hi must both be nil or both be given")
	}
	bands := lo != nil
	if bands && (len(lo) != len(names) || len(hi) != len(names)) {
		return 0, fmt.Errorf("figure: band: %d lo and %d hi series for %d names", len(lo), len(hi), len(names))
	}
	if err := checkFinite("band: x", x); err != nil {
		return 0, err
	}
	all := [][][]float64{mean}
	kinds := []string{"mean"}
	if bands {
		all = append(all, lo, hi)
		kinds = append(kinds, "lo", "hi")
	}
	floor = math.Inf(1)
	for k, set := range all {
		for s, v := range set {
			if len(v) != len(x) {
				return 0, fmt.Errorf("figure: band: %s of series %s has %d values, want %d", kinds[k], clip.Quote(names[s]), len(v), len(x))
			}
			if err := checkFinite(fmt.Sprintf("band: %s[%d]", kinds[k], s), v); err != nil {
				return 0, err
			}
			for _, y := range v {
				if y > 0 {
					floor = math.Min(floor, y)
				}
			}
		}
	}
	return floor, nil
}

// bandPoints turns the series of Band into points: on a logarithmic y
// axis (logY), values ≤ 0 are clamped to floor.
type bandPoints struct {
	x     []float64
	floor float64
	logY  bool
}

// xys returns the points (x_i, v_i), v_i clamped.
func (b bandPoints) xys(v []float64) plotter.XYs {
	pts := make(plotter.XYs, len(v))
	for i, y := range v {
		if b.logY && y <= 0 {
			y = b.floor
		}
		pts[i] = plotter.XY{X: b.x[i], Y: y}
	}
	return pts
}

// band returns the translucent polygon of colour col between lo and hi.
func (b bandPoints) band(lo, hi []float64, col color.Color) (*plotter.Polygon, error) {
	poly := append(b.xys(lo), reversed(b.xys(hi))...)
	pg, err := plotter.NewPolygon(poly)
	if err != nil {
		return nil, fmt.Errorf("figure: band: %w", err)
	}
	r, g, bl, _ := col.RGBA()
	pg.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: 64}
	pg.LineStyle.Width = 0
	return pg, nil
}

// line returns the line of series s through mean and, for at most 20
// points (a sweep over a handful of values), markers on them, so that a
// single point is visible too; otherwise sc is nil.
func (b bandPoints) line(mean []float64, s int) (l *plotter.Line, sc *plotter.Scatter, err error) {
	col := plotutil.Color(s)
	l, err = plotter.NewLine(b.xys(mean))
	if err != nil {
		return nil, nil, fmt.Errorf("figure: band: %w", err)
	}
	l.LineStyle.Width = vg.Points(1.5)
	l.LineStyle.Color = col
	if s > 0 {
		l.LineStyle.Dashes = plotutil.Dashes(s)
	}
	if len(b.x) > 20 {
		return l, nil, nil
	}
	sc, err = plotter.NewScatter(b.xys(mean))
	if err != nil {
		return nil, nil, fmt.Errorf("figure: band: %w", err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: plotutil.Shape(s)}
	return l, sc, nil
}

// logAxis makes a a logarithmic axis with ticks at the powers of ten; if
// its range spans fewer than two powers of ten, it is widened to whole
// decades so that at least two ticks are labelled.
func logAxis(a *plot.Axis) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = shortTicks{plot.LogTicks{Prec: -1}}
	lo, hi := math.Log10(a.Min), math.Log10(a.Max)
	if math.Floor(hi)-math.Ceil(lo) < 1 {
		lo, hi = math.Floor(lo), math.Ceil(hi)
		if hi <= lo {
			hi = lo + 1
		}
		a.Min, a.Max = math.Pow(10, lo), math.Pow(10, hi)
	}
}

// shortTicks relabels the labelled ticks of a Ticker with at most four
// significant digits (1e-05 rather than 9.999999999999999e-06, 25 rather
// than 25.00).
type shortTicks struct{ plot.Ticker }

func (t shortTicks) Ticks(min, max float64) []plot.Tick {
	ts := t.Ticker.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 4, 64)
		}
	}
	return ts
}

// reversed returns the points of pts in reverse order.
func reversed(pts plotter.XYs) plotter.XYs {
	r := make(plotter.XYs, len(pts))
	for i, q := range pts {
		r[len(pts)-1-i] = q
	}
	return r
}

// ScatterXY plots the points (xs[s][i], ys[s][i]) of each series s in its
// own colour and shape, with a legend naming the series. Every series must
// have as many x as y values, at least one point and no NaN or ±Inf. The
// top of the y axis is raised to leave room for the legend.
func ScatterXY(title, xlabel, ylabel string, names []string, xs, ys [][]float64) (*plot.Plot, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("figure: scatter: no series")
	}
	if len(xs) != len(names) || len(ys) != len(names) {
		return nil, fmt.Errorf("figure: scatter: %d x and %d y series for %d names", len(xs), len(ys), len(names))
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	for s, name := range names {
		if len(xs[s]) != len(ys[s]) {
			return nil, fmt.Errorf("figure: scatter: series %s has %d x and %d y values", clip.Quote(name), len(xs[s]), len(ys[s]))
		}
		if len(xs[s]) == 0 {
			return nil, fmt.Errorf("figure: scatter: series %s is empty", clip.Quote(name))
		}
		if err := checkFinite(fmt.Sprintf("scatter: xs[%d]", s), xs[s]); err != nil {
			return nil, err
		}
		if err := checkFinite(fmt.Sprintf("scatter: ys[%d]", s), ys[s]); err != nil {
			return nil, err
		}
		pts := make(plotter.XYs, len(xs[s]))
		for i := range pts {
			pts[i] = plotter.XY{X: xs[s][i], Y: ys[s][i]}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("figure: scatter: %w", err)
		}
		sc.GlyphStyle.Color = plotutil.Color(s)
		sc.GlyphStyle.Shape = shapes[s%len(shapes)]
		sc.GlyphStyle.Radius = vg.Points(3)
		p.Add(sc)
		p.Legend.Add(name, sc)
	}
	legendRoom(p, len(names))
	p.Legend.Top = true
	p.Y.Tick.Marker = shortTicks{plot.DefaultTicks{}}
	p.X.Tick.Marker = shortTicks{plot.DefaultTicks{}}
	return p, nil
}

// Boxes draws one box plot (median, quartiles, 1.5 IQR whiskers and
// outliers) per group of samples, at x = 0, 1, … labelled by groups.
// Each group needs at least one finite sample. If marks is not nil it
// holds one value per group, drawn as a red star (NaN: no star), with the
// legend entry markLabel (none if empty; otherwise the top of the y axis
// is raised to leave room for it). The box width is fixed in points
// (24pt, less beyond 6 groups), suited to figures about 4 inches wide.
func Boxes(title, xlabel, ylabel string, groups []string, samples [][]float64, marks []float64, markLabel string) (*plot.Plot, error) {
	if len(groups) == 0 {
		return nil, fmt.Errorf("figure: boxes: no groups")
	}
	if len(samples) != len(groups) {
		return nil, fmt.Errorf("figure: boxes: %d samples for %d groups", len(samples), len(groups))
	}
	if marks != nil && len(marks) != len(groups) {
		return nil, fmt.Errorf("figure: boxes: %d marks for %d groups", len(marks), len(groups))
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	w := vg.Points(math.Max(8, math.Min(24, 144/float64(len(groups)))))
	for g, name := range groups {
		if len(samples[g]) == 0 {
			return nil, fmt.Errorf("figure: boxes: group %s has no samples", clip.Quote(name))
		}
		if err := checkFinite(fmt.Sprintf("boxes: samples[%d]", g), samples[g]); err != nil {
			return nil, err
		}
		b, err := plotter.NewBoxPlot(w, float64(g), plotter.Values(samples[g]))
		if err != nil {
			return nil, fmt.Errorf("figure: boxes: %w", err)
		}
		b.FillColor = color.RGBA{R: 198, G: 219, B: 239, A: 255}
		p.Add(b)
	}
	var pts plotter.XYs
	for g, v := range marks {
		if math.IsInf(v, 0) {
			return nil, fmt.Errorf("figure: boxes: marks[%d] is %v", g, v)
		}
		if !math.IsNaN(v) {
			pts = append(pts, plotter.XY{X: float64(g), Y: v})
		}
	}
	if len(pts) > 0 {
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("figure: boxes: %w", err)
		}
		sc.GlyphStyle = markStyle(6)
		p.Add(sc)
		if markLabel != "" {
			p.Legend.Add(markLabel, glyphThumb(markStyle(5)))
			legendRoom(p, 1)
		}
	}
	p.NominalX(groups...)
	p.Legend.Top = true
	p.Y.Tick.Marker = shortTicks{plot.DefaultTicks{}}
	return p, nil
}
