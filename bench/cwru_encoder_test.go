package bench

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dadil/dadil/mlp"
)

// TestValidateCWRUEncoders scores two candidates on synthetic recordings
// with the target's recordings removed: the scores must not need them, be
// deterministic, and rank a trained encoder above an untrained one.
func TestValidateCWRUEncoders(t *testing.T) {
	dir, files := synthCWRU(t, []string{"a", "b", "c"}, 3, 3000)
	c, err := LoadCWRU(dir, files, 256)
	if err != nil {
		t.Fatal(err)
	}
	// The target "c" must never be read: without its recordings any
	// access would panic.
	c.rec[2] = nil
	good := &mlp.Settings{Hidden: []int{32, 16}, Epochs: 15, Batch: 32, LearningRate: 3e-3, WeightDecay: 1e-3}
	// One epoch of a tiny learning rate leaves the network near its
	// random initialisation.
	poor := &mlp.Settings{Hidden: []int{32, 16}, Epochs: 1, Batch: 32, LearningRate: 1e-7}
	opt := EncoderOptions{
		Candidates: []*mlp.Settings{good, poor}, Targets: []string{"c"}, Seeds: 2, Seed: 4,
		Protocol: smallCWRUProtocol(),
	}
	var lines int
	opt.Progress = func(done, total int, what string, _ time.Duration) {
		lines++
		if total != 4 || done != lines || !strings.Contains(what, "for c seed") {
			t.Errorf("progress %d/%d %q", done, total, what)
		}
	}
	r1, err := ValidateCWRUEncoders(c, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Progress = nil
	r2, err := ValidateCWRUEncoders(c, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(r1) != 4 || len(r2) != 4 || lines != 4 {
		t.Fatalf("%d and %d results, %d progress lines; want 4", len(r1), len(r2), lines)
	}
	names := []string{EncoderName(good), EncoderName(poor)}
	if names[0] != "epochs=15 wd=0.001" || names[1] != "epochs=1 wd=0" {
		t.Fatalf("names %q", names)
	}
	score := map[string]float64{}
	for i, r := range r1 {
		if r != (Result{Method: r.Method, Target: "c", Fold: r.Fold, Accuracy: r2[i].Accuracy, Seconds: r.Seconds}) {
			t.Errorf("result %+v, again %+v", r, r2[i])
		}
		if !slices.Contains(names, r.Method) || r.Fold < 1 || r.Fold > 2 || r.Accuracy < 0 || r.Accuracy > 100 {
			t.Errorf("result %+v", r)
		}
		score[r.Method] += r.Accuracy / 2
	}
	if score[names[0]] < 75 || score[names[0]] <= score[names[1]] {
		t.Errorf("held-out accuracy: trained %.2f%%, untrained %.2f%%", score[names[0]], score[names[1]])
	}

	for _, tc := range []struct {
		name string
		opt  EncoderOptions
		want string
	}{
		{"none", EncoderOptions{Protocol: smallCWRUProtocol()}, "no encoder candidates"},
		{"nil", EncoderOptions{Candidates: []*mlp.Settings{nil}}, "nil encoder"},
		{"twice", EncoderOptions{Candidates: []*mlp.Settings{good, good}}, "listed twice"},
		{"target", EncoderOptions{Candidates: []*mlp.Settings{good}, Targets: []string{"d"}}, `unknown target "d"`},
		{"seeds", EncoderOptions{Candidates: []*mlp.Settings{good}, Targets: []string{"c"}, Seeds: -1}, "-1 seeds"},
		{"protocol", EncoderOptions{Candidates: []*mlp.Settings{good}, Targets: []string{"c"}, Protocol: &CWRUProtocol{Windows: 10, Train: 10}}, "training windows"},
	} {
		if _, err := ValidateCWRUEncoders(c, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	two := &CWRU{Domains: []string{"a", "b"}, Labels: c.Labels, rec: make([][][]recording, 2)}
	if _, err := ValidateCWRUEncoders(two, EncoderOptions{Candidates: []*mlp.Settings{good}}); err == nil || !strings.Contains(err.Error(), "at least 3") {
		t.Errorf("two domains: %v", err)
	}
}
