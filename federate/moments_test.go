package federate

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/synth"
)

// TestMeanMoments: the mean of the sites' second moments, summed in order;
// a negative moment and a length that differs are errors.
func TestMeanMoments(t *testing.T) {
	for _, c := range []struct {
		name string
		vs   [][]float64
		want []float64
		err  string
	}{
		{"one site", [][]float64{{1, 2, 0}}, []float64{1, 2, 0}, ""},
		{"three sites", [][]float64{{1, 2, 0}, {3, 0, 0}, {2, 4, 6}}, []float64{2, 2, 2}, ""},
		{"none", nil, nil, "no second moments"},
		{"lengths", [][]float64{{1, 2}, {1}}, nil, "second moments of 1 values for 2"},
	} {
		got, err := meanMoments(nil, c.vs)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
	if err := checkMoments([]float64{0, 1, -1e-300}); err == nil || !strings.Contains(err.Error(), "second moment 2") {
		t.Errorf("a negative moment: %v", err)
	}
}

// TestShareMomentsState: a site's kept state takes the mean's positive
// second moments and keeps its own where the mean is zero; an empty state,
// or one of other shapes, is left alone.
func TestShareMomentsState(t *testing.T) {
	p := synth.Generate(synth.Default(), 1)
	dm := p.Sources[0]
	start := make([]dictionary.Atom, 2)
	for k := range start {
		start[k] = dictionary.Atom{X: mat.NewDense(6, 2, nil), Logits: mat.NewDense(6, p.Classes, nil)}
		for i := range 6 {
			start[k].X.Set(i, 0, float64(i))
			start[k].Logits.Set(i, i%p.Classes, 1)
		}
	}
	var st dictionary.LocalState
	shareMoments(&st, start) // empty: nothing to write
	if X, _ := st.SecondMoments(); X != nil {
		t.Fatal("an empty state received moments")
	}
	set := dictionary.Settings{Epochs: 1, PlateauTol: -1, Batch: 3, Seed: 1, Workers: 1}
	if _, err := dictionary.FitLocal(dm, p.Classes, dictionary.LocalStart{Atoms: start, State: &st}, &set); err != nil {
		t.Fatal(err)
	}
	X, Z := st.SecondMoments()
	own := slices.Clone(X[1])
	mean := make([]dictionary.Atom, 2)
	for k := range mean {
		mean[k] = dictionary.Atom{X: mat.NewDense(6, 2, nil), Logits: mat.NewDense(6, p.Classes, nil)}
		mean[k].X.Set(0, 0, 7)
		mean[k].Logits.Set(5, 1, 9)
	}
	shareMoments(&st, mean)
	if X[0][0] != 7 || X[1][0] != 7 || Z[0][5*p.Classes+1] != 9 || !slices.Equal(X[1][1:], own[1:]) {
		t.Errorf("moments after sharing: %v, %v (own %v)", X[0][:2], X[1], own)
	}
	shareMoments(&st, mean[:1]) // other shapes: left alone
	appended := appendMoments(nil, &st)
	if len(appended) != 2*6*(2+p.Classes) || appended[0] != 7 || appended[6*2+5*p.Classes+1] != 9 {
		t.Errorf("appended moments: %d values", len(appended))
	}
}

// TestRunProblemShareMoments: with shared moments the first round is the
// plain one (no site has moments yet), later rounds send the atoms and the
// mean moments both ways (twice the bytes), the atoms then differ from the
// unshared run's, two runs agree, and the target classifies well.
func TestRunProblemShareMoments(t *testing.T) {
	url := startServer(t, "secret")
	p := synth.Generate(synth.Default(), 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(rounds int, share bool) (*Result, []*SiteResult) {
		cfg := testConfig(rounds)
		cfg.KeepLocalState, cfg.ShareMoments = true, share
		res, sites, err := RunProblem(ctx, url, "secret", p, cfg, SiteConfig{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res, sites
	}
	one, _ := run(1, true)
	plain1, _ := run(1, false)
	if !atomsEqual(one.Atoms, plain1.Atoms) {
		t.Error("round 1 with shared moments differs from the plain round")
	}
	shared, sites := run(8, true)
	plain, _ := run(8, false)
	if atomsEqual(shared.Atoms, plain.Atoms) {
		t.Error("the shared moments changed nothing")
	}
	for i, st := range shared.Rounds {
		ratio := float64(st.BytesIn) / float64(plain.Rounds[i].BytesIn)
		out := float64(st.BytesOut) / float64(plain.Rounds[i].BytesOut)
		if len(st.Answered) != 4 || math.Abs(ratio-2) > 0.05 || (i == 0) != (math.Abs(out-1) < 0.05) || (i > 0 && math.Abs(out-2) > 0.05) {
			t.Errorf("round %d: answered %v, bytes in ×%.3f, out ×%.3f of the plain run's", st.Round, st.Answered, ratio, out)
		}
	}
	again, _ := run(8, true)
	if !atomsEqual(shared.Atoms, again.Atoms) {
		t.Error("two runs with the same seed gave different atoms")
	}
	if tg := sites[3]; tg.Model == nil || !(tg.AccuracyR > 0.9) {
		t.Errorf("target accuracy R %.3f", tg.AccuracyR)
	}
}

// TestShareMomentsConfig: shared moments need the kept state and
// unweighed moves.
func TestShareMomentsConfig(t *testing.T) {
	for _, c := range []struct{ keep, weigh bool }{{false, false}, {true, true}} {
		cfg := testConfig(1)
		cfg.Sites, cfg.ShareMoments, cfg.KeepLocalState, cfg.WeighMoves = 1, true, c.keep, c.weigh
		cfg.Scaling = dataset.ScaleNone
		if _, err := newCoordinator(nil, cfg); err == nil || !strings.Contains(err.Error(), "shared second moments need") {
			t.Errorf("kept %v, weighed %v: %v", c.keep, c.weigh, err)
		}
	}
}

// TestHostileMoments: a site whose update carries a negative second moment
// loses the round; the others' updates and moments make it.
func TestHostileMoments(t *testing.T) {
	url, p, cfg, rec, nc := hostileSetup(t)
	cfg.KeepLocalState, cfg.ShareMoments, cfg.Sites = true, true, 5
	var K atomic.Int64
	silentSite(t, url, cfg.Subject, "a-hostile", func(w welcome) { K.Store(int64(w.Shape.K)) }, func(b []byte) {
		h, data, err := ParseFrame(b)
		if err != nil || h.Kind != KindRound || h.Chunks != 1 {
			return
		}
		in := make([]float64, len(data)/8)
		for i := range in {
			in[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
		}
		sh := h.Shape
		sh.K = int(K.Load()) // the round's atoms may come with the mean moments
		if h.Round > 1 && h.Shape != sh.withMoments() {
			t.Errorf("round %d: shape %v, want the atoms and the moments", h.Round, h.Shape)
		}
		v, _ := sh.Values()
		out := slices.Concat(in[:v], make([]float64, v))
		out[v+4] = -1
		frames, _ := Encode(&Message{Kind: KindUpdate, Round: h.Round, Client: h.Client, Shape: sh.withMoments(), Base: HashValues(in), Data: out}, 1<<20)
		for _, f := range frames {
			nc.Publish(upSubject(cfg.Subject, "a-hostile"), f)
		}
		nc.Flush()
	})
	runBesideHostile(t, url, p, cfg, rec)
	if !rec.has("site a-hostile: rejected its update: second moment 4 is -1") || rec.has("rejected its update: federate") {
		t.Errorf("remarks %q", rec.lines)
	}
}
