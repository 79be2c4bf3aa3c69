package dictionary

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/golden"
)

// TestReconstructBlocksGolden pins the block-by-block reconstruction
// (support, labels, weights, plans, costs, history, iterations) of small
// hand-made dictionaries, blocks of unequal sizes included, to
// testdata/blocks.golden.
func TestReconstructBlocksGolden(t *testing.T) {
	var b strings.Builder
	for _, tc := range []struct {
		K, n, c, block int
		alpha          []float64
		seed           uint64
	}{
		{2, 11, 3, 4, []float64{0.4, 0.6}, 3},
		{3, 9, 2, 3, []float64{0.2, 0.3, 0.5}, 8},
		{2, 7, 2, 6, []float64{1, 0}, 1},
	} {
		d := handDictionary(tc.K, tc.n, tc.c, tc.seed)
		d.Settings.ReconstructionBlock = tc.block
		r, err := d.Reconstruct(tc.alpha, tc.seed+1)
		fmt.Fprintf(&b, "K=%d n=%d c=%d block=%d α=%v: %v\n", tc.K, tc.n, tc.c, tc.block, tc.alpha, err)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "X %v\nY %v\nW %v\n", r.X.RawMatrix().Data, r.Y.RawMatrix().Data, r.W)
		for k, p := range r.Plans {
			fmt.Fprintf(&b, "plan %d: %d×%d rows %v cols %v mass %v\n", k, p.N, p.M, p.Row, p.Col, p.Mass)
		}
		fmt.Fprintf(&b, "costs %v, cost %v, history %v, %d iterations, converged %v\n", r.Costs, r.Cost, r.History, r.Iterations, r.Converged)
	}
	golden.Check(t, "blocks.golden", b.String())
}
