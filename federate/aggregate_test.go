package federate

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dadil/dadil/synth"
)

// randomAtoms returns the values of atoms of shape sh with distinct
// points.
func randomAtoms(rng *rand.Rand, sh Shape) []float64 {
	v, _ := sh.Values()
	x := make([]float64, v)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// permuted returns u with the points of every atom permuted by a random
// permutation, features and logits together.
func permuted(rng *rand.Rand, u []float64, sh Shape) []float64 {
	out := make([]float64, len(u))
	n, d, c := sh.N, sh.D, sh.C
	for k := range sh.K {
		off := k * n * (d + c)
		zo := off + n*d
		for j, s := range rng.Perm(n) {
			copy(out[off+j*d:off+(j+1)*d], u[off+s*d:off+(s+1)*d])
			copy(out[zo+j*c:zo+(j+1)*c], u[zo+s*c:zo+(s+1)*c])
		}
	}
	return out
}

// TestWBaryPermuted: the wbary aggregate of sites that return the round's
// atoms with their points permuted is the atoms, and that of permuted
// small moves of the atoms is bit for bit the plain mean of the moves
// unpermuted.
func TestWBaryPermuted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sh := Shape{K: 3, N: 40, D: 5, C: 3}
	for _, sites := range []int{1, 3, 4} {
		x := randomAtoms(rng, sh)
		var same, moved, plain [][]float64
		for range sites {
			same = append(same, permuted(rng, x, sh))
			m := slices.Clone(x)
			for i := range m {
				m[i] += 1e-3 * rng.NormFloat64()
			}
			plain = append(plain, m)
			moved = append(moved, permuted(rng, m, sh))
		}
		g, err := newAggregator(WBary, Server{}, sh, false)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Clone(x)
		if err := g.apply(got, same, nil, nil); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if math.Abs(got[i]-x[i]) > 1e-15*math.Max(1, math.Abs(x[i])) {
				t.Fatalf("%d sites: value %d: %g, the atoms have %g", sites, i, got[i], x[i])
			}
		}
		if sites == 4 && !slices.Equal(got, x) { // sums of 4 equal values are exact
			t.Errorf("4 sites: the aggregate of permuted copies is not the atoms")
		}
		got, want := slices.Clone(x), slices.Clone(x)
		avg, _ := newAggregator(Average, Server{}, sh, false)
		if err := g.apply(got, moved, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := avg.apply(want, plain, nil, nil); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d sites: wbary of permuted moves differs from the mean of the moves", sites)
		}
		// The plain mean of permuted atoms mixes unrelated points.
		if err := avg.apply(want, moved, nil, nil); err != nil {
			t.Fatal(err)
		}
		if sites > 1 && slices.Equal(got, want) {
			t.Errorf("%d sites: avg of permuted atoms equals wbary", sites)
		}
	}
}

