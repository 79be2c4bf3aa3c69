package bench

import (
	"fmt"
	"strconv"
	"time"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/mlp"
)

// EncoderName names encoder settings in the tables of
// ValidateCWRUEncoders: "epochs=10 wd=0.01".
func EncoderName(s *mlp.Settings) string {
	return "epochs=" + strconv.Itoa(s.Epochs) + " wd=" + strconv.FormatFloat(s.WeightDecay, 'g', -1, 64)
}

// EncoderOptions configure ValidateCWRUEncoders.
type EncoderOptions struct {
	// Candidates are the encoder settings to score; their Seed is
	// ignored (each draw seeds its encoders). Their names, by
	// EncoderName, must differ.
	Candidates []*mlp.Settings
	Targets    []string // nil: every domain
	Seeds      int      // repetitions 1 … Seeds; 0: 5
	Seed       uint64   // base seed, as in RunCWRU
	// Protocol gives the windows and spectra; its Encoder is ignored.
	Protocol *CWRUProtocol
	// Progress, if not nil, receives a line per scored candidate.
	Progress func(done, total int, what string, elapsed time.Duration)
}

// ValidateCWRUEncoders scores candidate encoder settings without looking at
// the target: a label-free way to choose how the encoder is trained.
//
// For each target and repetition it draws the same windows as RunCWRU with
// the same base seed, and for every ordered pair (a, b) of distinct source
// domains trains the candidate on all windows of a alone and measures its
// accuracy on the test windows of b. The target's recordings are not read
// at all, so the score is a legitimate model-selection signal for the
// unsupervised target: it asks how well the encoder carries a classification
// from one load to an unseen one, which is what the full experiment needs
// from it. A Result's Method is the candidate's EncoderName, its Accuracy the
// mean over the ordered source pairs, its Fold the repetition and its Seconds
// the total training time.
func ValidateCWRUEncoders(c *CWRU, opt EncoderOptions) ([]Result, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if err := checkCandidates(opt.Candidates); err != nil {
		return nil, err
	}
	targets, seeds, err := c.runs(opt.Targets, opt.Seeds)
	if err != nil {
		return nil, err
	}
	if err := c.canHoldOut(); err != nil {
		return nil, err
	}
	pr, err := opt.Protocol.resolve()
	if err != nil {
		return nil, err
	}
	total := len(targets) * seeds * len(opt.Candidates)
	done := 0
	start := time.Now()
	var out []Result
	for _, target := range targets {
		for rep := 1; rep <= seeds; rep++ {
			seed := c.drawSeed(opt.Seed, target, rep)
			names := c.sourcesOf(target)
			var src []*CWRUSpectra
			for _, dom := range names {
				s, err := c.Spectra(dom, seed, &pr)
				if err != nil {
					return nil, err
				}
				src = append(src, s)
			}
			for _, cand := range opt.Candidates {
				t0 := time.Now()
				acc, err := crossSourceAccuracy(src, names, len(c.Labels), cand, seed)
				if err != nil {
					return nil, err
				}
				out = append(out, Result{
					Method: EncoderName(cand), Target: target, Fold: rep,
					Accuracy: acc, Seconds: time.Since(t0).Seconds(),
				})
				done++
				if opt.Progress != nil {
					opt.Progress(done, total, fmt.Sprintf("encoder %s for %s seed %d", EncoderName(cand), target, rep), time.Since(start))
				}
			}
		}
	}
	return out, nil
}

// checkCandidates checks that there are encoder candidates, none nil and
// no two of the same EncoderName.
func checkCandidates(cands []*mlp.Settings) error {
	if len(cands) == 0 {
		return fmt.Errorf("bench: cwru: no encoder candidates")
	}
	seen := map[string]bool{}
	for _, cand := range cands {
		if cand == nil {
			return fmt.Errorf("bench: cwru: nil encoder candidate")
		}
		n := EncoderName(cand)
		if seen[n] {
			return fmt.Errorf("bench: cwru: encoder candidate %s listed twice", clip.Quote(n))
		}
		seen[n] = true
	}
	return nil
}

// crossSourceAccuracy trains candidate cand (seeded by seed, silent) on all
// windows of each source a of src in turn, named by names, and returns its
// mean accuracy (%) on the test windows of every other source b over the
// ordered pairs (a, b).
func crossSourceAccuracy(src []*CWRUSpectra, names []string, classes int, cand *mlp.Settings, seed uint64) (float64, error) {
	set := *cand
	set.Seed = seed
	set.Progress = nil
	var sum float64
	var pairs int
	for a := range src {
		net, err := mlp.Train(src[a].X, src[a].Y, classes, &set)
		if err != nil {
			return 0, fmt.Errorf("bench: cwru: encoder %s on %s: %w", EncoderName(cand), names[a], err)
		}
		for b := range src {
			if b == a {
				continue
			}
			acc, err := heldOutAccuracy(net, src[b])
			if err != nil {
				return 0, err
			}
			sum += acc
			pairs++
		}
	}
	return 100 * sum / float64(pairs), nil
}

// heldOutAccuracy is net's accuracy on the test windows of s.
func heldOutAccuracy(net *mlp.Network, s *CWRUSpectra) (float64, error) {
	p, err := net.Predict(linalg.Rows(s.X, s.Test))
	if err != nil {
		return 0, err
	}
	y := make([]int, len(s.Test))
	for i, r := range s.Test {
		y[i] = s.Y[r]
	}
	return classify.Accuracy(p, y)
}
