// Package synth generates synthetic multi-source domain-adaptation problems
// in the spirit of the DaDiL paper's Figure 2: a few classes of Gaussian
// blobs in the plane, whose layout every domain shifts (and may rotate).
// The problems are dataset.Problem values, ready for every method of the
// module; dadil demo runs on Default.
package synth

import (
	"math"
	"math/rand/v2"

	"github.com/dadil/dadil/dataset"
	"gonum.org/v1/gonum/mat"
)

// Layout places the classes and domains.
type Layout struct {
	Classes int     // number of classes, arranged on a circle
	Radius  float64 // distance of the class centres from the domain centre
	Spread  float64 // standard deviation of each class blob
	// Shift and Angle (degrees) of every source; the target is the last
	// entry of TargetShift/TargetAngle.
	Shifts      [][2]float64
	Angles      []float64
	TargetShift [2]float64
	TargetAngle float64
	PerClass    int // points per class and domain
	// Line stacks the classes along the y axis, Radius apart, instead of
	// on a circle.
	Line bool
}

// Default is the demo layout: three classes stacked along the y axis (3
// apart, spread 0.5); sources 1 and 2 sit side by side at heights 0, source
// 3 is raised by 2.5 and the target by 3.2. A classifier trained on all
// sources together is dominated by the two low sources and mislabels most
// of the target, while the target is close to one source (and to its
// Wasserstein hull), which methods that weigh domains can exploit.
func Default() Layout {
	return Layout{
		Classes:     3,
		Radius:      3,
		Spread:      0.5,
		Line:        true,
		Shifts:      [][2]float64{{-2, 0}, {2, 0}, {0, 2.5}},
		Angles:      []float64{0, 0, 0},
		TargetShift: [2]float64{0, 3.2},
		TargetAngle: 0,
		PerClass:    100,
	}
}

// Generate draws a problem with the layout, deterministically for a seed:
// labeled sources named "source 1", "source 2", …, and a target named
// "target" whose labels are only in Test (the same rows as Target).
func Generate(l Layout, seed uint64) *dataset.Problem {
	rng := rand.New(rand.NewPCG(seed, 0x5e7))
	p := &dataset.Problem{Name: "synthetic", Classes: l.Classes}
	for s := range l.Shifts {
		p.Sources = append(p.Sources, domain(rng, l, l.Shifts[s], l.Angles[s], sourceName(s)))
	}
	t := domain(rng, l, l.TargetShift, l.TargetAngle, "target")
	p.Target = dataset.Domain{Name: t.Name, X: t.X}
	p.Test = &t
	return p
}

func sourceName(s int) string { return "source " + string(rune('1'+s)) }

func domain(rng *rand.Rand, l Layout, shift [2]float64, angle float64, name string) dataset.Domain {
	n := l.Classes * l.PerClass
	X := mat.NewDense(n, 2, nil)
	y := make([]int, n)
	rot := angle * math.Pi / 180
	cr, sr := math.Cos(rot), math.Sin(rot)
	for c := 0; c < l.Classes; c++ {
		var cx, cy float64
		if l.Line {
			cy = l.Radius * float64(c)
		} else {
			phi := math.Pi/2 + 2*math.Pi*float64(c)/float64(l.Classes)
			cx, cy = l.Radius*math.Cos(phi), l.Radius*math.Sin(phi)
		}
		for i := 0; i < l.PerClass; i++ {
			r := c*l.PerClass + i
			x := cx + l.Spread*rng.NormFloat64()
			z := cy + l.Spread*rng.NormFloat64()
			X.Set(r, 0, cr*x-sr*z+shift[0])
			X.Set(r, 1, sr*x+cr*z+shift[1])
			y[r] = c
		}
	}
	return dataset.Domain{Name: name, X: X, Y: y}
}