// TestServerOptimizers checks the server steps against their formulas on
// two rounds of one value, and that sgd with η_s = 1 is the aggregate.
func TestServerOptimizers(t *testing.T) {
	sh := Shape{K: 1, N: 1, D: 1, C: 1}
	// Two rounds from x = (1, 0): two sites move to (2, 1) and (4, 3)
	// (Δ = 2 each), then to x + (1, 1) (Δ = 1).
	adam := func(lr, b1, b2, tau float64) []float64 {
		x, m, v := []float64{1, 0}, []float64{0, 0}, []float64{0, 0}
		for _, d := range []float64{2, 1} {
			for i := range x {
				m[i] = b1*m[i] + (1-b1)*d
				v[i] = b2*v[i] + (1-b2)*d*d
				x[i] += lr * m[i] / (math.Sqrt(v[i]) + tau)
			}
		}
		return x
	}
	for _, c := range []struct {
		srv  Server
		want []float64
	}{
		{Server{}, []float64{1 + 2 + 1, 0 + 2 + 1}},
		{Server{LR: 2}, []float64{1 + 4 + 2, 0 + 4 + 2}},
		{Server{Optimizer: ServerMomentum, LR: 0.5, Beta1: 0.5}, []float64{1 + 0.5*2 + 0.5*(0.5*2+1), 0 + 0.5*2 + 0.5*(0.5*2+1)}},
		{Server{Optimizer: ServerMomentum}, []float64{1 + 2 + (0.5*2 + 1), 0 + 2 + (0.5*2 + 1)}}, // η_s = 1, β₁ = 0.5
		{Server{Optimizer: ServerAdam, LR: 0.1}, adam(0.1, 0.9, 0.99, 1e-3)},
	} {
		g, err := newAggregator(Average, c.srv, sh, false)
		if err != nil {
			t.Fatal(err)
		}
		x := []float64{1, 0}
		if err := g.apply(x, [][]float64{{2, 1}, {4, 3}}, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := g.apply(x, [][]float64{{x[0] + 1, x[1] + 1}}, nil, nil); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if math.Abs(x[i]-c.want[i]) > 1e-12 {
				t.Errorf("%+v: %v, want %v", c.srv, x, c.want)
				break
			}
		}
	}
}

func TestAggregatorErrors(t *testing.T) {
	sh := Shape{K: 1, N: 2, D: 1, C: 1}
	for _, c := range []struct {
		agg  Aggregation
		srv  Server
		want string
	}{
		{Average, Server{LR: -1}, "server learning rate"},
		{Average, Server{LR: math.Inf(1)}, "server learning rate"},
		{Average, Server{Optimizer: ServerMomentum, Beta1: 1}, "β₁"},
		{Average, Server{Optimizer: ServerAdam, Tau: math.NaN()}, "τ"},
		{Average, Server{Optimizer: 7}, "server optimiser"},
		{Aggregation(9), Server{}, "aggregation"},
	} {
		if _, err := newAggregator(c.agg, c.srv, sh, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %+v: %v, want %q", c.agg, c.srv, err, c.want)
		}
	}
	g, _ := newAggregator(WBary, Server{}, sh, false)
	x := []float64{0, 1, 0, 0}
	if err := g.apply(x, nil, nil, nil); err == nil {
		t.Error("no update aggregated")
	}
	if err := g.apply(x, [][]float64{{1, 2, 3}}, nil, nil); err == nil || !strings.Contains(err.Error(), "3 values") {
		t.Errorf("an update of another length: %v", err)
	}
	for _, s := range []string{"avg", "random", "wbary"} {
		if a, err := ParseAggregation(s); err != nil || a.String() != s {
			t.Errorf("ParseAggregation(%q) = %v, %v", s, a, err)
		}
	}
	for _, s := range []string{"sgd", "momentum", "adam"} {
		if o, err := ParseServerOptimizer(s); err != nil || o.String() != s {
			t.Errorf("ParseServerOptimizer(%q) = %v, %v", s, o, err)
		}
	}
	if _, err := ParseServerOptimizer("yogi"); err == nil {
		t.Error("an unknown server optimiser")
	}
}

