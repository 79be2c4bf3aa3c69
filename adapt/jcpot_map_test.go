package adapt

import (
	"math"
	"testing"
)

// TestJCPOTMap: with the transport rule every source row is mapped onto
// the target's support (into its convex hull), and a target that is a
// translate of the sources is classified well.
func TestJCPOTMap(t *testing.T) {
	src, tgt, truth := synthProblem(3)
	m := &JCPOT{Map: true, Reg: 0.1}
	if err := fit(m, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	p, err := m.Predict(tgt)
	if err != nil {
		t.Fatal(err)
	}
	acc := accuracy(p, truth)
	so := &SourceOnly{}
	if err := fit(so, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	ps, _ := so.Predict(tgt)
	t.Logf("JCPOT map %.3f, source-only %.3f, proportions %.3f", acc, accuracy(ps, truth), m.Proportions)
	if acc < accuracy(ps, truth) {
		t.Errorf("JCPOT (map) %.3f below source-only %.3f", acc, accuracy(ps, truth))
	}
	var s float64
	for _, h := range m.Proportions {
		if h < 0 {
			t.Fatalf("negative proportion %v", m.Proportions)
		}
		s += h
	}
	if math.Abs(s-1) > 1e-9 {
		t.Errorf("proportions sum to %g", s)
	}
}
