// Package figure draws the figures of the dadil commands with gonum/plot:
// labeled point clouds, Gaussian mixtures as ellipses, loss curves and
// grouped bars, laid out in grids and saved atomically as PNG or SVG.
package figure

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/clip"
)

// ClassColor returns the colour of class k.
func ClassColor(k int) color.Color { return plotutil.Color(k) }

// Scatter plots the first two columns of X, coloured by class; a nil
// labels slice draws every point grey. Soft labels may be given instead as
// the rows of Y (argmax colour); Y takes precedence when not nil.
func Scatter(title string, X *mat.Dense, labels []int, Y *mat.Dense, classes int) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "x₁"
	p.Y.Label.Text = "x₂"
	n, d := X.Dims()
	if d < 2 {
		return nil, fmt.Errorf("figure: scatter needs 2 features, got %d", d)
	}
	groups := make([]plotter.XYs, max(classes, 1)+1)
	for i := 0; i < n; i++ {
		g := classes // grey
		switch {
		case Y != nil:
			g = floats.MaxIdx(Y.RawRowView(i))
		case labels != nil:
			g = labels[i]
		}
		groups[g] = append(groups[g], plotter.XY{X: X.At(i, 0), Y: X.At(i, 1)})
	}
	for g, pts := range groups {
		if len(pts) == 0 {
			continue
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle.Radius = vg.Points(1.6)
		s.GlyphStyle.Shape = draw.CircleGlyph{}
		if g == classes {
			s.GlyphStyle.Color = color.Gray{Y: 140}
			p.Legend.Add("unlabeled", s)
		} else {
			s.GlyphStyle.Color = ClassColor(g)
			p.Legend.Add(fmt.Sprintf("class %d", g), s)
		}
		p.Add(s)
	}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	return p, nil
}

// Lines plots one line per series against 1, 2, … with a legend.
func Lines(title, xlabel, ylabel string, names []string, series [][]float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	for s, ys := range series {
		pts := make(plotter.XYs, len(ys))
		for i, y := range ys {
			pts[i] = plotter.XY{X: float64(i + 1), Y: y}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.LineStyle.Width = vg.Points(1.5)
		l.LineStyle.Color = plotutil.Color(s)
		if s > 0 {
			l.LineStyle.Dashes = plotutil.Dashes(s)
		}
		p.Add(l)
		p.Legend.Add(names[s], l)
	}
	p.Legend.Top = true
	return p, nil
}

// Bars draws grouped bars: one group per entry of groups, one bar per
// series within a group (values[s][g]), with a legend naming the series,
// for a figure width wide. The y axis starts at 0 and leaves room above the
// tallest bar for the legend.
func Bars(title, ylabel string, groups, series []string, values [][]float64, wide vg.Length) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	w := 0.7 * wide / vg.Length((len(groups)+1)*max(len(series), 1))
	top := 0.0
	for _, vs := range values {
		for _, v := range vs {
			top = math.Max(top, v)
		}
	}
	p.Y.Min, p.Y.Max = 0, 1.35*top
	for s := range series {
		b, err := plotter.NewBarChart(plotter.Values(values[s]), w)
		if err != nil {
			return nil, err
		}
		b.LineStyle.Width = 0
		b.Color = plotutil.Color(s)
		b.Offset = vg.Length(float64(s)-float64(len(series)-1)/2) * w
		p.Add(b)
		p.Legend.Add(series[s], b)
	}
	p.Legend.Top = true
	p.NominalX(groups...)
	p.Y.Max = 1.35 * top
	return p, nil
}

// ShareAxes gives all plots the union of their data ranges, so that
// panels side by side can be compared.
func ShareAxes(plots ...*plot.Plot) {
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, p := range plots {
		xmin, xmax = math.Min(xmin, p.X.Min), math.Max(xmax, p.X.Max)
		ymin, ymax = math.Min(ymin, p.Y.Min), math.Max(ymax, p.Y.Max)
	}
	for _, p := range plots {
		p.X.Min, p.X.Max = xmin, xmax
		p.Y.Min, p.Y.Max = ymin, ymax
	}
}

// SaveGrid lays plots out in a grid (nil entries stay empty) of cell size
// w×h and writes it to path, as PNG or SVG by the extension. The file is
// written atomically.
func SaveGrid(path string, plots [][]*plot.Plot, w, h vg.Length) error {
	rows := len(plots)
	cols := 0
	for _, r := range plots {
		cols = max(cols, len(r))
	}
	W, H := w*vg.Length(cols), h*vg.Length(rows)
	var canvas vg.CanvasWriterTo
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(W, H), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))}
	case ".svg":
		canvas = vgsvg.New(W, H)
	default:
		return fmt.Errorf("figure: %s: unsupported format %s (png or svg)", path, clip.Quote(ext))
	}
	dc := draw.New(canvas)
	t := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
		copy(grid[i], plots[i])
	}
	canvases := plot.Align(grid, t, dc)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return fmt.Errorf("figure: %s: %w", path, err)
	}
	if err := atomicfile.Write(path, buf.Bytes()); err != nil {
		return fmt.Errorf("figure: %w", err) // it names the file
	}
	return nil
}

// Save writes one plot of size w×h to path (PNG or SVG by extension).
func Save(path string, p *plot.Plot, w, h vg.Length) error {
	return SaveGrid(path, [][]*plot.Plot{{p}}, w, h)
}