// TestServerStepDeterministic runs the same federation with a server
// optimiser and the wbary aggregation twice, the sites with 1 and then 3
// goroutines each, so that their updates arrive in other orders: the
// atoms are bit-identical, and differ from those of plain averaging.
func TestServerStepDeterministic(t *testing.T) {
	url := startServer(t, "secret")
	p := synth.Generate(synth.Default(), 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(cfg Config, workers int) *Result {
		res, _, err := RunProblem(ctx, url, "secret", p, cfg, SiteConfig{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	cfg := testConfig(4)
	cfg.Aggregation, cfg.Server = WBary, Server{Optimizer: ServerAdam, LR: 0.05}
	a, b := run(cfg, 1), run(cfg, 3)
	if !atomsEqual(a.Atoms, b.Atoms) {
		t.Error("the same federation with 1 and 3 goroutines per site gave different atoms")
	}
	if avg := run(testConfig(4), 1); atomsEqual(a.Atoms, avg.Atoms) {
		t.Error("the server optimiser left the averaged atoms as they were")
	}
}

// BenchmarkWBary aggregates the updates of 4 sites with wbary at the size
// of Caltech-Office's atoms (K = 3, n = 1000, d = 800, c = 10), each site's
// points moved a little and permuted.
func BenchmarkWBary(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	sh := Shape{K: 3, N: 1000, D: 800, C: 10}
	x := randomAtoms(rng, sh)
	var ups [][]float64
	for range 4 {
		u := slices.Clone(x)
		for i := range u {
			u[i] += 0.01 * rng.NormFloat64()
		}
		ups = append(ups, permuted(rng, u, sh))
	}
	g, err := newAggregator(WBary, Server{}, sh, false)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float64, len(x))
	b.ResetTimer()
	for range b.N {
		copy(dst, x)
		if err := g.apply(dst, ups, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSourceLogits: with sourceLogits, Average and WBary take the features'
// mean over every update and the label logits' over the labeled ones (the
// round's logits when none is), and change nothing when every update is
// labeled; Random takes one update whole.
func TestSourceLogits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sh := Shape{K: 2, N: 3, D: 2, C: 2}
	n, d, c := sh.N, sh.D, sh.C
	x := randomAtoms(rng, sh)
	var ups [][]float64
	for range 3 {
		u := slices.Clone(x)
		for i := range u {
			u[i] += 1e-3 * rng.NormFloat64()
		}
		ups = append(ups, u)
	}
	// Site 1 is a target: its logits are the round's.
	for k := range sh.K {
		zo := k*n*(d+c) + n*d
		copy(ups[1][zo:zo+n*c], x[zo:zo+n*c])
	}
	isLogit := func(i int) bool { return i%(n*(d+c)) >= n*d }
	meanOf := func(i int, us ...[]float64) float64 {
		var s float64
		for _, u := range us {
			s += u[i]
		}
		return s / float64(len(us))
	}
	for _, tc := range []struct {
		name    string
		agg     Aggregation
		src     bool
		ups     [][]float64
		labeled []bool
		want    func(i int) float64
	}{
		{"avg", Average, true, ups, []bool{true, false, true}, func(i int) float64 {
			if isLogit(i) {
				return meanOf(i, ups[0], ups[2])
			}
			return meanOf(i, ups...)
		}},
		{"wbary", WBary, true, ups, []bool{true, false, true}, func(i int) float64 {
			if isLogit(i) {
				return meanOf(i, ups[0], ups[2])
			}
			return meanOf(i, ups...)
		}},
		{"avg, all sites", Average, false, ups, []bool{true, false, true}, func(i int) float64 { return meanOf(i, ups...) }},
		{"avg, no source", Average, true, ups[1:2], []bool{false}, func(i int) float64 { return ups[1][i] }},
		{"avg, sources only", Average, true, ups, nil, func(i int) float64 { return meanOf(i, ups...) }},
	} {
		g, err := newAggregator(tc.agg, Server{}, sh, tc.src)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Clone(x)
		if err := g.apply(got, tc.ups, tc.labeled, nil); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i, v := range got {
			if w := tc.want(i); math.Abs(v-w) > 1e-14 {
				t.Fatalf("%s: value %d (logit %v): %g, want %g", tc.name, i, isLogit(i), v, w)
			}
		}
	}
	g, _ := newAggregator(Random, Server{}, sh, true)
	got := slices.Clone(x)
	if err := g.apply(got, ups, []bool{true, false, true}, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, ups[0]) && !slices.Equal(got, ups[1]) && !slices.Equal(got, ups[2]) {
		t.Errorf("random with source logits is not one site's atoms")
	}
	if err := g.apply(got, ups, []bool{true}, nil); err == nil || !strings.Contains(err.Error(), "1 labeled flags for 3 updates") {
		t.Errorf("labeled flags of the wrong length: %v", err)
	}
}
