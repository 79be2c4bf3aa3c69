package figure

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dadil/dadil/gmm"
)

// ellipseSegments is the number of segments of a drawn ellipse.
const ellipseSegments = 72

// Mixture draws the components of a Gaussian mixture with diagonal
// covariances on p, in the plane of its first two features: for every
// component k its mean m_k (a cross) and the axis-aligned ellipses
// {m_k + s·(σ_k1 cos t, σ_k2 sin t)} of s = 1 and 2 standard deviations
// (solid and dashed), which hold about 39% and 86% of a 2-D Gaussian's
// mass. A labeled mixture's components take the colour of the argmax of
// their label, an unlabeled one's are dark grey; the lines are wider for
// heavier components (width ∝ √(K·w_k), 1 point for the weight 1/K).
// The plot's ranges grow to hold the 2-σ ellipses.
func Mixture(p *plot.Plot, m *gmm.Mixture) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("figure: %w", err)
	}
	if m.Dim() < 2 {
		return fmt.Errorf("figure: a mixture of %d features has no plane to draw", m.Dim())
	}
	K := m.Components()
	for k := range K {
		col := color.Color(color.Gray{Y: 70})
		if m.Labels != nil {
			col = ClassColor(floats.MaxIdx(m.Labels.RawRowView(k)))
		}
		mu, sd := m.Means.RawRowView(k), m.Std.RawRowView(k)
		width := vg.Points(math.Min(2.5, math.Max(0.3, math.Sqrt(float64(K)*m.Weights[k]))))
		for s, dashes := range [][]vg.Length{nil, {vg.Points(3), vg.Points(2)}} {
			l, err := plotter.NewLine(ellipse(mu[0], mu[1], float64(s+1)*sd[0], float64(s+1)*sd[1]))
			if err != nil {
				return fmt.Errorf("figure: component %d: %w", k, err)
			}
			l.LineStyle = draw.LineStyle{Color: col, Width: width, Dashes: dashes}
			p.Add(l)
		}
		c, err := plotter.NewScatter(plotter.XYs{{X: mu[0], Y: mu[1]}})
		if err != nil {
			return fmt.Errorf("figure: component %d: %w", k, err)
		}
		c.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: draw.CrossGlyph{}}
		p.Add(c)
	}
	return nil
}

// ellipse returns the closed polygon of the axis-aligned ellipse of
// centre (x, y) and semi-axes a, b.
func ellipse(x, y, a, b float64) plotter.XYs {
	pts := make(plotter.XYs, ellipseSegments+1)
	for i := range pts {
		t := 2 * math.Pi * float64(i) / ellipseSegments
		pts[i] = plotter.XY{X: x + a*math.Cos(t), Y: y + b*math.Sin(t)}
	}
	return pts
}
