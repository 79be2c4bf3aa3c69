package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/golden"
	"github.com/dadil/dadil/mlp"
)

// TestPrepareGolden pins the experiments Prepare and PrepareHeldOut build
// (encoded, scaled sources, target and test windows under both scalings,
// encoder layers, test spectra) and their errors on small synthetic
// recordings to testdata/prepare.golden.
func TestPrepareGolden(t *testing.T) {
	dir, files := synthCWRU(t, []string{"a", "b", "c"}, 2, 1200)
	c, err := LoadCWRU(dir, files, 64)
	if err != nil {
		t.Fatal(err)
	}
	proto := func(scaling, paper string, epochs int) *CWRUProtocol {
		return &CWRUProtocol{
			Window: 64, Coeffs: 8, Windows: 6, Train: 4, Scaling: scaling, PaperScaling: paper,
			Encoder: &mlp.Settings{Hidden: []int{4}, Epochs: epochs, Batch: 4, LearningRate: 3e-3},
		}
	}
	domain := func(b *strings.Builder, d *dataset.Domain) {
		fmt.Fprintf(b, "  %s: X %v Y %v\n", d.Name, d.X.RawMatrix().Data, d.Y)
	}
	problem := func(b *strings.Builder, p *dataset.Problem) {
		fmt.Fprintf(b, " %s, %d classes\n", p.Name, p.Classes)
		for i := range p.Sources {
			domain(b, &p.Sources[i])
		}
		domain(b, &p.Target)
		domain(b, p.Test)
	}
	var b strings.Builder
	for _, tc := range []struct {
		target, heldOut string
		p               *CWRUProtocol
	}{
		{"c", "", proto("", "", 2)},
		{"a", "", proto("minmax", "none", 1)},
		{"c", "b", proto("none", "standard", 2)},
		{"d", "", proto("", "", 1)},
		{"c", "a", proto("log", "", 1)},
		{"c", "", &CWRUProtocol{Window: 64, Coeffs: 8, Windows: 6, Train: 6}},
		{"c", "", proto("", "", 0)},
		{"c", "", proto("", "rank", 1)},
	} {
		var e *CWRUExperiment
		var err error
		var epochs []string
		progress := func(epoch, n int, loss, acc float64) {
			epochs = append(epochs, fmt.Sprintf("%d/%d %v %v", epoch, n, loss, acc))
		}
		if tc.heldOut == "" {
			e, err = c.Prepare(tc.target, 3, tc.p, progress)
		} else {
			e, err = c.PrepareHeldOut(tc.target, tc.heldOut, 3, tc.p, progress)
		}
		fmt.Fprintf(&b, "target %s held out %q: %v, epochs %v\n", tc.target, tc.heldOut, strings.ReplaceAll(fmt.Sprint(err), dir, "DIR"), epochs)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "%s seed %d, encoder seconds ≥ 0 %v, same paper problem %v\n", e.Target, e.Seed, e.EncoderSeconds >= 0, e.PaperProblem == e.Problem)
		for l, L := range e.Encoder.Layers {
			fmt.Fprintf(&b, " layer %d: W %v b %v\n", l+1, L.W.RawMatrix().Data, L.B)
		}
		fmt.Fprintf(&b, " test spectra %v\n", e.TestSpectra.RawMatrix().Data)
		problem(&b, e.Problem)
		if e.PaperProblem != e.Problem {
			problem(&b, e.PaperProblem)
		}
	}
	golden.Check(t, "prepare.golden", b.String())
}

// TestValidateCWRUEncodersGolden pins ValidateCWRUEncoders's results (but
// their times) and progress on small synthetic recordings, and its errors,
// to testdata/validate_encoders.golden.
func TestValidateCWRUEncodersGolden(t *testing.T) {
	dir, files := synthCWRU(t, []string{"a", "b", "c"}, 2, 1200)
	c, err := LoadCWRU(dir, files, 64)
	if err != nil {
		t.Fatal(err)
	}
	p := &CWRUProtocol{Window: 64, Coeffs: 8, Windows: 6, Train: 4}
	one := &mlp.Settings{Hidden: []int{4}, Epochs: 2, Batch: 4, LearningRate: 3e-3}
	two := &mlp.Settings{Hidden: []int{4}, Epochs: 1, Batch: 4, LearningRate: 1e-2, WeightDecay: 0.1}
	var b strings.Builder
	for _, opt := range []EncoderOptions{
		{Candidates: []*mlp.Settings{one, two}, Targets: []string{"c", "a"}, Seeds: 2, Seed: 4, Protocol: p},
		{Candidates: []*mlp.Settings{two}, Seed: 1, Protocol: p},
		{Protocol: p},
		{Candidates: []*mlp.Settings{one, nil}, Protocol: p},
		{Candidates: []*mlp.Settings{one, one}, Protocol: p},
		{Candidates: []*mlp.Settings{one}, Targets: []string{"z"}, Protocol: p},
		{Candidates: []*mlp.Settings{one}, Seeds: -2, Protocol: p},
		{Candidates: []*mlp.Settings{one}, Protocol: &CWRUProtocol{Window: 64, Coeffs: 8, Windows: 6, Train: 6}},
		{Candidates: []*mlp.Settings{{Hidden: []int{4}, Epochs: -1}}, Protocol: p},
	} {
		opt.Progress = func(done, total int, what string, _ time.Duration) {
			fmt.Fprintf(&b, "%d/%d %s\n", done, total, what)
		}
		res, err := ValidateCWRUEncoders(c, opt)
		fmt.Fprintf(&b, "error: %s\n", strings.ReplaceAll(fmt.Sprint(err), dir, "DIR"))
		for _, r := range res {
			fmt.Fprintf(&b, "%s on %s seed %d: %v%%, seconds ≥ 0 %v\n", r.Method, r.Target, r.Fold, r.Accuracy, r.Seconds >= 0)
		}
	}
	two2 := &CWRU{Domains: c.Domains[:2], Labels: c.Labels, rec: c.rec[:2]}
	_, err = ValidateCWRUEncoders(two2, EncoderOptions{Candidates: []*mlp.Settings{one}, Protocol: p})
	fmt.Fprintf(&b, "two domains: %v\n", err)
	golden.Check(t, "validate_encoders.golden", b.String())
}
